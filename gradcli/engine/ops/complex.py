"""Complex tensors (torch.complex64/cfloat, complex128/cdouble): the dtypes' names, the
complex-only functions (complex, polar, view_as_real/view_as_complex, .real/.imag, conj
and its conj bit, abs/angle/sgn of complex input) and autograd by PyTorch's convention.

Autograd: for a real loss L, PyTorch's gradient of a complex z is dL/dx + i dL/dy (the
conjugate Wirtinger derivative, doubled). For an op holomorphic in its inputs this is
grad * conj(f'(z)) = grad * f'(conj z): the op's real formula run on the conjugated saved
values (_Conjugated). So an op whose result is complex records a node of its "complex
twin" (same grad_fn class, that backward), made once per op here, and a real input of it
takes the real part of its gradient. Ops not known to be holomorphic
(HOLOMORPHIC below) refuse to record, with PyTorch's message. Ops that are not
holomorphic (abs, angle, sgn, conj, polar, complex) have their own formulas.

Real dtypes never reach this module's code on the op paths: registry.run_op/run_unary
call COMPLEX_RECORD only for a complex result; sgn and angle (rare) test the input's kind.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import dtypes
from ..grad_mode import GRAD_MODE
from ..tensor import Tensor, make
from . import creation as _creation
from . import registry
from .registry import PUBLIC, Op, _record, _result_of, defop, public, run_op, run_unary
from .views import _as_view

for _name, _dt in (("complex64", dtypes.complex64), ("cfloat", dtypes.complex64),
                   ("complex128", dtypes.complex128), ("cdouble", dtypes.complex128)):
    PUBLIC[f"torch.{_name}"] = _dt


def _is_c(t) -> bool:
    return isinstance(t, Tensor) and t._data.dtype.kind == "c"


@public("Tensor.cfloat")
def cfloat(self, memory_format=None):
    """self.to(torch.cfloat)."""
    return self.to(dtypes.complex64)


@public("Tensor.cdouble")
def cdouble(self, memory_format=None):
    """self.to(torch.cdouble)."""
    return self.to(dtypes.complex128)


# --------------------------------------------------------------- autograd of complex ops

#: the ops whose real backward formula, conjugated around, is the complex one (f is
#: holomorphic in each input, or linear over the reals with real coefficients)
HOLOMORPHIC = frozenset("""
add add_scalar sub sub_scalar mul mul_scalar div div_scalar neg rsub rsub_alpha rsub_tensor
add_alpha sub_alpha exp log sqrt sin cos tan tanh sinh cosh sigmoid reciprocal pow pow_tensor
rpow expm1 log1p log2 log10 exp2 rsqrt asin acos atan asinh acosh atanh
mm bmm mv dot vdot addmm addmv addr addbmm baddbmm addcmul addcdiv sum sum_dim mean mean_dim
prod prod_dim cumsum cumprod trace linear_map_adjoint
view view_copy reshape_alias unsafe_view alias squeeze0 squeeze1 squeeze2 squeeze3 unsqueeze
transpose t permute expand select slice index index_select gather take clone cat stack flip
roll rot90 to_copy copy diagonal diag_embed tril triu repeat unbind split split_with_sizes
masked_fill where select_backward slice_backward index_backward diagonal_backward
constant_pad_nd unfold narrow_copy squeeze_copy unsqueeze_copy permute_copy t_copy
transpose_copy expand_copy select_copy slice_copy diag_copy
t_ transpose_ unsqueeze_ squeeze_ squeeze_dims_ as_strided as_strided_
reflect_pad1d reflect_pad2d reflect_pad3d replicate_pad1d replicate_pad2d replicate_pad3d
reflect_pad1d_backward reflect_pad2d_backward reflect_pad3d_backward replicate_pad1d_backward
replicate_pad2d_backward replicate_pad3d_backward unfold_backward logsumexp _fw_primal
logaddexp
""".split())

_TWINS: dict = {}


def _conj_t(t):
    """conj of a gradient (None passes), without the conj bit (a new tensor of values)."""
    if t is None or not isinstance(t, Tensor) or t._data.dtype.kind != "c":
        return t
    return run_unary(CONJ, t)


def _conj_value(x):
    """A saved value as the complex formula reads it: conjugated (a complex tensor through
    the recorded conj op, so create_graph sees it; a Python or numpy complex as is)."""
    if isinstance(x, Tensor):
        return _conj_t(x)
    if isinstance(x, complex):
        return x.conjugate()
    if isinstance(x, np.ndarray) and x.dtype.kind == "c":
        return np.conj(x)
    return x


class _Conjugated:
    """A node seen by its real backward formula with its saved inputs, result and complex
    meta values conjugated: for a holomorphic f, the formula g * f'(x) then reads
    g * f'(conj z) = g * conj(f'(z)), PyTorch's complex gradient, computed in the same order
    as PyTorch's own formula (grad * other.conj(), grad * result.conj() ...)."""

    __slots__ = ("_node", "saved", "meta")

    def __init__(self, node):
        self._node = node
        saved = node.saved
        self.saved = None if saved is None else tuple(_conj_value(x) for x in saved)
        self.meta = tuple(_conj_value(m) for m in node.meta)

    @property
    def result(self):
        return _conj_t(self._node.result)

    def needs(self, i: int) -> bool:
        return self._node.needs(i)

    def __getattr__(self, name):
        return getattr(self._node, name)


