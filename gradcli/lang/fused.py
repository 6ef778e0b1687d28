"""Fused call closures: one Python frame for a call, its operands and what its statement does
with the result.

The compiler makes one closure per AST node, so `y_pred = model(xx)` in a loop ran four
Python frames a step (the assignment, the call, two name loads) and `optimizer.step()`
three, where plain Python runs none: on the polynomial fit of "Learning PyTorch with
Examples" (bench W7) these frames were most of what `gradcli run` cost over the same loop
in Python. A fused closure reads a name, a constant or a local slot inline and calls
the closure of any other operand; the statement around the call (an expression statement,
an assignment to a plain name) is the same frame.

Each shape of call (what each operand is, positional and keyword counts, method or not,
what happens to the result) gets a factory built once from fixed source text below and
cached; the program's own text (names, keywords, constants) never enters that source: it
reaches the closure as values of the factory's parameters. Every failure path is the
original closure's: a global missing from the globals dict, or an unbound local, is read
again by the name's own closure, which reports it exactly as before (NameError,
UnboundLocalError, the builtins' fallback); the attribute and the call note their
locations as e_Attribute and e_Call do.
"""
from __future__ import annotations

#: operand kinds: "g" a global name (the globals dict first, then the name's closure),
#: "l" a local slot (UNBOUND: the name's closure, which raises), "c" a constant,
#: "f" any other expression (its closure)
OPERAND_KINDS = ("g", "l", "c", "f")
#: what the statement does with the call's value: "ret" returns it (an expression),
#: "drop" drops it (an expression statement), "gset"/"lset" store it in a global / a local
SINKS = ("ret", "drop", "gset", "lset")
#: more operands than this and e_Call's general closures serve the call
MAX_OPERANDS = 6

_FACTORIES: dict = {}


def _fetch(i: int, kind: str, var: str) -> list:
    if kind == "g":
        return ["try:", f"    {var} = G[k{i}]", "except KeyError:", f"    {var} = s{i}(env)"]
    if kind == "l":
        return [f"{var} = env[k{i}]", f"if {var} is UNBOUND:", f"    {var} = s{i}(env)"]
    if kind == "c":
        return [f"{var} = k{i}"]
    return [f"{var} = s{i}(env)"]


def _source(shape) -> str:
    head_kind, method, arg_kinds, nkw, sink = shape
    n = len(arg_kinds)
    body = _fetch(0, head_kind, "o" if method else "f")
    if method:
        body += ["try:",
                 "    f = getter(o) if type(o) in fast else get(o, name)",
                 "except BaseException as e:",
                 "    note(e, aloc)",
                 "    raise"]
    for i, kind in enumerate(arg_kinds, 1):
        body += _fetch(i, kind, f"x{i}")
    args = [f"x{i}" for i in range(1, n + 1 - nkw)]
    if nkw:
        pairs = ", ".join(f"w{j}: x{n - nkw + 1 + j}" for j in range(nkw))
        args.append("**{" + pairs + "}")
    call = f"f({', '.join(args)})"
    result = {"ret": f"return {call}", "drop": call, "gset": f"G[t] = {call}",
              "lset": f"env[t] = {call}"}[sink]
    body += ["try:", f"    {result}", "except BaseException as e:", "    note(e, loc)",
             "    raise"]
    params = ["G", "UNBOUND", "note", "get", "fast", "getter", "name", "aloc", "loc", "t"]
    params += [f"k{i}" for i in range(n + 1)] + [f"s{i}" for i in range(n + 1)]
    params += [f"w{j}" for j in range(nkw)]
    lines = [f"def make({', '.join(params)}):", "    def ev(env):"]
    lines += ["        " + line for line in body]
    lines += ["    return ev"]
    return "\n".join(lines) + "\n"


def factory(shape):
    """The maker of closures of one call shape ``(head kind, method?, operand kinds of the
    arguments (keywords last), keyword count, sink)``; built once per process."""
    make = _FACTORIES.get(shape)
    if make is None:
        head_kind, method, arg_kinds, nkw, sink = shape
        if not ({head_kind, *arg_kinds} <= set(OPERAND_KINDS) and sink in SINKS
                and type(method) is bool and type(nkw) is int and 0 <= nkw <= len(arg_kinds)
                and len(arg_kinds) < MAX_OPERANDS):
            raise ValueError(f"not a call shape: {shape!r}")  # (a bug in the compiler)
        namespace: dict = {}
        exec(compile(_source(shape), f"<gradcli fused call {shape!r}>", "exec"), namespace)
        make = _FACTORIES[shape] = namespace["make"]
    return make


def _pair_source(shape) -> str:
    left_kind, right_kind, checked = shape
    body = _fetch(0, left_kind, "a") + _fetch(1, right_kind, "b")
    body += ["try:"]
    if checked:
        body += ["    if type(a) in risky and type(b) in risky_b:",
                 "        return checked(a, b)"]
    body += ["    return fn(a, b)", "except BaseException as e:", "    note(e, loc)",
             "    raise"]
    params = ["G", "UNBOUND", "note", "fn", "checked", "risky", "risky_b", "loc",
              "k0", "k1", "s0", "s1"]
    lines = [f"def make({', '.join(params)}):", "    def ev(env):"]
    lines += ["        " + line for line in body]
    lines += ["    return ev"]
    return "\n".join(lines) + "\n"


def pair_factory(shape):
    """The maker of closures of a binary operator or a single comparison whose operands are
    read inline: ``shape = (left kind, right kind, checked?)``; ``checked(a, b)`` serves the
    operand types a guard applies to (``risky``, ``risky_b``), ``fn(a, b)`` the others."""
    make = _FACTORIES.get(("pair", shape))
    if make is None:
        left_kind, right_kind, checked = shape
        if not ({left_kind, right_kind} <= set(OPERAND_KINDS) and type(checked) is bool):
            raise ValueError(f"not an operator shape: {shape!r}")  # (a bug in the compiler)
        namespace: dict = {}
        exec(compile(_pair_source(shape), f"<gradcli fused operator {shape!r}>", "exec"),
             namespace)
        make = _FACTORIES[("pair", shape)] = namespace["make"]
    return make
