"""torch.signal.windows against PyTorch: values (float32 / float64, symmetric and
periodic, lengths 0, 1, 2 and more), grad_fn names and gradients with requires_grad=True,
the argument checks' errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

WINDOWS = {
    "bartlett": {}, "blackman": {}, "cosine": {}, "hamming": {}, "hann": {}, "nuttall": {},
    "exponential": {"tau": 0.7}, "gaussian": {"std": 1.7}, "kaiser": {"beta": 5.5},
    "general_cosine": {"a": [0.46, 0.23, 0.31]}, "general_hamming": {"alpha": 0.6},
}


@pytest.mark.parametrize("name", list(WINDOWS))
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window_values(name, sym, dtype):
    for M in (0, 1, 2, 5, 16, 33):
        ours = getattr(gt.signal.windows, name)(M, sym=sym, dtype=getattr(gt, dtype),
                                                **WINDOWS[name])
        theirs = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype),
                                                     **WINDOWS[name])
        tol = dict(rtol=1.3e-6, atol=1e-5) if dtype == "float32" else dict(rtol=1e-7, atol=1e-7)
        assert str(ours.dtype) == str(theirs.dtype) and ours.shape == theirs.shape
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol)


@pytest.mark.parametrize("name", list(WINDOWS))
def test_window_graphs(name):
    results = [getattr(lib.signal.windows, name)(6, dtype=lib.float64, requires_grad=True,
                                                 **WINDOWS[name]) for lib in (gt, torch)]
    assert type(results[0].grad_fn).__name__ == type(results[1].grad_fn).__name__
    assert results[0].requires_grad == results[1].requires_grad


def test_exponential_center():
    ours = gt.signal.windows.exponential(7, center=2.0, sym=False)
    theirs = torch.signal.windows.exponential(7, center=2.0, sym=False)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda w, lib: w.hann(-1),
    lambda w, lib: w.hann(4, dtype=lib.int64),
    lambda w, lib: w.exponential(4, tau=0),
    lambda w, lib: w.exponential(4, center=1.0),
    lambda w, lib: w.gaussian(4, std=-1.0),
    lambda w, lib: w.kaiser(4, beta=-1.0),
    lambda w, lib: w.general_cosine(4, a=[]),
    lambda w, lib: w.general_cosine(4, a=3),
    lambda w, lib: w.bartlett(-2),
])
def test_window_errors(call):
    seen = []
    for lib in (gt, torch):
        try:
            call(lib.signal.windows, lib)
            seen.append(None)
        except Exception as err:  # noqa: BLE001 - compared below
            seen.append((type(err).__name__, str(err)))
    assert seen[0] is not None and seen[0] == seen[1]


def test_windows_in_the_language(tmp_path):
    import subprocess
    import sys

    program = tmp_path / "w.grad"
    program.write_text("import torch\nprint(torch.signal.windows.hann(6, sym=False))\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(torch.signal.windows.hann(6, sym=False))
