"""How much of PyTorch's own optimizer database gradcli reproduces: `python -m gradcli.optim_coverage`.

PyTorch tests every torch.optim class with its OptimizerInfo list (`optim_db` in
torch.testing._internal.common_optimizers): `optim_inputs_func` gives constructor
arguments, `optim_error_inputs_func` arguments that must be refused. Here every input is
run in both libraries on the same parameters (several shapes, a 0-d and an empty one,
in two parameter groups) with the same gradients (a fixed function of the step; for
LBFGS a closure computing a real loss), in float32, float64 and, where the optimizer
takes them, complex64: parameters after every step, `state_dict()` (state tensors and
every param_groups entry), `repr(optimizer)`, a `load_state_dict` round trip that must
continue identically, and `zero_grad` must agree; so must the same input with
`foreach=True/False`, `fused=True` and `differentiable=True` (accepted or refused as
PyTorch does). Each error input must raise PyTorch's exception type with a message
matching PyTorch's, at the same moment (construction or step).

Needs PyTorch and expecttest; never imported by gradcli itself.
"""

from __future__ import annotations

import re
import sys
import warnings

import numpy as np

STEPS = 10  # enough to reach every state branch (RAdam's rectification starts at step 6)
MORE_STEPS = 3  # after a load_state_dict round trip
SHAPES = ((3, 4), (), (0,), (5,))

_MUON = ("Muon float64: the Newton-Schulz iteration runs in bfloat16, whose matrix products "
         "round where PyTorch's oneDNN kernels may not; a last-bit difference in bfloat16 "
         "exceeds float64's tolerance after several steps")

#: cases known not to pass yet: "Optimizer case id" -> why
KNOWN_FAILING: dict[str, str] = {
    "Muon float64 Tensor lr": _MUON,
    "Muon float64 passing alternative ns_coefficients": _MUON,
}

FLAGS = ({}, {"foreach": False}, {"foreach": True}, {"fused": True}, {"differentiable": True},
         {"fused": True, "foreach": True}, {"fused": True, "differentiable": True},
         {"capturable": True}, {"capturable": True, "foreach": True})


def load_optim_db():
    import torch  # noqa: F401
    from torch.testing._internal.common_optimizers import optim_db

    return list(optim_db)


def _gt():
    import gradcli.torch as gt

    return gt


def dtypes_of(info) -> tuple[str, ...]:
    names = ("float32", "float64")
    if info.supports_complex:
        names += ("complex64",)
    return names


def steps_of(info) -> tuple[int, int]:
    """(steps, steps after the round trip): LBFGS's step is up to 20 iterations itself."""
    return (3, 2) if info.step_requires_closure else (STEPS, MORE_STEPS)


def shapes_of(info) -> tuple:
    if info.optim_cls.__name__ == "Muon":  # (2-D parameters only)
        return ((3, 4), (5, 2), (4, 4), (2, 3))
    return SHAPES


# ------------------------------------------------------------------ values in both libraries
def _initial(shape, index: int, dtype: str) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    k = np.arange(n, dtype=np.float64)
    real = np.sin(0.9 * k + 1.3 * index + 0.4) * 1.5
    if dtype.startswith("complex"):
        value = real + 1j * np.cos(0.7 * k + index)
    else:
        value = real
    return value.reshape(shape).astype(dtype)


def _gradient(shape, index: int, step: int, dtype: str) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    k = np.arange(n, dtype=np.float64)
    real = np.cos(0.37 * k + 0.61 * step + index) * (1.0 + 0.2 * np.sin(step + k))
    if dtype.startswith("complex"):
        value = real + 1j * np.sin(0.53 * k - 0.3 * step + index)
    else:
        value = real
    return value.reshape(shape).astype(dtype)


def _convert(value, lib, memo: dict):
    """A constructor argument of PyTorch's (tensors, tuples, dicts) in gradcli's terms."""
    import torch

    if isinstance(value, torch.Tensor):
        if id(value) in memo:
            return memo[id(value)]
        if value.layout != torch.strided:
            raise _Unsupported("a sparse tensor")
        array = value.detach().numpy().copy()
        out = lib.tensor(array) if array.ndim else lib.tensor(array.item(),
                                                             dtype=getattr(lib, str(value.dtype)
                                                                           .split(".")[1]))
        if isinstance(value, torch.nn.Parameter):
            out = lib.nn.Parameter(out, requires_grad=value.requires_grad)
        elif value.requires_grad:
            out.requires_grad_(True)
        if value.grad is not None:
            out.grad = _convert(value.grad, lib, memo)
        memo[id(value)] = out
        return out
    if isinstance(value, tuple):
        return tuple(_convert(v, lib, memo) for v in value)
    if isinstance(value, list):
        return [_convert(v, lib, memo) for v in value]
    if isinstance(value, dict):
        return {k: _convert(v, lib, memo) for k, v in value.items()}
    return value


