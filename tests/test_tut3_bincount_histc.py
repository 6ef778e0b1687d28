"""torch.bincount, torch.histc and torch.histogram (gradcli/engine/ops/tut_ops.py) against real
PyTorch: values, dtypes, the bin a value on an edge falls in, and PyTorch's error texts; and
float64 linspace (histogram's edges) with PyTorch's fused multiply-add."""

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

CASES = [
    "T.bincount(T.tensor([0, 1, 1, 3]))",
    "T.bincount(T.tensor([0, 1, 1, 3]), minlength=6)",
    "T.bincount(T.tensor([0, 1, 1, 3]), weights=T.tensor([0.5, 1, 2, 3]))",
    "T.bincount(T.tensor([0, 1, 1, 3]), weights=T.tensor([0.5, 1, 2, 3], dtype=T.float64))",
    "T.bincount(T.tensor([0, 1, 1, 3]), weights=T.tensor([1, 2, 3, 4]))",
    "T.bincount(T.tensor([], dtype=T.long))",
    "T.bincount(T.tensor([1, 2], dtype=T.int32))",
    "T.bincount(T.tensor([1, 2], dtype=T.uint8))",
    "T.tensor([2, 2, 0]).bincount()",
    "T.bincount(T.randint(0, 7, (1000,), generator=T.Generator().manual_seed(0)))",
    "T.histc(T.tensor([1.0, 2, 1, 4]), bins=4, min=0, max=4)",
    "T.histc(T.tensor([1.0, 2, 1, 4]))",
    "T.histc(T.tensor([1.0, 2, 1, 4], dtype=T.float64), bins=3)",
    "T.histc(T.tensor([1.0, 1.0]), bins=4)",
    "T.histc(T.tensor([0.5, 5, -1, 4.0]), bins=4, min=0, max=4)",
    "T.histc(T.tensor([]), bins=3)",
    "T.tensor([1.0, 2.0], requires_grad=True).histc(2)",
    "T.histc(T.randn(10000, generator=T.Generator().manual_seed(0)), bins=13)",
    "T.histc(T.randn(10000, generator=T.Generator().manual_seed(0)), bins=7, min=-1, max=1)",
    "T.histc(T.randn(999, generator=T.Generator().manual_seed(1)).double(), bins=10, min=-0.3,"
    " max=0.7)",
    "T.histc(T.linspace(0, 1, 1001), bins=10)",
    "T.histc(T.arange(0, 1, 0.1), bins=10, min=0, max=0.9)",
    "T.histogram(T.tensor([1.0, 2, 1, 4]), bins=4)",
    "T.histogram(T.tensor([1.0, 1.0]), bins=4)",
    "T.histogram(T.tensor([1.0, 2, 1, 4]), bins=3, range=(0.0, 3.0), density=True)",
    "T.histogram(T.tensor([1.0, 2, 1, 4]), bins=T.tensor([0.0, 1.5, 5.0]),"
    " weight=T.tensor([1.0, 2, 3, 4]))",
    "T.histogram(T.tensor([1.0, 2, 1, 4], dtype=T.float64), 2, density=True)",
    "T.tensor([1.0, 3]).histogram(2).hist",
    "T.histogram(T.randn(32, 68, generator=T.Generator().manual_seed(0)).tanh(), density=True)",
    "T.histogram(T.randn(1000, generator=T.Generator().manual_seed(0)), bins=17, density=True)",
    "T.histogram(T.randn(1000, generator=T.Generator().manual_seed(0)).double(), bins=9,"
    " range=(-1.0, 2.0), weight=T.rand(1000, generator=T.Generator().manual_seed(1)).double())",
    "type(T.histogram(T.ones(2)))",
]

LINSPACES = [(-1.0, 2.0, 10), (0.0, 1.0, 7), (-3.0, 5.0, 37), (0.1, 0.7, 13), (-1.0, 1.0, 101)]


@pytest.mark.parametrize("start, end, steps", LINSPACES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_bits_as_pytorch(start, end, steps, dtype):
    def run(T):
        return T.linspace(start, end, steps, dtype=getattr(T, dtype)).tolist()

    assert run(gt) == run(torch)


@pytest.mark.parametrize("expr", CASES)
def test_same_as_pytorch(expr):
    assert repr(eval(expr, {"T": gt})) == repr(eval(expr, {"T": torch}))


@pytest.mark.parametrize("expr", [
    "T.bincount(T.tensor([-1, 2]))",
    "T.bincount(T.tensor([[1, 2]]))",
    "T.bincount(T.tensor([1.0, 2]))",
    "T.bincount(T.tensor([0, 1]), weights=T.ones(3))",
    "T.bincount(T.tensor([0, 1]), minlength=-1)",
    "T.histc(T.tensor([1, 2]), bins=2)",
    "T.histc(T.tensor([1.0, 2]), bins=0)",
    "T.histc(T.tensor([1.0, 2]), bins=2, min=3, max=1)",
    "T.histc(T.tensor([1.0, float('nan')]), bins=2)",
    "T.histc(T.tensor([1.0, float('inf')]), bins=2)",
    "T.histogram(T.tensor([1, 2]), 2)",
])
def test_errors_as_pytorch(expr):
    seen = []
    for T in (gt, torch):
        with pytest.raises(Exception) as info:
            eval(expr, {"T": T})
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[0] == seen[1]
