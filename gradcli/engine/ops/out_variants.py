"""`out=` for the torch.* functions: the result is written into the given tensor(s).

PyTorch's out= variants compute the result, resize the out tensor to it (warning when
a non-empty one had another shape), cast into its dtype where the cast is allowed and
write it, bumping its version; they refuse to run when autograd would have to record
them (grad mode on and an input or the out tensor requiring grad). One wrapper does
that for every public function that declares an `out` parameter (many used to accept
and ignore it) and for the elementwise, reduction and product functions listed in
`ADDED` / `ADDED_TOO`.

The same wrapping point is the public boundary's argument check: every public torch.*,
nn.functional, linalg and special function and every op-table Tensor method is wrapped
once, and a call that raises (or answers NotImplemented) is re-read against PyTorch's
signatures (`_recover`, arg_checks): PyTorch's TypeError for arguments that fit none,
or the call made again where only a keyword name of PyTorch's was refused. A good call
costs the wrapper's one extra Python call and nothing else; the operators (x + y) are
not wrapped at all.

Imported after the other op modules (engine/ops/__init__.py), so it sees their names.
"""

from __future__ import annotations

from .. import tensor as _tensor_mod
from ..grad_mode import GRAD_MODE
from ..tensor import Tensor, _write_into
from ..warn_site import warn_at_caller
from .registry import PUBLIC

# torch.* functions PyTorch gives an out= variant that gradcli's signatures lack
ADDED = frozenset("""
abs acos acosh add addmm asin asinh atan atan2 atanh bmm cat ceil clamp clamp_max clamp_min
clip cos cosh cumprod cumsum div divide dot exp exp2 expm1 floor floor_divide fmod frac ge gt
hypot le log log10 log1p log2 logical_and logical_not logical_or logical_xor lt matmul maximum
mean minimum mm mul multiply mv ne neg negative outer pow prod reciprocal remainder round
rsqrt sigmoid sign sin sinh sqrt square stack sub subtract sum tan tanh true_divide trunc eq
""".split())

# more public functions (without "torch.") whose PyTorch signatures take out=, found by
# the keyword sweep (tests/test_public_keyword_sweep.py)
ADDED_TOO = frozenset("""
absolute addcdiv addcmul alias_copy all amax amin aminmax angle any arange arccos arccosh
arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort as_strided_copy bitwise_and
bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor column_stack
concat concatenate conj_physical copysign cummax cummin deg2rad diag diagonal_copy diff
digamma dstack erf erfc erfinv expand_copy eye float_power fmax fmin frexp gather ger
hardshrink histc histogram hstack i0 index_add index_copy index_reduce index_select inner kron kthvalue
ldexp lerp lgamma linalg.lstsq linalg.matrix_power linspace log_softmax logaddexp logaddexp2
logcumsumexp logit logsumexp lu_unpack masked_select matrix_power max median min mode msort
mvlgamma nan_to_num nanmean nanmedian nanquantile nansum narrow_copy native_batch_norm
nextafter nn.functional.avg_pool2d nn.functional.avg_pool3d nn.functional.gelu
nn.functional.hardshrink nn.functional.logsigmoid nn.functional.softplus
nn.functional.softshrink nonzero nonzero_static ormqr permute_copy polygamma quantile rad2deg renorm scatter
scatter_add scatter_reduce sgn signbit sinc slice_scatter slogdet softmax sort special.digamma
special.entr special.erf special.erfc special.erfcx special.erfinv special.exp2
special.expit special.expm1 special.gammaln special.i0 special.i0e special.i1 special.i1e
special.log1p special.log_ndtr special.logit special.logsumexp special.multigammaln
special.ndtr special.ndtri special.polygamma special.psi special.round special.sinc
special.xlog1py special.xlogy special.zeta split_with_sizes_copy squeeze_copy std t_copy
take take_along_dim threshold topk transpose_copy tril triu unbind_copy unfold_copy
unsqueeze_copy var view_copy vstack where xlogy igamma igammac special.gammainc
special.gammaincc
""".split())

_PREFIXES = ("torch.", "torch.linalg.", "torch.special.")
# where PyTorch's function is a composite, its error names the op that got the out=
_ERROR_NAMES = {"linalg_inv": "linalg_inv_ex", "inverse": "linalg_inv_ex"}


