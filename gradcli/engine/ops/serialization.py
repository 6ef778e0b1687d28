"""torch.save and torch.load: declared here, implemented in engine/torch_pickle.py, which
loads (with zipfile and pickle) on the first call."""

from __future__ import annotations

from .registry import public


@public("torch.save")
def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """Write `obj` to `f` (a path or a binary file object) in PyTorch's zip format."""
    from ..torch_pickle import save as save_archive

    save_archive(obj, f, pickle_module, pickle_protocol)


@public("torch.load")
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read what torch.save wrote (gradcli or PyTorch) from a path or a file object."""
    from ..torch_pickle import load as load_archive

    return load_archive(f, map_location, pickle_module, weights_only=weights_only)
