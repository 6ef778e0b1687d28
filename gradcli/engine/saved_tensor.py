"""A grad_fn's saved values as PyTorch exposes them: `_saved_<name>` (the value, unpacked)
and `_raw_saved_<name>` (a SavedTensor handle whose `register_hooks(pack, unpack)` packs
that one saved tensor, as saved_tensors_hooks does for every tensor an op saves).

Reached through the `node.SavedValue` descriptors installed on Node below (one per name
PyTorch uses), so only those reads pay for it: nothing here is on the op or backward path. A node stores its saved inputs in `saved` (tensors or Python
operands, in the op's argument order), its saved output as `saved_result` (buffer, version
counter), a custom Function's in `__dict__["_saved"]`; a hooked entry becomes a
`saved_hooks._Packed`, which the engine already unpacks around backward.
"""

from __future__ import annotations

import numpy as np

from . import node as node_module
from . import saved_hooks
from .grad_mode import GRAD_MODE
from .node import SECOND_BACKWARD
from .saved_names import SAVED_NAMES
from .tensor import Tensor, make

#: the name PyTorch gives a node's second saved input (its first is always ``self``)
SECOND_SAVED = {"Pow": "exponent", "Mm": "mat2", "Bmm": "mat2", "Mv": "vec", "Dot": "tensor",
                "Atan2": "other"}

_SIGNATURE = ("register_hooks(): incompatible function arguments. The following argument types "
              "are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
              "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\nInvoked with: ")


class SavedTensor:
    """One saved slot of one node (PyTorch's torch._C._autograd.SavedTensor). The same
    handle is returned on every read of `_raw_saved_x`; the user cannot make one."""

    __slots__ = ("_node", "_slot")

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"

    def register_hooks(self, *args, **kwargs):
        if kwargs or len(args) != 2 or not all(callable(a) for a in args):
            shown = ", ".join([repr(self)] + [repr(a) for a in args]
                              + [f"{k}={v!r}" for k, v in kwargs.items()])
            raise TypeError(_SIGNATURE + shown)
        pack, unpack = args
        node, slot = self._node, self._slot
        if node.freed or node.__dict__.get("_released"):
            raise RuntimeError(SECOND_BACKWARD)
        if isinstance(slot, tuple) and slot[0] == "meta":
            raise RuntimeError("gradcli does not pack this saved tensor with hooks (its node "
                               "keeps it as an array)")
        if isinstance(slot, tuple):  # a custom Function's i-th saved tensor
            entries = node.__dict__["_saved"]
            entry = entries[slot[1]]
            if entry is None:
                raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
            t, version, output_nr = entry
            if version is None:
                raise _already_set()
            if output_nr is not None:
                data, vc = t
                t = make(data, True, node)
                t._vc = vc
                t._output_nr = output_nr
            entries[slot[1]] = (_pack(t, pack, unpack), None, None)
            return None
        if slot == "result":
            saved = node.saved_result
            if saved[0] is saved_hooks.PACKED:
                raise _already_set()
            t = make(saved[0], True, node)
            t._vc = saved[1]
            node.saved_result = (saved_hooks.PACKED, _pack(t, pack, unpack))
        else:
            entry = node.saved[slot]
            if entry is None:
                raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
            if type(entry) is saved_hooks._Packed:
                raise _already_set()
            if not isinstance(entry, Tensor):  # (x * 3's 3: PyTorch's is a wrapped 0-d tensor)
                raise RuntimeError("gradcli does not pack a saved Python number with hooks")
            packed = _pack(entry, pack, unpack)
            node.saved = node.saved[:slot] + (packed,) + node.saved[slot + 1:]
        node.packed = True
        return None


SavedTensor.__module__ = "torch._C._autograd"


