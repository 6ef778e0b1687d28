"""Forward AD's private switches and refusals compared with PyTorch: the live
`forward_ad._current_level`, forward grad mode (`torch._C._set_fwd_grad_enabled`,
`forward_ad._is_fwd_grad_enabled`, the `_set_fwd_grad_enabled` context manager: off, ops
make no tangents), out= variants refusing dual tensors, and a tangent that is itself dual."""

from __future__ import annotations

import pytest
from scenario_log import attempt, same

torch = pytest.importorskip("torch")


def test_current_level_is_read_live():
    def scenario(t, log):
        fwAD = t.autograd.forward_ad
        log.append(fwAD._current_level)
        with fwAD.dual_level():
            log.append(fwAD._current_level)
        log.append(fwAD._current_level)
        attempt(log, lambda: fwAD._no_such_thing)

    same(scenario)


def test_forward_grad_mode_switches_tangents_off_and_back():
    def scenario(t, log):
        fwAD = t.autograd.forward_ad
        log.append(fwAD._is_fwd_grad_enabled())
        with fwAD.dual_level():
            x = fwAD.make_dual(t.tensor([1.0, 2.0]), t.tensor([0.5, -1.0]))
            try:
                t._C._set_fwd_grad_enabled(False)
                log.append(fwAD._is_fwd_grad_enabled())
                log.append(fwAD.unpack_dual(x * 3).tangent)
                with fwAD._set_fwd_grad_enabled(True):
                    log.append(fwAD._is_fwd_grad_enabled())
                    log.append(fwAD.unpack_dual(x * 3).tangent.tolist())
                log.append(fwAD._is_fwd_grad_enabled())
            finally:
                t._C._set_fwd_grad_enabled(True)
            log.append(fwAD.unpack_dual(x * x).tangent.tolist())
            with fwAD._set_fwd_grad_enabled(False):
                log.append(fwAD.unpack_dual(x.exp()).tangent)
            log.append(fwAD._is_fwd_grad_enabled())

    same(scenario)


def test_out_variants_and_dual_tangents_are_refused():
    def scenario(t, log):
        fwAD = t.autograd.forward_ad
        with fwAD.dual_level():
            foo = fwAD.make_dual(t.tensor([1.0, 2.0]), t.tensor([1.0, 1.0]))
            bar = t.tensor([3.0, 4.0])
            attempt(log, lambda: t.add(bar, bar, out=foo))
            attempt(log, lambda: t.add(foo, bar, out=bar))
            attempt(log, lambda: t.sin(foo, out=t.empty(2)))
            attempt(log, lambda: t.mul(bar, 2, out=t.empty(2)).tolist())
            attempt(log, lambda: fwAD.make_dual(t.tensor([5.0, 6.0]), foo))
            attempt(log, lambda: fwAD.make_dual(t.tensor([5.0, 6.0]), t.ones(3)))
            log.append((foo.tolist(), bar.tolist()))  # (written before the refusal)

    same(scenario)
