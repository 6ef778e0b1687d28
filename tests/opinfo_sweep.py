"""PyTorch's OpInfo samples through PyTorch and gradcli: the ops whose results differ.

    python tests/opinfo_sweep.py            # every op of op_db gradcli has (~10 min)
    python tests/opinfo_sweep.py abs flip   # only these
    python tests/opinfo_sweep.py --dtypes bfloat16 [ops]   # the bfloat16 rows only

For each op of torch.testing._internal.common_methods_invocations.op_db whose name
gradcli has, up to 12 sample inputs per dtype (float64, float32, int64, bool) run in
both; results are compared by dtype, shape and value (torch.testing's default
tolerances) and errors by type and first line. A tool, not a test: many differences it
prints are the sweep's own (random ops, samples whose `op` reorders its arguments,
eigenvector signs); the rest were fixed or listed (see tests/test_ops_sweep_fixes.py).
"""
import collections
import signal
import sys
import warnings

import numpy as np
import torch
from torch.testing._internal.common_methods_invocations import op_db

import gradcli.torch as gt
from gradcli import coverage

warnings.simplefilter("ignore")
DTYPES = [torch.float64, torch.float32, torch.int64, torch.bool]
args = sys.argv[1:]
if "--dtypes" in args:  # e.g. --dtypes bfloat16,float32
    at = args.index("--dtypes")
    DTYPES = [getattr(torch, n) for n in args[at + 1].split(",")]
    del args[at:at + 2]
only = set(args)
# torch.testing's tolerances by dtype (rtol, atol)
TOLERANCES = {"float64": (1e-7, 1e-7), "float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5),
              "bfloat16": (1.6e-2, 1e-5)}


def _numpy(t):
    """A tensor's values as numpy (bfloat16, which numpy lacks, widened to float32)."""
    t = t.detach()
    if repr(t.dtype) == "torch.bfloat16":
        t = t.float()
    return t.numpy()


def conv(x):
    if isinstance(x, torch.Tensor):
        if x.is_complex() or x.layout != torch.strided:
            raise NotImplementedError
        t = gt.tensor(_numpy(x).copy()) if x.dim() else gt.tensor(x.item(), dtype=getattr(gt, str(x.dtype).split('.')[1]))
        if t.dtype.__repr__() != repr(x.dtype):
            t = t.to(getattr(gt, str(x.dtype).split('.')[1]))
        return t
    if isinstance(x, (list, tuple)):
        return type(x)(conv(i) for i in x)
    if isinstance(x, dict):
        return {k: conv(v) for k, v in x.items()}
    if isinstance(x, torch.dtype):
        return getattr(gt, str(x).split('.')[1])
    if isinstance(x, torch.Size):
        return tuple(x)
    return x

def summary(r):
    if isinstance(r, torch.Tensor) or type(r).__name__ == "Tensor":
        return ("T", repr(r.dtype).replace("torch.", ""), tuple(r.shape), _numpy(r) if hasattr(r, "detach") else None)
    if isinstance(r, (tuple, list)):
        return tuple(summary(i) for i in r)
    if isinstance(r, (bool, int, float)):
        return ("S", type(r).__name__, r)
    return ("O", type(r).__name__)

def same(a, b):
    if isinstance(a, tuple) and a and a[0] == "T" and isinstance(b, tuple) and b and b[0] == "T":
        if a[1] != b[1]:
            return f"dtype {a[1]} vs {b[1]}"
        if a[2] != b[2]:
            return f"shape {a[2]} vs {b[2]}"
        x, y = a[3], b[3]
        if x.dtype.kind == "f":
            tol = TOLERANCES.get(a[1], (1.3e-6, 1e-5))
            if not np.allclose(x, y, rtol=tol[0], atol=tol[1], equal_nan=True):
                return f"values differ (max {np.nanmax(np.abs(x.astype(float)-y.astype(float))) if x.size else 0})"
        elif not np.array_equal(x, y):
            return "values differ"
        return None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(isinstance(i, tuple) for i in a):
        for i, j in zip(a, b):
            d = same(i, j)
            if d:
                return d
        return None
    try:
        eq = a == b
        eq = bool(eq)
    except Exception:
        eq = False
    if not eq:
        return f"{str(a)[:60]} vs {str(b)[:60]}"
    return None

class Timeout(Exception):
    """A sample that ran past its 5 s."""


def handler(*_):
    raise Timeout()


signal.signal(signal.SIGALRM, handler)

found = collections.defaultdict(list)
RUN = [0]
for op in op_db:
    if only and op.name not in only:
        continue
    if op.variant_test_name and op.variant_test_name not in ("",):
        pass
    name = op.name
    # gradcli function: as gradcli.coverage resolves it (the OpInfo's own wrappers with
    # their torch pointing at gradcli's, aten overloads through torch.ops.aten), else by name
    target = coverage.resolve(op)
    if target is None:
        target = gt
        for part in name.split("."):
            target = getattr(target, part, None) if target is not None else None
    if target is None:
        continue
    tfn = op.op
    for dtype in DTYPES:
        if dtype not in op.supported_dtypes("cpu"):
            continue
        try:
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))[:12]
        except Exception:
            continue
        for s in samples:
            try:
                gi, ga, gk = conv(s.input), conv(s.args), conv(s.kwargs)
            except Exception:
                continue
            RUN[0] += 1
            signal.alarm(5)
            try:
                try:
                    e = summary(tfn(s.input, *s.args, **s.kwargs))
                except Exception as err:
                    e = ("E", type(err).__name__, str(err).split("\n")[0][:150])
                try:
                    g = summary(target(gi, *ga, **gk))
                except Timeout:
                    raise
                except Exception as err:
                    g = ("E", type(err).__name__, str(err).split("\n")[0][:150])
            except Timeout:
                g = ("timeout",)
            finally:
                signal.alarm(0)
            d = same(e, g) if e[0] != "E" or g[0] != "E" else (None if e == g else f"error {e[1:]} vs {g[1:]}")
            if e[0] == "E" and g[0] != "E":
                d = f"torch raises {e[1]}: {e[2]}; gradcli returns"
            elif g[0] == "E" and e[0] != "E":
                d = f"gradcli raises {g[1]}: {g[2]}"
            if d:
                print("DIFF", name, op.variant_test_name, str(dtype).split('.')[1], d[:150], flush=True)
                found[(name + ("." + op.variant_test_name if op.variant_test_name else ""))].append((str(dtype).split('.')[1], repr(s)[:160], d))
for k, v in sorted(found.items()):
    print(f"## {k}: {len(v)} differing samples")
    for dt, s, d in v[:3]:
        print(f"   [{dt}] {d}\n      {s}")
print("OPS WITH DIFFERENCES:", len(found), "samples run:", RUN[0])
