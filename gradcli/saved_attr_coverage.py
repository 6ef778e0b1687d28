"""How many grad_fn classes expose exactly PyTorch's saved values:
`python -m gradcli.saved_attr_coverage [OP ...]`.

For the first samples of every OpInfo gradcli.coverage runs (float64, CPU, inputs that
require grad), each output's grad_fn is compared with PyTorch's: the `_saved_*` and
`_raw_saved_*` names dir() lists, and every value read (tensors by value and by
identity with the sample's inputs where PyTorch's `is` holds, Python numbers, tuples,
None, the exception a read raises). A node class agrees when every occurrence does.

Needs PyTorch: never imported by gradcli itself, only by this command and its tests.
"""

from __future__ import annotations

import sys

from . import coverage

SAMPLES = 2  # per op: the first sample inputs (enough to meet each node's arguments)


def _saved_names(node) -> list[str]:
    return sorted(a for a in dir(node) if a.startswith(("_saved_", "_raw_saved_")))


def _read(node, name):
    try:
        return ("ok", getattr(node, name))
    except Exception as err:  # noqa: BLE001 - the exception is part of what is compared
        return ("raised", f"{type(err).__name__}: {err}")


def _same(ours, theirs, pairs, where: str) -> None:
    """AssertionError when gradcli's value `ours` differs from PyTorch's `theirs`."""
    import numpy as np
    import torch

    if isinstance(theirs, torch.Tensor):
        if not hasattr(ours, "_data"):
            raise AssertionError(f"{where}: {type(ours).__name__}, PyTorch a Tensor")
        for t_in, o_in in pairs:
            if theirs is t_in and ours is not o_in:
                raise AssertionError(f"{where}: not the input itself (PyTorch's `is` holds)")
        coverage._compare_outputs([ours.detach()], [theirs.detach()], where)
        return
    if type(theirs).__name__ == "SavedTensor":
        if type(ours).__name__ != "SavedTensor":
            raise AssertionError(f"{where}: {type(ours).__name__}, PyTorch a SavedTensor")
        return
    if isinstance(theirs, (tuple, list)):
        if type(ours) is not type(theirs) or len(ours) != len(theirs):
            raise AssertionError(f"{where}: {ours!r}, PyTorch {theirs!r}")
        for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
            _same(o, t, pairs, f"{where}[{i}]")
        return
    if theirs is None or isinstance(theirs, (bool, int, float, complex, str)):
        if type(ours) is not type(theirs):
            raise AssertionError(f"{where}: {ours!r} ({type(ours).__name__}), PyTorch {theirs!r}")
        if ours != theirs and not (ours != ours and theirs != theirs):
            if not (isinstance(theirs, float) and np.isclose(ours, theirs, rtol=1e-7)):
                raise AssertionError(f"{where}: {ours!r}, PyTorch {theirs!r}")
        return
    if str(ours) != str(theirs):
        raise AssertionError(f"{where}: {ours!r}, PyTorch {theirs!r}")


def compare_node(ours, theirs, pairs) -> str | None:
    """None when the two grad_fns' saved attributes agree, else the first difference."""
    names_o, names_t = _saved_names(ours), _saved_names(theirs)
    if names_o != names_t:
        return f"names {names_o}, PyTorch {names_t}"
    for name in names_t + ["_saved_no_such_value"]:
        ro, rt = _read(ours, name), _read(theirs, name)
        if ro[0] != rt[0]:
            return f"{name}: {ro[1]!r:.120}, PyTorch {rt[1]!r:.120}"
        if rt[0] == "raised":
            if ro[1] != rt[1]:
                return f"{name}: raised {ro[1]!r:.200}, PyTorch {rt[1]!r:.200}"
            continue
        try:
            _same(ro[1], rt[1], pairs, name)
        except AssertionError as err:
            return str(err).splitlines()[0][:300]
        except Exception as err:  # noqa: BLE001 - a crash comparing is a difference too
            return f"{name}: {type(err).__name__}: {str(err)[:200]}"
    return None


def check_op(op, results: dict) -> None:
    """Add the op's nodes to `results`: grad_fn name -> list of (op id, difference|None)."""
    import torch

    fn = coverage.resolve(op)
    if fn is None:
        return
    gt = coverage._gt()
    coverage._CURRENT[0] = op.op
    for i, sample in enumerate(op.sample_inputs("cpu", torch.float64, requires_grad=True)):
        if i >= SAMPLES:
            break
        memo: dict = {}
        try:
            ours_args = coverage._convert((sample.input, *sample.args), gt, memo)
            ours_kwargs = coverage._convert(dict(sample.kwargs), gt, memo)
        except coverage.Unsupported:
            continue
        try:
            torch.manual_seed(i)
            theirs = coverage._call_torch(sample)
            gt.manual_seed(i)
            ours = fn(*ours_args, **ours_kwargs)
        except Exception:  # noqa: BLE001, S112 - a sample either side refuses: coverage.py's business
            continue
        pairs = list(memo.values())
        flat_t, flat_o = coverage._flat(theirs), coverage._flat(ours)
        if len(flat_t) != len(flat_o):
            continue
        for t, o in zip(flat_t, flat_o, strict=True):
            tn = getattr(t, "grad_fn", None)
            on = getattr(o, "grad_fn", None)
            if tn is None or on is None or type(tn).__name__ != type(on).__name__:
                continue
            results.setdefault(type(tn).__name__, []).append(
                (coverage.op_id(op), compare_node(on, tn, pairs)))


def run(names=()) -> dict:
    results: dict = {}
    for op in coverage.load_op_db():
        if names and coverage.op_id(op) not in names and op.name not in names:
            continue
        try:
            check_op(op, results)
        except Exception:  # noqa: BLE001, S112 - an OpInfo whose samples cannot be made here
            continue
    return results


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    results = run(tuple(argv))
    agree = 0
    for name in sorted(results):
        diffs = [(op, d) for op, d in results[name] if d is not None]
        if diffs:
            print(f"DIFF  {name}: {diffs[0][0]}: {diffs[0][1]}")
        else:
            agree += 1
            print(f"ok    {name}")
    print(f"{agree} of {len(results)} grad_fn classes agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
