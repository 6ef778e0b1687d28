"""Every op, declared once (see registry.OPS), and the Tensor methods that call them.

`install_methods` binds the op functions onto Tensor as PyTorch names them, so
`x.sum(0)`, `torch.sum(x, 0)` and `x + y` all run the same table entry.
"""

from __future__ import annotations

import numpy as np

# the modules above the op table that fill the slots of tensor.py and node.py (printing,
# backward, saved-tensor hooks): loaded with the ops, before any tensor can be made
from .. import autograd, formatting, saved_hooks, saved_tensor  # noqa: F401
from ..fpstate import quiet_forwards
from ..tensor import Tensor
from . import (  # noqa: F401
    activations,
    composite,
    creation,
    elementwise,
    indexing,
    layout,
    legacy,
    linalg,
    losses,
    math,
    nn,
    nn_layers,
    numpy_interop,
    placement,
    reductions,
    sampling,
    shape,
    sorting,
    views,
)

from . import linalg_ext  # noqa: F401  (torch.linalg and the torch.* linear-algebra forms)  # isort: skip
from . import functional_ext  # noqa: F401  (the nn.functional long tail)  # isort: skip
from . import instance_norm  # noqa: F401  (instance_norm as ATen composes it)  # isort: skip
from . import weight_norm  # noqa: F401  (torch._weight_norm, norm_except_dim)  # isort: skip
from . import gamma_sampler  # noqa: F401  (torch._standard_gamma)  # isort: skip
from . import creation_ext  # noqa: F401  (torch.logspace)  # isort: skip
from . import compare_inplace  # noqa: F401  (eq_, ne_, lt_, le_, gt_, ge_ and aliases)  # isort: skip
from . import igamma  # noqa: F401  (igamma, igammac: scipy's gammainc, gammaincc)  # isort: skip
from . import backward_nodes  # noqa: F401  (named backward functions as one node)  # isort: skip
from . import inference_tensors  # noqa: F401  (torch.is_inference)  # isort: skip
from . import conv_ext  # noqa: F401  (conv3d, conv_transpose, pools, interpolate)  # isort: skip
from . import breadth  # noqa: F401  (index_reduce, cov, nextafter, native norms...)  # isort: skip
from . import contraction  # noqa: F401  (torch.einsum, in ATen's contraction order)  # isort: skip
from . import tensor_internals  # noqa: F401  (resize_, set_, _backward_hooks, del rules)  # isort: skip
from . import serialization  # noqa: F401  (torch.save / torch.load, PyTorch's zip format)  # isort: skip
from . import unique_variants  # noqa: F401  (unique_consecutive, _unique, _unique2, _VF)  # isort: skip
from . import inplace_views  # noqa: F401  (t_, transpose_, squeeze_, unsqueeze_, as_strided_)  # isort: skip
from . import func_aliases  # noqa: F401  (torch.vmap, loading torch.func on first use)  # isort: skip
from . import predicates  # noqa: F401  (isin, signbit)  # isort: skip
from . import memory_formats  # noqa: F401  (channels_last & co, is_contiguous)  # isort: skip
from . import mha  # noqa: F401  (multi_head_attention_forward, composed as PyTorch's)  # isort: skip
from . import storage  # noqa: F401  (storage(), data_ptr, resize_as_, unsafe_split_with_sizes)  # isort: skip
from . import aten_ops  # noqa: F401  (torch.ops.aten over the ops above)  # isort: skip
from . import tut_ops  # noqa: F401  (torch.float16/int8/int16 and their casts)  # isort: skip
from . import lp_pool3d  # noqa: F401  (nn.functional.lp_pool3d, LPPool3d's)  # isort: skip
from . import bfloat16  # noqa: F401  (torch.bfloat16: its name, cast and float32 kernels)  # isort: skip
from . import amp  # noqa: F401  (torch.autocast on CPU: the op lists, swapped in on entry)  # isort: skip
from . import amp_training  # noqa: F401  (torch.amp.GradScaler, custom_fwd/custom_bwd)  # isort: skip
from . import grid_sampler  # noqa: F401  (torch.grid_sampler, _2d, _3d: the modes as numbers)  # isort: skip
from . import aten_breadth  # noqa: F401  (aten.slice, _unsafe_masked_index, pool / dropout backwards)  # isort: skip
from . import functional_breadth  # noqa: F401  (F.linear_cross_entropy)  # isort: skip
from . import linalg_breadth  # noqa: F401  (torch.ormqr)  # isort: skip
from . import pool_breadth  # noqa: F401  (F.fractional_max_pool2d / 3d)  # isort: skip
from . import aliases_and_config  # noqa: F401  (constants, comparison aliases, windows, *_copy forms, configuration calls)  # isort: skip
from . import tensor_extras  # noqa: F401  (addmm_, fill_diagonal_, layout, apply_, ...)  # isort: skip
from . import packed  # noqa: F401  (nn.utils.rnn's packing op)  # isort: skip
from . import special_scipy  # noqa: F401  (special's Bessel/Airy/polynomials, scipy)  # isort: skip
from . import complex as complex_ops  # noqa: F401  (complex dtypes, conj, view_as_real...)  # isort: skip
from . import fft  # noqa: F401  (torch.fft: the transforms over scipy.fft, fftfreq, fftshift)  # isort: skip
from . import stft  # noqa: F401  (torch.stft / torch.istft over the fft primitives)  # isort: skip
from . import functional_extras  # noqa: F401  (gumbel_softmax, torch.range, asarray, *_with_indices pools)  # isort: skip
from . import aten_forms  # noqa: F401  (fix, detach_copy, adjoint, native_dropout, cond, while_loop)  # isort: skip
from . import ldl_geqrf  # noqa: F401  (geqrf, linalg.ldl_factor / _ex / ldl_solve: LAPACK via scipy)  # isort: skip
from . import convolution_entry  # noqa: F401  (torch.convolution, conv_tbc, the RNNs' ATen forms)  # isort: skip
from . import histogram_nd  # noqa: F401  (torch.histogramdd)  # isort: skip
from . import binomial_draws  # noqa: F401  (torch.binomial, PyTorch's draws)  # isort: skip
from . import sparse_coo, sparse_csr  # noqa: F401  (sparse COO and CSR tensors: to_sparse, torch.sparse_coo_tensor, torch.sparse.*)  # isort: skip
from . import build_queries  # noqa: F401  (has_mkl & co, OutOfMemoryError, is_set_to, module_load)  # isort: skip
from . import symbolic_numbers  # noqa: F401  (torch.sym_max & co on plain numbers)  # isort: skip
from . import sparse_mask_and_copies  # noqa: F401  (to_sparse_coo, sparse_mask, values_copy, view_as_real_copy...)  # isort: skip
from .declare import expose, expose_from, inplace_of
from .registry import OPS, PUBLIC, Op, defop, public, public_names, run_op  # noqa: F401

