"""One-column and one-row float32 products (gemv: x @ w.t() of a Linear(k, 1), X @ w,
X.t() @ g, v @ W, a 1x1 v @ w) and AVX-512's matrix products with b stored row by row, summed
in the order PyTorch's MKL sums them on an Intel CPU (kernels/mkl_intel.py), bit for bit.

MKL picks its kernels by the CPU's vendor and instruction set, and by MKL_ENABLE_INSTRUCTIONS,
read once when it loads: so every comparison runs in a fresh process where PyTorch and
gradcli see the same setting, once with MKL_ENABLE_INSTRUCTIONS=AVX2 and once unset (what
users get: AVX-512 where the CPU has it). On a CPU whose MKL runs other kernels (AMD's: the
orders of kernels/mkl.py; an Intel CPU without AVX2) the tests skip, saying so; whichever
Intel kernels run, the same assertions hold."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gradcli.engine.kernels import mkl, mkl_intel

pytest.importorskip("torch")

_COMPARE = r"""
import json, sys
import numpy as np, torch
import gradcli.torch as gt
from gradcli.engine.kernels import mkl, mkl_intel
level = mkl_intel.isa()
if level in (None, "amd"):
    print(json.dumps({"level": level})); sys.exit()
torch.set_num_threads(int(sys.argv[1])); gt.set_num_threads(int(sys.argv[1]))
rng = np.random.default_rng(int(sys.argv[2]))
def pair(x, transposed):
    if transposed:
        s = x.T.copy()
        return gt.tensor(s).t(), torch.tensor(s).t()
    return gt.tensor(x), torch.tensor(x)
def known(a, b, c=None, alpha=1):
    # an Intel order is rebuilt for this product (other shapes keep the AMD order: not checked)
    return mkl.applies(a, b) and mkl_intel.product(a, b, c, alpha, level, mkl._blas_form) is not None
def same(o, t):
    o, t = o.detach()._data, t.detach().numpy()
    return o.shape == t.shape and o.tobytes() == t.tobytes()
