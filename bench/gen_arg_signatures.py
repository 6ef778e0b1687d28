"""Regenerate gradcli/engine/ops/arg_signatures.py: PyTorch's argument-parser signatures
for each public function and Tensor method gradcli shares with the installed PyTorch.

Run with PyTorch installed (`python bench/gen_arg_signatures.py`). The signature
declarations are read from PyTorch's Python-binding library; for each public name the
ones its parser uses are chosen by calling PyTorch with arguments that fit none of
them and keeping the declarations whose errors, as gradcli's arg_checks words them,
are the same as PyTorch's (the listing of an overloaded function gives them in order).
A name whose errors cannot be reproduced that way gets no entry (arg_checks then
leaves its errors alone).
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import warnings

import torch

import gradcli.torch as gt
from gradcli.engine.ops import arg_checks as ac

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "..", "gradcli", "engine", "ops", "arg_signatures.py")
SIG_LINE = re.compile(r"^([a-z_][A-Za-z0-9_]*)\((.*)\)(\|deprecated|\|hidden)?$")


def declarations() -> list:
    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_python.so")
    text = subprocess.run(["strings", "-n", "3", lib], capture_output=True, text=True).stdout
    return [line for line in text.splitlines() if SIG_LINE.match(line)]


def candidates(lines, name) -> list:
    """Declarations of `name`, also where the linker merged one into a longer string's tail."""
    out = []
    key = name + "("
    for line in lines:
        p = line.find(key)
        while p >= 0:
            tail = line[p:]
            if SIG_LINE.match(tail) and tail not in out:
                out.append(tail)
            p = line.find(key, p + 1)
    return out