def _pack(t: Tensor, pack, unpack):
    """Pack one saved tensor now, with grad mode off as PyTorch calls the pack hook here."""
    prev = GRAD_MODE.enabled
    GRAD_MODE.enabled = False
    try:
        return saved_hooks._Packed(t, pack, unpack)
    finally:
        GRAD_MODE.enabled = prev


def _already_set() -> RuntimeError:
    return RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been "
                        "set. Hint: only one pair of hooks is allowed at a time.")


def _handle(node, slot) -> SavedTensor:
    """The node's one SavedTensor for `slot` (made on first read)."""
    handles = node.__dict__.setdefault("_handles", {})
    h = handles.get(slot)
    if h is None:
        h = object.__new__(SavedTensor)
        h._node = node
        h._slot = slot
        handles[slot] = h
    return h


def _custom_saved(node, raw: bool):
    d = node.__dict__
    entries = d.get("_saved")
    if entries is None:
        if d.get("_released"):
            raise RuntimeError(SECOND_BACKWARD)
        return ()
    if not raw:
        return node.saved_tensors
    return tuple(_handle(node, ("custom", i)) for i in range(len(entries)))


_INT64_MAX = 9223372036854775807


def _spec(kind: str) -> tuple:
    """(saved keys, keys with a raw handle, the saved inputs' keys in argument order) of
    a node class, from PyTorch's table; cached per class name."""
    spec = _SPECS.get(kind)
    if spec is None:
        entries = SAVED_NAMES.get(kind, "").split()
        keys = frozenset(e.rstrip("*") for e in entries)
        raw = frozenset(e[:-1] for e in entries if e.endswith("*"))
        base = kind.rstrip("0123456789")
        base = base[:-len("Backward")] if base.endswith("Backward") else base
        inputs = sorted(k for k in raw if not k.startswith("result"))
        if "self" in inputs:
            inputs.remove("self")
            inputs.insert(0, "self")
        if kind in INPUT_NAMES:
            inputs = list(INPUT_NAMES[kind])
        elif base in SECOND_SAVED:
            inputs = ["self", SECOND_SAVED[base]]
        elif len(inputs) > 2 or (len(inputs) == 2 and inputs[0] != "self"):
            inputs = []  # (the order gradcli saves them in is not known from names alone)
        spec = _SPECS[kind] = (keys, raw, tuple(inputs))
    return spec


_SPECS: dict = {}

#: what each slot of `node.saved` is, by PyTorch's name, for nodes of more than two saved
#: inputs ("" for an input the formula does not keep: gradcli saves None there)
INPUT_NAMES = {
    "AddmmBackward0": ("", "mat1", "mat2"), "BaddbmmBackward0": ("", "batch1", "batch2"),
    "AddbmmBackward0": ("", "batch1", "batch2"), "AddmvBackward0": ("", "mat", "vec"),
    "AddrBackward0": ("", "vec1", "vec2"), "AddcmulBackward0": ("", "tensor1", "tensor2"),
    "AddcdivBackward0": ("", "tensor1", "tensor2"),
    "BinaryCrossEntropyBackward0": ("self", "target"), "CdistBackward0": ("x1", "x2"),
}


def _sizes(i):
    return lambda node: tuple(node.meta[i])


def _numel(i):
    return lambda node: int(np.prod(node.meta[i], dtype=np.int64))


def _meta(i, default=None):
    def read(node):
        v = node.meta[i]
        return default if v is None else v
    return read


def _dims(i):
    """A reduction's dims as PyTorch saves them: the tuple given (an int becomes a 1-tuple)."""
    def read(node):
        v = node.meta[i]
        return (v,) if type(v) is int else tuple(v) if v is not None else None
    return read


def _one_as_int(i):
    """A Scalar the op defaults to the int 1 (meta keeps 1.0)."""
    def read(node):
        v = node.meta[i]
        return 1 if v == 1.0 and type(v) is float else v
    return read


_REDUCTION = ("none", "mean", "sum")  # (PyTorch saves a loss's reduction as its enum's int)


