"""One declaration per op: `unary(...)` and `binary(...)` make the table entry (an `Op`),
the function PyTorch users call, its in-place variant, and every public name of both.

    unary("atan", "AtanBackward0", np.arctan, lambda c, g: (g / (c.saved[0] ** 2 + 1),),
          "d atan(a)/da = 1/(1+a^2)", save="inputs")

gives `torch.atan`, `Tensor.atan`, `Tensor.atan_`, the `Op` the generic tests run
(tests/test_ops_table.py through `torch_call`, tests/test_ops_declared.py through every
public name), and PyTorch's argument checks and integer-to-float promotion. `names`
replaces the default names, `extra` adds some (`"torch.special.expit"`).

Declaring costs one Op and a few closures: no numpy call runs at import, and forwards
that need scipy import it on their first call (see `scipy_fn`).
"""

from __future__ import annotations

from .. import dtypes
from ..tensor import Tensor
from .registry import PUBLIC, defop, run_unary

#: name -> Declaration of every op declared here: what the generic tests walk.
DECLARED: dict = {}


class Declaration:
    """What one `unary`/`binary` line declared: its op, function, in-place method, names."""

    __slots__ = ("name", "op", "fn", "inplace", "names", "kind", "domain", "sample")

    def __init__(self, name, op, fn, inplace, names, kind, domain, sample):
        self.name = name
        self.op = op
        self.fn = fn
        self.inplace = inplace
        self.names = names
        self.kind = kind
        self.domain = domain
        self.sample = sample

    def __repr__(self) -> str:
        return f"Declaration({self.name!r}, {self.names})"


def scipy_fn(name: str):
    """A forward calling scipy.special.`name`, imported on its first call (never at start-up)."""
    holder = []

    def forward(*args):
        if not holder:
            import scipy.special

            holder.append(getattr(scipy.special, name))
        return holder[0](*args)

    forward.__name__ = name
    return forward


def _must_be_tensor(fname: str, arg: str, pos: int, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, "
                        f"not {type(value).__name__}")


def _default_names(name: str, inplace: bool) -> tuple:
    names = (f"torch.{name}", f"Tensor.{name}")
    return names + (f"Tensor.{name}_",) if inplace else names


def inplace_of(fn, name: str):
    """x.op_(...): compute out of place, write into x (Tensor._apply_inplace checks that the
    result's dtype can be cast to x's, with PyTorch's message)."""

    def method(self, *args, **kwargs):
        return self._apply_inplace(lambda old: fn(old, *args, **kwargs))

    method.__name__ = name + "_"
    method.__qualname__ = "Tensor." + name + "_"
    return method


def _register(name, op, fn, inplace, names, extra, kind, domain, sample,
              fn_inplace=None) -> Declaration:
    names = tuple(names if names is not None else _default_names(name, inplace)) + tuple(extra)
    method_ = inplace_of(fn_inplace or fn, name) if inplace else None
    for full in names:
        PUBLIC[full] = method_ if full.startswith("Tensor.") and full.endswith("_") else fn
        if full.startswith("Tensor."):  # (install_methods does the same for the whole table)
            setattr(Tensor, full[7:], PUBLIC[full])
    decl = DECLARED[name] = Declaration(name, op, fn, method_, names, kind, domain, sample)
    return decl