def _twin(op: Op) -> Op:
    """The complex twin of `op`: its grad_fn class, its backward on conjugated saved values."""
    twin = _TWINS.get(op)
    if twin is not None:
        return twin
    backward = op.backward

    def complex_backward(ctx, grad):
        return backward(_Conjugated(ctx), grad)

    twin = Op.__new__(Op)
    for slot in Op.__slots__:
        setattr(twin, slot, getattr(op, slot))
    twin.backward = complex_backward
    twin.node_cls = op.node_class()
    _TWINS[op] = twin
    return twin


def twin_for(op: Op) -> Op:
    """The op whose backward is `op`'s formula for a complex result (its twin when it is
    holomorphic): forward AD evaluates it (forward_ad.jvp_of_op)."""
    return _twin(op) if op.name in HOLOMORPHIC else op


def _record_complex(op: Op, inputs, meta, out):
    """registry.COMPLEX_RECORD: the node of an op whose result is complex."""
    if op.name in HOLOMORPHIC:
        twin = _twin(op)
    elif op.name in OWN_FORMULAS:
        twin = op
    else:
        raise RuntimeError(f"{op.name} does not support automatic differentiation for outputs "
                           "with complex dtype.")
    node = _record(twin, inputs, meta, out)
    real_inputs = [i for i, x in enumerate(inputs)
                   if isinstance(x, Tensor) and x._data.dtype.kind != "c"]
    if real_inputs:  # their gradients are the real parts of the complex ones
        shapes = node.input_meta or [None] * len(inputs)
        for i in real_inputs:
            d = inputs[i]._data
            shapes[i] = (d.shape, d.dtype)
        node.input_meta = shapes
    return _result_of(twin, node, out)


registry.COMPLEX_RECORD[0] = _record_complex


def _to_copy_twin_backward(ctx, grad):
    """to(complex) of a real tensor: its gradient is the real part of the complex one,
    cast back (PyTorch's _to_copy_backward; never numpy's discarding-the-imaginary cast)."""
    target = dtypes.FROM_NP[ctx.meta[1]]
    if grad._data.dtype.kind == "c" and not target.is_complex:
        grad = grad.real
    return (grad.to(target),)


def _install_to_copy_twin() -> None:
    op = registry.OPS["to_copy"]
    twin = Op.__new__(Op)
    for slot in Op.__slots__:
        setattr(twin, slot, getattr(op, slot))
    twin.backward = _to_copy_twin_backward
    twin.node_cls = op.node_class()
    _TWINS[op] = twin


_install_to_copy_twin()

#: ops declared here with formulas of their own for complex results
OWN_FORMULAS = {"complex", "polar", "view_as_complex", "conj", "conj_physical", "sgn_complex"}


# ------------------------------------------------------------------ views between kinds

def _view_as_real_fwd(a):
    re = a.real  # (numpy: a view of the real parts, with a's strides in bytes)
    return np.lib.stride_tricks.as_strided(re, a.shape + (2,), re.strides + (re.itemsize,))


