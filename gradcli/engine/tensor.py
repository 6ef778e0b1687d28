"""The Tensor: a numpy array plus PyTorch's autograd state.

Only the autograd core lives here (state, views and version counters, in-place
writes, hooks, backward entry points). The ops themselves are declared once in
`gradcli.engine.ops` and installed as methods by `ops.install_methods`.
"""

from __future__ import annotations

import warnings
from weakref import ReferenceType as _WeakRef
from weakref import ref as _weak_ref

import numpy as np

from . import dtypes
from . import inference as _inference
from . import node as node_module
from .grad_mode import GRAD_MODE, INFERENCE_ACTIVE
from .late import Slots
from .node import AccumulateGrad, RemovableHandle, mark_detached_in_place, short_name
from .node import _sequence as _node_sequence
from .warn_site import warn_once

#: what tensors use of the modules above: printing (formatting.py), backward
#: (autograd.py) and the view machinery of the op table (ops/views.py)
#: and PyTorch's argument errors (ops/out_variants.py), asked only once a call has failed
ABOVE = Slots("gradcli.engine.tensor", "tensor_repr", "backward", "view_strides",
              "rewrite_base_history", "regenerate_grad_fn", "region_index", "arg_error")

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
    "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)
ONLY_FLOAT_GRAD = "only Tensors of floating point dtype can require gradients"
#: PyTorch's once-per-process warning on float()/complex() of a tensor that requires grad
#: in grad mode (torch.tensor of a list holding one gives it too)
SCALAR_OF_GRAD_TENSOR = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first. (Triggered internally at /__w/pytorch/pytorch/"
    "torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")
ONLY_FLOAT_GRAD_SETTER = "only Tensors of floating point and complex dtype can require gradients"
ONLY_FLOAT_GRAD_FACTORY = "Only Tensors of floating point and complex dtype can require gradients"
NON_LEAF_REQUIRES_GRAD = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_LEAF_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation."

# How a view was made (PyTorch's CreationMeta), in `Tensor._creation` (set on views only).
# Views made in no_grad mode, and the outputs of ops returning several views (split,
# unbind), may not be written in place with grad mode on, nor used after their base
# changed: PyTorch raises instead of guessing what the history should be.
VIEW_DEFAULT, VIEW_NO_GRAD, VIEW_MULTI, VIEW_CUSTOM = 0, 1, 2, 3  # (CUSTOM: a custom Function's)
VIEW_INFERENCE = 4  # made inside torch.inference_mode(): as no_grad's, with its own words
_REBASE_HINT = {
    VIEW_INFERENCE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
        "your code by moving both the view and the inplace either both inside the inference_mode "
        "block (if you don't want the inplace to be tracked) or both outside (if you want the "
        "inplace to be tracked)."),
    VIEW_NO_GRAD: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
        "your code by moving both the view and the inplace either both inside the no_grad block "
        "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
        "to be tracked)."),
    VIEW_CUSTOM: (
        " This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function."),
    VIEW_MULTI: (
        " This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."),
}


# PyTorch Tensor methods outside gradcli's API: asking for one says so (docs/language.md),
# instead of pretending that torch has no such method
UNSUPPORTED_METHODS = frozenset("""
chalf dequantize int_repr q_per_channel_axis q_per_channel_scales q_per_channel_zero_points
q_scale q_zero_point qscheme record_stream to_mkldnn to_padded_tensor to_sparse_csc to_sparse_bsr
to_sparse_bsc
""".split())


class _Unsupported:
    """A class attribute that raises: reading ``t.sinh`` says gradcli lacks it.

    A descriptor per name rather than a ``Tensor.__getattr__``: any
    ``__getattr__`` on the class turns off CPython's attribute-lookup caches for
    every Tensor attribute read (about 8% of the seed loop's instructions)."""

    __slots__ = ("message",)

    def __init__(self, name: str):
        self.message = f"torch.Tensor.{name} is not supported by gradcli"

    def __get__(self, obj, owner=None):
        raise AttributeError(self.message)


