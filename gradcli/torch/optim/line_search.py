"""LBFGS's strong Wolfe line search (`line_search_fn="strong_wolfe"`, which physics-informed
network tutorials use): Nocedal and Wright's bracketing phase then zoom phase (Algorithms
3.5 and 3.6), each trial step chosen by the minimiser of the cubic through two points'
values and slopes, with minFunc's safeguards (extrapolation between 1.01 and 10 times the
last step; a trial too close to the bracket's ends is moved 10% inside), as PyTorch's
LBFGS runs it. The arithmetic is done on the same 0-d tensors and Python floats as
PyTorch's, so float32 runs round alike and the same trial steps are taken.
"""

from __future__ import annotations


def cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic with values f1, f2 and slopes g1, g2 at x1, x2, clamped
    to bounds (the interval between x1 and x2 by default); the interval's middle when the
    cubic has no minimum."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 ** 2 - g1 * g2
    if not disc >= 0:
        return (low + high) / 2.0
    d2 = disc.sqrt()
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


class _Point:
    """A trial step: its length, loss, flat gradient and slope along the direction."""

    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd) -> None:
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                 max_ls=25):
    """(loss, flat gradient, step, evaluations) of a step along d satisfying the strong
    Wolfe conditions (or the best found within max_ls evaluations). evaluate(t) gives
    (loss, flat gradient) at the step t without moving the parameters."""
    d_norm = d.abs().max()
    start = _Point(0, f, g.clone(), gtd)

    def too_high(point):  # (the sufficient decrease condition fails; not for a NaN loss)
        return point.f > f + c1 * point.t * gtd

    def curvature(point):
        return abs(point.gtd) <= -c2 * gtd

    def trial(step):
        loss, grad = evaluate(step)
        return _Point(step, loss, grad, grad.dot(d))

    new = trial(t)
    evals, iters = 1, 0
    prev = start
    bracket = None
    found = False
    # bracketing: extrapolate until the step is too long, or acceptable
    while iters < max_ls:
        if too_high(new) or (iters > 1 and new.f >= prev.f):
            bracket = [prev, _Point(new.t, new.f, new.g.clone(), new.gtd)]
            break
        if curvature(new):
            bracket = [new]
            found = True
            break
        if new.gtd >= 0:
            bracket = [prev, _Point(new.t, new.f, new.g.clone(), new.gtd)]
            break
        step = cubic_minimum(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd,
                             bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev = _Point(new.t, new.f, new.g.clone(), new.gtd)
        new = trial(step)
        evals += 1
        iters += 1
    if iters == max_ls:
        bracket = [_Point(0, f, g, None), _Point(new.t, new.f, new.g, None)]
    # zoom: shrink the bracket [low, high] by cubic interpolation
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    stalled = False
    while not found and iters < max_ls:
        a, b = bracket[0].t, bracket[1].t
        if abs(b - a) * d_norm < tolerance_change:
            break
        step = cubic_minimum(a, bracket[0].f, bracket[0].gtd, b, bracket[1].f, bracket[1].gtd)
        top, bottom = max(a, b), min(a, b)
        margin = 0.1 * (top - bottom)
        if min(top - step, step - bottom) < margin:
            # too near an end: accept once, then (or when outside) move it inside
            if stalled or step >= top or step <= bottom:
                step = top - margin if abs(step - top) < abs(step - bottom) else bottom + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        new = trial(step)
        evals += 1
        iters += 1
        if too_high(new) or new.f >= bracket[low].f:
            bracket[high] = _Point(new.t, new.f, new.g.clone(), new.gtd)
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if curvature(new):
                found = True
            elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = _Point(new.t, new.f, new.g.clone(), new.gtd)
    best = bracket[low]
    return best.f, best.g, best.t, evals