E, R, S, V, L = elementwise, reductions, shape, views, linalg
igamma.ABOVE.install(tasks=lambda: autograd.TASKS)  # (whether a's gradient is wanted)
backward_nodes.ABOVE.install(grad=autograd.grad)  # (the vjp of a named backward function)

ZERO = defop("zero", "ZeroBackward0", np.zeros_like, lambda c, g: (g * 0,), "d zero_(a)/da = 0",
             torch_call="(a * 1).zero_()")
FILL = defop("fill", "FillBackward2", lambda a, value: np.full_like(a, value), lambda c, g: (g * 0,),
             "d fill_(a, v)/da = 0", torch_call="a.clone().fill_(2.5)")
FILL_TENSOR = defop("fill_tensor", "FillBackward3", lambda a, v: np.full_like(a, v),
                    lambda c, g: (g * 0 if c.needs(0) else None, g.sum() if c.needs(1) else None),
                    "d fill_(a, v)/da = 0, d/dv = sum of the gradient",
                    torch_call="a.clone().fill_(b.sum())")


def _swap(fn):
    """Reflected operator: `2 - x` calls x.__rsub__(2)."""
    return lambda self, other: fn(other, self)


def _inplace(fn):
    """x.op_(...) = compute op out of place, write back, rewrite history (Tensor._apply_inplace)."""
    return inplace_of(fn, fn.__name__)


def _clamp_method(name):
    def method(self, *args, **kwargs):
        return E.clamp_impl(self, *E.clamp_bounds(name, args, kwargs, method=True))

    method.__name__ = name
    return method