def _reduction(i):
    return lambda node: _REDUCTION.index(node.meta[i])


#: values of a node's non-tensor saved keys, from the node's meta (what the op already
#: keeps for its backward): node class -> key -> reader
FROM_META = {
    "SumBackward0": {"self_sym_sizes": _sizes(0)},
    "SumBackward1": {"self_sym_sizes": _sizes(0), "dim": _dims(1), "keepdim": _meta(2)},
    "MeanBackward0": {"self_sym_sizes": _sizes(0), "self_sym_numel": _numel(0)},
    "MeanBackward1": {"self_sym_sizes": _sizes(0), "self_sym_numel": _numel(0),
                      "dim": _dims(1), "keepdim": _meta(2)},
    "SliceBackward0": {"dim": _meta(0), "start": _meta(1, 0), "end": _meta(2, _INT64_MAX),
                       "step": _meta(3, 1), "self_sym_sizes": _sizes(4)},
    "SelectBackward0": {"dim": _meta(0), "index": _meta(1), "self_sym_sizes": _sizes(2)},
    "TransposeBackward0": {"dim0": _meta(0), "dim1": _meta(1)},
    "SoftmaxBackward0": {"dim": _meta(0)},
    "LogSoftmaxBackward0": {"dim": _meta(0)},
    "CatBackward0": {"dim": _meta(0)},
    "ViewBackward0": {"self_sym_sizes": _sizes(1)},
    "ExpandBackward0": {"self_sym_sizes": _sizes(1)},
    "SqueezeBackward0": {"self_sym_sizes": _sizes(1)},
    "SqueezeBackward1": {"self_sym_sizes": _sizes(1), "dim": lambda node: node.meta[2][0]},
    "UnsqueezeBackward0": {"dim": _meta(2)},
    "PermuteBackward0": {"dims": _dims(0)},
    "CumsumBackward0": {"dim": _meta(0)},
    "AmaxBackward0": {"dim": _dims(1), "keepdim": _meta(2)},
    "AminBackward0": {"dim": _dims(1), "keepdim": _meta(2)},
    "DivBackward2": {"rounding_mode": _meta(0)},
    "TraceBackward0": {"self_sym_sizes": _sizes(0)},
    "RepeatBackward0": {"repeats": _dims(0), "self_sym_sizes": _sizes(1)},
    "FlipBackward0": {"dims": _dims(0)},
    "RollBackward0": {"shifts": _dims(0), "dims": _dims(1)},
    "ProdBackward1": {"dim": _meta(0), "keepdim": _meta(1)},
    "LogsumexpBackward0": {"dim": _dims(0), "keepdim": _meta(1)},
    "UnfoldBackward0": {"dimension": _meta(0), "size": _meta(1), "step": _meta(2),
                        "self_sym_sizes": _sizes(3)},
    "LeakyReluBackward0": {"negative_slope": _meta(0)},
    "VarBackward0": {"dim": _dims(0), "correction": _meta(1), "keepdim": _meta(2)},
    "StdBackward0": {"dim": _dims(0), "correction": _meta(1), "keepdim": _meta(2)},
    "DiagonalBackward0": {"offset": _meta(0), "dim1": _meta(1), "dim2": _meta(2),
                          "self_sym_sizes": _sizes(3)},
    "StackBackward0": {"dim": _meta(0)},
    "CdistBackward0": {"p": _meta(0)},
    "LerpBackward0": {"weight": _meta(0)},
    "AddcmulBackward0": {"value": _meta(0)},
    "AddcdivBackward0": {"value": _meta(0)},
    "BinaryCrossEntropyBackward0": {
        "reduction": _reduction(0),
        "weight": _meta(1)},
}
FROM_META.update({
    # (F.elu and selu leave scale / input_scale at their int default 1)
    "EluBackward0": {"alpha": _meta(0), "scale": _one_as_int(1), "input_scale": _one_as_int(2)},
    "CeluBackward0": {"alpha": _meta(0)},
    "GeluBackward0": {"approximate": _meta(0)},
    "HardtanhBackward0": {"min_val": _meta(0), "max_val": _meta(1)},
    "HardshrinkBackward0": {"lambd": _meta(0)},
    "SoftplusBackward0": {"beta": _meta(0), "threshold": _meta(1)},
    "ThresholdBackward0": {"threshold": _meta(0)},
    "HuberLossBackward0": {"reduction": _reduction(0), "delta": _meta(1)},
    "MseLossBackward0": {"reduction": _reduction(0)},
    "SmoothL1LossBackward0": {"reduction": _reduction(0), "beta": _meta(1)},
    "GluBackward0": {"dim": _meta(0)},
    "CumprodBackward0": {"dim": _meta(0)},
    "GatherBackward0": {"dim": _meta(1), "sparse_grad": lambda node: False},
    "IndexSelectBackward0": {"dim": _meta(1), "self_sym_sizes": _sizes(2)},
    "LinalgCrossBackward0": {"dim": _meta(0)},
    "DistBackward0": {"p": _meta(0)},
    "CholeskyBackward0": {"upper": _meta(0)},
})
FROM_META.update({
    "SoftshrinkBackward0": {"lambd": _meta(0)},
    "SoftMarginLossBackward0": {"reduction": _reduction(0)},
    "Rot90Backward0": {"k": _meta(0), "dims": _dims(1)},
    "RenormBackward0": {"p": _meta(0), "dim": _meta(1), "maxnorm": _meta(2)},
    "ScatterAddBackward0": {"dim": _meta(1)},
    "LogcumsumexpBackward0": {"dim": _meta(0)},
    "PixelShuffleBackward0": {"upscale_factor": _meta(0)},
    "ReflectionPad1DBackward0": {"padding": _dims(0)},
    "ConstantPadNdBackward0": {"pad": _dims(0)},
    "SplitBackward0": {"dim": _meta(1), "split_size": lambda node: node.meta[2][0],
                       "self_sym_sizes": _sizes(3)},
    "SplitWithSizesBackward0": {"dim": _meta(1), "split_sizes": _dims(2),
                                "self_sym_sizes": _sizes(3)},
    "ChannelShuffleBackward0": {"groups": _meta(0)},
    "SelectScatterBackward0": {"dim": lambda node: node.meta[1][0],
                               "index": lambda node: node.meta[1][1]},
})
INPUT_NAMES["IndexSelectBackward0"] = ("index",)