def _view_as_complex_fwd(a):
    return a.view(np.complex64 if a.dtype == np.float32 else np.complex128)[..., 0]


VIEW_AS_REAL = defop("view_as_real", "ViewAsRealBackward0", _view_as_real_fwd,
                     lambda c, g: (view_as_complex(g.contiguous()),),
                     "d view_as_real(z)/dz: the gradient's pairs as complex numbers")
VIEW_AS_COMPLEX = defop("view_as_complex", "ViewAsComplexBackward0", _view_as_complex_fwd,
                        lambda c, g: (view_as_real(resolve_conj(g)),),
                        "d view_as_complex(a)/da: the gradient's parts as pairs")


@public("torch.view_as_real")
def view_as_real(input):
    if not _is_c(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if input in _CONJ:
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  "
                           "To resolve the conjugate tensor so you can view it as real, "
                           "use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias "
                           "the original.")
    res = run_unary(VIEW_AS_REAL, input)
    return _as_view(res, input, VIEW_AS_REAL, ())


@public("torch.view_as_complex")
def view_as_complex(input):
    d = input._data
    if d.dtype not in (np.float32, np.float64):
        name = "Half" if d.dtype == np.float16 else _scalar_type_name(input.dtype)
        if d.dtype == np.float16:
            raise RuntimeError("torch.complex32 (torch.chalf) is not supported by gradcli")
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {name}")
    if d.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if d.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    res = run_unary(VIEW_AS_COMPLEX, input)
    return _as_view(res, input, VIEW_AS_COMPLEX, ())


def _scalar_type_name(d) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
            "float64": "Double", "complex64": "ComplexFloat",
            "complex128": "ComplexDouble"}[d.name]


def _real_part(self):
    """Tensor.real: for complex, view_as_real(self).select(-1, 0) (PyTorch's SelectBackward0
    over ViewAsRealBackward0, sharing storage); a real tensor is itself."""
    if not _is_c(self):
        return self
    return view_as_real(resolve_conj(self)).select(-1, 0)


def _imag_part(self):
    if not _is_c(self):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(resolve_conj(self)).select(-1, 1)


def _set_part(getter):
    def setter(self, value):
        with GRAD_MODE_OFF():
            getter(self).copy_(value)
    return setter


class GRAD_MODE_OFF:  # noqa: N801 - a tiny local no_grad
    def __enter__(self):
        self.prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = False

    def __exit__(self, *exc):
        GRAD_MODE.enabled = self.prev


_REAL_BEFORE = PUBLIC.pop("Tensor.real")  # (composite.py's: the identity, as a method)
PUBLIC["torch.real"] = _real_part
PUBLIC["torch.imag"] = _imag_part
Tensor.real = property(_real_part, lambda self, v: _real_part(self).copy_(v))
Tensor.imag = property(_imag_part, lambda self, v: _imag_part(self).copy_(v))


# ----------------------------------------------------------------------- conj and its bit

#: id -> weak reference of each tensor carrying the conj bit (made by conj() of a complex
#: tensor): is_conj() reads it. The data is stored conjugated already (a copy: gradcli
#: holds no lazy conjugation), so only the flag is PyTorch's.
class _ConjSet:
    def __init__(self):
        self._refs = {}

    def add(self, t):
        key = id(t)
        self._refs[key] = weakref.ref(t, lambda _r, key=key: self._refs.pop(key, None))

    def __contains__(self, t):
        ref = self._refs.get(id(t))
        return ref is not None and ref() is t


_CONJ = _ConjSet()

# composite.py declares these as the identity (right for real tensors): replaced here
for _key in ("torch.conj", "Tensor.conj", "torch.conj_physical", "Tensor.conj_physical",
             "torch.resolve_conj", "Tensor.resolve_conj", "Tensor.is_conj", "torch.is_conj"):
    PUBLIC.pop(_key, None)

CONJ = defop("conj", "ConjBackward0", np.conj, lambda c, g: (conj(g),),
             "d conj(z)/dz: conj of the gradient")
