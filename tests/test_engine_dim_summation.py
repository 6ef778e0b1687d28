"""Sums and means over dims add in PyTorch's order (engine/kernels/summation.py,
torch_order_sum_dims), so their bits, and the digits a printed tensor shows, are
PyTorch's: compared with PyTorch itself bit for bit where it is installed."""

import numpy as np
import pytest
from torch_kernels import both_on_threads, torch_with_measured_kernels

import gradcli.torch as torch
from gradcli.engine.kernels import summation

SHAPE_DIMS = [
    ((3,), 0), ((7,), -1), ((2, 3), 1), ((2, 3), 0), ((4, 100), 1), ((100, 4), 0), ((10, 10), 0),
    ((10, 10), 1), ((3, 1000), 1), ((1000, 3), 0), ((5, 7, 9), 1), ((5, 7, 9), (0, 2)),
    ((5, 7, 9), (1, 2)), ((5, 7, 9), (0, 1)), ((5, 7, 9), (0, 1, 2)), ((4, 5, 6, 7), (0, 2)),
    ((4, 5, 6, 7), (1, 3)), ((2, 1, 33), (0, 1)), ((1, 17), 1), ((17, 1), 0), ((9, 40), 0),
    ((40, 9), 0), ((40, 9), 1), ((33, 37), 0), ((33, 37), 1), ((300, 70), 0), ((70, 300), 1),
    ((64, 1025), 1), ((1025, 64), 0), ((3, 1, 5), 1), ((6, 2, 2, 5), (1, 2)),
]
LAYOUTS = ["contiguous", "transposed", "stepped"]


def _data(shape, dtype, rng):
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-2, 4)).astype(dtype)


def _layout(x, layout, real):
    """The same view of a gradcli or PyTorch tensor: as is, dims reversed, or every
    other element of the last dim."""
    if layout == "transposed":
        return x.permute(*reversed(range(x.dim())))
    if layout == "stepped":
        return x[..., ::2]
    return x


def _pair(data, dtype, layout, real):
    ours, theirs = torch.as_tensor(data), real.from_numpy(data.copy())
    assert str(ours.dtype) == str(theirs.dtype) == "torch." + dtype
    return _layout(ours, layout, False), _layout(theirs, layout, True)


def _same(ours, theirs):
    return (tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
            and ours._data.tobytes() == np.ascontiguousarray(theirs.detach().numpy()).tobytes())


@pytest.fixture
def real():
    return torch_with_measured_kernels()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_sum_and_mean_over_dims_are_pytorchs_bit_for_bit(real, dtype, layout):
    rng = np.random.default_rng(7)
    for shape, dim in SHAPE_DIMS:
        for _ in range(2):
            ours, theirs = _pair(_data(shape, dtype, rng), dtype, layout, real)
            # the dims as the input's transposition moved them
            for keepdim in (False, True):
                assert _same(ours.sum(dim, keepdim=keepdim), theirs.sum(dim, keepdim=keepdim)), \
                    (shape, dim, keepdim, "sum")
                assert _same(ours.mean(dim, keepdim=keepdim), theirs.mean(dim, keepdim=keepdim)), \
                    (shape, dim, keepdim, "mean")


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_large_reductions_split_across_threads_as_pytorch(real, threads):
    """From 32,768 elements PyTorch splits the work: along a kept dim (columns rounded to
    128 bytes where they are contiguous), or, for a single output, the iteration itself."""
    rng = np.random.default_rng(threads)
    with both_on_threads(real, threads):
        for shape, dim, layout in [((2, 40000), 1, "contiguous"), ((40000, 2), 0, "contiguous"),
                                   ((1002, 40), 0, "contiguous"), ((1002, 40), 0, "transposed"),
                                   ((1001, 66), 1, "stepped"), ((1, 70001), 1, "contiguous"),
                                   ((300, 250), (0, 1), "stepped"), ((40, 30, 50), (0, 2), "transposed"),
                                   ((1000, 1000), 0, "contiguous"), ((1000, 1000), 1, "contiguous")]:
            for dtype in ("float32", "float64"):
                ours, theirs = _pair(_data(shape, dtype, rng), dtype, layout, real)
                assert _same(ours.sum(dim), theirs.sum(dim)), (shape, dim, layout, dtype)
                assert _same(ours.mean(dim), theirs.mean(dim)), (shape, dim, layout, dtype)


def test_random_shapes_dims_and_permutations(real):
    rng = np.random.default_rng(11)
    sizes = [1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 31, 33, 64]
    for _ in range(600):
        ndim = int(rng.integers(1, 5))
        shape = tuple(int(rng.choice(sizes)) for _ in range(ndim))
        if np.prod(shape) > 50000:
            continue
        dtype = str(rng.choice(["float32", "float64"]))
        data = _data(shape, dtype, rng)
        perm = [int(i) for i in rng.permutation(ndim)]
        dims = [int(d) for d in rng.choice(ndim, int(rng.integers(1, ndim + 1)), replace=False)]
        ours, theirs = _pair(data, dtype, "contiguous", real)
        ours, theirs = ours.permute(*perm), theirs.permute(*perm)
        assert _same(ours.sum(dims), theirs.sum(dims)), (shape, perm, dims, dtype)