class _Unsupported(Exception):
    pass


def _make_params(lib, info, dtype: str, leaf: bool = True):
    params = []
    for i, shape in enumerate(shapes_of(info)):
        t = lib.tensor(_initial(shape, i, dtype)) if shape else lib.tensor(
            _initial(shape, i, dtype).item(), dtype=getattr(lib, dtype))
        params.append(lib.nn.Parameter(t))
    return params


def _groups(params, kwargs):
    """Two parameter groups; the second overrides one hyperparameter where it has lr."""
    second = {"params": params[2:]}
    return [{"params": params[:2]}, second]


def _loss(lib, params):
    """LBFGS's closure loss: a real, non-quadratic function of every parameter."""
    total = None
    for i, p in enumerate(params):
        target = lib.tensor(_initial(tuple(p.shape), i + 7, str(p.dtype).split(".")[1]))
        diff = (p - target).abs()
        term = (diff * diff).sum() + 0.05 * (diff ** 4).sum()
        total = term if total is None else total + term
    return total


def _set_grads(lib, params, step: int, dtype: str) -> None:
    for i, p in enumerate(params):
        p.grad = lib.tensor(_gradient(tuple(p.shape), i, step, dtype)) if p.dim() else \
            lib.tensor(_gradient((), i, step, dtype).item(), dtype=getattr(lib, dtype))


def _do_step(lib, info, opt, params, step: int, dtype: str):
    if info.step_requires_closure:
        def closure():
            opt.zero_grad()
            loss = _loss(lib, params)
            loss.backward()
            return loss
        return opt.step(closure)
    _set_grads(lib, params, step, dtype)
    return opt.step()


# ------------------------------------------------------------------ comparison
def _np(t):
    import torch

    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()
    return np.asarray(t._data)


def _close(ours, theirs, where: str) -> None:
    import torch

    from gradcli.engine.tensor import Tensor

    if not isinstance(ours, Tensor):
        raise AssertionError(f"{where}: a {type(ours).__name__}, PyTorch a tensor")
    if str(ours.dtype) != str(theirs.dtype):
        raise AssertionError(f"{where}: dtype {ours.dtype}, PyTorch {theirs.dtype}")
    if tuple(ours.shape) != tuple(theirs.shape):
        raise AssertionError(f"{where}: shape {tuple(ours.shape)}, PyTorch {tuple(theirs.shape)}")
    a = torch.from_numpy(np.array(_np(ours)))
    try:
        torch.testing.assert_close(a, theirs.detach(), equal_nan=True)
    except AssertionError as e:
        raise AssertionError(f"{where}: {str(e).splitlines()[0:6]}") from None


#: LBFGS's curvature history in float32: products and quotients of differences of nearly
#: equal float32 gradients, which amplify the last bits of float32 dot products (summed in
#: another order than PyTorch's); parameters, losses and the history's form are compared,
#: its values only in float64
LOOSE_LBFGS = ("al", "ro", "old_dirs", "old_stps", "H_diag", "d", "t", "prev_flat_grad",
               "prev_loss")


def _same(ours, theirs, where: str, form_only: bool = False) -> None:
    import torch

    if isinstance(theirs, torch.Tensor):
        if form_only:
            _close(ours * 0, theirs * 0, where)
        else:
            _close(ours, theirs, where)
    elif isinstance(theirs, dict):
        if not isinstance(ours, dict):
            raise AssertionError(f"{where}: {type(ours).__name__}, PyTorch a dict")
        if list(ours) != list(theirs) and sorted(map(str, ours)) != sorted(map(str, theirs)):
            raise AssertionError(f"{where}: keys {sorted(map(str, ours))}, PyTorch "
                                 f"{sorted(map(str, theirs))}")
        for k in theirs:
            _same(ours[k], theirs[k], f"{where}[{k!r}]", form_only or (
                LOOSE and k in LOOSE_LBFGS))
    elif isinstance(theirs, (list, tuple)):
        if type(ours) is not type(theirs) or len(ours) != len(theirs):
            raise AssertionError(f"{where}: {ours!r}, PyTorch {theirs!r}")
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _same(a, b, f"{where}[{i}]", form_only)
    elif form_only and isinstance(theirs, (int, float)):
        if type(ours) is not type(theirs):
            raise AssertionError(f"{where}: {ours!r}, PyTorch {theirs!r}")
    elif isinstance(theirs, float) and isinstance(ours, float):
        if not (ours == theirs or abs(ours - theirs) <= 1e-5 * max(1.0, abs(theirs))
                or (ours != ours and theirs != theirs)):
            raise AssertionError(f"{where}: {ours!r}, PyTorch {theirs!r}")
    else:
        if type(ours) is not type(theirs) or ours != theirs:
            raise AssertionError(f"{where}: {ours!r} ({type(ours).__name__}), PyTorch "
                                 f"{theirs!r} ({type(theirs).__name__})")


