"""How much of PyTorch's own module database gradcli reproduces: `python -m gradcli.module_coverage`.

PyTorch tests every torch.nn class with its ModuleInfo list (`module_db` in
torch.testing._internal.common_modules): each entry's `module_inputs_func` gives
constructor arguments and forward inputs. Here every entry is built in both libraries
(PyTorch's parameters and buffers copied into gradcli's, since initialisation is not
what is compared; whether the same manual_seed gave the same parameters is counted
apart), put in train and, where the module's behaviour differs, eval mode, and run
forward on every input: output values, dtypes, shapes and grad_fn names, the
vector-Jacobian products of inputs and parameters, and the buffers after the forward
(running statistics) must agree within torch.testing's default tolerances.

Needs PyTorch and expecttest; never imported by gradcli itself.
"""

from __future__ import annotations

import sys

from gradcli.coverage import Unsupported, _compare_outputs, _convert, _flat, _gt

#: cases known not to pass yet: "ModuleInfo name case id" -> why
KNOWN_FAILING: dict[str, str] = {}

#: causes known not to pass yet, recognised by (dtype, text in the failure) -> why. The
#: attention one is a float32 gradient judged against PyTorch's own float32 error, which
#: depends on PyTorch's kernels and threads: which cases cross the line varies with the
#: machine, so it is matched by what fails, not by case.
KNOWN_CAUSES: dict[tuple[str, str], str] = {
    ("float32", "in_proj_weight"): (
        "attention's float32 in_proj_weight gradient: 1e-5 to 4e-5 from PyTorch's float64 one "
        "where PyTorch's float32 is 2e-6 to 9e-6 from it, in a few cases (add_bias_kv, "
        "no-batch inputs, embed_dim 3): not a step of attention's own (its softmax and its "
        "backward are PyTorch's bit for bit, its small bmm/baddbmm too), but the last bits of "
        "the tiny float32 matrix products of the in/out projections and their backward "
        "(3x3 sgemm) where MKL's order is not rebuilt (kernels/mkl_intel.py: the AVX-512 "
        "kernels), which the softmax of near one-hot scores amplifies"),
}


def known_cause(dtype_name: str, detail: str):
    """The KNOWN_CAUSES reason a failure matches, or None."""
    for (dtype, text), why in KNOWN_CAUSES.items():
        if dtype == dtype_name and text in detail:
            return why
    return None


DTYPES = ("float64", "float32")


def load_module_db():
    import torch  # noqa: F401
    from torch.testing._internal.common_modules import module_db

    return list(module_db)


def _gradcli_class(info):
    gt = _gt()
    name = info.module_cls.__name__
    return getattr(gt.nn, name, None)


def _convert_ctor(value, gt, memo):
    """Constructor arguments: tensors and plain values as for samples; a torch.nn.Module
    argument (TransformerEncoder's layer) has no by-value equivalent here."""
    import torch

    if isinstance(value, (torch.nn.TransformerEncoderLayer, torch.nn.TransformerDecoderLayer)):
        return _transformer_layer(value, gt, memo)
    if isinstance(value, torch.nn.Module):
        raise Unsupported(f"a {type(value).__name__} constructor argument")
    if callable(value) and not isinstance(value, type) and (
            getattr(value, "__module__", None) or "").startswith("torch"):
        # an activation given as a function (TransformerEncoderLayer's F.gelu): gradcli's
        found = getattr(gt.nn.functional, value.__name__, None) or getattr(gt, value.__name__,
                                                                             None)
        if found is None:
            raise Unsupported(f"{value.__module__}.{value.__name__}")
        return found
    if isinstance(value, (list, tuple)):
        return type(value)(_convert_ctor(v, gt, memo) for v in value)
    if isinstance(value, dict):
        return {k: _convert_ctor(v, gt, memo) for k, v in value.items()}
    return _convert(value, gt, memo)


def _transformer_layer(layer, gt, memo):
    """gradcli's layer of the same settings as a PyTorch TransformerEncoderLayer or
    DecoderLayer argument (TransformerEncoder's), read back from its submodules; the
    parameters are copied afterwards with the rest of the state."""
    attn = layer.self_attn
    import torch

    if isinstance(layer.activation, torch.nn.Module):  # (an activation layer: a fresh one)
        activation = getattr(gt.nn, type(layer.activation).__name__)()
    else:
        activation = _convert_ctor(layer.activation, gt, memo)
    return getattr(gt.nn, type(layer).__name__)(
        attn.embed_dim, attn.num_heads, dim_feedforward=layer.linear1.out_features,
        dropout=layer.dropout.p, activation=activation, layer_norm_eps=layer.norm1.eps,
        batch_first=attn.batch_first, norm_first=layer.norm_first,
        bias=layer.linear1.bias is not None)