def _at(i, j):
    return lambda node: node.meta[i][j]


def _integral(i):
    """A Scalar PyTorch's Python binding passes as an int when integral (ord=2)."""
    def read(node):
        v = node.meta[i]
        return int(v) if type(v) is float and v.is_integer() else v
    return read


FROM_META.update({
    "CholeskyInverseBackward0": {"upper": _meta(0)},
    "CholeskySolveBackward0": {"upper": _meta(0)},
    "UnsafeSplitBackward0": {"dim": _meta(1), "split_size": _at(2, 0),
                             "self_sym_sizes": _sizes(3)},
    "DiagonalScatterBackward0": {"offset": _at(1, 0), "dim1": _at(1, 1), "dim2": _at(1, 2)},
    "SliceScatterBackward0": {"dim": _at(1, 0), "start": _at(1, 1), "end": _at(1, 2),
                              "step": _at(1, 3)},
    "MvlgammaBackward0": {"p": _meta(0)},
    "PolygammaBackward0": {"n": _meta(0)},
    "NarrowCopyBackward0": {"dim": _meta(0), "start": _meta(1), "length": _meta(2),
                            "self_sym_sizes": _sizes(3)},
    "RsubBackward0": {"alpha": _meta(0)},
    "IndexFillBackward0": {"dim": _meta(1)},
    "IndexFillBackward1": {"dim": _meta(1)},
    "ScatterBackward0": {"dim": _meta(1)},
    "ScatterBackward1": {"dim": _meta(1)},
    "UnbindBackward0": {"dim": _meta(1)},
    "SqueezeBackward2": {"dim": _dims(2), "self_sym_sizes": _sizes(1)},
    "TrilBackward0": {"diagonal": _meta(0)},
    "TriuBackward0": {"diagonal": _meta(0)},
    "LogitBackward0": {"eps": _meta(0)},
    "PdistBackward0": {"p": _meta(0)},
    "PixelUnshuffleBackward0": {"downscale_factor": _meta(0)},
    "MulBackward1": {"other": _meta(0)},
    # (F.embedding turns a negative padding_idx into its row; None is PyTorch's -1)
    "EmbeddingBackward0": {"padding_idx": lambda node: -1 if node.meta[1] is None
                           else node.meta[1], "weight_sym_argsize_0": _at(2, 0)},
    "NansumBackward0": {"keepdim": _meta(1)},
    "SafeSoftmaxBackward0": {"dim": _meta(0)},
    # (a strided or COO input has no block size: gradcli has no blocked sparse input)
    "ToSparseBackward0": {"self_self_sym_blocksize_opt": lambda node: None},
    "ToSparseBackward1": {"self_self_sym_blocksize_opt": lambda node: None},
    "UnsafeViewBackward0": {"self_sym_sizes": _sizes(1)},
    "NormBackward1": {"p": _meta(0), "dim": _dims(1), "keepdim": _meta(2)},
    "VarMeanBackward0": {"keepdim": _meta(2)}, "StdMeanBackward0": {"keepdim": _meta(2)},
    "PermuteBackward0_copy": {"dims": _dims(0)},
    "TransposeBackward0_copy": {"dim0": _meta(0), "dim1": _meta(1)},
    "DiagEmbedBackward0": {"offset": _meta(0), "dim1": _meta(1), "dim2": _meta(2)},
    "ExpandBackward0_copy": {"self_sym_sizes": _sizes(1)},
    "ViewBackward0_copy": {"self_sym_sizes": _sizes(1)},
    "SqueezeBackward0_copy": {"self_sym_sizes": _sizes(1)},
    "ReshapeAliasBackward0": {"self_sym_sizes": _sizes(1)},
    "DiagonalBackward0_copy": {"offset": _meta(0), "dim1": _meta(1), "dim2": _meta(2),
                               "self_sym_sizes": _sizes(3)},
    "SplitWithSizesBackward0_copy": {"dim": _meta(1), "split_sizes": _dims(2),
                                     "self_sym_sizes": _sizes(3)},
    "UnbindBackward0_copy": {"dim": _meta(1)},
    "UnfoldBackward0_copy": {"dimension": _meta(0), "size": _meta(1), "step": _meta(2),
                             "self_sym_sizes": _sizes(3)},
    "MaskedScatterBackward0": {"source_sym_sizes": _sizes(1)},
    "ReplicationPad1DBackward0": {"padding": _dims(0)},
    "ReplicationPad2DBackward0": {"padding": _dims(0)},
    "ReplicationPad3DBackward0": {"padding": _dims(0)},
    "AvgPool2DBackward0": {"kernel_size": _dims(0), "stride": _dims(1), "padding": _dims(2),
                           "ceil_mode": _meta(3), "count_include_pad": _meta(4),
                           "divisor_override": _meta(5)},
    "LinalgSolveTriangularBackward0": {"upper": _meta(0), "left": _meta(1),
                                       "unitriangular": _meta(2)},
    "Im2ColBackward0": {"kernel_size": lambda node: tuple(node.meta[0].kernel),
                        "stride": lambda node: tuple(node.meta[0].stride),
                        "padding": lambda node: tuple(node.meta[0].padding),
                        "dilation": lambda node: tuple(node.meta[0].dilation),
                        "self_sym_argsize_minus_1": lambda node: node.meta[0].in_shape[-1],
                        "self_sym_argsize_minus_2": lambda node: node.meta[0].in_shape[-2]},
    "LinalgVectorNormBackward0": {"ord": _integral(0), "keepdim": _meta(2),
                                  "dim": lambda node: None if node.meta[3]
                                  else tuple(node.meta[1])},
})