LOOSE = False  # (set by run_case: LBFGS in float32 or complex64)


def _compare(opt, topt, params, tparams, where: str) -> None:
    for i, (p, tp) in enumerate(zip(params, tparams)):
        _close(p.detach(), tp.detach(), f"{where} param {i}")
    _same(opt.state_dict(), topt.state_dict(), f"{where} state_dict")
    if repr(opt) != repr(topt):
        raise AssertionError(f"{where} repr: {repr(opt)!r}, PyTorch {repr(topt)!r}")


def _refusal(fn, *args):
    """fn(*args) -> (None, result) or ((exception type name, message), None)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return None, fn(*args)
    except Exception as e:  # noqa: BLE001 (the refusal is what is compared)
        return (type(e).__name__, str(e).split("\n")[0]), None


def _build(lib, info, dtype: str, kwargs: dict, memo: dict):
    params = _make_params(lib, info, dtype)
    ctor = getattr(lib.optim, info.optim_cls.__name__)
    args = _convert(kwargs, lib, memo) if lib is not _torch() else kwargs
    if info.optim_cls.__name__ == "LBFGS":
        return params, ctor(params, **args)
    return params, ctor(_groups(params, args), **args)


def _torch():
    import torch

    return torch


def run_case(info, dtype: str, kwargs: dict) -> None:
    """One configuration; raises AssertionError with the first difference."""
    import torch

    global LOOSE
    LOOSE = info.optim_cls.__name__ == "LBFGS" and dtype != "float64"

    gt = _gt()
    theirs, tbuilt = _refusal(lambda: _build(torch, info, dtype, kwargs, {}))
    ours, built = _refusal(lambda: _build(gt, info, dtype, kwargs, {}))
    if theirs or ours:
        if theirs != ours:
            raise AssertionError(f"construction: {ours}, PyTorch {theirs}")
        return
    tparams, topt = tbuilt
    params, opt = built
    steps, more_steps = steps_of(info)
    for step in range(steps):
        theirs, tloss = _refusal(_do_step, torch, info, topt, tparams, step, dtype)
        ours, loss = _refusal(_do_step, gt, info, opt, params, step, dtype)
        if theirs or ours:
            if theirs != ours:
                raise AssertionError(f"step {step}: {ours}, PyTorch {theirs}")
            return
        if tloss is not None:
            _close(loss.detach(), tloss.detach(), f"step {step} loss")
        _compare(opt, topt, params, tparams, f"step {step}")
    # load_state_dict: a fresh optimizer on copies of the parameters continues identically
    with torch.no_grad():
        tcopies = [torch.nn.Parameter(p.detach().clone()) for p in tparams]
    copies = [gt.nn.Parameter(p.detach().clone()) for p in params]
    ctor, tctor = getattr(gt.optim, info.optim_cls.__name__), info.optim_cls
    args = _convert(kwargs, gt, {})
    if info.optim_cls.__name__ == "LBFGS":
        topt2, opt2 = tctor(tcopies, **kwargs), ctor(copies, **args)
    else:
        topt2, opt2 = tctor(_groups(tcopies, kwargs), **kwargs), ctor(_groups(copies, args),
                                                                     **args)
    topt2.load_state_dict(topt.state_dict())
    opt2.load_state_dict(opt.state_dict())
    _compare(opt2, topt2, copies, tcopies, "loaded")
    for step in range(steps, steps + more_steps):
        _do_step(torch, info, topt2, tcopies, step, dtype)
        _do_step(gt, info, opt2, copies, step, dtype)
        _compare(opt2, topt2, copies, tcopies, f"loaded step {step}")
    # zero_grad: None by default, zeros with set_to_none=False
    _set_grads(torch, tcopies, 0, dtype)
    _set_grads(gt, copies, 0, dtype)
    topt2.zero_grad(set_to_none=False)
    opt2.zero_grad(set_to_none=False)
    for p, tp in zip(copies, tcopies):
        _close(p.grad, tp.grad, "zero_grad(set_to_none=False)")
    topt2.zero_grad()
    opt2.zero_grad()
    if any(p.grad is not None for p in copies):
        raise AssertionError("zero_grad(): a gradient left")


def cases_of(info):
    """(case id, dtype, kwargs) of every input, dtype and flag."""
    import torch

    out = []
    for dtype in dtypes_of(info):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inputs = info.optim_inputs_func(device="cpu", dtype=getattr(torch, dtype))
        for inp in inputs:
            for flags in FLAGS:
                if any(k in inp.kwargs for k in flags):
                    continue
                kwargs = dict(inp.kwargs, **flags)
                flag = ",".join(f"{k}={v}" for k, v in flags.items())
                out.append((f"{dtype} {inp.desc}" + (f" [{flag}]" if flag else ""), dtype,
                            kwargs))
    return out


def check_optimizer(info) -> dict:
    """case id -> ("pass" | "fail", detail)."""
    results = {}
    for key, dtype, kwargs in cases_of(info):
        try:
            run_case(info, dtype, kwargs)
            results[key] = ("pass", "")
        except _Unsupported as e:
            results[key] = ("unsupported", str(e))
        except Exception as e:  # noqa: BLE001 (a case's failure is reported, not raised)
            results[key] = ("fail", f"{type(e).__name__}: {e}"[:600])
    return results


# ------------------------------------------------------------------ error inputs
def error_cases_of(info):
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(info.optim_error_inputs_func(device="cpu", dtype=torch.float32))


def check_error_input(info, err) -> None:
    """gradcli raises (or warns) as PyTorch's error input says, at the same moment."""
    from torch.testing._internal.common_optimizers import OptimizerErrorEnum

    gt = _gt()
    inp = err.optimizer_error_input
    params = _convert(inp.params, gt, {})
    kwargs = _convert(inp.kwargs, gt, {})
    ctor = getattr(gt.optim, info.optim_cls.__name__)
    expected, regex = err.error_type, err.error_regex
    if issubclass(expected, Warning):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctor(params, **kwargs)
        if not any(issubclass(w.category, expected) and re.search(regex, str(w.message))
                   for w in caught):
            raise AssertionError(f"no {expected.__name__} matching {regex!r}: "
                                 f"{[str(w.message) for w in caught]}")
        return
    try:
        opt = ctor(params, **kwargs)
    except Exception as e:  # noqa: BLE001
        if err.error_on != OptimizerErrorEnum.CONSTRUCTION_ERROR:
            raise AssertionError(f"refused at construction ({type(e).__name__}: {e}), "
                                 "PyTorch at step") from None
        _match(e, expected, regex)
        return
    if err.error_on == OptimizerErrorEnum.CONSTRUCTION_ERROR:
        raise AssertionError(f"constructed; PyTorch raises {expected.__name__}: {regex}")
    try:
        if info.step_requires_closure:
            opt.step(lambda: sum((p * p).sum().abs() for p in opt.param_groups[0]["params"]))
        else:
            opt.step()
    except Exception as e:  # noqa: BLE001
        _match(e, expected, regex)
        return
    raise AssertionError(f"stepped; PyTorch raises {expected.__name__}: {regex}")