def _copy_state(theirs, ours, gt) -> bool:
    """PyTorch's parameters and buffers into gradcli's module, by name; True when gradcli's
    own initialisation (after the same seed) already gave the same values."""
    import numpy as np

    t_state = theirs.state_dict(keep_vars=True)
    o_state = ours.state_dict(keep_vars=True)
    if sorted(t_state) != sorted(o_state):
        raise AssertionError(f"state_dict keys {sorted(o_state)}, PyTorch {sorted(t_state)}")
    same = True
    with gt.no_grad():
        for key, t in t_state.items():
            o = o_state[key]
            if t is None or o is None:
                if (t is None) != (o is None):
                    raise AssertionError(f"{key}: {o!r}, PyTorch {t!r}")
                continue
            values = t.detach().numpy()
            if str(o.dtype) != str(t.dtype):
                raise AssertionError(f"{key}: dtype {o.dtype}, PyTorch {t.dtype}")
            if tuple(o.shape) != tuple(t.shape):
                raise AssertionError(f"{key}: shape {tuple(o.shape)}, PyTorch {tuple(t.shape)}")
            if same and not np.array_equal(np.asarray(o._data), values, equal_nan=True):
                same = False
            o.copy_(gt.tensor(values.copy()))
    return same


def _build(info, module_input, dtype_name: str, training: bool):
    """Both modules, PyTorch's state copied into gradcli's. Returns (theirs, ours, same_init)."""
    import torch

    gt = _gt()
    cls = _gradcli_class(info)
    if cls is None:
        raise LookupError(info.module_cls.__name__)
    ctor = module_input.constructor_input
    memo: dict = {}
    ours_args = _convert_ctor(tuple(ctor.args), gt, memo)
    ours_kwargs = _convert_ctor(dict(ctor.kwargs), gt, memo)
    torch.manual_seed(0)
    try:
        theirs = info.module_cls(*ctor.args, **ctor.kwargs).to(getattr(torch, dtype_name))
    except Exception as err:  # noqa: BLE001 - PyTorch refusing its own input
        raise Unsupported(f"PyTorch raised {type(err).__name__}") from err
    gt.manual_seed(0)
    try:
        ours = cls(*ours_args, **ours_kwargs).to(getattr(gt, dtype_name))
    except Exception as err:  # noqa: BLE001 - any failure of gradcli's is a difference
        raise AssertionError(f"constructor raised {type(err).__name__}: {err}") from err
    theirs.train(training)
    ours.train(training)
    return theirs, ours