for _kind in ("AddmmBackward0", "BaddbmmBackward0", "AddbmmBackward0", "AddmvBackward0",
              "AddrBackward0"):
    FROM_META[_kind] = {"beta": _meta(0), "alpha": _meta(1)}


def _alpha(node):
    meta = node.meta
    return meta[0] if getattr(node.op, "name", "").endswith("_alpha") and meta else 1


FROM_META["AddBackward0"] = FROM_META["SubBackward0"] = {"alpha": _alpha}


#: the keys whose value a node reads from what the call gave (node.given, kept by
#: node.keep_given), in that tuple's order: "int" an int64 argument, "ints" an int list
#: (a lone int becomes a 1-tuple), "scalar" a Scalar as the user wrote it (2 stays an int)
GIVEN = {
    "SoftmaxBackward0": (("dim", "int"),), "LogSoftmaxBackward0": (("dim", "int"),),
    "CumsumBackward0": (("dim", "int"),), "CatBackward0": (("dim", "int"),),
    "StackBackward0": (("dim", "int"),), "UnsqueezeBackward0": (("dim", "int"),),
    "TransposeBackward0": (("dim0", "int"), ("dim1", "int")),
    "PermuteBackward0": (("dims", "ints"),),
    "SelectBackward0": (("dim", "int"), ("index", "int")),
    "SumBackward1": (("dim", "ints"),), "MeanBackward1": (("dim", "ints"),),
    "AmaxBackward0": (("dim", "ints"),), "AminBackward0": (("dim", "ints"),),
    "LogsumexpBackward0": (("dim", "ints"),),
    "DiagonalBackward0": (("offset", "int"), ("dim1", "int"), ("dim2", "int")),
    "Rot90Backward0": (("k", "int"), ("dims", "ints")),
    "DistBackward0": (("p", "scalar"),),
    "RenormBackward0": (("p", "scalar"), ("dim", "int"), ("maxnorm", "scalar")),
    "NansumBackward0": (("dim", "ints"),), "NarrowCopyBackward0": (("dim", "int"),),
    "EmbeddingBackward0": (("scale_grad_by_freq", "scalar"), ("sparse", "scalar")),
    "PermuteBackward0_copy": (("dims", "ints"),),
    "TransposeBackward0_copy": (("dim0", "int"), ("dim1", "int")),
    "DiagEmbedBackward0": (("offset", "int"), ("dim1", "int"), ("dim2", "int")),
    "SortBackward0": (("dim", "int"),), "SortBackward1": (("dim", "int"),),
    "TopkBackward0": (("dim", "int"),), "KthvalueBackward0": (("dim", "int"),),
    "ModeBackward0": (("dim", "int"),), "MedianBackward1": (("dim", "int"),),
    "NanmedianBackward1": (("dim", "int"),),
    "VarBackward0": (("dim", "ints"), ("correction", "scalar")),
    "StdBackward0": (("dim", "ints"), ("correction", "scalar")),
    "VarMeanBackward0": (("dim", "ints"), ("correction", "scalar")),
    "StdMeanBackward0": (("dim", "ints"), ("correction", "scalar")),
    "SelectScatterBackward0": (("dim", "int"), ("index", "int")),
    "SliceScatterBackward0": (("dim", "int"), ("start", "int"), ("end", "int"), ("step", "int")),
    "LinalgCrossBackward0": (("dim", "int"),),
    "HardtanhBackward0": (("min_val", "scalar"), ("max_val", "scalar")),
    "LinalgVectorNormBackward0": (("ord", "scalar"), ("dim", "ints")),
    "UnsqueezeBackward0_copy": (("dim", "int"),),
}