_RERAISE = object()


def _recover(fn, public_name: str, args: tuple, kwargs: dict, err: Exception, skip: int = 0):
    """A call of public function `fn` raised `err`: raise PyTorch's argument error if the
    arguments fit none of PyTorch's signatures; if they do fit and `fn` only refused a
    keyword name of PyTorch's (`torch.linalg.cholesky(input=a)`, `x.max(other=y)`), call
    it again with those arguments passed by position, as PyTorch's parser would bind
    them; else give _RERAISE (the original error stands). `skip`: leading arguments the
    parser does not see (a method's tensor). Runs only after a failure (imports then)."""
    from .arg_checks import diagnose, rebind

    if not public_name:
        return _RERAISE
    better = diagnose(public_name, args[skip:], kwargs)
    if better is not None:
        raise better from None
    tb = err.__traceback__
    if not isinstance(err, TypeError) or tb is None:
        return _RERAISE
    # fn may be a chain of wrappers (sparse routing, then a complex refusal) each passing
    # *args, **kwargs on through __wrapped__: the error counts as a refused keyword only
    # when it was raised by a call into that chain, the traceback one frame per wrapper
    chain = [fn]
    while getattr(chain[-1], "__wrapped__", None) is not None and len(chain) < 8:
        chain.append(chain[-1].__wrapped__)
    depth, frame = 0, tb.tb_next
    while frame is not None:
        depth, frame = depth + 1, frame.tb_next
    if depth < len(chain):
        call = rebind(public_name, args[skip:], kwargs, _keywords(chain[depth]))
        if call is not None:
            return fn(*args[:skip], *call[0], **call[1])
    return _RERAISE


def _refuse(public_name: str, args: tuple, kwargs: dict, skip: int):
    """Raise PyTorch's error for a call gradcli's function answered NotImplemented (an
    operator's way of refusing an operand, which a named function must not return)."""
    from .arg_checks import diagnose

    error = diagnose(public_name, args[skip:], kwargs)
    if error is None:
        kinds = ", ".join(type(a).__name__ for a in args)
        error = TypeError(f"{public_name.rpartition('.')[2]}(): unsupported argument types "
                          f"({kinds})")
    raise error


def _arg_error(public_name: str, args: tuple, kwargs: dict) -> None:
    """Raise PyTorch's argument error for this call of `public_name` if its arguments fit
    none of PyTorch's signatures (the Tensor class's own methods ask, once a call failed
    or an argument looked wrong)."""
    from .arg_checks import diagnose

    error = diagnose(public_name, args, kwargs)
    if error is not None:
        raise error


_tensor_mod.ABOVE.install(arg_error=_arg_error)

# The Tensor class's own methods whose PyTorch twins are parser-checked with optional
# parameters: Python words an unknown keyword after the function's qualified name, so
# named as PyTorch's parser names them ("size() got an unexpected keyword argument 'foo'")
# they give its text at no cost to a good call.
for _name in ("size", "stride", "is_contiguous", "requires_grad_"):
    Tensor.__dict__[_name].__qualname__ = _name
_tensor_mod.seal(Tensor, ("T", "mT", "H"))  # (installed by ops.install_methods)


def _keywords(fn):
    """The keyword names `fn` takes (None: any, through **kwargs)."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & 0x08:  # CO_VARKEYWORDS
        return None
    return frozenset(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


def _requires_grad(args, kwargs) -> bool:
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            if a.requires_grad:
                return True
        elif isinstance(a, (list, tuple)):
            if any(isinstance(x, Tensor) and x.requires_grad for x in a):
                return True
    return False


def _has_tangent(args, kwargs, outs) -> bool:
    """Whether a tensor argument or out tensor is dual (forward AD has no out= variants)."""
    tangent_of = _tensor_mod.FORWARD_AD_TANGENT
    for a in list(args) + list(kwargs.values()) + list(outs):
        for x in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(x, Tensor) and tangent_of(x) is not None:
                return True
    return False


def _shape_text(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


# the C++ type names PyTorch's structured kernels print for a dtype ("long int")
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}
# ScalarType names ("Long") and legacy tensor-type names ("torch.FloatTensor")
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
                 "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                 "complex128": "ComplexDouble"}


def _dtype_key(t) -> str:
    return str(t.dtype).rpartition(".")[2]


def _structured(i, out, result, name, kwargs):
    """Structured kernels (argmax, max.dim, sort, topk): every out tensor must have the
    result's dtype exactly; no cast."""
    want, got = _dtype_key(result), _dtype_key(out)
    if want != got:
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAMES.get(want, want)}, "
                           f"but got {_CPP_NAMES.get(got, got)} instead")


