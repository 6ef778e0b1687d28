"""`gradcli grad --csv / --grid`: EXPR and its partial derivatives at many points.

Each point is one row: the bound names' values there, EXPR's value, and d EXPR / d name
for each wrt name. Nothing is ever summed across points:

- an elementwise EXPR is evaluated once, with every input expanded to the points' shape
  as a fresh leaf; the gradient of the sum is then each element's own partial, *because*
  the Jacobian is diagonal — which is checked, with a second backward pass whose seed is a
  fixed pseudo-random vector (a non-diagonal Jacobian mixes the seed's entries);
- any other EXPR (one that sums, say, over a fixed vector) is evaluated point by point.
"""

from __future__ import annotations

#: the most points all --grid axes may make together (a row each is printed)
MAX_POINTS = 1_000_000
GRID_USAGE = "usage: --grid NAME=START:STOP:N (N points from START to STOP, N >= 1)"


class PointsError(Exception):
    """A usage problem with --csv/--grid (exit 2)."""


def parse_grid(items: list) -> list:
    """[(name, start, stop, n)] from `NAME=START:STOP:N` texts (numbers, pi/e allowed)."""
    import math

    consts = {"pi": math.pi, "e": math.e, "-pi": -math.pi, "-e": -math.e}
    out = []
    for item in items:
        name, eq, spec = item.partition("=")
        name = name.strip()
        parts = spec.split(":")
        if not eq or not name.isidentifier() or name.startswith("_") or len(parts) != 3:
            raise PointsError(f"--grid expects NAME=START:STOP:N, got {item!r}\n{GRID_USAGE}")
        try:
            start, stop = (consts[p.strip()] if p.strip() in consts else float(p)
                           for p in parts[:2])
            n = int(parts[2])
        except ValueError:
            raise PointsError(f"--grid {item!r}: START and STOP must be numbers and N an "
                              f"integer\n{GRID_USAGE}") from None
        if n < 1 or n > 1_000_000:
            raise PointsError(f"--grid {item!r}: N must be between 1 and 1000000\n{GRID_USAGE}")
        out.append((name, start, stop, n))
    if len({g[0] for g in out}) != len(out):
        raise PointsError("--grid: each name may be given once")
    total = 1
    for g in out:
        total *= g[3]
    if total > MAX_POINTS:
        raise PointsError(f"--grid: {total} points in all; at most {MAX_POINTS:,} "
                          "(fewer points per name)")
    return out


def grid_axes(grid: list) -> dict:
    """{name: list of floats} for each grid axis."""
    axes = {}
    for name, start, stop, n in grid:
        if n == 1:
            axes[name] = [start]
        else:
            step = (stop - start) / (n - 1)
            axes[name] = [start + k * step for k in range(n - 1)] + [stop]
    return axes


def _evaluate(p, values: dict):
    import gradcli.torch as torch

    for n, t in values.items():
        p.session.globals[n] = t
    v = p.session.execute(p.program)
    if not isinstance(v, torch.Tensor):
        v = torch.tensor(float(v), dtype=torch.get_default_dtype())
    return v


def _restore(p):
    for n, t in p.inputs.items():
        p.session.globals[n] = t


def elementwise(p, values: dict, shape: tuple):
    """(value, {name: partials}) with `values` expanded to `shape`, or None when EXPR is
    not elementwise there (its value has another shape or its Jacobian is not diagonal)."""
    import numpy as np

    import gradcli.torch as torch

    leaves = {}
    for n, t in values.items():
        leaf = t.detach().expand(shape).clone() if tuple(t.shape) != tuple(shape) else \
            t.detach().clone()
        leaves[n] = leaf.requires_grad_(True) if n in p.wrt else leaf
    try:
        value = _evaluate(p, leaves)
    finally:
        _restore(p)
    if tuple(value.shape) != tuple(shape):
        return None
    partials = {n: torch.zeros(shape, dtype=leaves[n].dtype) for n in p.wrt}
    if value.requires_grad:
        targets = [leaves[n] for n in p.wrt]
        grads = torch.autograd.grad(value, targets, grad_outputs=torch.ones_like(value),
                                    retain_graph=True, allow_unused=True)
        seed = np.random.default_rng(12345).uniform(0.5, 1.5, size=shape)
        seed_t = torch.tensor(seed.tolist() if shape else float(seed), dtype=value.dtype)
        # the seed as the value's dtype holds it (bfloat16 keeps 8 bits), and a tolerance
        # of that dtype: the products below are rounded to it
        seed = np.asarray(seed_t.tolist(), dtype=float)
        rtol = max(1e-4, 4 * torch.finfo(value.dtype).eps)
        mixed = torch.autograd.grad(value, targets, grad_outputs=seed_t, allow_unused=True)
        for n, g, m in zip(p.wrt, grads, mixed):
            if g is None:
                continue
            expect = np.asarray(g.tolist(), dtype=float) * seed
            got = np.asarray(m.tolist(), dtype=float)
            if not np.allclose(got, expect, rtol=rtol, atol=1e-6, equal_nan=True):
                return None
            partials[n] = g
    return value.detach(), partials


