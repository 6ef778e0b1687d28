"""out= of the functional view copies (torch.permute_copy, view_copy, split_copy...) takes
PyTorch's dtypes and gives its errors: the structured kernels want the result's dtype
exactly, narrow_copy words its own check, split_copy copies into the given tensors (cast,
broadcast, never resized). Compared live against torch."""

from __future__ import annotations

import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")

_ARGS = {
    "permute_copy": ((1, 0),), "transpose_copy": (0, 1), "t_copy": (), "view_copy": ((3, 2),),
    "expand_copy": ((2, 2, 3),), "squeeze_copy": (), "unsqueeze_copy": (0,),
    "diagonal_copy": (), "select_copy": (0, 1), "slice_copy": (), "narrow_copy": (0, 0, 1),
    "alias_copy": (), "detach_copy": (), "as_strided_copy": ((2, 2), (1, 1)),
    "unfold_copy": (0, 1, 1), "unbind_copy": (), "split_with_sizes_copy": ([1, 1],),
    "view_as_complex_copy": (), "view_as_real_copy": (),
}
_MULTI = ("unbind_copy", "split_with_sizes_copy")
_DTYPES = ["float32", "float64", "int64", "complex64"]


def _outcome(T, name, src, dst, args):
    x = T.tensor([[1., 2., 3.], [4., 5., 6.]]).to(getattr(T, src))
    if name == "view_as_complex_copy":
        x = T.ones(2, 2).to(getattr(T, src))
    try:
        out = [T.empty(0, dtype=getattr(T, dst)) for _ in range(2)] if name in _MULTI \
            else T.empty(0, dtype=getattr(T, dst))
        getattr(T, name)(x, *args, out=out)
    except Exception as e:
        return type(e).__name__, str(e)
    outs = out if isinstance(out, list) else [out]
    return [(str(o.dtype), tuple(o.shape), o.tolist()) for o in outs]


@pytest.mark.parametrize("name", sorted(_ARGS))
@pytest.mark.parametrize("src", _DTYPES)
@pytest.mark.parametrize("dst", _DTYPES)
def test_copy_functions_out_dtype_as_pytorch(name, src, dst):
    if src == "complex64" and name in ("view_as_complex_copy", "view_as_real_copy"):
        pytest.skip("(the input's own dtype errors come first in both; not an out= matter)")
    assert _outcome(G, name, src, dst, _ARGS[name]) == _outcome(torch, name, src, dst, _ARGS[name])


@pytest.mark.parametrize("shapes, dtypes", [
    ([(1, 3), (1, 3)], ["int64", "float64"]),   # cast into each
    ([(2, 3), (1, 3)], ["float32", "float32"]),  # broadcast into a bigger one, not resized
    ([(3,), (1, 3)], ["float32", "float32"]),    # a smaller one refuses
    ([(1, 3), (0,)], ["float32", "float32"]),    # an empty one refuses (no resize)
    ([(1, 3)], ["float32"]),                     # too few
    ([(1, 3)] * 3, ["float32"] * 3),             # too many
])
def test_split_copy_copies_into_the_given_tensors(shapes, dtypes):
    def run(T):
        x = T.tensor([[1., 2., 3.], [4., 5., 6.]])
        outs = [T.zeros(*s, dtype=getattr(T, d)) for s, d in zip(shapes, dtypes)]
        try:
            T.split_copy(x, 1, out=outs)
        except Exception as e:
            return type(e).__name__, str(e)
        return [(str(o.dtype), tuple(o.shape), o.tolist(), o._version) for o in outs]

    assert run(G) == run(torch)