CONJ_PHYSICAL = defop("conj_physical", "ConjPhysicalBackward0", np.conj,
                      lambda c, g: (conj_physical(g),), "d conj_physical(z)/dz: conj of the gradient")


@public("torch.conj", "Tensor.conj")
def conj(input):
    if not _is_c(input):
        return input
    res = run_unary(CONJ, input)
    if input not in _CONJ:
        _CONJ.add(res)
    return res


@public("torch.conj_physical", "Tensor.conj_physical")
def conj_physical(input):
    if not _is_c(input):
        return input
    return run_unary(CONJ_PHYSICAL, input)


@public("Tensor.conj_physical_")
def conj_physical_(input):
    if not _is_c(input):
        return input
    return input._apply_inplace(lambda old: conj_physical(old))


@public("torch.resolve_conj", "Tensor.resolve_conj")
def resolve_conj(input):
    if input not in _CONJ:
        return input
    return input.clone()


@public("Tensor.is_conj", "torch.is_conj")
def is_conj(input) -> bool:
    if not isinstance(input, Tensor):
        raise TypeError(f"is_conj(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input in _CONJ


# ------------------------------------------------------------------ construction from parts

def _complex_fwd(re, im):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape),
                   np.complex64 if re.dtype == np.float32 else np.complex128)
    out.real = re
    out.imag = im
    return out


def _complex_bwd(c, g):
    return (g.real.clone(), g.imag.clone())


COMPLEX = defop("complex", "ComplexBackward0", _complex_fwd, _complex_bwd,
                "d complex(re, im): re gets Re(grad), im gets Im(grad)", broadcast=True)


def _check_parts(real, imag) -> None:
    for t in (real, imag):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument 'real' (position 1) must be Tensor, not "
                            f"{type(t).__name__}")
    a, b = real._data.dtype, imag._data.dtype
    ok = (np.float32, np.float64)
    if a not in ok or b not in ok:
        if a == np.float16 or b == np.float16:
            raise RuntimeError(dtypes.COMPLEX32_UNSUPPORTED)
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_scalar_type_name(real.dtype)} and {_scalar_type_name(imag.dtype)}")
    if a != b:
        raise RuntimeError(f"Expected object of scalar type {_scalar_type_name(real.dtype)} but "
                           f"got scalar type {_scalar_type_name(imag.dtype)} for second argument")


@public("torch.complex")
def complex_(real, imag, *, out=None):
    _check_parts(real, imag)
    return run_op(COMPLEX, (real, imag))


def _polar_fwd(r, theta):
    out = np.empty(np.broadcast_shapes(r.shape, theta.shape),
                   np.complex64 if r.dtype == np.float32 else np.complex128)
    out.real = r * np.cos(theta)
    out.imag = r * np.sin(theta)
    return out


def _polar_bwd(c, g):
    """PyTorch's polar_backward: abs gets Re(conj(g) sgn(z)), angle Re(conj(g) i z), with
    Tensor ops on the saved result (so create_graph differentiates them again)."""
    z = c.result
    g_conj = conj(g)
    grad_abs = (g_conj * sgn(z)).real.clone()
    grad_angle = (g_conj * (z * 1j)).real.clone()
    return (grad_abs, grad_angle)


POLAR = defop("polar", "PolarBackward0", _polar_fwd, _polar_bwd,
              "d polar(r, t): r gets Re(g conj(z/r)), t gets Re(g conj(iz))", save="inputs result",
              broadcast=True)


@public("torch.polar")
def polar(abs, angle, *, out=None):  # noqa: A002 - PyTorch's argument name
    _check_parts(abs, angle)
    return run_op(POLAR, (abs, angle))


# --------------------------------------------- abs, angle, sgn: their formulas for complex

def _sgn_of(z):
    """z / |z| (0 at 0) as a tensor of z's dtype."""
    a = np.abs(z._data)
    return make((z._data / np.where(a == 0, 1, a)).astype(z._data.dtype))


def _angle_complex(ctx, grad, z):
    """PyTorch's angle_backward for complex z: g z i / |z|^2, 0 where z is 0 (Tensor ops,
    so create_graph differentiates it again)."""
    where = PUBLIC["torch.where"]
    mag = z.abs()
    zero = mag == 0
    safe = where(zero, make(np.ones((), mag._data.dtype)), mag)
    return (where(zero, make(np.zeros((), z._data.dtype)), grad * (z / (safe * safe)) * 1j),)


