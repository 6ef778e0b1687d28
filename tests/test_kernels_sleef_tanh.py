"""PyTorch's vector float32 tanh (SLEEF's tanhf8_u10 / tanhf16_u10, kernels/sleef.py
vec_tanh32) and the float32 mish that uses it, bit for bit; and torch.tanh, which is not it.

PyTorch runs Vectorized<float>::tanh inside other kernels: mish's vector body is
exp -> log1p -> tanh -> times x, all SLEEF, so mish of float32 arrays whose length is a
multiple of the vector body's step (16 for AVX2, 32 for AVX-512) checks the tanh on every
input softplus can make: subnormals, tiny values, the cut-off at 8.664339742, 1.
torch.tanh itself is MKL's vmsTanh on PyTorch's MKL builds, with other bits (and other
ones again between MKL's AVX2 and AVX-512 code): gradcli keeps float64's tanh rounded once
for it, which agrees with MKL more often than SLEEF's does (the last test holds that).

Each comparison runs in a fresh process, once with ATEN_CPU_CAPABILITY=avx2 and
MKL_ENABLE_INSTRUCTIONS=AVX2 (the suite's setting) and once with both unset (what users
get: AVX-512 kernels where the CPU has them); on a CPU without AVX2 it skips, saying so."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gradcli.engine import kernels, parallel
from gradcli.engine.kernels import sleef

_F32 = np.float32

_MISH = r"""
import json, sys
import numpy as np, torch
import gradcli.torch as gt
cap = torch.backends.cpu.get_cpu_capability()
if cap not in ("AVX2", "AVX512"):
    print(json.dumps({"skip": cap})); sys.exit()
torch.set_num_threads(2); gt.set_num_threads(2)
rng = np.random.default_rng(int(sys.argv[1]))
step = 32  # a multiple of both vector bodies: no scalar tail
def values(n):
    parts = [rng.normal(size=n) * 3, rng.uniform(-20, 20, n), rng.normal(size=n) * 1e-3,
             rng.uniform(-104, -85, n),  # exp, softplus and tanh subnormal
             rng.uniform(8.6, 8.7, n), rng.uniform(85, 88, n), rng.uniform(-300, 300, n),
             np.resize(np.array([0, -0.0, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 8.664339742,
                                 8.66433907, 8.66434, 4.33, 88.0, -104, -110]), n)]
    return np.concatenate(parts).astype(np.float32)
def same(o, t):
    o, t = np.asarray(o), np.asarray(t)
    return o.shape == t.shape and bool((((o.view(np.int32) == t.view(np.int32))
                                         | (np.isnan(o) & np.isnan(t)))).all())
wrong, checked = [], 0
for n in (step, 4 * step, 40 * step, 8192):
    x = values(n)
    for a in (x, x.reshape(-1, 32).T):  # C order, and a transposed view (F order)
        checked += a.size
        t = torch.nn.functional.mish(torch.from_numpy(np.ascontiguousarray(a)) if a.flags.c_contiguous else torch.from_numpy(a.T.copy()).T)
        o = gt.nn.functional.mish(gt.tensor(np.ascontiguousarray(a)) if a.flags.c_contiguous else gt.tensor(a.T.copy()).t())
        if not same(o._data, t.numpy()):
            bad = ~((o._data.view(np.int32) == t.numpy().view(np.int32)) | np.isnan(t.numpy()))
            wrong.append([n, a.flags.c_contiguous, a[bad][:4].tolist()])
# lengths off the step (AVX2's body: 16 at a time; the rest is glibc's scalar code, which
# gradcli takes in float64: within 2 ulps there)
tails = []
if cap == "AVX2":
    for n in (1, 7, 17, 100, 1000):
        x = values(n)[rng.permutation(8 * n)[:n]]
        t = torch.nn.functional.mish(torch.from_numpy(x)).numpy()
        o = gt.nn.functional.mish(gt.tensor(x))._data
        body = n // 16 * 16
        ok = ~np.isnan(t)
        ulps = np.abs(o.view(np.int32).astype(np.int64) - t.view(np.int32))[ok]
        tails.append([n, same(o[:body], t[:body]), int(ulps.max()) if ulps.size else 0])
print(json.dumps({"cap": cap, "checked": checked, "wrong": wrong, "tails": tails}))
"""

_TANH = r"""
import json, sys
import numpy as np, torch
import gradcli.torch as gt
from gradcli.engine.kernels.sleef import vec_tanh32
if not torch.backends.mkl.is_available():
    print(json.dumps({"skip": "PyTorch without MKL"})); sys.exit()
rng = np.random.default_rng(int(sys.argv[1]))
x = np.concatenate([rng.normal(size=200000), rng.uniform(-20, 20, 200000)]).astype(np.float32)
t = torch.tanh(torch.from_numpy(x)).numpy()
o = gt.tensor(x).tanh()._data
special = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e-39, -1e-38, 1e-30,
                    8.664339742, -8.66434, 9.01, 15, -20, 1e30, -3.4e38], np.float32)
m = rng.normal(size=(40, 33)).astype(np.float32)
cases = [(gt.tensor(special).tanh()._data, torch.tanh(torch.from_numpy(special)).numpy()),
         (gt.tensor(special[3]).tanh()._data, torch.tensor(special[3]).tanh().numpy())]