#: the saved keys PyTorch keeps as int64 (or SymInt, or lists of them), which its node shows
#: as unsigned 64-bit numbers: dim=-1 reads 18446744073709551615 (Scalars keep their sign)
INT64_KEYS = frozenset((
    "dim", "dim0", "dim1", "dim2", "dims", "index", "offset", "k", "start", "end", "step",
    "diagonal", "pad", "padding", "shifts", "dimension", "size", "repeats", "split_size",
    "split_sizes", "ignore_index", "padding_idx", "groups", "upscale_factor",
    "downscale_factor", "output_size", "kernel_size", "stride", "dilation"))

_U64 = 1 << 64


def _unsigned(value):
    """An int64 value as PyTorch's node shows it: a negative one as its unsigned 64 bits."""
    if type(value) is int:
        return value + _U64 if value < 0 else value
    if type(value) is tuple:
        return tuple(_unsigned(v) for v in value)
    return value


def _from_given(value, form: str):
    if form == "scalar":
        return value.item() if isinstance(value, np.generic) else value
    if form == "ints":
        if value is None:
            return None
        value = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    return _unsigned(_plain(value))


def _given(node, kind: str, key: str):
    """(True, value) when the node kept what the call gave for `key`, else (False, None)."""
    given = node.__dict__.get("_given")
    if given is not None:
        for i, (k, form) in enumerate(GIVEN.get(kind, ())):
            if k == key and i < len(given):
                return True, _from_given(given[i], form)
    return False, None