class Tensor:
    """A multi-dimensional array that can record the operations applied to it."""

    __module__ = "torch"  # type(t) is <class 'torch.Tensor'>, as PyTorch's (not gradcli.engine)
    __slots__ = (
        "_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_vc",
        "_base", "_view_fn", "_accumulator", "_retains_grad", "_attr_version", "_creation",
        "_leaf_hooks", "_post_acc_hooks", "__weakref__",
        "__dict__",  # a program's own attributes (fast.ai's `out.g = ...`), made on first use
    )

    __array_priority__ = 1000  # numpy defers to our reflected operators

    def __init__(self, *args, dtype=None):
        """Legacy constructor: Tensor([1, 2]) (float32 data) or Tensor(2, 3) (uninitialised)."""
        if len(args) == 1 and not isinstance(args[0], int):
            data = np.array(_plain(args[0]), dtype=(dtype or dtypes.get_default_dtype()).np)
        else:
            data = np.zeros(tuple(int(a) for a in args), dtype=(dtype or dtypes.get_default_dtype()).np)
        _init(self, data, False, None)

    # ----------------------------------------------------------------- state
    @property
    def data(self) -> Tensor:
        """The same storage, detached, with its own version counter (not checked)."""
        t = make(self._data, False, None)
        if self._vc.__class__ is _inference.InferenceVersion:
            t._vc = _inference.InferenceVersion((0,))
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self.requires_grad and value._data.dtype.kind not in "fcV":
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex "
                "dtype")
        self._data = value._data

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    @property
    def requires_grad(self) -> bool:
        # PyTorch: a view requires grad when its base does (never regenerates its grad_fn)
        base = self._base
        if base is not None:
            if self._accumulator is False:  # inherited from the base only (a no_grad view)
                return self._grad_fn is not None or base._requires_grad
            return self._requires_grad or base._requires_grad
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag) -> None:
        if flag is not True and flag is not False:
            raise RuntimeError("requires_grad must be a bool")
        if self.grad_fn is not None:
            if flag:
                raise RuntimeError("you can only change requires_grad flags of leaf variables.")
            raise RuntimeError(NON_LEAF_REQUIRES_GRAD)
        if flag and self._data.dtype.kind not in "fcV":
            raise RuntimeError(ONLY_FLOAT_GRAD_SETTER)
        if flag and self._vc.__class__ is _inference.InferenceVersion and not GRAD_MODE.inference:
            raise RuntimeError(_inference.REQUIRES_GRAD_OUTSIDE)
        self._set_leaf_requires_grad(flag)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        # refused inside a torch.func transform, after the argument's check (as PyTorch's:
        # a bad argument is reported by _requires_grad_ first)
        if TRANSFORM_GUARD is not None and (requires_grad is True or requires_grad is False):
            TRANSFORM_GUARD(self, "requires_grad_")
        return self._requires_grad_(requires_grad)

    def _requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """requires_grad_ for gradcli's own code (backward formulas, factories' requires_grad=,
        the transforms' fresh inputs): never refused under a torch.func transform."""
        if requires_grad is not True and requires_grad is not False:
            ABOVE.arg_error("Tensor.requires_grad_", (requires_grad,), {})
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(NON_LEAF_REQUIRES_GRAD)
            return self
        if requires_grad and self._data.dtype.kind not in "fcV":
            raise RuntimeError(ONLY_FLOAT_GRAD)
        if requires_grad and self._vc.__class__ is _inference.InferenceVersion \
                and not GRAD_MODE.inference:
            raise RuntimeError(_inference.REQUIRES_GRAD_OUTSIDE)
        self._set_leaf_requires_grad(bool(requires_grad))
        return self

    def _set_leaf_requires_grad(self, flag: bool) -> None:
        base = self._base
        if base is not None and base._requires_grad:
            # a view without history of a base that requires grad (made under no_grad):
            # it keeps requiring grad through its base; its own flag only decides whether
            # a gradient reaching it is accumulated into its .grad
            self._requires_grad = True
            if flag:
                if self._accumulator is False:
                    self._accumulator = None
            elif self._accumulator is None:
                self._accumulator = False
            return
        self._requires_grad = flag

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (shares its base's storage and version)."""
        return self._base is not None

    @property
    def volatile(self) -> bool:
        """Removed from PyTorch long ago: always False, with its warning."""
        import warnings

        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                      stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value) -> None:
        import warnings

        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                      "instead.", UserWarning, stacklevel=2)

    @property
    def grad_fn(self):
        if self._base is not None:
            refresh_view(self)
        return self._grad_fn

    @property
    def creator(self):
        """Legacy Variable alias of grad_fn."""
        return self.grad_fn

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            # (PyTorch warns only while nothing is there: backward(inputs=) may fill it)
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_c_name(value.dtype)}' to a tensor "
                    f"with grad_dtype '{_type_word(self.dtype)}'. The gradient must match the "
                    "tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
                    "grad_dtype attribute with a specific dtype, or None to allow any dtype. Set "
                    "grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may "
                    "break downstream systems that assume they match.")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '[{', '.join(map(str, value._data.shape))}]' "
                    f"to a tensor of size '[{', '.join(map(str, self._data.shape))}]'. Please ensure "
                    "that the gradient and the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def _version(self) -> int:
        if self._vc.__class__ is _inference.InferenceVersion:
            raise RuntimeError(_inference.NO_VERSION)
        return self._vc[0]

    def is_inference(self, *args, **kwargs) -> bool:
        """Made inside torch.inference_mode() (or a view or detach of such a tensor)."""
        if args or kwargs:
            _inference.refuse_arguments("Tensor.is_inference", args, kwargs)
        return self._vc.__class__ is _inference.InferenceVersion

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.FROM_NP[self._data.dtype]

    @property
    def shape(self):
        from .size import Size

        return Size(self._data.shape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self):
        from .size import CPU

        return CPU

    @property
    def is_floating_point_(self):  # pragma: no cover - not part of the API
        return self._data.dtype.kind in "fV"

    def size(self, dim=None):
        if dim is None:
            return self.shape
        try:
            if self._data.ndim == 0:
                raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
            return self._data.shape[_wrap_dim(dim, self._data.ndim)]
        except (TypeError, IndexError):  # (a dim that is no int: PyTorch's parser refuses it)
            ABOVE.arg_error("Tensor.size", (dim,), {})
            raise

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind in "fV"

    # (is_contiguous(memory_format=): ops/memory_formats.py)

    def stride(self, dim=None):
        d = self._data
        if self._base is not None:
            strides = ABOVE.view_strides(self)
        elif d.size == 0:  # numpy's strides of empty arrays are not PyTorch's: contiguous ones
            strides, step = [], 1
            for s in reversed(d.shape):
                strides.insert(0, step)
                step *= max(s, 1)
            strides = tuple(strides)
        else:
            strides = tuple(s // d.itemsize for s in d.strides)
        if dim is None:
            return strides
        try:
            return strides[_wrap_dim(dim, self._data.ndim)]
        except (TypeError, IndexError):  # (a dim that is no int: PyTorch's parser refuses it)
            ABOVE.arg_error("Tensor.stride", (dim,), {})
            raise

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    # ------------------------------------------------------------- printing
    def __reduce_ex__(self, protocol):
        """Pickling (in memory): the data and requires_grad; it comes back a leaf without
        .grad, whatever it was (as torch's pickles do)."""
        return (_rebuild, (np.array(self._data, copy=True), bool(self.requires_grad)))

    def __repr__(self) -> str:
        tensor_repr = ABOVE.tensor_repr
        try:
            fn = self.grad_fn
            name = None if fn is None else type(fn).__name__
        except RuntimeError:  # a view that may no longer be used (PyTorch prints this)
            name = "Invalid"
        return tensor_repr(
            self._data,
            requires_grad=name is None and self.requires_grad,
            grad_fn_name=name,
            tangent=None if FORWARD_AD_TANGENT is None else FORWARD_AD_TANGENT(self),
        )

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    # ---------------------------------------------------------- conversions
    def item(self):
        if TRANSFORM_GUARD is not None:
            TRANSFORM_GUARD(self, "item")
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        if TRANSFORM_GUARD is not None:
            TRANSFORM_GUARD(self, "tolist")
        return self._data.tolist()

    def __float__(self) -> float:
        if TRANSFORM_GUARD is not None:
            TRANSFORM_GUARD(self, "__float__")
        if self._requires_grad and GRAD_MODE.enabled:
            warn_once("scalar_of_grad_tensor", SCALAR_OF_GRAD_TENSOR)
        return float(self._scalar_for("float"))

    def __complex__(self) -> complex:
        if TRANSFORM_GUARD is not None:
            TRANSFORM_GUARD(self, "__complex__")
        if self._requires_grad and GRAD_MODE.enabled:
            warn_once("scalar_of_grad_tensor", SCALAR_OF_GRAD_TENSOR)
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self._data.reshape(()).item())

    def __int__(self) -> int:
        if TRANSFORM_GUARD is not None:
            TRANSFORM_GUARD(self, "__int__")
        return int(self._scalar_for("int"))

    def __index__(self) -> int:
        if TRANSFORM_GUARD is not None:
            TRANSFORM_GUARD(self, "__index__")
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()).item())

    def __bool__(self) -> bool:
        if TRANSFORM_GUARD is not None:
            TRANSFORM_GUARD(self, "__bool__")
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self._data.size > 1 else
                "Boolean value of Tensor with no values is ambiguous")
        return bool(self._data.item())

    def _scalar_for(self, what: str):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = self._data.reshape(()).item()
        if value.__class__ is complex:  # a complex tensor: its real part, if that is all
            if value.imag:
                raise RuntimeError("value cannot be converted to type "
                                   f"{'double' if what == 'float' else 'int64_t'} without overflow")
            return value.real
        return value

    def __hash__(self) -> int:
        return id(self)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # as PyTorch: the rows are UnbindBackward0 outputs

    def __contains__(self, item) -> bool:
        other = item._data if isinstance(item, Tensor) else item
        return bool((self._data == other).any())

    # -------------------------------------------------------------- autograd
    def detach(self) -> Tensor:
        """Same storage and version counter, no history."""
        t = make(self._data, False, None)
        t._vc = self._vc
        return t

    def detach_(self) -> Tensor:
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the Optimizer."
                "zero_grad() function in torch/optim/optimizer.py as the solution.")
        if self._grad_fn is not None:  # nodes made so far may have saved it: their backward
            mark_detached_in_place(self)  # refuses it, later ones not
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    def retain_grad(self) -> None:
        if TRANSFORM_GUARD is not None:
            TRANSFORM_GUARD(self, "retain_grad")
        fn = self.grad_fn
        if fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        self._retains_grad = True
        _add_retain_hook(fn, self)

    def register_hook(self, hook) -> RemovableHandle:
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        node = fn if fn is not None else self._grad_accumulator()
        if node is None:  # a no_grad view: no gradient ever reaches it, the hook never runs
            return RemovableHandle([hook], hook)
        if node_module.TRANSFORM_HOOK is not None:  # (inside a torch.func transform)
            hook = node_module.TRANSFORM_HOOK(hook)
        hooks = node._hooks_for(self._output_nr)
        if fn is None:  # a leaf keeps its hooks: an accumulator made later gets the same list
            self._leaf_hooks = hooks
            _LEAF_HOOKED[0] = True
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def _grad_accumulator(self) -> AccumulateGrad | None:
        """The leaf's AccumulateGrad; None for a view made under no_grad of a tensor that
        requires grad (it requires grad through its base, but gradients stop there).

        The node holds the leaf; the leaf holds the node only weakly, as PyTorch's
        weak_ptr does: a strong link both ways would be a reference cycle, and every leaf
        used in a graph (its data and .grad) would wait for the cyclic garbage collector
        instead of being freed when the user drops it. The graphs that use the leaf keep
        the node alive. A leaf's hooks outlive its node: the leaf keeps their list and
        hands it to each new node (as PyTorch's AccumulateGrad reads the tensor's hooks)."""
        acc = self._accumulator
        if type(acc) is _WeakRef:
            node = acc()
            if node is not None:
                return node
        elif acc is False:
            return None
        node = AccumulateGrad(self)  # (the slot holds None, False or a weakref)
        self._accumulator = _weak_ref(node)
        if _LEAF_HOOKED[0]:  # (an unset slot's getattr raises and clears an AttributeError)
            hooks = getattr(self, "_leaf_hooks", None)  # (a slot set only by register_hook)
            if hooks is not None:
                node.pre_hooks = {self._output_nr: hooks}
                node.hooked = True
            if getattr(self, "_post_acc_hooks", None) is not None:
                node.hooked = True  # (the engine runs them after accumulating)
        return node

    def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
        """hook(tensor) after backward has accumulated into this leaf's .grad."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        hooks = getattr(self, "_post_acc_hooks", None)
        if hooks is None:
            hooks = self._post_acc_hooks = []
            _LEAF_HOOKED[0] = True
            acc = self._grad_accumulator()
            if acc is not None:
                acc.hooked = True
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None, *,
                 retain_variables=None):
        if gradient is not None and not isinstance(gradient, Tensor):
            _check_gradients(gradient)
        if retain_variables is not None and retain_graph is None:
            retain_graph = retain_variables
        if self._accumulator is False and self.grad_fn is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        ABOVE.backward(
            [self], None if gradient is None else [gradient], retain_graph, create_graph,
            None, inputs)  # (positional: a keyword costs more than the rest of the call)

    # -------------------------------------------------------------- in-place
    def _check_inplace(self) -> None:
        """PyTorch's check_inplace, for what `self` alone decides (see _apply_inplace)."""
        if GRAD_MODE.enabled:
            base = self._base
            if base is not None and (self._requires_grad or base._requires_grad):
                if self._creation:
                    raise view_rebase_error(self, False)
                if base._grad_fn is None and base._requires_grad:
                    raise RuntimeError(VIEW_LEAF_INPLACE)
            # (PyTorch asks the grad_fn as it is, not regenerated: a view taken before its
            # base got a history is still a leaf here)
            if self._grad_fn is None and (self._requires_grad or (base is not None and base._requires_grad)):
                raise RuntimeError(LEAF_INPLACE)

    def _apply_inplace(self, compute, *others, overlap_ok: bool = False) -> Tensor:
        """Run `compute(self_value, *others)` out of place, then write it into self.

        With history, the result's node becomes self's grad_fn (or, for a view, its
        base's history is rewritten through CopySlices, as PyTorch does). `overlap_ok`:
        the op may write an expanded tensor (several elements, one memory location).
        """
        self._check_inplace()
        if FORWARD_AD_INPLACE is not None:
            compute = FORWARD_AD_INPLACE(self, compute)
        if not GRAD_MODE.enabled:
            result = compute(self, *others)
            _write_into(self, result._data, overlap_ok)
            self._vc[0] += 1
            return self
        base = self._base
        if base is not None:
            refresh_view(self)
        # `old` stands for self's value before the write; it shares self's storage and is
        # copied only if a node made by `compute` saved it (mul_ by a tensor that needs a
        # gradient, pow_, ...): add_, sub_, mul_ by a number, fill_, copy_ ... copy nothing.
        # (`compute` may hold the other operands itself, so whether the write is recorded
        # is known from its result: `e.mul_(a)` with only `a` requiring grad is.)
        start = next(_node_sequence)
        old = make(self._data, self._requires_grad, self._grad_fn)
        old._output_nr = self._output_nr
        result = compute(old, *others)
        fn = result._grad_fn
        if fn is None and not (self._requires_grad or (base is not None and base._requires_grad)):
            _write_into(self, result._data, overlap_ok)
            self._vc[0] += 1
            return self
        if fn is not None and base is not None and self._creation:
            raise view_rebase_error(self, False)  # only an operand requires grad
        if fn is not None and _saved_since(fn, old, start):
            old._data = old._data.copy()
        _write_into(self, result._data, overlap_ok)
        self._vc[0] += 1
        saved = fn.saved_result if fn is not None else None
        if saved is not None and saved[1] is result._vc:
            # the op saved its output, and that output now lives in self: same storage and
            # version counter, so a later in-place change of self is caught in backward
            result._data = self._data
            result._vc = self._vc
            fn.saved_result = (self._data, self._vc)
            fn.versions = fn.versions[:-1] + (self._vc[0],)
        elif saved is not None and saved[0] is node_module.ABOVE.PACKED:
            # under saved_tensors_hooks the pack hook got the output as a tensor of its
            # own; as in PyTorch, that tensor is self from now on (a hook that kept it
            # sees later in-place changes of self)
            saved[1].output._data = self._data
            saved[1].output._vc = self._vc
        if base is None:
            old_fn = self._grad_fn
            self._grad_fn = fn
            self._output_nr = result._output_nr
            self._requires_grad = fn is not None or self._requires_grad
            move_retain_hook(self, old_fn)
        elif fn is not None:
            ABOVE.rewrite_base_history(self, result)
            if saved is not None and fn.saved_result[1] is self._vc:
                fn.result_owner = (_weak_ref(self._grad_fn), self._output_nr)
        return self


