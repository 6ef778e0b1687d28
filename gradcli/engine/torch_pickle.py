"""torch.save / torch.load in PyTorch's own file format, for plain Python use (loaded on
the first call from engine/ops/serialization.py: zipfile and pickle cost start-up time).

The file is PyTorch's zip archive (`archive/data.pkl`, one `archive/data/N` record of
raw little-endian bytes per tensor, `version`, `byteorder`): a file gradcli saves loads
in PyTorch, and a checkpoint PyTorch saved loads here. The pickle names PyTorch's
rebuild functions (`torch._utils._rebuild_tensor_v2`, `torch.FloatStorage`, ...);
gradcli writes those names without importing torch and maps them back to its own
objects when reading.

`torch.load` defaults to `weights_only=True`, as PyTorch 2.13: only tensors, Parameters,
dtypes, sizes, OrderedDicts and plain containers are rebuilt; any other global in the
pickle is refused before anything runs. (A `.grad` program reaches neither function:
the language denies the names `save` and `load` everywhere.)
"""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np

from . import dtypes
from .size import Size
from .tensor import Tensor, make

# storage class name in PyTorch's pickles <-> numpy dtype of its elements
_STORAGES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128,
}
_STORAGE_OF = {np.dtype(v): k for k, v in _STORAGES.items()}


class _Global:
    """A name written into the pickle as a GLOBAL (module and name), never imported."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name

    def __call__(self, *args):  # (pickle asks that a reduction's function be callable)
        raise TypeError(f"{self.module}.{self.name} is a name in a pickle, not a function")


_GLOBALS: dict = {}


def _global(module: str, name: str) -> _Global:
    key = (module, name)
    g = _GLOBALS.get(key)
    if g is None:
        g = _GLOBALS[key] = _Global(module, name)
    return g


class _Storage:
    """One tensor's bytes, written as the archive record `data/<key>`."""

    __slots__ = ("array", "key")

    def __init__(self, array: np.ndarray, key: str):
        self.array = array
        self.key = key


class _Writer(pickle._Pickler):
    """Pickles gradcli objects as PyTorch's pickles name them."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages: list = []

    def persistent_id(self, obj):
        if type(obj) is _Storage:
            return ("storage", _global("torch", _STORAGE_OF[obj.array.dtype]), obj.key, "cpu",
                    int(obj.array.size))
        return None

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, dtypes.dtype):
            obj = _global("torch", obj.name)
        elif type(obj) is type and obj.__module__.startswith(("torch.nn.", "torch.optim.")):
            obj = _global(obj.__module__, obj.__qualname__)  # (gradcli's, under torch's name)
        if type(obj) is _Global:
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            self.memoize(obj)
            return
        super().save(obj, save_persistent_id)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if type(obj) is Size:
            return (_global("torch", "Size"), (tuple(obj),))
        return NotImplemented

    def _tensor(self, t: Tensor):
        data = t._data if t._data.flags.c_contiguous else t._data.copy(order="C")  # (0-d stays)
        if data.dtype not in _STORAGE_OF:
            raise RuntimeError(f"torch.save: gradcli cannot save a tensor of dtype {t.dtype}")
        storage = _Storage(data, str(len(self.storages)))
        self.storages.append(storage)
        strides = tuple(s // data.itemsize for s in data.strides) if data.size else \
            _contiguous_strides(data.shape)
        rebuilt = (_global("torch._utils", "_rebuild_tensor_v2"),
                   (storage, 0, tuple(data.shape), strides, bool(t.requires_grad), OrderedDict()))
        if type(t).__name__ == "Parameter":
            return (_global("torch._utils", "_rebuild_parameter"),
                    (_Rebuilt(rebuilt), bool(t.requires_grad), OrderedDict()))
        return rebuilt  # (a non-leaf comes back a leaf that requires grad, as PyTorch's)


class _Rebuilt:
    """A nested (callable, args) reduction (a Parameter's data tensor)."""

    __slots__ = ("reduction",)

    def __init__(self, reduction):
        self.reduction = reduction

    def __reduce__(self):
        return self.reduction


def _contiguous_strides(shape) -> tuple:
    out, step = [], 1
    for s in reversed(shape):
        out.append(step)
        step *= max(int(s), 1)
    return tuple(reversed(out))


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """Write `obj` to `f` (a path or a binary file object) in PyTorch's zip format."""
    body = io.BytesIO()
    writer = _Writer(body, pickle_protocol)
    writer.dump(obj)
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        with open(f, "wb") as out:
            _write_archive(out, name, body.getvalue(), writer.storages)
    else:
        _write_archive(f, "archive", body.getvalue(), writer.storages)


def _write_archive(out, name: str, pickled: bytes, storages: list) -> None:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", pickled)
        z.writestr(f"{name}/.format_version", "1")
        z.writestr(f"{name}/.storage_alignment", "64")
        z.writestr(f"{name}/byteorder", "little")
        for s in storages:
            z.writestr(f"{name}/data/{s.key}", s.array.astype(s.array.dtype.newbyteorder("<"),
                                                              copy=False).tobytes())
        z.writestr(f"{name}/version", "3\n")


# ------------------------------------------------------------------------ loading


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    itemsize = storage.itemsize
    if len(size) and min(size) == 0:
        data = np.empty(tuple(size), storage.dtype)
    else:
        data = np.lib.stride_tricks.as_strided(
            storage[storage_offset:], tuple(size), tuple(s * itemsize for s in stride)).copy()
    return make(data, bool(requires_grad), None)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from gradcli.torch.nn.parameter import Parameter

    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _rebuild_parameter(data, requires_grad, backward_hooks)


def _rebuild_from_type_v2(func, new_type, args, state):
    return func(*args)


class _StorageType:
    """`torch.FloatStorage` & co. as read from a pickle: which numpy dtype the bytes are."""

    def __init__(self, name: str):
        self.dtype = np.dtype(_STORAGES[name])


_SAFE = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("collections", "OrderedDict"): OrderedDict,
    ("torch", "Size"): Size,
    ("torch", "Tensor"): Tensor,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "slice"): slice,
    ("builtins", "complex"): complex,
}