#: saved tensors a node keeps as arrays in its meta (an op's index output, which its
#: backward reads directly): node class -> key -> meta position. They read as tensors; their
#: `_raw_saved_` handle cannot take hooks (the backward does not unpack them)
META_TENSORS = {
    "SortBackward0": {"indices": 1}, "TopkBackward0": {"indices": 1},
    "KthvalueBackward0": {"indices": 1}, "MedianBackward1": {"indices": 1},
    "NanmedianBackward1": {"indices": 1}, "ModeBackward0": {"indices": 1},
    "MaxBackward0": {"indices": 3}, "MinBackward0": {"indices": 3},
}
for _kind in ("SortBackward0", "TopkBackward0"):
    FROM_META[_kind] = {"dim": _meta(0), "self_sym_sizes": _sizes(3)}
for _kind in ("KthvalueBackward0", "MedianBackward1", "NanmedianBackward1", "ModeBackward0"):
    FROM_META[_kind] = {"dim": _meta(0), "keepdim": _meta(2), "self_sym_sizes": _sizes(3)}
for _kind in ("MaxBackward0", "MinBackward0"):
    FROM_META[_kind] = {"dim": _meta(1), "keepdim": _meta(2), "self_sym_sizes": _sizes(0)}
INPUT_NAMES["ClampBackward0"] = ("self", "min", "max")