for _name in UNSUPPORTED_METHODS:
    assert _name not in Tensor.__dict__, _name
    setattr(Tensor, _name, _Unsupported(_name))
del _name


def move_retain_hook(t: Tensor, old_fn) -> None:
    """retain_grad follows the tensor to its new grad_fn after an in-place op (as PyTorch)."""
    if not t._retains_grad:
        return
    if old_fn is not None and old_fn.retain_hooks:
        for nr, held in list(old_fn.retain_hooks.items()):
            if held() is t:
                del old_fn.retain_hooks[nr]
    fn = t._grad_fn
    if fn is not None:
        _add_retain_hook(fn, t)


def _add_retain_hook(fn, t: Tensor) -> None:
    """Have node `fn` store the gradient of its output `t` into t.grad. The node holds t
    weakly (as PyTorch's retain_grad hook does): t holds the node as its grad_fn, and a
    strong link back would keep both for the cyclic garbage collector."""
    if fn.retain_hooks is None:
        fn.retain_hooks = {}
        fn.hooked = True
    fn.retain_hooks[t._output_nr] = _weak_ref(t)


def _saved_since(fn, old: Tensor, start: int) -> bool:
    """Whether a node created after `start` (by one in-place computation) saved `old`
    (or may have: a node whose saved tensors went through saved_tensors_hooks holds what
    the pack hook made of them, perhaps `old` itself)."""
    stack, seen = [fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen or node.seq <= start:
            continue
        seen.add(node)
        saved = node.saved
        if node.packed or (saved and any(x is old for x in saved)):
            return True
        stack.extend(f for f, _ in node.next_functions)
    return False


def refresh_view(t: Tensor) -> None:
    """A view whose storage changed since its grad_fn was set gets a new one
    (AsStridedBackward0 over its base's current history), as PyTorch does lazily;
    a view made under no_grad or by split/unbind cannot get one: PyTorch raises."""
    if t._attr_version != t._vc[0]:
        if t._grad_fn is None and not t._base._requires_grad:
            return
        if t._creation:
            raise view_rebase_error(t, True)
        ABOVE.regenerate_grad_fn(t)


def view_rebase_error(t: Tensor, indirect: bool) -> RuntimeError:
    """PyTorch's error for a view that may not be written in place (`indirect`: its base
    or another view of it was), by how the view was made."""
    creation, fn = t._creation, t._grad_fn
    what = "its base or another view of its base has been" if indirect else "is being"
    if creation in (VIEW_NO_GRAD, VIEW_INFERENCE) or fn is None:
        prefix = ("A view was created in" if fn is None else
                  f"Output {t._output_nr} of {short_name(fn)} is a view of a view which was created in")
        if creation == VIEW_INFERENCE:
            msg = f"{prefix} inference mode and {what} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        msg = f"Output {t._output_nr} of {short_name(fn)} is a view and {what} modified inplace."
    return RuntimeError(msg + _REBASE_HINT[creation])


def _write_into(target: Tensor, values: np.ndarray, overlap_ok: bool = False) -> None:
    if BEFORE_WRITE is not None:
        BEFORE_WRITE(target)
    data = target._data
    if values.shape != data.shape:
        try:
            np.broadcast_shapes(values.shape, data.shape)
            compatible = np.broadcast_shapes(values.shape, data.shape) == data.shape
        except ValueError:
            compatible = False
        if not compatible:
            raise RuntimeError(
                f"output with shape [{', '.join(map(str, data.shape))}] doesn't match the "
                f"broadcast shape [{', '.join(map(str, np.broadcast_shapes(values.shape, data.shape) if _broadcastable(values.shape, data.shape) else values.shape))}]")
    if values.dtype != data.dtype:
        src, dst = dtypes.FROM_NP[values.dtype], dtypes.FROM_NP[data.dtype]
        if src._category > dst._category:
            raise RuntimeError(
                f"result type {_type_word(src)} can't be cast to the desired output type {_type_word(dst)}")
    if not data.flags.writeable:
        # a view through an expand (numpy makes those read-only): PyTorch refuses to write
        # where elements share memory, unless the op allows it (zero_, fill_, index_put_)
        base = target._base
        if (base is None or not base._data.flags.writeable
                or (not overlap_ok and has_internal_overlap(data))):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to a "
                "single memory location. Please clone() the tensor before performing the operation.")
        new = np.broadcast_to(values, data.shape).astype(data.dtype, copy=False)
        changed = new != data  # (what the op wrote: index_put_ leaves the rest alone)
        where = np.unravel_index(ABOVE.region_index(target._view_fn, base._data)[changed], base._data.shape)
        base._data[where] = new[changed]
        return
    np.copyto(data, values, casting="unsafe")


