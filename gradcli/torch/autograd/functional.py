"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp."""

from gradcli.engine.functional import (  # noqa: F401
    _construct_standard_basis_for,
    hessian,
    hvp,
    jacobian,
    jvp,
    vhp,
    vjp,
)