ANGLE_COMPLEX = defop("angle_complex", "AngleBackward0",
                      lambda z: np.angle(z).astype(z.real.dtype),
                      lambda c, g: _angle_complex(c, g, c.saved[0]),
                      "d angle(z): i z g / |z|^2", save="inputs")


def _sgn_complex_bwd(c, g):
    """PyTorch's sgn_backward: (g - sgn(z)^2 conj(g)) / (2|z|), 0 where z is 0."""
    where = PUBLIC["torch.where"]
    z, s = c.saved[0], c.result
    mag = z.abs()
    zero = mag == 0
    safe = where(zero, make(np.ones((), mag._data.dtype)), mag)
    out = (g - s * s * conj(g)) / (safe * 2)
    return (where(zero, make(np.zeros((), z._data.dtype)), out),)


SGN_COMPLEX = defop("sgn_complex", "SgnBackward0",
                    lambda z: (z / np.where(np.abs(z) == 0, 1, np.abs(z))).astype(z.dtype),
                    _sgn_complex_bwd, "d sgn(z): (g - sgn(z)^2 conj(g)) / (2|z|)",
                    save="inputs result")

_SGN_REAL = PUBLIC["torch.sgn"]
_ANGLE_REAL = PUBLIC["torch.angle"]


def sgn(input):
    if _is_c(input):
        return run_unary(SGN_COMPLEX, input)
    return _SGN_REAL(input)


def angle(input):
    if _is_c(input):
        return run_unary(ANGLE_COMPLEX, input)
    return _ANGLE_REAL(input)


def _replace(names, fn) -> None:
    for n in names:
        PUBLIC[n] = fn


_replace(("torch.sgn", "Tensor.sgn"), sgn)
_replace(("torch.angle", "Tensor.angle"), angle)


# ----------------------------------------------------------------- predicates for complex

_IS_COMPLEX_CHECKED = PUBLIC["torch.is_complex"]  # (aliases_and_config's: the argument check, then False)
_IS_SIGNED = PUBLIC["torch.is_signed"]


def is_complex(input) -> bool:
    _IS_COMPLEX_CHECKED(input)
    return input._data.dtype.kind == "c"


def is_signed(input) -> bool:
    return _IS_SIGNED(input) or input._data.dtype.kind == "c"


_replace(("torch.is_complex", "Tensor.is_complex"), is_complex)
_replace(("torch.is_signed", "Tensor.is_signed"), is_signed)


_ARANGE = _creation.arange


def arange(*args, dtype=None, **kwargs):
    """torch.arange: PyTorch's kernel has no complex instance."""
    if dtype is not None and getattr(dtype, "_category", 0) == 3:
        raise NotImplementedError(f'"arange_cpu" not implemented for '
                                  f"'{_scalar_type_name(dtype)}'")
    return _ARANGE(*args, dtype=dtype, **kwargs)


# (ops/__init__ exposes creation's function as torch.arange after this module loads)
_creation.arange = arange


# ------------------------------------------------------------ eigen-decomposition (general)

def _eig_backward(c, grads):
    """PyTorch's linalg_eig_backward, in numpy (no graph of its own: create_graph through
    it is not differentiated again):
    gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / E*) V^H,
    E_ij = L_j - L_i (1 on the diagonal); a real A takes the real part."""
    L, V = c.meta[-1]
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    gL, gV = (grads + [None, None])[:2]
    if gL is None and gV is None:
        return (None,)
    n = L.shape[-1]
    Vh = np.conj(np.swapaxes(V, -1, -2))
    eye = np.eye(n, dtype=bool)
    if gV is not None:
        VhgV = Vh @ gV._data
        diag = np.diagonal(VhgV, 0, -2, -1)
        VhgV = VhgV - Vh @ (V * diag.real[..., None, :])
        Lc = np.conj(L)
        E = Lc[..., None, :] - Lc[..., :, None]
        E = np.where(eye, 1, E)
        gA = VhgV / E
        if gL is not None:
            gA = gA + gL._data[..., :, None] * eye
    else:
        gA = gL._data[..., :, None] * eye
    gA = np.linalg.solve(Vh, gA @ Vh).astype(V.dtype)
    real_input = c.meta[0]
    if real_input:
        gA = np.ascontiguousarray(gA.real)
    return (make(gA),)