def has_internal_overlap(data: np.ndarray) -> bool:
    """Several elements in one memory location (an expanded dimension), as PyTorch sees it."""
    return data.size > 0 and any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape, strict=True))


def _broadcastable(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def _c_name(d: dtypes.dtype) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}[d.name]


def _type_word(d: dtypes.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool",
            "int16": "Short", "int8": "Char", "uint8": "Byte",
            "float16": "Half", "bfloat16": "BFloat16", "complex64": "ComplexFloat",
            "complex128": "ComplexDouble"}[d.name]


def _rebuild(data: np.ndarray, requires_grad: bool) -> Tensor:
    """Unpickling: a fresh leaf over the pickled data."""
    return make(data, requires_grad, None)


def _init(t: Tensor, data: np.ndarray, requires_grad: bool, grad_fn) -> None:
    t._data = data
    t._requires_grad = requires_grad
    t._grad = None
    t._grad_fn = grad_fn
    t._output_nr = 0
    t._vc = [0]
    t._base = None
    t._view_fn = None
    t._accumulator = None
    t._retains_grad = False


_new = object.__new__
#: set once any leaf got a tensor hook or a post-accumulate-grad hook (the `_leaf_hooks` /
#: `_post_acc_hooks` slots): until then _grad_accumulator need not look for them
_LEAF_HOOKED = [False]