def _pair_rule(values_text, indices_text):
    """An op whose values output (the first) must have the result's dtype and indices
    output (the second) int64, each worded its own way ({want}, {got}: ScalarType names)."""
    def check(i, out, result, name, kwargs):
        want, got = ("int64" if i else _dtype_key(result)), _dtype_key(out)
        if got != want:
            raise RuntimeError((indices_text if i else values_text).format(
                want=_SCALAR_NAMES.get(want, want), got=_SCALAR_NAMES.get(got, got)))
    return check


def _nonzero_rule(i, out, result, name, kwargs):
    got = _dtype_key(out)
    if got != "int64":
        raise RuntimeError("nonzero: Expected out tensor to have scalar type Long but got "
                           f"scalar type{_SCALAR_NAMES.get(got, got)}")


def _searchsorted_rule(i, out, result, name, kwargs):
    int32 = bool(kwargs.get("out_int32", False))
    got = _dtype_key(out)
    if got != ("int32" if int32 else "int64"):
        raise RuntimeError(
            "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
            "Long(int64) depending on whether out_int32 flag is True, but we got output "
            f"tensor's dtype {_SCALAR_NAMES.get(got, got)} and out_int32 flag is "
            f"{'True' if int32 else 'False'}")


_MEDIAN = _pair_rule("Expected tensor for 'values' to have the same type as tensor for argument "
                     "#2 'self'; but type torch.{got}Tensor does not equal torch.{want}Tensor "
                     "(while checking arguments for median)",
                     "Expected tensor for argument #1 'indices' to have scalar type Long; but "
                     "got torch.{got}Tensor instead (while checking arguments for median)")
_CUMULATIVE = _pair_rule("expected scalar_type {want} but found {got}",
                         "expected scalar_type Long but found {got}")
# out= functions whose out tensors PyTorch checks for a dtype before writing (the others
# take any dtype the result can be cast to): name -> check(i, out, result, name, kwargs)
_OUT_DTYPE_RULES = {
    "argmax": _structured, "argmin": _structured, "max": _structured, "min": _structured,
    "sort": _structured, "topk": _structured,
    "kthvalue": _pair_rule("output values must be of same type as input",
                           "output indices must be of scalar type Long"),
    "cummax": _CUMULATIVE, "cummin": _CUMULATIVE,
    "mode": _pair_rule("expected scalar type '{want}' but got '{got}' for values output",
                       "expected scalar type 'Long' but got '{got}' for indices output"),
    "median": _MEDIAN, "nanmedian": _MEDIAN,
    "nonzero": _nonzero_rule, "searchsorted": _searchsorted_rule,
    "bucketize": _searchsorted_rule,
}

def _narrow_copy_rule(i, out, result, name, kwargs):
    if _dtype_key(out) != _dtype_key(result):
        raise RuntimeError("Expected self.dtype() == output.dtype() to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")


# the functional view copies are structured kernels too (out= of the result's dtype only)
_OUT_DTYPE_RULES.update(dict.fromkeys((
    "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy",
    "permute_copy", "select_copy", "slice_copy", "split_with_sizes_copy", "squeeze_copy",
    "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy",
    "view_as_complex_copy", "view_as_real_copy", "view_copy"), _structured))
_OUT_DTYPE_RULES["narrow_copy"] = _narrow_copy_rule
_INDICES_FIRST = frozenset(("median", "nanmedian"))  # (their indices are checked first)