def _clamp_inplace(name):
    def method(self, *args, **kwargs):
        return _clamp_(self, *E.clamp_bounds(name, args, kwargs, method=True))

    method.__name__ = name
    return method


def _clamp_(self, min=None, max=None):  # noqa: A002
    from .. import dtypes
    from ..tensor import _c_name, _type_word

    bounds = [v for v in (min, max) if v is not None and not isinstance(v, Tensor)]
    result = dtypes.result_type(self, *bounds) if bounds else self.dtype
    if result._category > self.dtype._category:
        raise RuntimeError(f"result type {_type_word(result)} can't be cast to the desired output "
                           f"type {_c_name(self.dtype)}")
    return self._apply_inplace(lambda old: E.clamp_impl(old, min, max))


def _rtruediv(self, other):
    return E.div(other, self)


def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return L.matmul(other, self)


def _matmul_op(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented  # Python's "unsupported operand type(s) for @"
    return L.matmul(self, other)


def _fill_(self, value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions.")
        return self._apply_inplace(lambda old, v: run_op(FILL_TENSOR, (old, v)), value)
    value = E._checked_int(value, self.dtype)
    return self._apply_inplace(lambda old: run_op(FILL, (old,), (value,)), overlap_ok=True)


def _zero_(self):
    return self._apply_inplace(lambda old: run_op(ZERO, (old,)), overlap_ok=True)


#: Python's complex type (the name `complex` here is the ops.complex submodule)
_PY_COMPLEX = (0j).__class__


def _iop(fn):
    """Augmented assignment on tensors is in place, as in PyTorch (`t += 1`)."""

    def method(self, other):
        if not isinstance(other, (Tensor, int, float, bool, _PY_COMPLEX)):
            return NotImplemented
        return self._apply_inplace(lambda old: fn(old, other))

    return method


def _where_method(self, condition, other):
    return E.where(condition, self, other)


def _dtype_method(name):
    from .. import dtypes

    target = dtypes.ALIASES[name]

    def method(self, memory_format=None):
        return S.to(self, target)

    method.__name__ = name
    return method


def _type(self, dtype=None, **kwargs):
    if dtype is None:
        return f"torch.{self.dtype._legacy}"
    from .. import dtypes

    if not isinstance(dtype, dtypes.dtype):
        dtype = _legacy_type(dtype)
    return S.to(self, dtype)


def _legacy_type(spec):
    """The dtype Tensor.type reads from a legacy type name ('torch.DoubleTensor', or the
    class torch.DoubleTensor), with PyTorch's errors for anything else."""
    from .. import dtypes

    constructor = getattr(spec, "_without_out", spec)  # (as the facade wraps it)
    for d in dtypes.ALL:  # (torch.DoubleTensor & co. are functions here)
        if constructor is getattr(creation, d._legacy, None):
            return d
    if isinstance(spec, str):
        name = spec
    elif isinstance(spec, type):
        name = spec.__name__ if spec.__module__ == "builtins" else \
            f"{spec.__module__}.{spec.__name__}"
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    if name == "torch.Tensor":
        return dtypes.get_default_dtype()
    if name.startswith("torch.cuda."):
        raise RuntimeError(_NO_CUDA_LIBRARY)
    short = name[len("torch."):] if name.startswith("torch.") else None
    for d in dtypes.ALL:
        if d._legacy == short:
            return d
    if short in _OTHER_LEGACY:
        raise TypeError(f"{name} is not supported by gradcli")
    raise ValueError(f"invalid type: '{name}'")


_NO_CUDA_LIBRARY = (
    "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you "
    "are trying to use some CUDA functionality, but the CUDA library has not been loaded by the "
    "dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
    "library dependencies if you don't depend on any of their symbols.  You can check if this "
    "has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
    "library.")
_OTHER_LEGACY = frozenset("HalfTensor BFloat16Tensor ShortTensor CharTensor ComplexFloatTensor "
                          "ComplexDoubleTensor".split())


def _new_tensor(self, data, dtype=None, requires_grad=False):
    if isinstance(data, Tensor):
        from ..warn_site import warn_at_caller

        warn_at_caller(creation.COPY_CONSTRUCT.format("tensor.new_tensor"))
        return creation._copy_of(data, dtype or self.dtype, requires_grad)
    return creation.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_ones(self, *size, dtype=None, requires_grad=False):
    return creation.ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_zeros(self, *size, dtype=None, requires_grad=False):
    return creation.zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_full(self, size, fill_value, dtype=None, requires_grad=False):
    return creation.full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _view_as(self, other):
    return V.view(self, other._data.shape)


def _reshape_as(self, other):
    return V.reshape(self, other._data.shape)


expose("Tensor.", {
    # arithmetic and its operators
    "add": E.add, "__add__": E.add_operator, "__radd__": E.add_operator,
    "sub": E.sub, "subtract": E.sub, "__sub__": E.sub_operator, "__rsub__": lambda self, other: E.rsub(self, other),
    "mul": E.mul, "multiply": E.mul, "__mul__": E.mul_operator, "__rmul__": E.mul_operator,
    "div": E.div, "divide": E.div, "true_divide": E.div, "__truediv__": E.div_operator, "__rtruediv__": _rtruediv,
    "floor_divide": E.floor_divide, "__floordiv__": E.floor_divide, "__rfloordiv__": _swap(E.floor_divide),
    "remainder": E.remainder, "fmod": E.fmod, "__mod__": E.remainder, "__rmod__": _swap(E.remainder),
    "pow": E.pow, "__pow__": E.pow, "__rpow__": _swap(E.pow), "square": E.square,
    "neg": E.neg, "negative": E.neg, "__neg__": E.neg, "__pos__": lambda self: self,
    "__abs__": E.abs, "abs": E.abs, "absolute": E.abs,
    "__matmul__": _matmul_op, "__rmatmul__": _rmatmul,
    "__iadd__": _iop(E.add), "__isub__": _iop(E.sub), "__imul__": _iop(E.mul),
    "__itruediv__": _iop(E.div), "__ipow__": _iop(E.pow),
    "__ifloordiv__": _iop(E.floor_divide), "__imod__": _iop(E.remainder),
    # unary math
    "exp": E.exp, "log": E.log, "log1p": E.log1p, "sqrt": E.sqrt, "rsqrt": E.rsqrt,
    "sin": E.sin, "cos": E.cos, "tan": E.tan, "tanh": E.tanh, "sigmoid": E.sigmoid,
    "relu": E.relu, "sign": E.sign, "reciprocal": E.reciprocal,
    "floor": E.floor, "ceil": E.ceil, "round": E.round, "trunc": E.trunc,
    "clamp": _clamp_method("clamp"), "clip": _clamp_method("clip"), "clamp_min": E.clamp_min, "clamp_max": E.clamp_max,
    "maximum": E.maximum, "minimum": E.minimum, "where": _where_method,
    # comparisons and logic
    "eq": E.eq, "__eq__": E.eq, "ne": E.ne, "__ne__": E.ne, "lt": E.lt, "__lt__": E.lt,
    "le": E.le, "__le__": E.le, "gt": E.gt, "__gt__": E.gt, "ge": E.ge, "__ge__": E.ge,
    "logical_not": E.logical_not, "logical_and": E.logical_and, "logical_or": E.logical_or,
    "logical_xor": E.logical_xor, "__invert__": lambda self: E.logical_not(self) if self._data.dtype == np.bool_ else E.bitwise_not(self),
    "__and__": E.bitwise_and, "__or__": E.bitwise_or, "__xor__": E.bitwise_xor,
    "__rand__": E.bitwise_and, "__ror__": E.bitwise_or, "__rxor__": E.bitwise_xor,
    "bitwise_and": E.bitwise_and, "bitwise_or": E.bitwise_or, "bitwise_xor": E.bitwise_xor,
    "bitwise_not": E.bitwise_not,
    "__iand__": _iop(E.bitwise_and), "__ior__": _iop(E.bitwise_or), "__ixor__": _iop(E.bitwise_xor),
    "__lshift__": E.bitwise_left_shift, "__rshift__": E.bitwise_right_shift,
    "__rlshift__": _swap(E.bitwise_left_shift), "__rrshift__": _swap(E.bitwise_right_shift),
    "__ilshift__": _iop(E.bitwise_left_shift), "__irshift__": _iop(E.bitwise_right_shift),
    "bitwise_left_shift": E.bitwise_left_shift, "bitwise_right_shift": E.bitwise_right_shift,
    "bitwise_left_shift_": _inplace(E.bitwise_left_shift),
    "bitwise_right_shift_": _inplace(E.bitwise_right_shift),
    "isnan": E.isnan, "isinf": E.isinf, "isfinite": E.isfinite,
    "allclose": creation.allclose, "isclose": creation.isclose, "equal": creation.equal,
    # reductions
    "sum": R.sum, "mean": R.mean, "prod": R.prod, "max": R.max, "min": R.min,
    "amax": R.amax, "amin": R.amin, "argmax": R.argmax, "argmin": R.argmin, "norm": R.norm,
    "std": R.std, "var": R.var, "logsumexp": R.logsumexp, "cumsum": R.cumsum,
    "cumprod": R.cumprod,
    "all": R.all, "any": R.any, "count_nonzero": R.count_nonzero,
    # linear algebra
    "matmul": L.matmul, "mm": L.mm, "mv": L.mv, "dot": L.dot, "bmm": L.bmm, "outer": L.outer,
    "ger": L.outer,
    # shape
    "reshape": V.reshape, "view": V.view, "view_as": _view_as, "reshape_as": _reshape_as,
    "flatten": V.flatten, "squeeze": V.squeeze, "unsqueeze": V.unsqueeze,
    "transpose": V.transpose, "swapaxes": V.transpose, "t": V.t, "permute": V.permute,
    "expand": V.expand, "expand_as": V.expand_as, "select": V.select, "narrow": V.narrow,
    "__getitem__": V.getitem, "__setitem__": V.setitem,
    "repeat": S.repeat, "split": S.split, "chunk": S.chunk, "unbind": S.unbind,
    "split_with_sizes": S.tensor_split_with_sizes, "index_put": V.tensor_index_put,
    "index_put_": V.tensor_index_put_,
    "contiguous": S.contiguous, "clone": S.clone, "flip": S.flip, "nonzero": S.nonzero,
    "type_as": S.type_as, "type": _type,  # Tensor.to: placement.py (devices, then dtype)
    "float": _dtype_method("float"), "double": _dtype_method("double"),
    "long": _dtype_method("long"), "int": _dtype_method("int"), "bool": _dtype_method("bool"),
    "softmax": nn.softmax, "log_softmax": nn.log_softmax,
    "new_tensor": _new_tensor, "new_ones": _new_ones, "new_zeros": _new_zeros, "new_full": _new_full,
    # in place
    "zero_": _zero_, "fill_": _fill_, "copy_": V.copy_,
    "add_": _inplace(E.add), "sub_": _inplace(E.sub), "mul_": _inplace(E.mul),
    "div_": _inplace(E.div), "pow_": _inplace(E.pow), "clamp_": _clamp_inplace("clamp_"), "clip_": _clamp_inplace("clip_"),
    "clamp_min_": _inplace(E.clamp_min), "clamp_max_": _inplace(E.clamp_max),
    "remainder_": _inplace(E.remainder), "fmod_": _inplace(E.fmod), "true_divide_": _inplace(E.div),
    "divide_": _inplace(E.div), "multiply_": _inplace(E.mul), "subtract_": _inplace(E.sub),
    "negative_": _inplace(E.neg), "absolute_": _inplace(E.abs), "fix": E.trunc, "fix_": _inplace(E.trunc),
    "bitwise_and_": _inplace(E.bitwise_and), "bitwise_or_": _inplace(E.bitwise_or),
    "bitwise_xor_": _inplace(E.bitwise_xor),
    "less": E.lt, "greater": E.gt, "less_equal": E.le, "greater_equal": E.ge, "not_equal": E.ne,
})

# the in-place twin of each of these plain functions: Tensor.exp_ ...
expose("Tensor.", {name + "_": _inplace(getattr(E, name)) for name in (
    "exp log neg relu sigmoid tanh sqrt abs sin cos reciprocal square log1p rsqrt tan floor "
    "ceil round trunc sign").split()})

# torch.NAME for the functions of each op module (the names a .grad program sees bare too)
expose_from("torch.", creation, "BoolTensor DoubleTensor FloatTensor IntTensor LongTensor "
            "allclose arange as_tensor empty empty_like equal eye full full_like "
            "is_floating_point is_tensor isclose linspace numel ones ones_like rand rand_like "
            "randint randint_like randn randn_like randperm tensor zeros zeros_like")
expose_from("torch.", E, "abs add bitwise_and bitwise_left_shift bitwise_not bitwise_or "
            "bitwise_right_shift bitwise_xor ceil clamp clamp_max clamp_min clip cos div eq exp "
            "floor floor_divide fmod ge gt isfinite isinf isnan le log log1p logical_and "
            "logical_not logical_or logical_xor lt maximum minimum mul ne neg pow reciprocal "
            "relu remainder round rsqrt rsub sigmoid sign sin sqrt square sub tan tanh trunc where")
expose_from("torch.", L, "addmm bmm dot ger matmul mm mv outer")
expose_from("torch.", nn, "log_softmax softmax")
# Python 2's name, still a Tensor method: PyTorch's reciprocal() * other (MulBackward0)
expose("Tensor.", {"__rdiv__": lambda self, other: E.mul(E.reciprocal(self), other)})
expose("torch.", {"binary_cross_entropy_with_logits": nn.torch_binary_cross_entropy_with_logits,
                  "absolute": E.abs, "negative": E.neg, "subtract": E.sub, "multiply": E.mul,
                  "divide": E.div, "true_divide": E.div, "swapaxes": V.transpose})
expose_from("torch.", R, "all amax amin any argmax argmin count_nonzero cumprod cumsum "
            "logsumexp max mean min norm prod std sum var")
expose_from("torch.", S, "cat chunk clone concat concatenate flip hstack nonzero split "
            "split_with_sizes stack unbind vstack")
expose_from("torch.", V, "flatten index_put index_put_ narrow permute reshape select squeeze t "
            "transpose unsqueeze")

def _H(x):  # noqa: N802
    """Tensor.H: the conjugate transpose of a matrix (for real tensors its transpose,
    TransposeBackward0); 0-d tensors pass with PyTorch's deprecation warning."""
    n = x._data.ndim
    if n == 0:
        from ..warn_site import warn_once

        warn_once("H_0d", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj(). "
                  "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                  "TensorShape.cpp:4335.)")
        return x
    if n != 2:
        hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")
    return _adjoint_of(V.transpose(x, -2, -1))  # (the dims PyTorch's node saves)


def _adjoint_of(t):
    """A complex transpose is conjugated too (ConjBackward0 over TransposeBackward0)."""
    return PUBLIC["torch.conj"](t) if t._data.dtype.kind == "c" else t


PROPERTIES = {"T": V.numpy_T, "mT": V.mT, "H": _H, "mH": lambda x: _adjoint_of(V.mT(x))}


def install_methods() -> None:
    for name, fn in public_names("Tensor.").items():
        setattr(Tensor, name, fn)
    for name, fn in PROPERTIES.items():
        setattr(Tensor, name, property(fn))


# torch.exp_(t), torch.relu_(t), ...: PyTorch's in-place function forms are its Tensor methods
# called with the tensor first (those whose method gradcli has)
TORCH_INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_",
    "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_", "lcm_", "ldexp_",
    "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
    "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "dropout_",
    "alpha_dropout_", "feature_alpha_dropout_", "feature_dropout_", "selu_", "celu_", "rrelu_",
    "zero_", "index_put_",
)


def install_torch_inplace_functions() -> None:
    methods = public_names("Tensor.")
    torch_names = public_names("torch.")
    for name in TORCH_INPLACE_FUNCTIONS:
        method = methods.get(name) or getattr(Tensor, name, None)
        if method is not None and name not in torch_names:
            public(f"torch.{name}")(method)


install_torch_inplace_functions()
install_methods()
# PyTorch gives nan/inf silently; so do the ops, without changing the caller's numpy
# error state (engine/fpstate.py); views compute nothing and keep their forwards as keys
quiet_forwards(op for op in OPS.values() if not V.is_view_forward(op.forward))

complex_ops.install_refusals()  # (PyTorch's errors for complex input to max, sort, floor...)
from . import sparse_functions  # noqa: E402  # isort: skip
sparse_functions.install()  # (sparse results or PyTorch's refusals for a sparse COO input)
from . import out_variants  # noqa: E402,F401  (out= on every torch.* function declared above)  # isort: skip