#: forward-mode AD's hooks, None unless a dual level is active (gradcli.engine.forward_ad
#: sets them): FORWARD_AD_INPLACE(tensor, compute) -> compute wrapped to carry tangents
#: through an in-place op; FORWARD_AD_TANGENT(tensor) -> its tangent or None (printing).
FORWARD_AD_INPLACE = None
FORWARD_AD_TANGENT = None
#: None unless some thread runs a torch.func transform (gradcli.torch.func_guards sets it):
#: TRANSFORM_GUARD(tensor, method name) raises PyTorch's refusal when the calling thread is
#: inside a transform that forbids the method (requires_grad_, retain_grad) or the tensor is
#: batched by its vmap (item, __bool__, tolist, numpy, __float__, __int__, __index__).
#: Outside transforms the methods pay one global read.
TRANSFORM_GUARD = None
#: None unless torch.autograd.graph.allow_mutation_on_saved_tensors() is active; then
#: BEFORE_WRITE(tensor) runs before any in-place write into tensor's storage, so the
#: context can keep a copy of what backward still needs from it.
BEFORE_WRITE = None


def make(data: np.ndarray, requires_grad: bool = False, grad_fn=None) -> Tensor:
    """Wrap a numpy array as a Tensor (the fast constructor used by every op)."""
    t = _new(Tensor)
    t._data = data
    t._requires_grad = requires_grad
    t._grad = None
    t._grad_fn = grad_fn
    t._output_nr = 0
    t._vc = [0]
    t._base = None
    t._view_fn = None
    t._accumulator = None
    t._retains_grad = False
    if INFERENCE_ACTIVE[0]:  # (some thread is inside torch.inference_mode(): maybe this one)
        _inference.mark(t)
    return t