def _copy_into(out, result) -> Tensor:
    """split_copy's out=: PyTorch copies each piece into the given tensor (copy_), so the
    out tensor is never resized: the piece is broadcast to its shape and cast to its dtype."""
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be Tensor, not {type(out).__name__}")
    have, want = result._data.shape, out._data.shape
    if have != want:
        n = max(len(have), len(want))
        a, b = (1,) * (n - len(want)) + want, (1,) * (n - len(have)) + have
        for d in range(n - 1, -1, -1):
            if a[d] != b[d] and a[d] != 1 and b[d] != 1:
                raise RuntimeError(f"The size of tensor a ({a[d]}) must match the size of tensor "
                                   f"b ({b[d]}) at non-singleton dimension {d}")
    from .. import dtypes

    values = result._data
    if values.dtype != out._data.dtype:
        values = dtypes.cast(values, out._data.dtype)
    _write_into(out, values)
    out._vc[0] += 1
    return out
_OUT_TYPES: dict = {}


def _out_return_type(cls):
    """torch.return_types.NAME_out, what an out= call of a function returning NAME gives."""
    out_cls = _OUT_TYPES.get(cls)
    if out_cls is None:
        old, new = f"torch.return_types.{cls.__name__}(", f"torch.return_types.{cls.__name__}_out("

        def __repr__(self):
            return cls.__repr__(self).replace(old, new, 1)

        out_cls = _OUT_TYPES[cls] = type(cls.__name__ + "_out", (cls,), {
            "__slots__": (), "__module__": "torch.return_types", "__repr__": __repr__,
            "__str__": __repr__})
    return out_cls


# factories that resize their out tensor themselves, without the resize warning
_SILENT_RESIZE = frozenset(("zeros", "ones", "empty", "full", "linspace", "logspace"))
# ...and those that give their own warning, when the number of elements changes
_RANGE_RESIZE = frozenset(("arange", "range"))
# the range factories fill an out tensor with the right number of elements in its own shape
_KEEPS_SHAPE = frozenset(("arange", "range", "linspace", "logspace"))


def _range_resize_warning(out: Tensor, shape: tuple) -> None:
    count = 1
    for n in shape:
        count *= n
    if out._data.size != count:
        warn_at_caller(
            f"The number of elements in the out tensor of shape {_shape_text(out._data.shape)} "
            f"is {out._data.size} which does not match the computed number of elements {count}. "
            "Note that this may occur as a result of rounding error. The out tensor will be "
            f"resized to a tensor of shape ({count},). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/RangeFactories.cpp:199.)")


def write_out(out: Tensor, result: Tensor, name: str = "") -> Tensor:
    """Write `result` into `out` as an out= variant does (resize, cast check, version);
    `name`: the function, whose resize warning may be its own or none."""
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be Tensor, not {type(out).__name__}")
    values = result._data if isinstance(result, Tensor) else result
    if name in _KEEPS_SHAPE and out._data.size == values.size:
        values = values.reshape(out._data.shape)
    if out._data.shape != values.shape:
        if name in _RANGE_RESIZE:
            _range_resize_warning(out, values.shape)
        elif out._data.size and name not in _SILENT_RESIZE:
            warn_at_caller(
                f"An output with one or more elements was resized since it had shape "
                f"{_shape_text(out._data.shape)}, which does not match the required output shape "
                f"{_shape_text(values.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0). (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                "Resize.cpp:30.)")
        from .. import dtypes
        from ..tensor import _type_word

        src, dst = dtypes.FROM_NP[values.dtype], dtypes.FROM_NP[out._data.dtype]
        if src._category > dst._category:
            raise RuntimeError(f"result type {_type_word(src)} can't be cast to the desired "
                               f"output type {_type_word(dst)}")
        out._data = values.astype(out._data.dtype, copy=True)
    else:
        _write_into(out, values)
    out._vc[0] += 1
    return out