def check_input(info, module_input, dtype_name: str, training: bool, seed: int = 0) -> bool:
    """One ModuleInput through both libraries: AssertionError on a difference, Unsupported
    when gradcli cannot express it. Returns whether the same seed gave the same initial
    parameters (informative only)."""
    import numpy as np
    import torch

    gt = _gt()
    theirs, ours = _build(info, module_input, dtype_name, training)
    fwd = module_input.forward_input
    memo: dict = {}
    ours_args = _convert(tuple(fwd.args), gt, memo)
    ours_kwargs = _convert(dict(fwd.kwargs), gt, memo)
    if getattr(info, "is_lazy", False) or _has_uninitialized(theirs):
        # a lazy module's parameters take their shapes from the first forward: run it
        # once (on copies, without a graph) before copying the state
        with torch.no_grad():
            theirs(*[a.detach().clone() if isinstance(a, torch.Tensor) else a
                     for a in fwd.args], **fwd.kwargs)
        with gt.no_grad():
            ours(*_convert(tuple(fwd.args), gt, {}), **ours_kwargs)
        theirs_state = {k: v.detach().clone() for k, v in theirs.state_dict().items()}
        theirs.load_state_dict(theirs_state)
    same_init = _copy_state(theirs, ours, gt)
    # the random modules (dropout inside transformer layers...) draw the same numbers
    torch.manual_seed(seed)
    try:
        t_out = theirs(*fwd.args, **fwd.kwargs)
    except Exception as err:  # noqa: BLE001
        raise Unsupported(f"PyTorch raised {type(err).__name__}: {err}") from err
    gt.manual_seed(seed)
    try:
        o_out = ours(*ours_args, **ours_kwargs)
    except Exception as err:  # noqa: BLE001
        raise AssertionError(f"forward raised {type(err).__name__}: {err}") from err
    _compare_outputs(o_out, t_out, "output")
    # buffers after the forward (BatchNorm's running statistics, num_batches_tracked)
    t_bufs = dict(theirs.named_buffers())
    o_bufs = dict(ours.named_buffers())
    for key, t in t_bufs.items():
        if key not in o_bufs:
            raise AssertionError(f"buffer {key} missing")
        if t is not None:
            _compare_outputs([o_bufs[key].detach()], [t.detach()], f"buffer {key}")

    t_outs = [t for t in _flat(t_out) if isinstance(t, torch.Tensor)]
    o_outs = [o for o in _flat(o_out) if hasattr(o, "_data")]
    t_params = dict(theirs.named_parameters())
    o_params = dict(ours.named_parameters())
    names = [k for k in t_params if t_params[k].requires_grad]
    leaves = [(t, o) for t, o in memo.values() if t.requires_grad and o.requires_grad]
    t_leaves = [t for t, _ in leaves] + [t_params[k] for k in names]
    o_leaves = [o for _, o in leaves] + [o_params[k] for k in names]
    labels = [f"input {i}" for i in range(len(leaves))] + [f"param {k}" for k in names]
    if not t_leaves:
        return same_init
    rng = np.random.default_rng(seed)
    pairs_t, pairs_o = [], []
    for t, o in zip(t_outs, o_outs, strict=True):
        if t.requires_grad and t.dtype.is_floating_point:
            c = rng.uniform(-1, 1, size=tuple(t.shape))
            pairs_t.append((t, torch.tensor(c, dtype=t.dtype)))
            pairs_o.append((o, gt.tensor(c, dtype=getattr(gt, str(t.dtype)[6:]))))
    if not pairs_t:
        return same_init
    try:
        t_grads = torch.autograd.grad([t for t, _ in pairs_t], t_leaves,
                                      [c for _, c in pairs_t], allow_unused=True)
    except Exception:  # noqa: BLE001 - PyTorch has no derivative here
        return same_init
    try:
        o_grads = gt.autograd.grad([o for o, _ in pairs_o], o_leaves,
                                   [c for _, c in pairs_o], allow_unused=True)
    except Exception as err:  # noqa: BLE001
        raise AssertionError(f"backward raised {type(err).__name__}: {err}") from err
    reference = None
    for i, (label, og, tg) in enumerate(zip(labels, o_grads, t_grads, strict=True)):
        if tg is None:
            continue
        if og is None:
            if tg.detach().abs().sum().item() != 0:
                raise AssertionError(f"grad of {label}: None, PyTorch nonzero")
            continue
        try:
            _compare_outputs([og.detach()], [tg.detach()], f"grad of {label}")
        except AssertionError as err:
            if dtype_name != "float32":
                raise
            # a float32 gradient summed over many terms: PyTorch's own rounding error can
            # pass the float32 tolerance. The arbiter is PyTorch in float64 on the same case:
            # gradcli passes when it is no farther from that than PyTorch's float32 is.
            if reference is None:
                reference = _float64_grads(theirs, fwd, [t for t, _ in leaves], names,
                                           [c for _, c in pairs_t], seed)
            exact = reference[i].numpy()
            ours_err = np.max(np.abs(np.asarray(og._data, np.float64) - exact))
            theirs_err = np.max(np.abs(tg.detach().double().numpy() - exact))
            if not ours_err <= theirs_err:
                raise AssertionError(f"{str(err).splitlines()[0]} (from PyTorch's float64: "
                                     f"gradcli {ours_err:.3g} off, PyTorch {theirs_err:.3g})"
                                     ) from err
    return same_init


def _float64_grads(theirs, fwd, input_leaves, param_names, cotangents, seed):
    """The vector-Jacobian products of a float32 case, recomputed by PyTorch in float64
    (a copy of the module, the same inputs widened, the same seed and cotangents)."""
    import copy

    import torch

    module = copy.deepcopy(theirs).double()
    widened: dict = {}

    def widen(value):
        if isinstance(value, torch.Tensor):
            if id(value) not in widened:
                new = value.detach().clone()
                if new.is_floating_point():
                    new = new.double()
                widened[id(value)] = new.requires_grad_(value.requires_grad)
            return widened[id(value)]
        if isinstance(value, (list, tuple)):
            return type(value)(widen(v) for v in value)
        if isinstance(value, dict):
            return {k: widen(v) for k, v in value.items()}
        return value

    args = widen(tuple(fwd.args))
    kwargs = widen(dict(fwd.kwargs))
    torch.manual_seed(seed)
    out = module(*args, **kwargs)
    outs = [t for t in _flat(out) if isinstance(t, torch.Tensor)
            and t.requires_grad and t.dtype.is_floating_point]
    params = dict(module.named_parameters())
    leaves = [widened[id(t)] for t in input_leaves] + [params[k] for k in param_names]
    grads = torch.autograd.grad(outs, leaves, [c.double() for c in cotangents],
                                allow_unused=True)
    return [g.detach() if g is not None else None for g in grads]


