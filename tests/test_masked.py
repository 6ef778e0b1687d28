"""torch.masked on strided tensors against PyTorch: values, dtypes, grad_fn names and
gradients, with masks of the input's shape, broadcast masks, fully masked rows and none."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

DATA = np.random.default_rng(5).standard_normal((3, 4))
MASKS = {
    "full": np.array([[True, False, True, True], [False, False, False, False],
                      [True, True, False, True]]),
    "row": np.array([True, False, True, True]),
    "none": None,
}

CALLS = {
    "sum": lambda m, x, k: m.sum(x, 1, **k),
    "sum_all": lambda m, x, k: m.sum(x, **k),
    "sum_keep": lambda m, x, k: m.sum(x, (0, 1), keepdim=True, **k),
    "prod": lambda m, x, k: m.prod(x, 1, **k),
    "prod_all": lambda m, x, k: m.prod(x, **k),
    "cumsum": lambda m, x, k: m.cumsum(x, 1, **k),
    "cumprod": lambda m, x, k: m.cumprod(x, 0, **k),
    "amax": lambda m, x, k: m.amax(x, 1, **k),
    "amin": lambda m, x, k: m.amin(x, 0, keepdim=True, **k),
    "argmax": lambda m, x, k: m.argmax(x, 1, **k),
    "argmin": lambda m, x, k: m.argmin(x, 1, **k),
    "mean": lambda m, x, k: m.mean(x, 1, **k),
    "mean_all": lambda m, x, k: m.mean(x, **k),
    "median": lambda m, x, k: m.median(x, 1, **k),
    "logsumexp": lambda m, x, k: m.logsumexp(x, 1, **k),
    "norm": lambda m, x, k: m.norm(x, 2.0, 1, **k),
    "norm_inf": lambda m, x, k: m.norm(x, float("inf"), 1, **k),
    "var": lambda m, x, k: m.var(x, 1, **k),
    "std": lambda m, x, k: m.std(x, 1, unbiased=False, **k),
    "var_corr": lambda m, x, k: m.var(x, 0, correction=0, keepdim=True, **k),
    "softmax": lambda m, x, k: m.softmax(x, 1, **k),
    "log_softmax": lambda m, x, k: m.log_softmax(x, 1, **k),
    "softmin": lambda m, x, k: m.softmin(x, -1, **k),
    "normalize": lambda m, x, k: m.normalize(x, 2.0, 1, **k),
}


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("call", list(CALLS))
def test_masked_as_pytorch(call, mask):
    outs = []
    for lib in (gt, torch):
        x = lib.tensor(DATA, requires_grad=True)
        kwargs = {} if MASKS[mask] is None else {"mask": lib.tensor(MASKS[mask])}
        result = CALLS[call](lib.masked, x, kwargs)
        grad = None
        if result.requires_grad:
            finite = lib.where(lib.isfinite(result), result, lib.zeros_like(result))
            (finite * lib.arange(float(result.numel()), dtype=result.dtype)
             .reshape(result.shape)).sum().backward()
            grad = x.grad
        outs.append((result, grad))
    (ours, g1), (theirs, g2) = outs
    assert str(ours.dtype) == str(theirs.dtype)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-7,
                               atol=1e-7, equal_nan=True)
    assert (g1 is None) == (g2 is None)
    if g1 is not None:
        np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-7, atol=1e-7,
                                   equal_nan=True)


def test_masked_integer_inputs():
    data = np.arange(12, dtype=np.int32).reshape(3, 4)
    mask = MASKS["full"]
    for call in ("sum", "prod", "amax", "argmin", "median"):
        results = []
        for lib in (gt, torch):
            try:
                results.append(CALLS[call](lib.masked, lib.tensor(data), {"mask": lib.tensor(mask)}))
            except Exception as err:  # noqa: BLE001 - compared below
                results.append((type(err).__name__, str(err)))
        ours, theirs = results
        if isinstance(theirs, tuple):
            assert ours == theirs
        else:
            assert str(ours.dtype) == str(theirs.dtype)
            assert ours.tolist() == theirs.tolist()


def test_masked_logaddexp_and_errors():
    a, b = [-100.0, -200.0, -300.0], [-1.0, -2.0, -3.0]
    m = [True, False, True]
    ours = gt.masked.logaddexp(gt.tensor(a), gt.tensor(b), input_mask=gt.tensor(m),
                               other_mask=gt.tensor(m))
    theirs = torch.masked.logaddexp(torch.tensor(a), torch.tensor(b), input_mask=torch.tensor(m),
                                    other_mask=torch.tensor(m))
    assert ours.tolist() == theirs.tolist()
    for lib in (gt, torch):
        with pytest.raises(ValueError, match="Could not infer output dtype"):
            lib.masked.mean(lib.tensor([1, 2]))
        with pytest.raises(IndexError, match="mask dimensionality higher"):
            lib.masked.sum(lib.ones(2), mask=lib.ones(1, 2, dtype=lib.bool))
        with pytest.raises(RuntimeError, match="appears multiple times"):
            lib.masked.sum(lib.ones(2, 2), (0, 0))
        assert not lib.masked.is_masked_tensor(lib.ones(2))


def test_masked_in_the_language(tmp_path):
    import subprocess
    import sys

    program = tmp_path / "m.grad"
    program.write_text("import torch\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
                       "y = torch.masked.softmax(x, 0, mask=torch.tensor([True, False, True]))\n"
                       "print(y)\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = torch.masked.softmax(torch.tensor([1.0, 2.0, 3.0], requires_grad=True), 0,
                                    mask=torch.tensor([True, False, True]))
    assert done.stdout.strip() == str(expected)
