"""torch.autograd.gradcheck as a module (GradcheckError and the deprecated helpers too)."""

from gradcli.engine.gradcheck import (  # noqa: F401
    GradcheckError,
    get_analytical_jacobian,
    get_numerical_jacobian,
    gradcheck,
    gradgradcheck,
)