def outcome(fn, args, kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001
        return str(err)
    return None


class Foo:
    pass


def probes(T, method):
    """(args, kwargs) sets that fit nothing, built with the module T's tensors."""
    x = T.ones(2, 2)
    calls = [((None,) * 60, {}), ((Foo(),), {}), ((x,), {"foo": 1}), ((), {}),
             ((x, x), {}), (("a",), {}), ((x, Foo()), {}), ((x, 1, Foo()), {}),
             ((x,), {"out": Foo()}), ((x, x), {"out": Foo()})]
    if method:
        calls = [(a[1:] if a and a[0] is x else a, k) for a, k in calls]
    return calls


def simulate(sigs, args, kwargs):
    err = ac._diagnose(sigs, args, kwargs) if len(sigs) > 1 else None
    if len(sigs) == 1:
        try:
            ac.parse(sigs[0], args, kwargs, True)
        except ac.ArgError as e:
            return str(e)
        return None
    try:
        err = ac._diagnose(sigs, args, kwargs)
    except ac.ArgError as e:
        return str(e)
    return None if err is None else str(err)


def choose(lines, torch_fn, method):
    xt = torch.ones(2, 2)
    calls = probes(torch, method)
    bound = getattr(xt, torch_fn.__name__) if method else torch_fn
    expected = [outcome(bound, a, k) for a, k in calls]
    calls = probes(gt, method)  # simulated with gradcli's tensors
    first = expected[0] or ""
    noargs = re.match(r"^([A-Za-z0-9_.]+)\(\) takes no arguments", first)
    if noargs:
        return ["!noargs " + noargs.group(1)]
    m = re.match(r"^([a-z_][A-Za-z0-9_]*)\(", first)
    if not m:
        return None
    name = m.group(1)
    everything = [ac.Signature(c) for c in candidates(lines, name)]
    cands = [s for s in everything if not s.hidden]
    hidden = [s for s in everything if s.hidden]
    listed_form = "received an invalid combination" in first
    if listed_form:
        listed = re.findall(r"^ \* (\(.*\))$", first, re.M) or re.findall(
            r"but expected (\(.*\))$", first)
        chosen = []
        for option in listed:
            match = [s for s in cands if s.display() == option and s not in chosen]
            if not match:
                return None
            chosen.append(match[0])
        # the hidden (deprecated) declarations of the same form: a function's start with
        # the same first parameter, a method's have no out=
        lead = chosen[0].params[0].display() if chosen[0].params else None
        if method:
            extra = [s for s in hidden if not any(p.name == "out" for p in s.params)
                     and not (s.params and s.params[0].name == "input")]
        else:
            extra = [s for s in hidden if s.params and (s.params[0].display() == lead or any(
                p.name in ("input", "out") for p in s.params))]
        picks = [chosen, chosen + extra]
    else:
        picks = [[s] for s in cands]
    best, best_score = None, -1
    for sigs in picks:
        score = 0
        for (a, k), exp in zip(calls, expected):
            try:
                got = simulate(sigs, a, k)
            except Exception:  # noqa: BLE001
                got = "?"
            score += (got == exp) * (100 if exp is expected[0] else 1) if exp is not None else 0
        if score > best_score or (score == best_score and _more_complete(sigs, best)):
            best, best_score = sigs, score
    if best is None or simulate(best, *calls[0]) != expected[0]:
        return None
    parser_words = tuple(best[0].name + "()" + w for w in (
        ": argument", " got an unexpected", " takes ", " missing ", " received an invalid"))
    if not listed_form and any(exp is not None and exp.startswith(parser_words)
                               and simulate(best, a, k) != exp
                               for (a, k), exp in zip(calls, expected)):
        return None  # one declaration, but not the one PyTorch's parser holds
    return [s_fmt(s) for s in best]


def _more_complete(sigs, best) -> bool:
    """Between declarations the probes cannot tell apart (torch.zeros's with and without
    out=), the one that takes out=: PyTorch's parser accepts out= there."""
    def takes_out(group):
        return any(p.name == "out" for s in group for p in s.params)
    return best is not None and takes_out(sigs) and not takes_out(best)


def s_fmt(sig):
    return sig._fmt


_orig_init = ac.Signature.__init__


def _init(self, fmt):
    _orig_init(self, fmt)
    self._fmt = fmt


ac.Signature.__slots__  # noqa: B018
ac.Signature = type("Signature", (ac.Signature,), {"__init__": _init, "__slots__": ("_fmt",)})


def shared(mod_t, mod_g, prefix, python=False):
    for n in sorted(set(dir(mod_t)) & set(dir(mod_g))):
        if n.startswith("_"):
            continue
        ft = getattr(mod_t, n)
        if (type(ft).__name__ == "builtin_function_or_method") == python:
            continue
        if python and not inspect.isfunction(ft):
            continue
        yield prefix + n, ft


def python_params(fn) -> str | None:
    """fn's parameter list as a stub's: names, markers, every default None."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    parts, starred = [], False
    kinds = inspect.Parameter
    params = list(sig.parameters.values())
    for i, p in enumerate(params):
        if p.kind is kinds.VAR_POSITIONAL:
            parts.append("*" + p.name)
            starred = True
        elif p.kind is kinds.VAR_KEYWORD:
            parts.append("**" + p.name)
        else:
            if p.kind is kinds.KEYWORD_ONLY and not starred:
                parts.append("*")
                starred = True
            parts.append(p.name + ("" if p.default is inspect.Parameter.empty else "=None"))
            if p.kind is kinds.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind
                                                    is not kinds.POSITIONAL_ONLY):
                parts.append("/")
    return ", ".join(parts)


# Python-level functions whose body the probes cannot read: what it does first with its
# arguments, as the "!python" entry's fields (read from PyTorch's source)
BODY_RULES = {
    # `if weight.dtype == torch.long and input.is_floating_point()` comes first
    "torch.nn.functional.embedding_bag": {"attribute": "weight.dtype"},
    # the three tensors go on to torch.triplet_margin_loss in order
    "torch.nn.functional.triplet_margin_loss": {"inner": "torch.triplet_margin_loss",
                                                "leading": "3"},
}


def dispatch_entry(pname, ft, table, lines):
    """The "!dispatch" entry of a boolean_dispatch function (F.max_pool2d, torch.unique):
    its flag and the entries of its two functions, stored under `pname|true` and
    `pname|false` (a function of its own may be a dispatcher again)."""
    from torch._jit_internal import boolean_dispatched

    info = boolean_dispatched.get(ft)
    if info is None:
        return None
    keys = []
    for branch in ("if_true", "if_false"):
        key = f"{pname}|{branch[3:]}"
        fn = info[branch]
        entry = dispatch_entry(key, fn, table, lines) or python_entry(
            key, fn, table, False, lines, always=True)
        if entry is None:
            return None
        table[key] = entry
        keys.append(key)
    return ["!dispatch", info["arg_name"], str(info["index"]), repr(bool(info["default"])),
            *keys]


def _false_alarms(pname, entry, torch_fn) -> bool:
    """Whether `entry` words a TypeError for a call PyTorch takes (or refuses for another
    reason): good arguments must pass it, since it is asked after any failure."""
    x, xg = torch.ones(2, 2), gt.ones(2, 2)
    good = [(1,), (2,), (0,), (-1,), ([1, 1],), (0.5,), (True,), (None,), (1, 1), (0, 1)]
    try:
        level = ac.PythonLevel(pname, *entry[1:])
    except ValueError:
        return True
    for rest in good + [(x,), (x, x)]:
        mine = tuple(xg if a is x else a for a in rest)
        torch_error = outcome(torch_fn, (x,) + rest, {})
        if torch_error is not None and re.match(r"^\w+\(\)(: argument| received an invalid)",
                                                torch_error):
            continue  # (PyTorch's parser refuses these too)
        try:
            if level.diagnose((xg,) + mine, {}) is not None:
                return True
        except Exception:  # noqa: BLE001
            return True
    return False


def python_entry(pname, ft, table, method, lines, always=False):
    """The "!python" entry for a function PyTorch writes in Python, if it reproduces
    PyTorch's errors on the probes better than nothing (`always`: a dispatcher's
    function, whose own arity errors are the point)."""
    params = python_params(ft)
    if params is None:
        return None
    xt = torch.ones(2, 2)
    bound = getattr(xt, ft.__name__) if method else ft
    expected = [outcome(bound, a, k) for a, k in probes(torch, method)]
    calls = probes(gt, method)
    first_error = outcome(bound, ("a",), {}) or ""
    inner = attribute = ""
    m = re.match(r"^'str' object has no attribute '(\w+)'$", first_error)
    if m:
        attribute = m.group(1)
    m = re.match(r"^(\w+)\(\)(: argument| received an invalid)", first_error)
    if not m and first_error.startswith("expected Tensor as element"):
        m = re.match(r"^(\w+)", ft.__name__)  # the body hands its *tensors to its own op
    if m and not method:
        name = m.group(1)
        for key, sigs in table.items():
            if not key.startswith("Tensor.") and not sigs[0].startswith("!") and \
                    sigs[0].startswith(name + "("):
                inner = key
                break
        else:  # an op of torch._C's own (torch._C._nn.hardsigmoid, _unique2)
            for home in (torch._C._VariableFunctions, torch._C._nn, torch._C._linalg,
                         torch._C._special):
                c_fn = getattr(home, name, None)
                if c_fn is not None:
                    sigs = choose(lines, c_fn, False)
                    if sigs:
                        inner = "_C." + name
                        table[inner] = sigs
                    break
    qualname = ft.__qualname__
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_.]*$", qualname):  # boolean_dispatch.<locals>.fn
        qualname = ft.__name__ if re.match(r"^[A-Za-z_]\w*$", ft.__name__) else "fn"
    if params.startswith("*") and not method:  # how its body reads a single argument
        x, xg = torch.ones(2, 2), gt.ones(2, 2)
        extra = [((3,), {}), ((["a"],), {}), (((x, "a"),), {})]
        expected = expected + [outcome(bound, a, k) for a, k in extra]
        calls = calls + [((3,), {}), ((["a"],), {}), (((xg, "a"),), {})]
    candidates = [["!python", qualname, params, inner, attribute] + ([unwrap] if unwrap else [])
                  for unwrap in (("", "one", "sequence") if params.startswith("*") else ("",))]
    # (torch.save(x, "x") would write a file: I/O functions get no later-argument probes)
    if not method and not params.startswith("*") and pname not in ("torch.save", "torch.load"):
        x, xg = torch.ones(2, 2), gt.ones(2, 2)
        later = [(x, 1.5), ([x], "x"), (x, x, 1.5), (x, "x"), (x, x, "x")]
        later_g = [(xg, 1.5), ([xg], "x"), (xg, xg, 1.5), (xg, "x"), (xg, xg, "x")]
        errors = [outcome(bound, a, {}) for a in later]
        expected = expected + errors
        calls = calls + [(a, {}) for a in later_g]
        for err in errors:
            m = re.match(r"^(\w+)\(\): argument '\w+' \(position (\d+)\)", err or "")
            if not m:
                continue
            op, position = m.group(1), int(m.group(2))
            for key, sigs in table.items():
                if not sigs[0].startswith(op + "("):
                    continue
                leading = position + 1 if key.startswith("Tensor.") else position
                entry = ["!python", qualname, params, key, attribute, "", str(leading)]
                if not _false_alarms(pname, entry, bound):
                    candidates.append(entry)
    best, best_score = None, -1
    for entry in candidates:
        try:
            level = ac.PythonLevel(pname, *entry[1:])
        except ValueError:
            return None
        score = 0
        for (a, k), exp in zip(calls, expected):
            if exp is None:
                continue
            try:
                got = level.diagnose(a, k)
            except Exception:  # noqa: BLE001
                got = "?"
            score += (got is not None and str(got) == exp)
        if score > best_score:
            best, best_score = entry, score
    rule = BODY_RULES.get(pname)
    if rule and best is not None:
        best = best[:4] + [rule.get("attribute", best[4]), rule.get("unwrap", ""),
                           rule.get("leading", "")]
        best[3] = rule.get("inner", best[3])
    return best if best_score or always else None


def main():
    lines = declarations()
    table = {}
    items = list(shared(torch, gt, "torch."))
    items += shared(torch.nn.functional, gt.nn.functional, "torch.nn.functional.")
    items += shared(torch.linalg, gt.linalg, "torch.linalg.")
    items += shared(torch.special, gt.special, "torch.special.")
    for pname, ft in items:
        sigs = choose(lines, ft, False)
        if sigs:
            table[pname] = sigs
    for n in sorted(dir(torch.Tensor)):
        if n.startswith("_"):
            continue
        ft = getattr(torch.Tensor, n)
        if type(ft).__name__ not in ("method_descriptor", "builtin_function_or_method"):
            continue
        try:
            getattr(gt.Tensor, n)
        except AttributeError:
            continue
        sigs = choose(lines, ft, True)
        if sigs:
            table["Tensor." + n] = sigs
    import gradcli.engine.ops.arg_signatures as generated

    generated.SIGNATURES = table  # python entries delegate to the parser entries
    ac._PARSED.clear()
    python_items = list(shared(torch, gt, "torch.", True))
    python_items += shared(torch.nn.functional, gt.nn.functional, "torch.nn.functional.", True)
    python_items += shared(torch.linalg, gt.linalg, "torch.linalg.", True)
    python_items += shared(torch.special, gt.special, "torch.special.", True)
    for pname, ft in python_items:
        entry = dispatch_entry(pname, ft, table, lines) or python_entry(
            pname, ft, table, False, lines)
        if entry:
            table[pname] = entry
    for n in sorted(dir(torch.Tensor)):
        ft = getattr(torch.Tensor, n, None)
        if n.startswith("_") or not inspect.isfunction(ft):
            continue
        try:
            getattr(gt.Tensor, n)
        except AttributeError:
            continue
        entry = python_entry("Tensor." + n, ft, table, True, lines)
        if entry:
            table["Tensor." + n] = entry
    with open(TARGET, "w") as fh:
        fh.write('"""PyTorch 2.13\'s argument-parser signatures per public name (generated by\n'
                 'bench/gen_arg_signatures.py; read by arg_checks only when a call failed)."""\n\n')
        fh.write("SIGNATURES = {\n")
        for key in sorted(table):
            fh.write(f"    {key!r}: (\n")
            for s in table[key]:
                fh.write(f"        {s!r},\n")
            fh.write("    ),\n")
        fh.write("}\n")
    print(len(table), "names", file=sys.stderr)


if __name__ == "__main__":
    inspect  # noqa: B018
    main()