def with_out(fn, name: str, public_name: str = ""):
    """`fn` taking out=: without it the call goes straight through. A call that raises
    is re-read against PyTorch's signatures (`_recover`): a bad argument gives PyTorch's
    TypeError instead of whatever the body tripped over."""

    def function(*args, out=None, **kwargs):
        if out is None:
            try:
                result = fn(*args, **kwargs)
            except Exception as err:
                result = _recover(fn, public_name, args, kwargs, err)
                if result is _RERAISE:
                    raise
            if result is NotImplemented:  # a binary op's answer to an operand it cannot take
                _refuse(public_name, args, kwargs, 0)
            return result
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if GRAD_MODE.enabled and (_requires_grad(args, kwargs) or any(
                isinstance(o, Tensor) and o.requires_grad for o in outs)):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        dual = _tensor_mod.FORWARD_AD_TANGENT is not None and _has_tangent(args, kwargs, outs)
        if public_name:  # (out= calls are rare: PyTorch's parser check runs first here)
            from .arg_checks import diagnose

            better = diagnose(public_name, args, dict(kwargs, out=out))
            if better is not None:
                raise better
        try:
            result = fn(*args, **kwargs)
        except Exception as err:
            result = _recover(fn, public_name, args, kwargs, err)
            if result is _RERAISE:
                raise
        rule = _OUT_DTYPE_RULES.get(name)
        if isinstance(out, (tuple, list)):
            results = tuple(result)
            if name == "split_copy":
                if len(results) != len(outs):
                    raise RuntimeError(f"split_copy_Tensor_out() expected an out= argument of "
                                       f"size {len(results)}, got size {len(outs)}")
                return [_copy_into(o, r) for o, r in zip(outs, results)]
            if len(results) != len(outs):
                # (PyTorch's parser reads out= as a tuple of that many tensors)
                raise TypeError(f"expected tuple of {len(results)} elements but got {len(outs)}")
            if rule is not None:
                pairs = list(enumerate(zip(outs, results)))
                for i, (o, r) in reversed(pairs) if name in _INDICES_FIRST else pairs:
                    if isinstance(o, Tensor) and isinstance(r, Tensor):
                        rule(i, o, r, name, kwargs)
            written = tuple(write_out(o, r) for o, r in zip(outs, results))
            if hasattr(result, "_fields"):
                written = type(result)(written)
            elif type(result) is not tuple and isinstance(result, tuple) and \
                    type(result).__module__ == "torch.return_types":
                written = tuple.__new__(_out_return_type(type(result)), written)
        else:
            if rule is not None and isinstance(out, Tensor) and isinstance(result, Tensor):
                rule(0, out, result, name, kwargs)
            written = write_out(out, result, name)
        if dual:  # (PyTorch refuses after the write, as here)
            raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not "
                                      "support it because it is an out= function")
        return written

    return _named_like(function, fn, name)


def checked(fn, public_name: str, method: bool = False, ok=None):
    """`fn` as is, but a call that raises is re-read against PyTorch's signatures (see
    `_recover`); `method`: args[0] is the tensor itself, which the parser does not see.
    A function answering NotImplemented for an operand it does not take (as x.add shares
    x.__add__'s way of refusing one) raises instead. `ok`: see `prechecked` (in the
    same wrapper, so that such a function pays no second call)."""
    skip = 1 if method else 0
    if ok is not None:
        return prechecked(fn, public_name, ok, method)
    return _named_like(_checked_body(fn, public_name, skip), fn, public_name)