def saved_attr(node, name: str):
    """`node._saved_<key>` / `node._raw_saved_<key>`, or AttributeError as PyTorch's."""
    raw = name.startswith("_raw_saved_")
    key = name[len("_raw_saved_"):] if raw else name[len("_saved_"):]
    kind = type(node).__name__
    missing = AttributeError(f"'{kind}' object has no attribute '{name}'")
    if node.custom:
        if key != "tensors" or not raw:
            raise missing
        return _custom_saved(node, raw)
    keys, raw_keys, inputs = _spec(kind)
    if key not in (raw_keys if raw else keys):
        raise missing
    freed = node.freed
    if key == "result":
        saved = node.saved_result
        if saved is None:
            if freed:
                raise RuntimeError(SECOND_BACKWARD)
            raise _unknown(kind, name)
        return _handle(node, "result") if raw else node.result
    at = META_TENSORS.get(kind)
    if at is not None and key in at:
        if freed:
            raise RuntimeError(SECOND_BACKWARD)
        return _handle(node, ("meta", at[key])) if raw else make(node.meta[at[key]])
    if not raw:
        found, value = _given(node, kind, key)
        if found:
            return value
    reader = FROM_META.get(kind, {}).get(key)
    if reader is not None and not raw:
        try:
            value = _plain(reader(node))
        except (IndexError, TypeError, ValueError) as err:
            raise _unknown(kind, name) from err
        return _unsigned(value) if key in INT64_KEYS else value
    if key not in inputs:
        derived = _derived(node, key, inputs) if not raw else None
        if derived is not None:
            return derived
        raise _unknown(kind, name)
    saved = node.saved
    if saved is None and not freed:
        raise _unknown(kind, name)
    i = inputs.index(key)
    base = kind.rstrip("0123456789")
    if saved is None or i >= len(saved):
        meta = node.meta or ()
        if base != "PowBackward" or raw or i != 1 or not meta or type(meta[0]) not in (int, float):
            if saved is None:  # freed: a Python operand survives, a tensor is gone
                raise RuntimeError(SECOND_BACKWARD)
            raise _unknown(kind, name)
        # a Python exponent lives in the node's meta (PyTorch keeps the Scalar; an integral
        # one is most often written as an int: x ** 2)
        v = meta[0]
        return int(v) if type(v) is float and v.is_integer() else v
    value = saved[i]
    if type(value) in (int, float, bool):
        if raw:
            return _handle(node, i)
        # (PyTorch saves a Python operand as a wrapped 0-d tensor: int64 or float64)
        return make(np.asarray(value, dtype=np.float64 if type(value) is float else None))
    if raw:
        return _handle(node, i)
    if type(value) is saved_hooks._Packed:
        return value.tensor()
    if value is None:
        return None  # an operand the formula needed not keep (x * 3 keeps no self): None
    if not isinstance(value, Tensor):
        raise _unknown(kind, name)
    return value


_DERIVED = {"_sym_sizes": lambda t: tuple(t.shape), "_sym_strides": lambda t: tuple(t.stride()),
            "_sym_numel": lambda t: int(t.numel()), "_scalar_type": lambda t: t.dtype}


def _derived(node, key: str, inputs: tuple):
    """`<input>_sym_sizes`, `_sym_strides`, `_sym_numel`, `_scalar_type` of a saved input
    tensor (its sizes as the op received it), or None when the node kept no such tensor."""
    arg, sep, n = key.rpartition("_sym_argsize_")
    if sep and arg in inputs:  # one size of it: `_sym_argsize_1`, `_sym_argsize_minus_1`
        n = -int(n[len("minus_"):]) if n.startswith("minus_") else int(n)
        key, index = arg + "_sym_sizes", n
    else:
        index = None
    for suffix_name, read in _DERIVED.items():
        if key.endswith(suffix_name) and key[:-len(suffix_name)] in inputs:
            saved = node.saved
            i = inputs.index(key[:-len(suffix_name)])
            if saved is None or i >= len(saved):
                return None
            value = saved[i]
            if type(value) is saved_hooks._Packed or not isinstance(value, Tensor):
                return None
            return read(value) if index is None else read(value)[index]
    return None


def _plain(value):
    """A meta value as PyTorch gives it: Python numbers and tuples (a numpy scalar the op
    kept becomes its Python number; anything else is not a saved value we can show)."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.generic) and value.ndim == 0:
        return value.item()
    raise TypeError(type(value).__name__)


def _unknown(kind: str, name: str) -> AttributeError:
    """A value PyTorch's node has that gradcli's does not keep (yet)."""
    return AttributeError(f"gradcli does not reproduce {kind}'s {name}")


node_module.ABOVE.install(saved_attr=saved_attr)
