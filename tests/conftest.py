"""Pins the CPU kernels of numpy and PyTorch for the whole test session.

gradcli reproduces PyTorch's CPU results bit for bit as PyTorch computes them with its
AVX2 kernels, and computes with numpy's kernels. Both libraries pick their kernels by the
CPU at run time: on an AVX-512 machine PyTorch adds float32 sums in 16 lanes instead of 8,
and numpy's AVX-512 float32 `log`/`exp`/`pow` round some results differently. A test that
compares last bits would then pass or fail by the machine it runs on. So before either
library is imported (this file is loaded before any test module, and the plugins pytest
loads before it import neither), the session asks both for the kernels every x86-64 CPU
in use has: PyTorch through `ATEN_CPU_CAPABILITY=avx2` (and its MKL, whose AVX-512 `log`
gives `log(float32(e))` as 1.0000001, through `MKL_ENABLE_INSTRUCTIONS=AVX2`), numpy by
switching off its AVX-512 dispatch targets (`NPY_DISABLE_CPU_FEATURES`). MKL's matrix
products still follow the CPU's vendor: tests/torch_kernels.py skips the tests of their
order, saying so, on a CPU other than the one they were measured on. The settings are environment
variables, so the gradcli and python processes the tests start inherit them.

A variable the caller already set is left alone (e.g. `ATEN_CPU_CAPABILITY=default` to
see what a machine without AVX2 does).
"""

from __future__ import annotations

import os
import subprocess
import sys

if "numpy" in sys.modules or "torch" in sys.modules:  # pragma: no cover - a plugin's doing
    import warnings

    warnings.warn("a pytest plugin imported numpy or torch before tests/conftest.py: their "
                  "kernels in this process are the CPU's own, and last-bit tests may differ "
                  "on AVX-512 machines (the processes the tests start are still pinned)",
                  stacklevel=1)

# numpy's names for its dispatch targets changed across versions (AVX512F, AVX512_SKX, ...
# up to 2.3; X86_V4, AVX512_ICL, AVX512_SPR from 2.4), and naming one it does not dispatch
# prints a warning in every process. So ask this numpy (in a child, since importing it
# here would fix its choice) which targets it has.
_PROBE = """
try:
    from numpy._core._multiarray_umath import __cpu_dispatch__
except ImportError:
    from numpy.core._multiarray_umath import __cpu_dispatch__
print(" ".join(t for t in __cpu_dispatch__ if "AVX512" in t or t == "X86_V4"))
"""


def _numpy_avx512_targets() -> str:
    env = {k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          env=env, timeout=120)
    return proc.stdout.strip() if proc.returncode == 0 else ""


os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("MKL_ENABLE_INSTRUCTIONS", "AVX2")
if "NPY_DISABLE_CPU_FEATURES" not in os.environ:
    _targets = _numpy_avx512_targets()
    if _targets:
        os.environ["NPY_DISABLE_CPU_FEATURES"] = _targets


# ---------------------------------------------------------------- per-test configuration
# PyTorch's configuration is process state, and a REPL or program keeps it as one Python
# session does (gradcli's `reset_engine` runs per program and on `:reset`, not between
# inputs). The test session is one process too: a test that sets the default dtype, the
# determinism flags, the matmul precision or the print options, or leaves an autocast
# region or grad mode off (failing before it restores them), would change the tests run
# after it. So each test's configuration is put back as it was, for gradcli and for
# PyTorch, whichever of them is loaded (neither is imported here for it).

import pytest  # noqa: E402


def _gradcli_config():
    torch = sys.modules.get("gradcli.torch")
    if torch is None:
        return None
    from gradcli.engine import autocast_state, formatting

    amp = autocast_state.STATE
    return {
        "dtype": torch.get_default_dtype(), "grad": torch.is_grad_enabled(),
        "anomaly": torch.is_anomaly_enabled(),
        "deterministic": (torch.are_deterministic_algorithms_enabled(),
                          torch.is_deterministic_algorithms_warn_only_enabled()),
        "matmul": torch.get_float32_matmul_precision(),
        "warn_always": torch.is_warn_always_enabled(),
        "print": formatting.PRINT_OPTIONS.as_dict(),
        "device": torch.get_default_device(),
        "threads": torch.get_num_threads(),
        "autocast": (amp.enabled, amp.dtype, amp.cache_enabled, amp.nesting, amp.inside,
                     autocast_state.ENABLED),
    }


def _gradcli_restore(saved) -> None:
    torch = sys.modules.get("gradcli.torch")
    if torch is None:
        return
    if saved is None:  # (loaded during the test: its defaults are what a fresh import has)
        saved = {"dtype": torch.float32, "grad": True, "anomaly": False,
                 "deterministic": (False, False), "matmul": "highest", "warn_always": False,
                 "print": {"precision": 4, "threshold": 1000, "edgeitems": 3,
                           "linewidth": 80, "sci_mode": None},
                 "device": None, "threads": None,
                 "autocast": (False, torch.bfloat16, True, 0, 0, 0)}
    now = _gradcli_config()
    if now == saved:
        return
    from gradcli.engine import autocast_state, formatting

    torch.set_default_dtype(saved["dtype"])
    torch.set_grad_enabled(saved["grad"])
    torch.set_anomaly_enabled(saved["anomaly"])
    torch.use_deterministic_algorithms(saved["deterministic"][0],
                                       warn_only=saved["deterministic"][1])
    torch.set_float32_matmul_precision(saved["matmul"])
    torch.set_warn_always(saved["warn_always"])
    for name, value in saved["print"].items():
        setattr(formatting.PRINT_OPTIONS, name, value)
    if saved["device"] is None or str(saved["device"]) == "cpu":
        torch.set_default_device(None)
    else:
        torch.set_default_device(saved["device"])
    if saved["threads"] is not None and now["threads"] != saved["threads"]:
        torch.set_num_threads(saved["threads"])
    amp = autocast_state.STATE
    (amp.enabled, amp.dtype, amp.cache_enabled, amp.nesting, amp.inside,
     autocast_state.ENABLED) = saved["autocast"]
    amp.cache.clear()


def _torch_config():
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "get_default_dtype"):
        return None
    return (torch.get_default_dtype(), torch.is_grad_enabled(), torch.is_anomaly_enabled(),
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.get_float32_matmul_precision(), dict(vars(torch._tensor_str.PRINT_OPTS)),
            torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))


def _torch_restore(saved) -> None:
    if saved is None or _torch_config() == saved:
        return
    torch = sys.modules["torch"]
    (dtype, grad, anomaly, deterministic, warn_only, matmul, printing, autocast,
     autocast_dtype) = saved
    torch.set_default_dtype(dtype)
    torch.set_grad_enabled(grad)
    torch.set_anomaly_enabled(anomaly)
    torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
    torch.set_float32_matmul_precision(matmul)
    vars(torch._tensor_str.PRINT_OPTS).update(printing)
    torch.set_autocast_enabled("cpu", autocast)
    torch.set_autocast_dtype("cpu", autocast_dtype)


_UNREADABLE = object()


def _read(config):
    try:
        return config()
    except Exception:  # (a test that replaced a getter: its configuration is left alone)
        return _UNREADABLE


@pytest.fixture(autouse=True)
def _restore_configuration():
    """Each test leaves gradcli's and PyTorch's process-wide configuration as it found it."""
    ours, theirs = _read(_gradcli_config), _read(_torch_config)
    yield
    if ours is not _UNREADABLE:
        _gradcli_restore(ours)
    if theirs is not _UNREADABLE:
        _torch_restore(theirs)