exact = [bool(a.shape == b.shape and a.tobytes() == b.tobytes()) for a, b in cases]
# the other ways in take the same kernel: the bits of the contiguous tanh of their values
whole = gt.tensor(m).tanh()._data
for a, b in [(gt.tensor(m)[:, ::3].t().tanh()._data, whole[:, ::3].T),
             (gt.tensor(m).tanh_()._data, whole),
             (gt.nn.Tanh()(gt.tensor(m))._data, whole),
             (gt.nn.functional.tanh(gt.tensor(m))._data, whole)]:
    exact.append(bool(a.shape == b.shape and a.tobytes() == np.ascontiguousarray(b).tobytes()))
o = np.concatenate([o, whole.ravel()])
t = np.concatenate([t, torch.from_numpy(m).tanh().numpy().ravel()])
ulps = np.abs(o.view(np.int32).astype(np.int64) - t.view(np.int32))
print(json.dumps({"exact": exact, "max_ulps": int(ulps.max()),
                  "rounded_once": float((o == t).mean()), "sleef": float((vec_tanh32(x) == t[:x.size]).mean())}))
"""


def _run(source: str, *args, avx2: bool):
    """source run in a fresh Python with PyTorch's and MKL's AVX2 kernels asked for (or
    neither variable set), its last line of output read as JSON."""
    env = dict(os.environ)
    for name in ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS"):
        env.pop(name, None)
    if avx2:
        env.update(ATEN_CPU_CAPABILITY="avx2", MKL_ENABLE_INSTRUCTIONS="AVX2")
    done = subprocess.run([sys.executable, "-c", source, *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if "skip" in result:
        pytest.skip(f"PyTorch runs its {result['skip']} kernels here, not SLEEF's AVX2/AVX-512 ones")
    return result


@pytest.mark.parametrize("avx2", [True, False], ids=["avx2", "unset"])
def test_mish_vector_body_is_pytorchs_bit_for_bit(avx2):
    pytest.importorskip("torch")
    result = _run(_MISH, 11 + avx2, avx2=avx2)
    assert result["checked"] > 100_000
    assert result["wrong"] == []
    for n, body_exact, ulps in result["tails"]:
        assert body_exact, n
        assert ulps <= 2, n


@pytest.mark.parametrize("avx2", [True, False], ids=["avx2", "unset"])
def test_torch_tanh_is_mkls_and_keeps_float64_rounded_once(avx2):
    """torch.tanh (float32) is MKL's vmsTanh: special values and 0-d give its bits; a strided
    view, tanh_, nn.Tanh and F.tanh take the same kernel; everywhere within an ulp, and rounding float64's tanh
    once agrees with MKL more often than SLEEF's tanh would (measured: 99.96% against 99.0%
    with MKL's AVX2 code, 99.2% against 98.3% with its AVX-512 code)."""
    pytest.importorskip("torch")
    result = _run(_TANH, 5, avx2=avx2)
    assert all(result["exact"]), result["exact"]
    assert result["max_ulps"] <= 1
    assert result["rounded_once"] > result["sleef"]
    assert result["rounded_once"] > (0.999 if avx2 else 0.98)


def test_vec_tanh32_edge_values():
    cut = _F32(8.664339742)  # the last input that is computed; past it, exactly 1
    x = np.array([0, -0.0, 1e-45, -1e-45, 1e-38, -3e-39, cut, np.nextafter(cut, _F32(9)), 9,
                  1e30, np.inf, -np.inf, np.nan], _F32)
    y = sleef.vec_tanh32(x)
    assert y.dtype == _F32
    assert np.signbit(y[1]) and y[1] == 0 and y[0] == 0 and not np.signbit(y[0])
    assert np.array_equal(y[2:6], x[2:6])  # subnormal and tiny: tanh(x) = x
    assert y[6] < 1 and y[7] == 1 and (y[8:11] == 1).all() and y[11] == -1
    assert np.isnan(y[12])


def test_vec_tanh32_is_odd_bit_for_bit_and_keeps_shape():
    rng = np.random.default_rng(2)
    x = rng.uniform(-10, 10, (50, 37)).astype(_F32)
    y = sleef.vec_tanh32(x)
    assert y.shape == x.shape
    assert np.array_equal(sleef.vec_tanh32(-x).view(np.int32), (-y).view(np.int32))
    assert np.array_equal(sleef.vec_tanh32(x[:, ::3]), y[:, ::3])  # a strided view
    assert np.array_equal(sleef.vec_tanh32(x.T), y.T)
    assert sleef.vec_tanh32(x[3, 4]).shape == () and sleef.vec_tanh32(x[3, 4]) == y[3, 4]
    assert sleef.vec_tanh32(x[:0]).shape == (0, 37)
    assert np.abs(y.astype(np.float64) - np.tanh(x.astype(np.float64))).max() < 1.2e-7


def test_vec_tanh32_same_bits_on_several_threads(monkeypatch):
    monkeypatch.setattr(parallel.POOL, "cores", max(2, parallel.POOL.cores))
    monkeypatch.setattr(parallel, "_blas_spin_until", [0.0])
    x = np.random.default_rng(3).normal(size=5 * parallel.MIN_ELEMENTS + 77).astype(_F32)
    before = parallel.POOL.threads
    try:
        parallel.POOL.threads = 1
        one = sleef.vec_tanh32(x)
        parallel.POOL.threads = 2
        two = sleef.vec_tanh32(x)
    finally:
        parallel.POOL.threads = before
    assert np.array_equal(one.view(np.int32), two.view(np.int32))


def test_switch_off_gives_numpys_tanh_and_mish_formula(monkeypatch):
    monkeypatch.setattr(kernels, "EXACT", False)
    x = np.random.default_rng(4).normal(size=100).astype(_F32)
    assert np.array_equal(sleef.vec_tanh32(x), np.tanh(x))
    assert sleef.mish32(x) is None