def test_printed_text_is_pytorchs(real):
    a = (np.random.default_rng(0).standard_normal((10, 10)) * 100).astype(np.float32)
    assert str(torch.tensor(a.tolist()).sum(0)) == str(real.tensor(a.tolist()).sum(0))
    assert str(torch.tensor(a.tolist()).sum(1)) == str(real.tensor(a.tolist()).sum(1))
    assert str(torch.tensor(a.tolist()).mean(0)) == str(real.tensor(a.tolist()).mean(0))


def test_gradients_of_broadcasts_sum_in_pytorchs_order(real):
    """A broadcast's backward sums the gradient over the broadcast dims (sum_to)."""
    rng = np.random.default_rng(3)
    x, b = _data((37, 29), "float32", rng), _data((29,), "float32", rng)
    g = _data((37, 29), "float32", rng)
    ob = torch.tensor(b.tolist(), requires_grad=True)
    tb = real.tensor(b.tolist(), requires_grad=True)
    (torch.tensor(x.tolist()) + ob).backward(torch.tensor(g.tolist()))
    (real.tensor(x.tolist()) + tb).backward(real.tensor(g.tolist()))
    assert _same(ob.grad, tb.grad)


# ------------------------------------------------------------ without PyTorch
def test_integer_and_bool_sums_stay_exact():
    x = torch.tensor([[2**40, 3, -5], [7, 2**41, 11]])
    assert x.sum(0).tolist() == [2**40 + 7, 3 + 2**41, 6] and x.sum(1).dtype == torch.int64
    assert torch.tensor([[True, False], [True, True]]).sum(0).tolist() == [2, 1]
    assert torch.tensor([[1, 2], [3, 4]], dtype=torch.int32).sum(1).dtype == torch.int64
    assert summation.torch_order_sum_dims(np.arange(6).reshape(2, 3), (0,), 2) is None


def test_dtypes_shapes_and_dim_forms():
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    assert x.sum(1).dtype == torch.float32 and x.double().sum(1).dtype == torch.float64
    assert x.sum(-1).tolist() == x.sum(2).tolist() == [[6, 22, 38], [54, 70, 86]]
    assert x.sum((0, -1)).tolist() == x.sum([2, 0]).tolist() == [60, 92, 124]
    assert x.sum(1, keepdim=True).shape == (2, 1, 4) and x.mean((0, 2), keepdim=True).shape == (1, 3, 1)
    assert x.sum((0, 1, 2)).shape == () and x.sum((0, 1, 2)).item() == 276
    assert x.mean(1).tolist() == [[4, 5, 6, 7], [16, 17, 18, 19]]
    assert x.sum(1, dtype=torch.float64).dtype == torch.float64
    assert torch.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]
    assert torch.zeros(3, 0).sum(1).tolist() == [0.0, 0.0, 0.0]
    assert all(v != v for v in torch.zeros(3, 0).mean(1).tolist())
    assert torch.tensor(5.0).sum(0).item() == 5.0
    with pytest.raises(RuntimeError):
        x.sum((1, 1))


def test_zeros_and_specials():
    z = torch.tensor([[-0.0] * 9] * 3)
    assert [str(v) for v in z.sum(0).tolist() + z.sum(1).tolist()] == ["0.0"] * 12
    s = torch.tensor([[1.0, float("nan"), 2.0], [float("inf"), 1.0, 3e38]])
    inf, nan, big = s.sum(0).tolist()
    assert inf == float("inf") and nan != nan and big == float(np.float32(3e38) + np.float32(2.0))
    assert str(torch.tensor([[3e38] * 40], dtype=torch.float32).sum(1).tolist()) == "[inf]"


def test_small_sums_add_in_the_kernels_order():
    """Values chosen so that each order gives its own float32 result: (a+b)+c and a+(b+c)
    differ. A row of three elements adds from the left, as the kernel does."""
    a, b, c = 1.0, 2.0 ** -24, 2.0 ** -24
    x = torch.tensor([[a, b, c]], dtype=torch.float32)
    assert x.sum(1).item() == 1.0  # (1 + 2^-24) + 2^-24 rounds to 1 twice
    assert x.t().sum(0).item() == 1.0
    # rows of 4..7: element 0 then 4.., then 1, 2, 3 (four accumulators)
    y = torch.tensor([[1.0, 2.0 ** -24, 2.0 ** -24, 0.0, 2.0 ** -23]], dtype=torch.float32)
    assert y.sum(1).item() == 1.0 + 2.0 ** -23 + 2.0 ** -23