def _match(e, expected, regex) -> None:
    if type(e) is not expected or not re.search(regex, str(e)):
        raise AssertionError(f"{type(e).__name__}: {e}; PyTorch {expected.__name__}: "
                             f"{regex}") from None


def check_errors(info) -> dict:
    results = {}
    for err in error_cases_of(info):
        key = err.optimizer_error_input.desc
        try:
            check_error_input(info, err)
            results[key] = ("pass", "")
        except _Unsupported as e:
            results[key] = ("unsupported", str(e))
        except Exception as e:  # noqa: BLE001
            results[key] = ("fail", f"{type(e).__name__}: {e}"[:400])
    return results


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    verbose = "-v" in argv
    names = [a for a in argv if not a.startswith("-")]
    total = passed = etotal = epassed = 0
    for info in load_optim_db():
        name = info.optim_cls.__name__
        if names and name not in names:
            continue
        results = check_optimizer(info)
        errors = check_errors(info)
        ok = sum(s == "pass" for s, _ in results.values())
        eok = sum(s == "pass" for s, _ in errors.values())
        total, passed = total + len(results), passed + ok
        etotal, epassed = etotal + len(errors), epassed + eok
        print(f"{name:12} configurations {ok}/{len(results)}  error inputs {eok}/{len(errors)}")
        if verbose:
            for key, (status, detail) in {**results, **errors}.items():
                if status != "pass":
                    print(f"    {key}: {status}: {detail}")
    print(f"total configurations {passed}/{total}, error inputs {epassed}/{etotal}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