EIG = defop("linalg_eig", "LinalgEigBackward0", None, _eig_backward,
            "A = V diag(L) V^-1: gA = V^-H (diag(gL) + (V^H gV - ...) / E*) V^H", save="meta",
            multi=True)


def _eig_arrays(A, fname: str):
    from . import linalg_ext as LX

    LX._check_tensor(fname.replace(".", "_"), "input", A)
    d = A._data
    if d.dtype.kind not in "fcV":  # (PyTorch asks for the complex twin of the dtype first)
        raise RuntimeError(f"Unknown Complex ScalarType for {_scalar_type_name(A.dtype)}")
    if d.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise NotImplementedError("\"linalg_eig_out_cpu\" not implemented for "
                                  f"'{_scalar_type_name(A.dtype)}'")
    if d.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if d.shape[-1] != d.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are "
                           f"{d.shape[-2]} by {d.shape[-1]} matrices")
    cdt = np.complex64 if d.dtype in (np.float32, np.complex64) else np.complex128
    if not np.isfinite(d).all():
        raise RuntimeError(f"{fname}: input tensor should not contain infs or NaNs.")
    w, v = np.linalg.eig(d.astype(np.complex128 if cdt == np.complex128 else d.dtype))
    return w.astype(cdt), v.astype(cdt)


@public("torch.linalg.eig")
def eig(A, *, out=None):
    from . import linalg_ext as LX

    if "linalg_eig" not in LX.RT:
        LX.RT["linalg_eig"] = LX._rtype("linalg_eig", ("eigenvalues", "eigenvectors"))
    w, v = _eig_arrays(A, "linalg.eig")
    real_input = A._data.dtype.kind != "c"
    return LX.RT["linalg_eig"](*LX._run_multi(EIG, (A,), (real_input,), [w, v], (True, True)))


@public("torch.linalg.eigvals")
def eigvals(A, *, out=None):
    from . import linalg_ext as LX

    w, v = _eig_arrays(A, "linalg.eigvals")
    real_input = A._data.dtype.kind != "c"
    return LX._run_multi(EIG, (A,), (real_input,), [w, v], (True, True))[0]


# ----------------------------------------- PyTorch's refusals of complex input, by function