def _checked_body(fn, public_name: str, skip: int):
    def function(*args, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except Exception as err:
            result = _recover(fn, public_name, args, kwargs, err, skip)
            if result is _RERAISE:
                raise
        if result is NotImplemented:  # a binary op's answer to an operand it cannot take
            _refuse(public_name, args, kwargs, skip)
        return result

    return function


# Functions whose body takes some bad arguments without failing (PyTorch's parser
# refuses them): a cheap test of the call's shape runs first, and only a call failing it
# is read against the signatures (`diagnose`). The tests, on the arguments after self:
def _first_tensor(args, kwargs, skip):
    return len(args) > skip and isinstance(args[skip], Tensor)


def _no_positional(args, kwargs, skip):
    return len(args) == skip


def _first_not_none(args, kwargs, skip):
    return len(args) <= skip or args[skip] is not None


def _first_bool(args, kwargs, skip):
    return len(args) <= skip or type(args[skip]) is bool


def _positional_at_most(n):
    def test(args, kwargs, skip):
        return len(args) - skip <= n
    return test


def _all(*tests):
    def test(args, kwargs, skip):
        return all(t(args, kwargs, skip) for t in tests)
    return test


def _known_keywords(public_name: str):
    """Every keyword is a parameter name of one of PyTorch's signatures (the names are
    read from the table on the first call with keywords)."""
    names: list = []

    def test(args, kwargs, skip):
        if not kwargs:
            return True
        if not names:
            from .arg_checks import signatures_of

            sigs = signatures_of(public_name)
            names.append(frozenset(alias for sig in sigs for p in sig.params
                                   for alias in p.aliases) if isinstance(sigs, list) else None)
        return names[0] is None or kwargs.keys() <= names[0]
    return test


def _one_positional_only(args, kwargs, skip):
    """torch.from_numpy, a METH_O builtin: Python's own wording of its arity."""
    if kwargs:
        raise TypeError("torch._VariableFunctionsClass.from_numpy() takes no keyword arguments")
    if len(args) != 1:
        raise TypeError("torch._VariableFunctionsClass.from_numpy() takes exactly one "
                        f"argument ({len(args)} given)")
    return True


def _bool_argument(public_name: str, op: str, param: str):
    """A Python-level method whose first argument goes on, by keyword, to op `op`'s
    bool parameter `param` (Tensor.unique's `sorted` to _unique2): that op's error,
    once Python's own arity check has passed."""
    def test(args, kwargs, skip):
        if len(args) > skip and type(args[skip]) is not bool:
            from .arg_checks import _typename, diagnose

            error = diagnose(public_name, args[skip:], kwargs)
            raise error if error is not None else TypeError(
                f"{op}(): argument '{param}' must be bool, not {_typename(args[skip])}")
        return True
    return test


def _lu_pivot(args, kwargs, skip):
    """Tensor.lu hands `pivot` on by keyword to _lu_with_info, whose parser wants a bool
    (get_infos is only negated); a call Python itself refuses is left to the stub."""
    if len(args) - skip > 2 or not kwargs.keys() <= {"pivot", "get_infos"}:
        return False
    pivot = args[skip] if len(args) > skip else kwargs.get("pivot", True)
    if type(pivot) is not bool:
        from .arg_checks import _typename

        raise TypeError(f"_lu_with_info(): argument 'pivot' must be bool, not "
                        f"{_typename(pivot)}")
    return True


_NORM_ORDERS = (int, float, bool, str, type(None))


def _norm_order(args, kwargs, skip):
    """Tensor.norm hands an order that is no str on to linalg.vector_norm as its second
    argument: that parser's error for one that is not a number."""
    p = args[skip] if len(args) > skip else kwargs.get("p")
    if type(p) in _NORM_ORDERS or isinstance(p, Tensor):
        return True
    import numbers

    if not isinstance(p, numbers.Number):
        from .arg_checks import diagnose

        error = diagnose("torch.linalg.vector_norm", (args[0], p), {})
        if error is not None:
            raise error
    return True


_PRECHECKS = {
    **dict.fromkeys((
        "torch.clone", "torch.conj", "torch.conj_physical", "torch.real", "torch.resolve_conj",
        "torch.resolve_neg", "torch.nn.functional.alpha_dropout",
        "torch.nn.functional.feature_alpha_dropout", "Tensor.logical_and", "Tensor.logical_or",
        "Tensor.logical_xor", "Tensor.copy_"), _first_tensor),
    **dict.fromkeys((
        "Tensor.float", "Tensor.double", "Tensor.int", "Tensor.long", "Tensor.bool",
        "Tensor.half", "Tensor.short", "Tensor.char", "Tensor.byte", "Tensor.bfloat16",
        "Tensor.cfloat", "Tensor.cdouble", "Tensor.cpu", "Tensor.contiguous"), _no_positional),
    **dict.fromkeys((
        "Tensor.clamp_max", "Tensor.clamp_max_", "Tensor.clamp_min", "Tensor.clamp_min_",
        "Tensor.fill_", "Tensor.log_softmax", "Tensor.softmax", "Tensor.logsumexp",
        "Tensor.max", "Tensor.min", "Tensor.median", "Tensor.nanmedian", "Tensor.prod",
        "Tensor.view", "Tensor.set_", "Tensor.bernoulli"), _first_not_none),
    **dict.fromkeys(("Tensor.cholesky_inverse", "Tensor.qr", "Tensor.svd",
                     "Tensor.requires_grad_"), _first_bool),
    "torch.tile": _positional_at_most(2), "Tensor.uniform_": _positional_at_most(2),
    "Tensor.random_": _all(_positional_at_most(2), _first_not_none,
                           _known_keywords("Tensor.random_")),
    "torch.cartesian_prod": _first_tensor, "Tensor.lu": _lu_pivot, "Tensor.norm": _norm_order, "torch.from_numpy": _one_positional_only,
    "Tensor.set_": _first_not_none,
    "Tensor.squeeze": _first_not_none, "Tensor.squeeze_": _first_not_none,
    "Tensor.unique": _bool_argument("Tensor.unique", "_unique2", "sorted"),
    "Tensor.unique_consecutive": _bool_argument("Tensor.unique_consecutive",
                                                "unique_consecutive", "return_inverse"),
    **{name: _known_keywords(name) for name in (
        "torch.empty_like", "torch.ones_like", "torch.zeros_like", "torch.rand_like",
        "torch.randn_like", "torch.normal", "Tensor.new", "Tensor.type")},
}


def prechecked(fn, public_name: str, ok, method: bool = False, inner=None):
    """`inner` (a wrapper of `fn`: `with_out`'s, or `checked`'s body), with
    `ok(args, kwargs, skip)` run first: a call it refuses gets PyTorch's argument error
    when the signatures say so (and runs as before when they let it pass)."""
    skip = 1 if method else 0

    def refuse(args, kwargs):
        from .arg_checks import diagnose

        error = diagnose(public_name, args[skip:], kwargs)
        if error is not None:
            raise error

    if inner is None:
        inner = _checked_body(fn, public_name, skip)

        def function(*args, **kwargs):
            if not ok(args, kwargs, skip):
                refuse(args, kwargs)
            return inner(*args, **kwargs)
    else:
        def function(*args, out=None, **kwargs):  # (a with_out wrapper: out= shows)
            if not ok(args, kwargs, skip):
                refuse(args, kwargs if out is None else dict(kwargs, out=out))
            return inner(*args, out=out, **kwargs)

    return _named_like(function, fn, public_name)


def _named_like(function, fn, name):
    function.__name__ = getattr(fn, "__name__", name)
    function.__qualname__ = getattr(fn, "__qualname__", name)
    function.__doc__ = getattr(fn, "__doc__", None)
    function.__module__ = getattr(fn, "__module__", __name__)
    function._without_out = fn
    return function


def _declares_out(fn) -> bool:
    """Whether `fn` has a parameter named out (read from its code object: inspect's
    signature would cost ~30 ms of start-up over all the public functions). A refusing
    wrapper (complex input: ops/complex.py) is read through to the function it wraps."""
    while getattr(fn, "__wrapped__", None) is not None:
        fn = fn.__wrapped__
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    return "out" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


_CHECKED_PREFIXES = _PREFIXES + ("torch.nn.functional.",)


def install() -> None:
    """Wrap each public function once: out= where PyTorch has it, and everywhere the
    re-reading of failed calls against PyTorch's signatures (Tensor methods included)."""
    for pname, fn in list(PUBLIC.items()):
        if not callable(fn) or isinstance(fn, type) or getattr(fn, "_without_out", None):
            continue
        short = pname.rpartition(".")[2]
        if short.startswith("_"):
            continue
        if pname.startswith("Tensor."):
            if "." not in short and getattr(Tensor, short, None) is fn:
                PUBLIC[pname] = wrapper = checked(fn, pname, True, _PRECHECKS.get(pname))
                setattr(Tensor, short, wrapper)
            continue
        if not pname.startswith(_CHECKED_PREFIXES):
            continue
        if not short.endswith("_") and ((pname.count(".") == 1 and short in ADDED)
                                        or pname[len("torch."):] in ADDED_TOO
                                        or (pname.startswith(_PREFIXES) and _declares_out(fn))):
            # (PyTorch's name in the error: mul, linalg_inv, special_expit)
            name = pname[len("torch."):].replace(".", "_")
            PUBLIC[pname] = with_out(fn, _ERROR_NAMES.get(name, name), pname)
            if pname in _PRECHECKS:
                PUBLIC[pname] = prechecked(fn, pname, _PRECHECKS[pname], inner=PUBLIC[pname])
        else:
            PUBLIC[pname] = checked(fn, pname, False, _PRECHECKS.get(pname))


install()