checked, wrong = 0, []
for _ in range(int(sys.argv[3])):
    k = int(rng.integers(2, 5)) if rng.random() < 0.5 else int(rng.integers(2, 100))
    m = int(rng.integers(2, 16)) if rng.random() < 0.7 else int(rng.integers(16, 16384 // k))
    x = (rng.standard_normal((m, k)) * 10.0 ** rng.integers(-2, 3)).astype(np.float32)
    w = rng.standard_normal((k, 1)).astype(np.float32)
    bias = rng.standard_normal(1).astype(np.float32)
    transposed = bool(rng.integers(2))
    a, ta = pair(x, transposed)
    if not known(a._data, w):
        continue
    checked += 1
    results = [(a @ gt.tensor(w), ta @ torch.tensor(w)),
               (gt.addmm(gt.tensor(bias), a, gt.tensor(w)), torch.addmm(torch.tensor(bias), ta, torch.tensor(w)))]
    if not transposed:
        results.append((gt.nn.functional.linear(a, gt.tensor(w.T.copy()), gt.tensor(bias)),
                        torch.nn.functional.linear(ta, torch.tensor(w.T.copy()), torch.tensor(bias))))
    else:  # the sum starts from the bias, alpha scales the vector first
        results.append((gt.addmm(gt.tensor(bias), a, gt.tensor(w), beta=0.5, alpha=1.5),
                        torch.addmm(torch.tensor(bias), ta, torch.tensor(w), beta=0.5, alpha=1.5)))
    # a result of one row: (1, k) @ (k, n), b stored either way (a Linear's w.t() or not)
    n = int(rng.integers(2, 40))
    v, tv = pair(rng.standard_normal((1, k)).astype(np.float32), bool(rng.integers(2)))
    b, tb = pair(rng.standard_normal((k, n)).astype(np.float32), transposed)
    bias = rng.standard_normal(n).astype(np.float32)
    if known(v._data, b._data):
        checked += 1
        results += [(v @ b, tv @ tb), (gt.addmm(gt.tensor(bias), v, b, beta=0.5),
                                       torch.addmm(torch.tensor(bias), tv, tb, beta=0.5))]
        if not transposed:
            results.append((gt.addmm(gt.tensor(bias), v, b, alpha=1.5),
                            torch.addmm(torch.tensor(bias), tv, tb, alpha=1.5)))
    # a 1x1 result: the column stored as a column or as b.t() of a row (another kernel)
    col, tcol = pair(rng.standard_normal((k, 1)).astype(np.float32), bool(rng.integers(2)))
    bias = rng.standard_normal(1).astype(np.float32)
    if known(v._data, col._data, None, 1.5):
        checked += 1
        results += [(v @ col, tv @ tcol), (gt.addmm(gt.tensor(bias), v, col, beta=0.5, alpha=1.5),
                                           torch.addmm(torch.tensor(bias), tv, tcol, beta=0.5, alpha=1.5))]
    # a matrix product (AVX-512: b stored row by row in order; others go to numpy)
    n = int(rng.integers(2, 30))
    p, tp = pair(rng.standard_normal((m % 30 + 2, k)).astype(np.float32), transposed)
    q, tq = pair(rng.standard_normal((k, n)).astype(np.float32), bool(rng.integers(2)))
    bias = rng.standard_normal(n).astype(np.float32)
    if known(p._data, q._data):
        checked += 1
        alpha = 1.5 if known(p._data, q._data, None, 1.5) else 1
        results += [(p @ q, tp @ tq), (gt.addmm(gt.tensor(bias), p, q, beta=0.5, alpha=alpha),
                                       torch.addmm(torch.tensor(bias), tp, tq, beta=0.5, alpha=alpha))]
    for o, t in results:
        if not same(o, t):
            wrong.append([m, k, n, transposed, len(results)])
print(json.dumps({"level": level, "checked": checked, "wrong": wrong[:10]}))
"""


def _run(source: str, *args, enable=None):
    """source run in a fresh Python with MKL_ENABLE_INSTRUCTIONS set to `enable` (None:
    unset), its last line of output read as JSON."""
    env = dict(os.environ)
    env.pop("MKL_ENABLE_INSTRUCTIONS", None)
    if enable is not None:
        env["MKL_ENABLE_INSTRUCTIONS"] = enable
    done = subprocess.run([sys.executable, "-c", source, *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _skip_unless_intel(level):
    if level == "amd":
        pytest.skip("MKL runs its AMD kernels on this CPU (kernels/mkl.py's orders, "
                    "tests/test_engine_matmul_order.py); these are its Intel ones")
    if level is None:
        pytest.skip("MKL runs kernels on this CPU whose orders were not measured")


@pytest.mark.parametrize("enable", ["AVX2", None])
@pytest.mark.parametrize("threads", [1, 2])
def test_one_column_products_match_torch_bit_for_bit(enable, threads):
    """mm, addmm (bias, beta and alpha where emulated) and F.linear with one output (up to
    8192 rows: AVX-512's gemv splits the rows between 2 threads above 8193 multiply-adds),
    a one-row and a 1x1 result, each matrix stored either way, against PyTorch in the same
    process."""
    result = _run(_COMPARE, threads, 40 + threads, 150, enable=enable)
    _skip_unless_intel(result["level"])
    assert result["checked"] > 40
    assert result["wrong"] == []


_LINEAR_REGRESSION = r"""
import json, sys
def run(torch):
    # a from-scratch linear regression (d2l's): X @ w + b, squared loss, minibatch sgd
    torch.manual_seed(0)
    true_w, true_b = torch.tensor([2, -3.4]), 4.2
    X = torch.normal(0, 1, (1000, len(true_w)))
    y = torch.matmul(X, true_w) + true_b
    y += torch.normal(0, 0.01, y.shape)
    y = y.reshape((-1, 1))
    w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lines = []
    for epoch in range(3):
        order = torch.randperm(1000)
        for i in range(0, 1000, 10):
            j = order[i:i + 10]
            loss = ((torch.matmul(X[j], w) + b - y[j]) ** 2 / 2).sum()
            loss.backward()
            with torch.no_grad():
                for p in (w, b):
                    p -= 0.03 * p.grad / 10
                    p.grad.zero_()
        with torch.no_grad():
            train = ((torch.matmul(X, w) + b - y) ** 2 / 2).mean()
        lines.append(f"epoch {epoch + 1}, loss {float(train):f}")
    lines.append(str(true_w - w.reshape(true_w.shape)))
    lines.append(str(true_b - b))
    return lines
import torch
import gradcli.torch as gt
from gradcli.engine.kernels import mkl_intel
print(json.dumps({"level": mkl_intel.isa(), "torch": run(torch), "gradcli": run(gt)}))
"""


@pytest.mark.parametrize("enable", ["AVX2", None])
def test_linear_regression_prints_torchs_digits(enable):
    """d2l's linear regression from scratch: every printed line (losses, the errors of w and b
    to 4 digits) is PyTorch's, which needs its MKL's gemv order for X[j] @ w, X[j].t() @ g
    and X @ w."""
    result = _run(_LINEAR_REGRESSION, enable=enable)
    _skip_unless_intel(result["level"])
    assert result["gradcli"] == result["torch"]


def test_detection_reads_the_vendor_and_the_limit(monkeypatch):
    """The level follows /proc/cpuinfo's vendor and flags and MKL_ENABLE_INSTRUCTIONS (stubbed
    here: the same on every CPU)."""
    intel512 = ("GenuineIntel", {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"})
    cases = [(intel512, None, "avx512"), (intel512, "AVX2", "avx2"), (intel512, "AVX512", "avx512"),
             (intel512, "SSE4_2", None), (("GenuineIntel", {"avx2", "fma"}), None, "avx2"),
             (("GenuineIntel", {"avx"}), None, None), (("AuthenticAMD", intel512[1]), None, "amd"),
             (("AuthenticAMD", {"avx2", "fma"}), "AVX2", "amd")]
    for cpu, enable, want in cases:
        monkeypatch.setattr(mkl_intel, "_cpu_flags", lambda cpu=cpu: cpu)
        monkeypatch.setattr(mkl_intel, "_isa_cache", [])
        if enable is None:
            monkeypatch.delenv("MKL_ENABLE_INSTRUCTIONS", raising=False)
        else:
            monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", enable)
        assert mkl_intel.isa() == want, (cpu, enable)


def test_intel_orders_written_plainly():
    """The Intel kernels against their orders written one addition at a time (no torch, on any
    CPU): the AVX2 8 lanes from the first product with their pairwise fold, the AVX-512 rows
    in groups of 4 (first product leading lane 0) and the rest (first product added last), and
    the plain gemv in order from the bias; each fused step one rounding."""
    rng = np.random.default_rng(3)
    f32, f64 = np.float32, np.float64

    def fused(acc, a, b):
        return f32(f64(acc) + f64(a) * f64(b))

    for _ in range(60):
        m, k = int(rng.integers(2, 11)), int(rng.integers(2, 5))
        a = rng.standard_normal((m, k)).astype(f32)
        x = rng.standard_normal((k, 1)).astype(f32)
        got2 = mkl_intel._dot_rows(a, x, "avx2")
        got512 = mkl_intel._dot_rows(a, x, "avx512")
        c = rng.standard_normal(1).astype(f32)
        got_axpy = mkl_intel._axpy_columns(a, x, "avx512", c)
        for i in range(m):
            lanes = [f32(0)] * 8
            for step in range(k):
                lanes[step % 8] = fused(lanes[step % 8], a[i, step], x[step, 0])
            pairs = [lanes[0] + lanes[1], lanes[2] + lanes[3], lanes[4] + lanes[5], lanes[6] + lanes[7]]
            assert got2[i] == (pairs[0] + pairs[2]) + (pairs[1] + pairs[3])
            if i < m & ~3:  # k <= 4: one 8-wide vector after the first product, in lanes 0..k-2
                lanes = [f32(0)] * 8
                lanes[0] = f32(f64(a[i, 0]) * f64(x[0, 0]))
                for step in range(1, k):
                    lanes[step - 1] = fused(lanes[step - 1], a[i, step], x[step, 0])
                want = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]))
            else:
                lanes = [f32(0)] * 16
                for step in range(1, k):
                    lanes[step - 1] = fused(lanes[step - 1], a[i, step], x[step, 0])
                while len(lanes) > 1:
                    half = len(lanes) // 2
                    lanes = [lanes[j] + lanes[j + half] for j in range(half)]
                want = lanes[0] + f32(f64(a[i, 0]) * f64(x[0, 0]))
            assert got512[i] == want, (m, k, i)
            acc = c[0]
            for step in range(k):
                acc = fused(acc, a[i, step], x[step, 0])
            assert got_axpy[i] == acc


def test_other_intel_products_go_to_numpy():
    """Products whose Intel order is not known here return None (numpy's BLAS computes them):
    a result of more than one row and column on AVX2 (on AVX-512 with b stored transposed, in
    the cases not pinned down: _small_t_kernel), AVX-512's transposed gemv beyond an inner
    size of 32 but for a multiple of 4 rows, its plain gemv from 16 rows beyond an inner size
    of 4, a scaled transposed gemv."""
    rng = np.random.default_rng(4)

    def arr(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    assert mkl_intel.product(arr(3, 4), arr(4, 2), None, 1, "avx2", mkl._blas_form) is None
    assert mkl_intel.product(arr(3, 4), arr(4, 2), None, 1, "avx512", mkl._blas_form) is not None
    stored_transposed = arr(2, 40).T  # (a small batch, few outputs, k from 32: not pinned down)
    assert mkl_intel.product(arr(3, 40), stored_transposed, None, 1, "avx512", mkl._blas_form) is None
    assert mkl_intel.product(arr(3, 4), arr(2, 4).T, None, 1, "avx512", mkl._blas_form) is not None
    for level in ("avx2", "avx512"):
        assert mkl_intel.product(arr(1, 4), arr(4, 1), None, 1, level, mkl._blas_form) is not None
        assert mkl_intel.product(arr(1, 4), arr(4, 3), None, 1, level, mkl._blas_form) is not None
        assert mkl_intel.product(arr(3, 4), arr(4, 1), None, 2.0, level, mkl._blas_form) is None
    assert mkl_intel.product(arr(3, 40), arr(40, 1), None, 1, "avx512", mkl._blas_form) is None
    assert mkl_intel.product(arr(3, 5), arr(5, 1), None, 1, "avx512", mkl._blas_form) is not None
    assert mkl_intel.product(arr(4, 50), arr(50, 1), None, 1, "avx512", mkl._blas_form) is not None
    assert mkl_intel.product(arr(3, 5), arr(5, 1), None, 1, "avx2", mkl._blas_form) is not None
    columns = np.asfortranarray(arr(16, 5))
    assert mkl_intel.product(columns, arr(5, 1), None, 1, "avx512", mkl._blas_form) is None
    assert mkl_intel.product(columns[:15], arr(5, 1), None, 1, "avx512", mkl._blas_form) is not None


_SMALL_LINEAR = r"""
import json, sys
import numpy as np, torch
import gradcli.torch as gt
from gradcli.engine.kernels import mkl, mkl_intel
level = mkl_intel.isa()
if level in (None, "amd"):
    print(json.dumps({"level": level})); sys.exit()
rng = np.random.default_rng(int(sys.argv[1]))
checked, wrong = 0, []
for _ in range(int(sys.argv[2])):
    m, n = int(rng.integers(2, 40)), int(rng.integers(2, 40))
    k = 1 if rng.random() < 0.2 else int(rng.integers(2, 65))
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    # only shapes whose Intel order gradcli claims to know (others keep the AMD order)
    rebuilt = mkl_intel.single_products if k == 1 else mkl_intel.product
    if not (mkl.applies(x, w.T) and rebuilt(x, w.T, bias, 1, level, mkl._blas_form) is not None):
        continue
    checked += 1
    pairs = [(gt.nn.functional.linear(gt.tensor(x), gt.tensor(w), gt.tensor(bias)),
              torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(bias))),
             (gt.tensor(x) @ gt.tensor(w).t(), torch.tensor(x) @ torch.tensor(w).t())]
    if k == 1:  # addmm of a column by a row stored row by row: fused from one row on
        row = w.T.copy()
        pairs.append((gt.addmm(gt.tensor(bias), gt.tensor(x[:1]), gt.tensor(row)),
                      torch.addmm(torch.tensor(bias), torch.tensor(x[:1]), torch.tensor(row))))
    for o, t in pairs:
        if o.detach().numpy().tobytes() != t.detach().numpy().tobytes():
            wrong.append([m, k, n])
print(json.dumps({"level": level, "checked": checked, "wrong": wrong[:10]}))
"""


@pytest.mark.parametrize("enable", ["AVX2", None])
def test_small_linear_layers_match_torch_bit_for_bit(enable):
    """x @ W.t() + b of small layers (batches and widths up to 40, inner sizes 1 to 64: the
    tutorials' tiny networks), wherever gradcli rebuilds MKL's order for them (AVX-512: in
    order over k for the shapes measured; an inner size of 1 fused with the bias), against
    PyTorch in the same process."""
    result = _run(_SMALL_LINEAR, 11, 400, enable=enable)
    _skip_unless_intel(result["level"])
    if result["level"] == "avx512":
        assert result["checked"] > 150
    assert result["wrong"] == []


_TINY_NETWORK = r"""
import json
def run(torch):
    # a two-layer network on a batch of 5, trained with Adam, its loss printed in full
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    x = torch.randn(5, 3)
    wide = torch.nn.Linear(1, 8)
    opt = torch.optim.Adam([*net.parameters(), *wide.parameters()], lr=0.01)
    lines = []
    for step in range(5):
        opt.zero_grad()
        hidden, spread = net[0](x), wide(x[:, :1])
        loss = net[2](net[1](hidden)).pow(2).sum() + spread.pow(2).mean()
        loss.backward()
        opt.step()
        lines += [repr(loss.item()), hidden.detach().numpy().tobytes().hex(),
                  spread.detach().numpy().tobytes().hex()]
    return lines
import torch
import gradcli.torch as gt
from gradcli.engine.kernels import mkl_intel
print(json.dumps({"level": mkl_intel.isa(), "torch": run(torch), "gradcli": run(gt)}))
"""


def test_tiny_network_losses_print_torchs_digits():
    """A tutorial's tiny network (Linear(3, 4) on a batch of 5, and a Linear(1, 8)) prints
    PyTorch's losses to the last digit of `loss.item()` after every Adam step, its layers'
    outputs PyTorch's bit for bit, as users run it (MKL's AVX-512 kernels where the CPU has
    them; AVX2's small x @ W.t() products take lane kernels not rebuilt here)."""
    result = _run(_TINY_NETWORK)
    _skip_unless_intel(result["level"])
    if result["level"] != "avx512":
        pytest.skip("MKL runs its AVX2 kernels on this CPU; the shapes rebuilt are AVX-512's")
    assert result["gradcli"] == result["torch"]


def _axpy_one_column_at_a_time(a, x, c=None):
    """The plain gemv's sum as _axpy_columns first computed it: each step the column cast to
    float64, times x's element, then the fused add into the float32 accumulator."""
    m, k = a.shape
    acc = np.zeros(m, np.float32)
    if c is not None:
        acc += np.broadcast_to(c, (m, 1))[:, 0]
    xs = x[:, 0].astype(np.float64)
    for step in range(k):
        np.add(acc, a[:, step].astype(np.float64) * xs[step], out=acc, casting="unsafe")
    return acc


@pytest.mark.parametrize("seed", range(4))
def test_axpy_columns_blocked_products_keep_the_bits(seed):
    """_axpy_columns makes its exact products a block of columns at a time and then adds
    one column a call: the same bits as the column-at-a-time loop, for both layouts of a,
    with and without c, every inner size up to the products' limit, row counts on both
    sides of a block boundary, zero signs, huge and tiny magnitudes."""
    rng = np.random.default_rng(seed)
    for trial in range(60):
        m = int(rng.integers(1, 400)) if trial % 5 else int(rng.choice([1, 2, 255, 256, 257, 4096]))
        k = int(rng.integers(1, 129))
        a = (rng.standard_normal((k, m)) * 10.0 ** rng.integers(-20, 21, (k, m))).astype(np.float32)
        a = a.T if trial % 2 else np.ascontiguousarray(a.T)
        if trial % 7 == 0:
            a[:, ::2] = -0.0
        x = (rng.standard_normal((k, 1)) * 10.0 ** rng.integers(-5, 6, (k, 1))).astype(np.float32)
        c = None if trial % 3 else rng.standard_normal((m, 1)).astype(np.float32)
        for level in ("avx2", "avx512"):
            if level == "avx512" and m > mkl_intel._AVX512_AXPY_MAX_M and k > mkl_intel._AVX512_ANY_MAX_K:
                assert mkl_intel._axpy_columns(a, x, level, c) is None
                continue
            got = mkl_intel._axpy_columns(a, x, level, c)
            assert got.tobytes() == _axpy_one_column_at_a_time(a, x, c).tobytes(), (m, k, level)


_WIDE_PRODUCTS = r"""
import json, sys
import numpy as np, torch
import gradcli.torch as gt
from gradcli.engine.kernels import mkl, mkl_intel
level = mkl_intel.isa()
if level != "avx512":
    print(json.dumps({"level": level})); sys.exit()
threads, long_k = int(sys.argv[3]), sys.argv[4] == "long"
torch.set_num_threads(threads)
gt.set_num_threads(threads)
rng = np.random.default_rng(int(sys.argv[1]))
checked, wrong, blocks = 0, [], set()
for _ in range(int(sys.argv[2])):
    if long_k:  # an inner size past 256, the product within the rebuilt bound
        k, m = int(rng.integers(257, 3000)), int(rng.integers(2, 40))
        n = int(rng.integers(2, max(3, min(40, (1 << 18) // (m * k)))))
    else:
        m, k, n = (int(rng.integers(2, 200)) for _ in range(3))
    x = rng.standard_normal((m, k)).astype(np.float32)
    y = rng.standard_normal((k, n)).astype(np.float32)
    for form in ("b stored", "b transposed", "a transposed"):
        xs = x.T.copy() if form == "a transposed" else x
        ys = y.T.copy() if form == "b transposed" else y
        def pair(T):
            a, b = T.tensor(xs), T.tensor(ys)
            return (a.t() if form == "a transposed" else a), (b.t() if form == "b transposed" else b)
        (ga, gb), (ta, tb) = pair(gt), pair(torch)
        if m * k * n <= 16384 or not mkl.applies(ga._data, gb._data):
            continue  # the small ones are the other tests'; numpy's BLAS beyond the bound
        checked += 1
        blocks.add(tuple(len(group) for group in mkl_intel._k_blocks(m, k, n)))
        if (ga @ gb).numpy().tobytes() != (ta @ tb).numpy().tobytes():
            wrong.append([m, k, n, form])
print(json.dumps({"level": level, "checked": checked, "wrong": wrong[:10],
                  "blocks": sorted(blocks)}))
"""


def test_wide_products_match_torch_bit_for_bit():
    """Products past the small sizes (a makemore MLP's 32x30 @ 30x200 and its backward
    products) that AVX-512 MKL sums in order over k, in each layout, against PyTorch, as
    users run them (MKL's AVX-512 kernels where the CPU has them)."""
    result = _run(_WIDE_PRODUCTS, 5, 120, 2, "wide")
    if result["level"] != "avx512":
        pytest.skip("MKL does not run its AVX-512 kernels on this CPU")
    assert result["checked"] > 40
    assert result["wrong"] == []


@pytest.mark.parametrize("threads", [1, 2])
def test_long_inner_products_match_torch_bit_for_bit(threads):
    """Products with an inner size past 256 (a batch through a 784-wide first layer, a
    hand-written x @ w with a long k): AVX-512 MKL cuts k into blocks of 384, the last two
    sharing the rest, each summed in order, and 2 threads split a long k of a larger
    product between them (_k_blocks); checked in each layout against PyTorch with 1 and 2
    threads, as users run them."""
    result = _run(_WIDE_PRODUCTS, 11 + threads, 50, threads, "long")
    if result["level"] != "avx512":
        pytest.skip("MKL does not run its AVX-512 kernels on this CPU")
    assert result["checked"] > 40
    shapes = {tuple(groups) for groups in result["blocks"]}  # blocks in each group
    assert {(2,), (3,)} <= shapes
    if threads == 2:  # and a product large enough for the threads to split k
        assert any(len(groups) == 2 for groups in shapes)
    assert result["wrong"] == []