def _has_uninitialized(module) -> bool:
    from torch.nn.parameter import UninitializedParameter

    return any(isinstance(p, UninitializedParameter) for p in module.parameters())


def inputs_of(info, dtype_name: str, training: bool):
    import torch

    torch.manual_seed(0)  # (the inputs are drawn from PyTorch's generator: the same each run)
    try:
        return list(info.module_inputs_func(info, device="cpu", dtype=getattr(torch, dtype_name),
                                            requires_grad=True, training=training))
    except Exception:  # noqa: BLE001 - a generator PyTorch itself cannot run here
        return []


def cases_of(info):
    """(dtype name, training, index, ModuleInput) for every case of one ModuleInfo."""
    import torch

    trainings = (True, False) if info.train_and_eval_differ else (True,)
    for dtype_name in DTYPES:
        if getattr(torch, dtype_name) not in info.dtypes:
            continue
        for training in trainings:
            for i, module_input in enumerate(inputs_of(info, dtype_name, training)):
                yield dtype_name, training, i, module_input


def case_id(dtype_name, training, i, module_input) -> str:
    desc = f"-{module_input.desc}" if module_input.desc else ""
    return f"{dtype_name}-{'train' if training else 'eval'}-{i}{desc}"


def check_module(info) -> dict:
    """Per-case results of one ModuleInfo: case id -> ("pass" | "fail" | "unsupported" |
    "missing", detail), plus "same_init" counts."""
    import warnings

    results = {}
    for dtype_name, training, i, module_input in cases_of(info):
        key = case_id(dtype_name, training, i, module_input)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                same = check_input(info, module_input, dtype_name, training, seed=i)
            except LookupError as err:
                results[key] = ("missing", str(err))
                continue
            except Unsupported as err:
                results[key] = ("unsupported", str(err))
                continue
            except AssertionError as err:
                detail = str(err).splitlines()[0][:300] if str(err) else ""
                known = known_cause(dtype_name, detail) is not None
                results[key] = ("known" if known else "fail", detail)
                continue
            except Exception as err:  # noqa: BLE001 - a crash in comparing is a failure too
                results[key] = ("fail", f"{type(err).__name__}: {str(err)[:300]}")
                continue
        results[key] = ("pass", "same init" if same else "init differs")
    return results


USAGE = """usage: python -m gradcli.module_coverage [NAME ...]

Runs PyTorch's ModuleInfo inputs (CPU, float64 and float32, train and eval where they
differ) through gradcli's and PyTorch's torch.nn classes and prints how many modules and
inputs agree: outputs, dtypes, grad_fn names, gradients of inputs and parameters, and
buffers. NAMEs (as `nn.Linear`) restrict the run. Needs PyTorch and expecttest."""


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE)
        return 0
    try:
        import torch.testing._internal.common_modules  # noqa: F401
    except ImportError as err:
        print(f"gradcli.module_coverage needs PyTorch 2.13 and expecttest: {err}",
              file=sys.stderr)
        return 2
    infos = load_module_db()
    if argv:
        infos = [m for m in infos if m.name in argv]
    modules_passed = 0
    counts = {"pass": 0, "fail": 0, "known": 0, "unsupported": 0, "missing": 0}
    same_init = 0
    failing = []
    for info in infos:
        results = check_module(info)
        for status, detail in results.values():
            counts[status] += 1
            same_init += detail == "same init"
        statuses = {s for s, _ in results.values()}
        if statuses and statuses <= {"pass", "unsupported"} and "pass" in statuses:
            modules_passed += 1
        for key, (status, detail) in results.items():
            if status in ("fail", "missing", "known"):
                known = " (known)" if status == "known" or f"{info.name} {key}" in \
                    KNOWN_FAILING else ""
                failing.append(f"  {info.name} {key}{known}: {detail}")
    total = sum(counts.values())
    print(f"{modules_passed} of {len(infos)} modules pass every input")
    print(f"{counts['pass']} of {total} inputs pass ({counts['fail']} fail, "
          f"{counts['known']} known, "
          f"{counts['missing']} missing, {counts['unsupported']} not expressible); "
          f"{same_init} of the passing built the same parameters from the same seed")
    if failing:
        print("failing:")
        print("\n".join(failing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