_NOT_FOR = "\"{}\" not implemented for '{}'"
#: function -> (exception, message; {k} is the kernel type name) for a complex input
REFUSALS = {
    "amax": (NotImplementedError, _NOT_FOR.format("max_values_cpu", "{k}")),
    "amin": (NotImplementedError, _NOT_FOR.format("min_values_cpu", "{k}")),
    "argmax": (RuntimeError, "argmax(): does not support complex input"),
    "argmin": (RuntimeError, "argmin(): does not support complex input"),
    "sort": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "topk": (RuntimeError, " topk does not support complex dtypes on CPU"),
    "floor": (NotImplementedError, "floor is not supported for complex inputs"),
    "ceil": (NotImplementedError, "ceil is not supported for complex inputs"),
    "trunc": (NotImplementedError, "trunc is not supported for complex inputs"),
    "sign": (NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead."),
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "round": (NotImplementedError, _NOT_FOR.format("round_vml_cpu", "{k}")),
    "fmod": (NotImplementedError, _NOT_FOR.format("fmod_cpu", "{k}")),
    "remainder": (NotImplementedError, _NOT_FOR.format("remainder_cpu", "{k}")),
    "atan2": (NotImplementedError, _NOT_FOR.format("atan2_cpu", "{k}")),
    "erf": (NotImplementedError, _NOT_FOR.format("erf_vml_cpu", "{k}")),
    "lgamma": (NotImplementedError, _NOT_FOR.format("lgamma_vml_cpu", "{k}")),
    "frac": (NotImplementedError, _NOT_FOR.format("frac_cpu", "{k}")),
    "median": (NotImplementedError, _NOT_FOR.format("median_cpu", "{k}")),
    "kthvalue": (NotImplementedError, _NOT_FOR.format("kthvalue_cpu", "{k}")),
    "floor_divide": (NotImplementedError, _NOT_FOR.format("div_floor_cpu", "{k}")),
    "hypot": (NotImplementedError, _NOT_FOR.format("hypot_cpu", "{k}")),
    "digamma": (NotImplementedError, _NOT_FOR.format("digamma", "{k}")),
    "logit": (NotImplementedError, _NOT_FOR.format("logit_cpu", "{k}")),
    "heaviside": (RuntimeError, "heaviside is not yet implemented for complex tensors."),
    "argsort": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "msort": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "aminmax": (NotImplementedError, _NOT_FOR.format("aminmax_cpu", "{k}")),
    "histc": (NotImplementedError, _NOT_FOR.format("aminmax_cpu", "{k}")),
    "cummax": (NotImplementedError, _NOT_FOR.format("cummax_cpu", "{k}")),
    "cummin": (NotImplementedError, _NOT_FOR.format("cummin_cpu", "{k}")),
    "fmax": (RuntimeError, "fmax not implemented for complex tensors."),
    "fmin": (RuntimeError, "fmin not implemented for complex tensors."),
    "nanmedian": (NotImplementedError, _NOT_FOR.format("median_cpu", "{k}")),
    "mode": (NotImplementedError, _NOT_FOR.format("mode_cpu", "{k}")),
    "unique": (NotImplementedError, _NOT_FOR.format("unique", "{k}")),
    "searchsorted": (NotImplementedError, _NOT_FOR.format("searchsorted_out_cpu", "{k}")),
    "bucketize": (NotImplementedError, _NOT_FOR.format("searchsorted_out_cpu", "{k}")),
    "isin": (RuntimeError, "Unsupported input type encountered for isin(): {k}"),
    "erfinv": (NotImplementedError, _NOT_FOR.format("erfinv_vml_cpu", "{k}")),
    "copysign": (NotImplementedError, _NOT_FOR.format("copysign_cpu", "{k}")),
    "nextafter": (NotImplementedError, _NOT_FOR.format("nextafter_cpu", "{k}")),
    "xlogy": (NotImplementedError, _NOT_FOR.format("xlogy_cpu", "{k}")),
    "signbit": (NotImplementedError, "signbit is not implemented for complex tensors."),
    "isposinf": (RuntimeError, "isposinf does not support complex inputs."),
    "isneginf": (RuntimeError, "isneginf does not support complex inputs."),
}
# clamp and the functions PyTorch builds on it refuse complex input in one text
for _name in ("relu", "relu_", "clamp", "clamp_", "clamp_min", "clamp_min_", "clamp_max",
              "clamp_max_", "clip", "clip_"):
    REFUSALS[_name] = (NotImplementedError, "clamp is not supported for complex types")

#: torch.nn.functional's refusals of complex input (their kernels' texts)
FUNCTIONAL_REFUSALS = {
    "relu": (NotImplementedError, "clamp is not supported for complex types"),
    "relu_": (NotImplementedError, "clamp is not supported for complex types"),
    "relu6": (NotImplementedError, "clamp is not supported for complex types"),
    "hardtanh": (NotImplementedError, "clamp is not supported for complex types"),
    "hardtanh_": (NotImplementedError, "clamp is not supported for complex types"),
    "leaky_relu": (NotImplementedError, _NOT_FOR.format("leaky_relu_cpu", "{k}")),
    "elu": (NotImplementedError, _NOT_FOR.format("elu_cpu", "{k}")),
    "softplus": (NotImplementedError, _NOT_FOR.format("softplus_cpu", "{k}")),
    "threshold": (NotImplementedError, _NOT_FOR.format("threshold_cpu", "{k}")),
}


def _refusing(name: str, fn, table=None):
    exc, message = (REFUSALS if table is None else table).get(name, (None, None))

    def refuse(input, *args, **kwargs):
        if input.__class__ is Tensor and input._data.dtype.kind == "c":
            kind = _scalar_type_name(input.dtype)
            if name in ("max", "min"):
                if args or kwargs:
                    raise RuntimeError(f"{name}(): does not support complex input")
                raise NotImplementedError(_NOT_FOR.format(f"{name}_all", kind))
            raise exc(message.format(k=kind))
        return fn(input, *args, **kwargs)

    refuse.__name__ = refuse.__qualname__ = getattr(fn, "__name__", name)
    refuse.__doc__ = getattr(fn, "__doc__", None)
    refuse.__wrapped__ = fn
    return refuse


def install_refusals() -> None:
    """Wrap the functions PyTorch refuses complex input for (called once the Tensor methods
    are installed: ops/__init__). Only these functions, none of the hot arithmetic, pay
    the one test of the input's kind."""
    _install_complex_readings()
    for name in (*REFUSALS, "max", "min"):
        for full in (f"torch.{name}", f"Tensor.{name}"):
            fn = PUBLIC.get(full) if full.startswith("torch.") else getattr(Tensor, name, None)
            if fn is None:
                continue
            wrapped = _refusing(name, fn)
            if full in PUBLIC:
                PUBLIC[full] = wrapped
            if full.startswith("Tensor."):
                setattr(Tensor, name, wrapped)
    for name in FUNCTIONAL_REFUSALS:
        full = f"torch.nn.functional.{name}"
        if full in PUBLIC:
            PUBLIC[full] = _refusing(name, PUBLIC[full], FUNCTIONAL_REFUSALS)


# ---------------------------------- functions whose real implementation misreads complex

def _vdot_complex_bwd(c, g):
    a, b = c.saved
    return (conj(g) * b if c.needs(0) else None, g * a if c.needs(1) else None)


VDOT_COMPLEX = defop("vdot_complex", "VdotBackward0", lambda a, b: np.asarray(np.vdot(a, b)),
                     _vdot_complex_bwd, "d vdot(a, b): a gets conj(g) b, b gets g a",
                     save="inputs")
OWN_FORMULAS.add("vdot_complex")


def _complex_vdot(real_vdot):
    def vdot(input, other, *, out=None):
        if _is_c(input) and _is_c(other) and input._data.dtype == other._data.dtype \
                and input._data.shape == other._data.shape and input._data.ndim == 1:
            return run_op(VDOT_COMPLEX, (input, other))
        return real_vdot(input, other, out=out)
    return vdot


def _on_magnitudes(fn):
    """A norm of a complex tensor is the norm of its magnitudes (real); the gradient
    through abs (g sgn(z)) is PyTorch's (z g / |z| for the 2-norm)."""
    def norm(input, *args, **kwargs):
        if input.__class__ is Tensor and input._data.dtype.kind == "c":
            input = input.abs()
        return fn(input, *args, **kwargs)

    norm.__name__ = norm.__qualname__ = getattr(fn, "__name__", "norm")
    norm.__doc__ = getattr(fn, "__doc__", None)
    return norm


def _install_complex_readings() -> None:
    for full in ("torch.vdot", "Tensor.vdot"):
        if full in PUBLIC:
            PUBLIC[full] = _complex_vdot(PUBLIC[full])
            if full.startswith("Tensor."):
                Tensor.vdot = PUBLIC[full]
    for full in ("torch.linalg.vector_norm", "torch.norm", "Tensor.norm", "torch.linalg.norm"):
        fn = PUBLIC.get(full) or (getattr(Tensor, "norm", None) if full == "Tensor.norm" else None)
        if fn is None:
            continue
        PUBLIC[full] = _on_magnitudes(fn)
        if full == "Tensor.norm":
            Tensor.norm = PUBLIC[full]
    finfo = PUBLIC.get("torch.finfo")
    if finfo is not None and not getattr(finfo, "_complex_ready", False):
        real_init = finfo.__init__

        def __init__(self, type=None):  # noqa: A002 - torch's parameter name
            # (torch.finfo(torch.cfloat) is float32's: the limits of each part)
            if isinstance(type, dtypes.dtype) and type._category == 3:
                type = type.to_real()  # noqa: A001
            real_init(self, type)

        finfo.__init__ = __init__
        finfo._complex_ready = True