def unary(name: str, node: str, forward, backward, rule: str, *, save: str = "inputs",
          domain: str = "real", ints: str = "float", names=None, extra=(), inplace: bool = True,
          torch_call: str | None = None, sample=None, inplace_node: str | None = None):
    """Declare an elementwise op of one tensor.

    `ints`: what an integer or bool input does: "float" (computed in the default float
    dtype, as PyTorch's float-valued math), "same" (kept: abs, neg...), "error" (PyTorch
    has no integer kernel: its NotImplementedError).
    `domain`: where the generic tests draw inputs ("real", "positive", "small", "unit":
    inside (-1, 1), "above1": beyond 1).
    """
    op = defop(name, node, forward, backward, rule, save=save,
               torch_call=torch_call or f"torch.{name}(a)", domain=_TABLE_DOMAIN.get(domain, domain))

    def fn(input):
        if type(input) is not Tensor:
            _must_be_tensor(name, "input", 1, input)
        d = input._data
        if d.dtype.kind not in "fcV":  # (complex: computed as is, as PyTorch's kernels)
            if ints == "float":
                return run_unary(op, input, (), d.astype(dtypes.get_default_dtype().np))
            if ints == "error":
                raise NotImplementedError(
                    f'"{name}_cpu" not implemented for \'{_KERNEL_NAMES[d.dtype.name]}\'')
        return run_unary(op, input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: {rule}"
    fn_inplace = None
    if inplace_node:  # PyTorch has no derivative for the in-place form: its own node raises
        message = f"the derivative for 'inplace version of {name}' is not implemented."

        def no_derivative(c, g):
            raise NotImplementedError(message)

        no_derivative.no_derivative = True  # the generic gradchecks skip it (as PyTorch's)

        op_inplace = defop(name + "_inplace", inplace_node, forward, no_derivative, rule,
                           torch_call=f"a.clone().{name}_()", domain=op.domain)

        def fn_inplace(input):
            d = input._data
            if d.dtype.kind not in "fV":
                return fn(input)
            return run_unary(op_inplace, input)

    _register(name, op, fn, inplace, names, extra, "unary", domain, sample, fn_inplace)
    return fn


_KERNEL_NAMES = {"bool": "Bool", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "complex64": "ComplexFloat",
                 "complex128": "ComplexDouble"}
#: the binary ops with no integer kernel that do have a complex one
_COMPLEX_KERNELS = frozenset({"logaddexp"})

# the generic table test draws from three domains; the declarations' finer ones map onto them
_TABLE_DOMAIN = {"unit": "small", "above1": "positive", "positive_small": "small"}


def binary(name: str, node: str, forward, backward, rule: str, *, save: str = "inputs",
           domain: str = "real", scalar_other: str | None = None, scalar_self: str | None = None,
           float_result: bool = True, names=None, extra=(), inplace: bool = True,
           torch_call: str | None = None, sample=None, ints: str = "float",
           save_for: tuple | None = None, check_order: tuple | None = None):
    """Declare an elementwise op of two operands that broadcast and promote.

    `scalar_other` / `scalar_self`: the grad_fn class of the overload taking a Python
    number as the second / first operand (xlogy.Scalar_Other is XlogyBackward2); None:
    that operand must be a tensor, with PyTorch's TypeError. Each overload is its own
    table entry, so the generic tests run each. `float_result`: integer operands compute
    in the default float dtype. `save_for` and `check_order`: as defop's (which inputs'
    gradients read each input; the order PyTorch checks the saved ones), for every
    overload.
    """
    from . import elementwise

    domain = _TABLE_DOMAIN.get(domain, domain)
    callee = _callee(name, names, extra, inplace)
    op = defop(name, node, forward, backward, rule, save=save, broadcast=True,
               torch_call=torch_call or f"{callee}(a, b)", domain=domain, save_for=save_for,
               check_order=check_order)
    op_other = op_self = None
    if scalar_other:
        # (a tensor and a number: the result has the tensor's shape, nothing to sum back)
        op_other = defop(name + "_scalar_other", scalar_other, forward, backward, rule, save=save,
                         torch_call=f"{callee}(a, 1.5)", domain=domain, save_for=save_for,
                         check_order=check_order)
    if scalar_self:
        op_self = defop(name + "_scalar_self", scalar_self, forward, backward, rule, save=save,
                        broadcast=True, torch_call=f"{callee}(1.5, a)", domain=domain,
                        save_for=save_for, check_order=check_order)
    run_binary = elementwise.binary
    numbers = (int, float, bool)

    def fn(input, other):
        if ints == "error":
            _float_operands(name, input, other)
        if isinstance(other, Tensor):
            if isinstance(input, Tensor):
                return run_binary(op, input, other, float_result)
            if op_self is not None and isinstance(input, numbers):
                return run_binary(op_self, input, other, float_result)
            _must_be_tensor(name, "input", 1, input)
        _must_be_tensor(name, "input", 1, input)
        if op_other is None or not isinstance(other, numbers):
            _must_be_tensor(name, "other", 2, other)
        return run_binary(op_other, input, other, float_result)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: {rule}"
    _register(name, op, fn, inplace, names, extra, "binary", domain, sample)
    return fn


def _float_operands(name, input, other) -> None:
    """Ops PyTorch has no integer kernel for: its NotImplementedError, named by the
    operands' promoted dtype."""
    tensors = [t for t in (input, other) if isinstance(t, Tensor)]
    kinds = "fVc" if name in _COMPLEX_KERNELS else "fV"
    if tensors and all(t._data.dtype.kind not in kinds for t in tensors) and not any(
            type(v) is float for v in (input, other)):
        d = dtypes.result_type(input, other)
        raise NotImplementedError(
            f'"{name}_cpu" not implemented for \'{_KERNEL_NAMES.get(d.name, d.name)}\'')


def _callee(name, names, extra, inplace) -> str:
    """The first torch.* spelling of a declaration: what its generated torch_calls use."""
    spelled = tuple(names if names is not None else _default_names(name, inplace)) + tuple(extra)
    return next((n for n in spelled if n.startswith("torch.")), f"torch.{name}")


def expose(prefix: str, functions: dict) -> None:
    """Public names for functions defined elsewhere: {short name: function} under `prefix`
    ("torch.", "Tensor.", "torch.special.")."""
    for short, fn in functions.items():
        PUBLIC[prefix + short] = fn


def expose_from(prefix: str, module, names: str) -> None:
    """`expose` for the space-separated `names` of `module`, each under its own name."""
    for short in names.split():
        PUBLIC[prefix + short] = getattr(module, short)


def unregister(name: str) -> None:
    """Undo a declaration (test fixtures): its Op, public names and DECLARED entry."""
    from .registry import OPS

    decl = DECLARED.pop(name)
    for op_name in [n for n in OPS if n == decl.op.name or n.startswith(decl.op.name + "_")]:
        del OPS[op_name]
    for full in decl.names:
        PUBLIC.pop(full, None)
        if full.startswith("Tensor."):
            delattr(Tensor, full[7:])