def _check_gradients(gradient) -> None:
    """torch.autograd.backward's check of the gradient it is given for its one output:
    anything but a tensor is read as a sequence of them (Python's error when it is not
    one), whose first item must be a tensor or None (named as torch.typename names it)."""
    for item in tuple(gradient)[:1]:
        if item is not None and not isinstance(item, Tensor):
            cls = type(item)
            module = cls.__module__ if cls.__module__ not in ("", "builtins") else ""
            raise TypeError("gradients can be either Tensors or None, but got "
                            + (f"{module}.{cls.__qualname__}" if module else cls.__qualname__))


def _wrap_dim(dim: int, ndim: int) -> int:
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim + ndim if dim < 0 else dim if ndim else 0


_NUMBER_TYPES = frozenset((float, int, bool))


def _plain(data):
    """Nested lists/tuples of numbers or tensors, as plain Python values (numbers are kept
    as they are: a row of plain numbers is returned without a call per element)."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        if set(map(type, data)) <= _NUMBER_TYPES:
            return data
        return [_plain(d) for d in data]
    return data


def read_only(name: str, owner: str = "torch._C.TensorBase"):
    """A property setter/deleter refusing with PyTorch's text (its C getset attributes
    have no setter: "attribute 'grad_fn' of 'torch._C.TensorBase' objects is not
    writable"); Python's own words would name a property and its missing setter."""
    def refuse(self, value=None):
        raise AttributeError(f"attribute '{name}' of '{owner}' objects is not writable")

    return refuse


def seal(cls, names) -> None:
    """Make each property of `cls` in `names` refuse assignment and deletion as PyTorch's
    do (reads stay what they were: a property's getter costs the same with a setter)."""
    for name in names:
        prop = cls.__dict__[name]
        refuse = read_only(name)
        setattr(cls, name, property(prop.fget, refuse, refuse, prop.__doc__))


Tensor.is_cuda = property(lambda self: False)  # (a property, so that it can refuse writes)
# PyTorch's read-only `name` (None: the named-tensor name this build never sets)
Tensor.name = property(lambda self: None)
seal(Tensor, ("grad_fn", "is_leaf", "retains_grad", "_version", "output_nr", "dtype", "shape",
              "ndim", "device", "is_cuda", "name"))

node_module.ABOVE.install(make=make, Tensor=Tensor)
dtypes.ABOVE.install(Tensor=Tensor)