def pointwise(p, points: list):
    """Rows evaluated one point at a time: points is a list of {name: tensor}."""
    import gradcli.torch as torch

    rows = []
    try:
        for values in points:
            leaves = {n: (t.detach().clone().requires_grad_(True) if n in p.wrt else t)
                      for n, t in values.items()}
            v = _evaluate(p, leaves)
            if v.numel() != 1:
                raise PointsError(f"EXPR has {v.numel()} elements at one point: --csv and "
                                  "--grid need one value per point")
            ds = {}
            targets = [leaves[n] for n in p.wrt]
            gs = torch.autograd.grad(v.reshape(()), targets, allow_unused=True) if \
                v.requires_grad else [None] * len(targets)
            for n, g in zip(p.wrt, gs):
                ds[n] = 0.0 if g is None else g
            rows.append((values, v.detach().reshape(()), ds))
    finally:
        _restore(p)
    return rows


def _scalar(t) -> float:
    return float(t.reshape(()).item()) if hasattr(t, "reshape") else float(t)


def table(p, grid: list):
    """(headers, rows of floats): one row per point of the grid, or (no grid) per element
    of an elementwise EXPR."""
    import gradcli.torch as torch

    for n in p.wrt:
        if grid and n not in {g[0] for g in grid} and p.inputs[n].numel() != 1:
            raise PointsError(f"--grid: d/d{n} is not one number per point ({n} has shape "
                              f"{list(p.inputs[n].shape)}); choose scalar names with --wrt")
    grid_names = {g[0] for g in grid}
    # a fixed vector (--at w=[1,2] beside a --grid) is the same at every point: no column
    names = [n for n in p.names if not grid or n in grid_names or p.inputs[n].numel() == 1]
    headers = names + ["value"] + [f"d/d{n}" for n in p.wrt]
    dtype = p.value.dtype
    if grid:
        axes = grid_axes(grid)
        shape = tuple(len(axes[g[0]]) for g in grid)
        values = dict(p.inputs)
        for k, (name, *_rest) in enumerate(grid):
            view = [1] * len(grid)
            view[k] = len(axes[name])
            values[name] = torch.tensor(axes[name], dtype=dtype).reshape(view)
        scalar_fixed = all(p.inputs[n].numel() == 1 for n in p.names if n not in axes)
        fast = elementwise(p, {n: (t.reshape(()) if n not in axes else t) for n, t in values.items()},
                           shape) if scalar_fixed else None
        if fast is None:
            import itertools

            points = []
            for idx in itertools.product(*[range(len(axes[g[0]])) for g in grid]):
                point = dict(p.inputs)
                for (name, *_r), i in zip(grid, idx):
                    point[name] = torch.tensor(axes[name][i], dtype=dtype)
                points.append(point)
            return headers, [[_scalar(v[n]) for n in names] + [_scalar(val)] +
                             [_scalar(d[n]) for n in p.wrt] for v, val, d in pointwise(p, points)]
        expanded = {n: (t.reshape(()) if n not in axes else t).expand(shape) for n, t in values.items()}
    else:
        try:
            shape = _broadcast_shape([tuple(t.shape) for t in p.inputs.values()])
        except ValueError:
            raise PointsError("--csv: the inputs' shapes do not broadcast") from None
        fast = elementwise(p, dict(p.inputs), shape)
        if fast is None:
            raise PointsError(
                f"--csv needs an elementwise EXPR (one value per element of the inputs, shape "
                f"{list(shape)}); EXPR has shape {list(p.value.shape)} or mixes elements. "
                "Use --grid for a scalar EXPR over a range.")
        expanded = {n: t.expand(shape) for n, t in p.inputs.items()}
    value, partials = fast
    flat = {n: expanded[n].reshape(-1).tolist() for n in names}
    vflat = value.reshape(-1).tolist()
    dflat = {n: partials[n].reshape(-1).tolist() for n in p.wrt}
    rows = [[flat[n][k] for n in names] + [vflat[k]] + [dflat[n][k] for n in p.wrt]
            for k in range(len(vflat))]
    return headers, rows


def _broadcast_shape(shapes):
    n = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(n):
        dims = {s[len(s) - n + i] for s in shapes if len(s) - n + i >= 0} - {1}
        if len(dims) > 1:
            raise ValueError("no broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def number(v, precision) -> str:
    """A float for --csv/--grid: all its digits, or `precision` significant ones."""
    v = float(v)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    if precision is None:
        return repr(v)
    return f"{v:.{precision}g}"


def write_csv(headers, rows, precision, out) -> None:
    import csv

    w = csv.writer(out, lineterminator="\n")
    w.writerow(headers)
    for r in rows:
        w.writerow([number(v, precision) for v in r])