def _weights_only_error(name: str) -> str:
    """PyTorch's refusal of a global the weights-only unpickler does not know."""
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, \x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. "
        "\n\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
        "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
        "`False` will likely succeed, but it can result in arbitrary code execution. Do it only "
        "if you got the file from a trusted source.\n\t(2) Alternatively, to load with "
        "`weights_only=True` please check the recommended steps in the following error message."
        f"\n\tWeightsUnpickler error: Unsupported global: GLOBAL {name} was not an allowed "
        "global by default. Please use `torch.serialization.add_safe_globals([" + name + "])` or "
        "the `torch.serialization.safe_globals([" + name + "])` context manager to allowlist "
        "this global if you trust this class/function.\n\nCheck the documentation of torch.load "
        "to learn more about types accepted by default with weights_only "
        "https://pytorch.org/docs/stable/generated/torch.load.html.")


class _Reader(pickle.Unpickler):
    def __init__(self, file, archive: zipfile.ZipFile, prefix: str, weights_only: bool):
        super().__init__(file)
        self.archive = archive
        self.prefix = prefix
        self.weights_only = weights_only
        self.loaded: dict = {}

    def find_class(self, module, name):
        found = _SAFE.get((module, name))
        if found is not None:
            return found
        if module == "torch" and name in _STORAGES:
            return _StorageType(name)
        if module == "torch" and name in dtypes.BY_NAME:
            return dtypes.BY_NAME[name]
        if module == "torch" and name == "device":
            from .size import device

            return device
        if self.weights_only:
            raise pickle.UnpicklingError(_weights_only_error(f"{module}.{name}"))
        if module.startswith(("torch.nn.", "torch.optim.")):
            # gradcli's modules, optimizers and schedulers name PyTorch's modules as theirs
            # (and so are pickled under them): found by name in gradcli's facade
            home = "gradcli.torch.optim.lr_scheduler" if module == "torch.optim.lr_scheduler" \
                else "gradcli.torch." + module.split(".")[1]
            return super().find_class(home, name)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        kind, storage_type, key, _location, _numel = pid[:5]
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        array = self.loaded.get(key)
        if array is None:
            raw = self.archive.read(f"{self.prefix}data/{key}")
            array = np.frombuffer(raw, storage_type.dtype.newbyteorder("<")).astype(
                storage_type.dtype)
            self.loaded[key] = array
        return array


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read what torch.save wrote (gradcli's or PyTorch's) from a path or a file object."""
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") in ("0", "")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as src:
            raw = src.read()
    else:
        raw = f.read()
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        raise RuntimeError("gradcli reads PyTorch's zip format only (files saved by PyTorch 1.6 "
                           "and later, or by gradcli)") from None
    with archive:
        names = archive.namelist()
        pkl = next((n for n in names if n.endswith("data.pkl") and n.count("/") == 1), None)
        if pkl is None:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        prefix = pkl[:-len("data.pkl")]
        reader = _Reader(io.BytesIO(archive.read(pkl)), archive, prefix, bool(weights_only))
        return reader.load()
