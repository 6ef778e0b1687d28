"""A seeded generator of small Python programs for differential testing against CPython.

Every program uses only what SPEC 1.2 lets a `.grad` program use on Python values (no
torch): numbers, strings, lists, dicts, sets, tuples, functions, closures and classes with
the allowed special methods. Running one under CPython and under gradcli's language must
print the same text and end with the same uncaught error (type and message).

A program is a few independent snippets drawn from families (arithmetic, formatting,
container methods, classes, ...). Most snippets are wrapped in ``try/except`` printing
the caught exception's class and text, so one error does not hide the rest; the last
snippet of some programs is left bare so uncaught errors are compared too.

``generate(seed)`` is deterministic for a seed (``random.Random(seed)``), so a difference
is reproduced by its seed alone. Run ``python tests/lang/pydiff.py N [START]`` to try N
seeds and print the differing programs.
"""
from __future__ import annotations

import random

# ------------------------------------------------------------------ atoms
_INTS = ["0", "1", "-1", "2", "-2", "3", "-3", "7", "-7", "10", "255", "-256", "12345",
         "2 ** 64", "-(2 ** 70)", "(10 ** 20 + 1)", "True", "False"]
_FLOATS = ["0.0", "-0.0", "0.5", "-0.5", "1.5", "2.5", "-2.5", "0.1", "1e16", "1e-7",
           "3.14159", "-7.25", "1e300", "123456.789", "2.675", "1.0", "0.3333333333333333",
           "float('inf')", "float('-inf')", "1e22", "5e-324", "100.0", "0.1 + 0.2"]
_STRS = ["''", "'a'", "'abc'", "'Hello, World'", "'  pad  '", "'a,b,,c'", "'x\\ty'",
         "'line1\\nline2'", "\"it's\"", "'say \"hi\"'", "'\\x41\\u00e9\\\\'", "'123'",
         "'MiXeD cAsE'", "'a b  c'", "'\\''", "'tab\\there'", "'ünï'", "'aaa'"]
_BINOPS = ["+", "-", "*", "/", "//", "%", "**"]
_CMPOPS = ["<", "<=", "==", "!=", ">", ">="]


def _num(r):
    return r.choice(_INTS if r.random() < 0.55 else _FLOATS)


def _small_int(r, lo=-4, hi=6):
    return str(r.randint(lo, hi))


def _lit_list(r, n=None, kind="int"):
    n = r.randint(0, 5) if n is None else n
    if kind == "int":
        return "[" + ", ".join(_small_int(r, -5, 9) for _ in range(n)) + "]"
    if kind == "str":
        return "[" + ", ".join(repr(r.choice("abcdeAB") * r.randint(1, 3)) for _ in range(n)) + "]"
    return "[" + ", ".join(r.choice([_small_int(r), repr(r.choice([0.5, -1.25, 3.0])), "'s'",
                                    "None", "(1, 2)", "[3]"]) for _ in range(n)) + "]"


def _guard(body, indent="    "):
    body = "\n".join(body).split("\n")
    lines = ["try:"] + [indent + ln for ln in body] + [
        "except Exception as e:",
        "    print('!', repr(e), str(e))"]
    return lines


# ------------------------------------------------------------------ families
def arith(r):
    out = []
    for _ in range(r.randint(2, 5)):
        depth = r.randint(1, 3)
        e = _num(r)
        for _ in range(depth):
            op = r.choice(_BINOPS)
            rhs = _num(r)
            if op == "**":  # (the result stays far below the big-integer guard's 4,000,000 bits)
                if r.random() < 0.3:  # any base, big ones included, to a small power
                    e = f"({r.choice(_INTS)})"
                    rhs = r.choice(["0", "1", "2", "3", "-1", "-2", "5", "0.5"])
                else:
                    e = f"(({e}) % 7)" if r.random() < 0.5 else r.choice(
                        ["2", "-2", "0.5", "-1.5", "0", "3", "10", "-0.0", "1e300", "-8", "True"])
                    rhs = r.choice(["2", "-1", "0.5", "3", "-2", "0", "1.5", "100", "-0.5"])
            e = f"({e} {op} {rhs})"
        out.append(f"print(repr({e}))")
    a, b = _num(r), _num(r)
    out.append(r.choice([
        f"print(divmod({a}, {b}))",
        f"print(round({a}), round({a}, {r.randint(-2, 3)}))",
        f"print(abs({a}), -({a}), +({a}))",
        f"print(pow({_small_int(r)}, {_small_int(r, 0, 9)}, {r.randint(1, 13)}))",
        f"print(int({r.choice(_FLOATS[:15])}), float({r.choice(_INTS)}), str({a}))",
        f"print({a} // {b}, {a} % {b}, {a} / {b})",
        f"print(round({r.choice(['0.5', '1.5', '2.5', '-0.5', '-1.5', '0.125', '2.675', '1.005'])}, "
        f"{r.choice(['None', '0', '1', '2'])}))",
        "print(int(%s))" % r.choice(['"12"', '" -3 "', '"0x1f"', '"1_000"', '"1.5"', '""']),
        "print(float(%s))" % r.choice(['"1e3"', '" 2.5"', '"nan"', '"-inf"', '"x"', '"1_0.5"']),
        f"print({a} == {b}, {a} < {b}, hash({r.choice(_INTS)}) == hash(float({r.choice(_INTS)})))",
        f"print(({a}).is_integer() if isinstance({a}, float) else {a})",
        f"print({r.choice(_INTS)} & {r.choice(_INTS)}, {r.choice(_INTS)} | 6, ~{r.choice(_INTS)}, "
        f"{r.choice(_INTS)} ^ 5, {r.choice(_INTS)} << {r.randint(0, 70)}, {r.choice(_INTS)} >> "
        f"{r.randint(0, 5)})",
    ]))
    return out


def compare(r):
    out = []
    vals = ["1", "1.0", "True", "0", "None", "'a'", "'b'", "[1, 2]", "[1, 3]", "(1, 2)", "()",
            "[]", "''", "0.0", "-0.0", "float('nan')", "{1: 2}", "{1}", "{1, 2}", "2 ** 64"]
    for _ in range(r.randint(2, 5)):
        parts = [r.choice(vals)]
        for _ in range(r.randint(1, 3)):
            parts += [r.choice(_CMPOPS + ["is", "is not", "in", "not in"]), r.choice(vals)]
        out.append(f"print({' '.join(parts)})")
    for _ in range(r.randint(1, 3)):
        v = r.choice(vals)
        out.append(r.choice([f"print(bool({v}), not {v})", f"print({v} and {r.choice(vals)})",
                             f"print({v} or {r.choice(vals)})",
                             f"print('yes' if {v} else 'no')",
                             f"print(max({v}, {r.choice(vals)}))",
                             f"print(sorted([{v}, {r.choice(vals)}]))"]))
    return out


_STR_CALLS = [
    "upper()", "lower()", "title()", "capitalize()", "strip()", "lstrip()", "rstrip()",
    "strip('a')", "split()", "split(',')", "split(',', 1)", "rsplit(',', 1)", "split('')",
    "splitlines()", "replace('a', 'X')", "replace('a', 'X', 1)", "replace('', '-')",
    "startswith('a')", "startswith(('x', 'H'))", "endswith('c')", "count('a')", "find('b')",
    "find('zz')", "index('b')", "isdigit()", "isalpha()", "isspace()", "center(9, '*')",
    "ljust(6)", "rjust(6, '.')", "zfill(6)", "join(['1', '2', '3'])", "join('xy')",
    "join([1, 2])", "format(1, 2)", "count('')", "center(2)", "split(None, 1)",
]


def strings(r):
    out = []
    for _ in range(r.randint(2, 5)):
        s = r.choice(_STRS)
        kind = r.random()
        if kind < 0.5:
            out.append(f"print(repr({s}.{r.choice(_STR_CALLS)}))")
        elif kind < 0.7:
            a, b, c = (r.choice(["None", "", _small_int(r, -5, 6)]) for _ in range(3))
            if c == "0":
                c = r.choice(["0", "1"])
            out.append(f"print(repr({s}[{a}:{b}:{c}]), repr({s}[{a}:{b}]))")
        elif kind < 0.8:
            out.append(f"print(repr({s}[{_small_int(r, -6, 6)}]))")
        elif kind < 0.9:
            out.append(f"print({s}, len({s}), str({s}), {s} * {_small_int(r, -1, 3)}, "
                       f"{s} + {r.choice(_STRS)})")
        else:
            out.append(f"print(list({s}), 'a' in {s}, {s} < {r.choice(_STRS)}, "
                       f"sorted({s}, reverse=True))")
    return out


# format specs: [[fill]align][sign][#][0][width][,|_][.precision][type]
def _spec(r, kind):
    parts = []
    if r.random() < 0.35:
        parts.append(r.choice(["", "*", "0", "-"]) + r.choice("<>^="))
    if kind != "s" and r.random() < 0.3:
        parts.append(r.choice("+- "))
    if kind in ("d", "f") and r.random() < 0.15:
        parts.append("#")
    if r.random() < 0.15 and kind != "s":
        parts.append("0")
    if r.random() < 0.5:
        parts.append(str(r.randint(1, 12)))
    if kind != "s" and r.random() < 0.2:
        parts.append(r.choice(",_"))
    if kind != "d" and r.random() < 0.5:
        parts.append("." + str(r.randint(0, 6)))
    if kind == "d":
        parts.append(r.choice(["", "d", "x", "X", "o", "b", "n", "e", "f", "%", "c"]))
    elif kind == "f":
        parts.append(r.choice(["", "f", "F", "e", "E", "g", "G", "%", "n"]))
    else:
        parts.append(r.choice(["", "s"]))
    return "".join(parts)


def _fmt_value(r):
    kind = r.choice("dfs")
    if kind == "d":
        return kind, r.choice(["0", "7", "-42", "255", "1234567", "2 ** 70", "True", "65"])
    if kind == "f":
        return kind, r.choice(["0.0", "-0.0", "3.14159", "-2.5", "1e-5", "123456.789",
                               "1e20", "float('inf')", "float('nan')", "0.125", "2.675",
                               "1 / 3", "1e16"])
    return kind, r.choice(["'ab'", "'hello'", "''", "'x y'", "None", "[1, 'a']", "(1,)",
                           "{'k': 1.5}"])


def fstrings(r):
    out = ["w = 8", "p = 3", "v = 'val'", "n = -12", "x = 2.5"]
    for _ in range(r.randint(2, 5)):
        fields = []
        for _ in range(r.randint(1, 3)):
            kind, val = _fmt_value(r)
            if val in ("None", "[1, 'a']", "(1,)", "{'k': 1.5}"):
                val = f"({val})"
            c = r.random()
            if c < 0.15:
                fields.append("{" + val + "!r}")
            elif c < 0.25:
                fields.append("{" + val + "!s:>" + str(r.randint(1, 9)) + "}")
            elif c < 0.35:
                fields.append("{" + r.choice(["x", "n", "v", "x + 1", "w*p"]) + r.choice(
                    ["=", " = ", "=!r", "=:>6", "=:.2f" if r.random() < 0.5 else "="]) + "}")
            elif c < 0.45 and kind == "f":
                fields.append("{" + val + ":{w}.{p}f}")
            elif c < 0.5:
                fields.append("{" + val + ":>{w}}")
            else:
                fields.append("{" + val + ":" + _spec(r, kind) + "}")
        txt = r.choice(["", "a", "[", " - ", "{{", "}}", "\\t"]).join(fields)
        out.append(f'print(f"{txt}")' if "'" in txt or '"' not in txt else f"print(f'''{txt}''')")
    return out


def _pct_spec(r):
    flags = "".join(r.sample("-+ 0#", r.randint(0, 2)))
    width = str(r.randint(1, 10)) if r.random() < 0.5 else ""
    prec = "." + str(r.randint(0, 5)) if r.random() < 0.4 else ""
    conv = r.choice("dixXofFeEgGsrc")
    return "%" + flags + width + prec + conv, conv


def percent(r):
    out = []
    for _ in range(r.randint(2, 5)):
        n = r.randint(1, 3)
        specs, vals = [], []
        for _ in range(n):
            s, conv = _pct_spec(r)
            specs.append(s)
            if conv in "dixXoc":
                vals.append(r.choice(["7", "-255", "65", "3.99", "True", "2 ** 65"]) if conv != "c"
                            else r.choice(["65", "'z'"]))
            elif conv in "fFeEgG":
                vals.append(r.choice(["3.14159", "-0.5", "1e-6", "2", "1e20", "float('inf')",
                                      "12345.6789", "0.0"]))
            else:
                vals.append(r.choice(["'s'", "None", "[1, 2]", "1.5", "(1,)", "'q\\'t'"]))
        fmt = r.choice(["", " ", "|", "%%"]).join(specs)
        if n == 1 and r.random() < 0.5 and vals[0] != "(1,)":
            out.append(f"print({fmt!r} % {vals[0]})")
        else:
            out.append(f"print({fmt!r} % ({', '.join(vals)},))")
    out.append(r.choice([
        "print('%(a)s-%(b)05.1f' % {'a': 'x', 'b': 2.25})",
        "print('%s %s' % ('one',))",
        "print('%d' % 'x')",
        "print('%s' % (1, 2))",
        "print('%.*f' % (2, 3.14159))",
        "print('%5%|' % ())",
        "print('100%' % ())",
        "print('%s' % [1, 2])",
        "print('%r %a' % ('é', 'é'))",
    ]))
    return out


def str_format(r):
    out = []
    for _ in range(r.randint(2, 4)):
        fields, args, kw = [], [], {}
        mode = r.choice(["auto", "num"])
        for i in range(r.randint(1, 3)):
            kind, val = _fmt_value(r)
            spec = ":" + _spec(r, kind) if r.random() < 0.6 else ""
            conv = r.choice(["", "", "", "!r", "!s"])
            if r.random() < 0.3:
                name = f"k{i}"
                kw[name] = val
                fields.append("{" + name + conv + spec + "}")
            else:
                args.append(val)
                idx = "" if mode == "auto" else str(len(args) - 1)
                fields.append("{" + idx + conv + spec + "}")
        call_args = args + [f"{k}={v}" for k, v in kw.items()]
        fmt = r.choice([" ", ",", "{{}}"]).join(fields)
        out.append(f"print({fmt!r}.format({', '.join(call_args)}))")
    out.append(r.choice([
        "print('{0}{1}{0}'.format('a', 'b'))",
        "print('{} {}'.format(1))",
        "print('{0} {}'.format(1, 2))",
        "print('{:{}}|'.format('x', 5))",
        "print('{x}'.format(y=1))",
        "print('{!x}'.format(1))",
        "print('{:>{w}.{p}}'.format(3.14159, w=9, p=3))",
        "print('}'.format())",
        "print('{:d}'.format(1.5))",
        "print('{:s}'.format(1))",
    ]))
    return out


_LIST_OPS = ["append({a})", "extend([{a}, {b}])", "insert({i}, {a})", "pop()", "pop({i})",
             "index({a})", "count({a})", "reverse()", "sort()", "sort(reverse=True)",
             "sort(key=lambda v: -v)", "sort(key=abs, reverse=True)", "remove({a})", "copy()",
             "clear()", "index({a}, 1)", "extend('ab')", "sort(key=str)"]


def lists(r):
    out = [f"xs = {_lit_list(r, r.randint(0, 6))}"]
    for _ in range(r.randint(3, 7)):
        op = r.choice(_LIST_OPS).format(a=_small_int(r, -2, 9), b=_small_int(r),
                                        i=_small_int(r, -8, 8))
        body = [f"print(repr(xs.{op}), xs)"]
        out += _guard(body)
    a, b, c = (r.choice(["None", "", _small_int(r, -6, 6)]) for _ in range(3))
    out.append(f"ys = list(range({r.randint(0, 9)}))")
    out += _guard([f"print(ys[{a}:{b}:{c}], ys[{_small_int(r, -9, 9)}])"])
    out += _guard([f"ys[{a}:{b}] = {_lit_list(r)}", "print(ys)"])
    out += _guard([f"del ys[{_small_int(r, -3, 3)}]", "print(ys)"])
    out += _guard([f"ys[{a}:{b}:{r.choice(['2', '-1', '3'])}] = {_lit_list(r)}", "print(ys)"])
    out.append(r.choice([
        "print(xs + [0], xs * 2, [0] * 3, xs == sorted(xs), len(xs), xs[::-1], list(reversed(xs)))",
        "print(sum(xs), sum(xs, 10), min(xs, default=None), max(xs, default='e'))",
        "print(sorted(xs, key=lambda v: (v % 3, -v)), sorted(xs, reverse=True))",
        "print([v for v in xs if v % 2], [(i, v) for i, v in enumerate(xs, 1)])",
        "print(list(zip(xs, 'abcdef')), list(map(lambda v: v * 2, xs)), "
        "list(filter(None, xs)))",
        "print(any(xs), all(xs), 3 in xs, xs.count(1), tuple(xs))",
        "print(min(xs), max(xs))",
        "print([1, 2] < [1, 2, 0], [2] > [1, 9], [] == [], [1, [2]] == [1, [2]])",
    ]))
    return out


def dicts(r):
    keys = ["'a'", "'b'", "'c'", "1", "2", "(1, 2)", "None", "1.0", "True"]
    pairs = ", ".join(f"{r.choice(keys)}: {_small_int(r)}" for _ in range(r.randint(0, 4)))
    out = [f"d = {{{pairs}}}", "print(d, len(d))"]
    ops = ["get({k})", "get({k}, 'dflt')", "pop({k})", "pop({k}, None)", "setdefault({k}, [])",
           "update({{{k}: 9}})", "update(z=1)", "keys()", "values()", "items()", "copy()",
           "popitem()", "clear()", "update([(1, 2), (3, 4)])"]
    for _ in range(r.randint(3, 6)):
        op = r.choice(ops).format(k=r.choice(keys))
        out += _guard([f"print(repr(d.{op}), d)"])
    k = r.choice(keys)
    out += _guard([f"print(d[{k}])"])
    out += _guard([f"d[{k}] = d.get({k}, 0) + 1", f"del d[{r.choice(keys)}]", "print(d)"])
    out.append(r.choice([
        "print(list(d), sorted(d.items(), key=str), {k: v for k, v in d.items() if v})",
        "print(dict(a=1, b=2), dict([(1, 2)]), dict(zip('ab', [1, 2])), dict({1: 2}, x=3))",
        "print({**d, 'z': 0}, 'a' in d, None in d.keys(), 0 in d.values())",
        "print({i: i * i for i in range(4)}, {1: 'a', True: 'b', 1.0: 'c'})",
        "for k, v in d.items():\n    print(k, '->', v)",
        "print(dict.fromkeys('ab') if False else {}, d == dict(d), d != {})",
    ]))
    return out


def sets(r):
    out = [f"s = {{{', '.join(_small_int(r, -3, 8) for _ in range(r.randint(1, 5)))}}}",
           f"t = set({_lit_list(r)})", "print(sorted(s), sorted(t), len(s))"]
    ops = ["add({a})", "discard({a})", "remove({a})", "pop()", "update([{a}, {b}])",
           "union(t)", "intersection(t)", "difference(t)", "issubset(t)", "issuperset(t)",
           "copy()", "clear()"]
    for _ in range(r.randint(2, 5)):
        op = r.choice(ops).format(a=_small_int(r, -3, 8), b=_small_int(r))
        out += _guard([f"res = s.{op}", "print(sorted(res) if isinstance(res, set) else res, "
                                        "sorted(s))"])
    out.append(r.choice([
        "print(sorted(s | t), sorted(s & t), sorted(s - t), sorted(s ^ t), s <= t, s < t)",
        "print(sorted({v % 3 for v in s}), set(), set() == set([]), {1} == {True})",
        "print(3 in s, sorted(set('hello')), len(set(range(5))))",
        "print(set([1, 2]), {(1, 2)}, frozen if False else 0)",
    ]))
    return out


def unpacking(r):
    out = []
    seqs = ["[1, 2, 3]", "(4, 5)", "'ab'", "range(4)", "[]", "[1]", "[[1, 2], [3, 4]]",
            "{'k': 1, 'j': 2}", "[1, 2, 3, 4, 5]"]
    targets = ["a, b", "a, *b", "*a, b", "a, *b, c", "a, (b, c)", "[a, b]", "a, b, c",
               "(a, b), c", "a, = "]
    for _ in range(r.randint(2, 4)):
        t = r.choice(targets)
        s = r.choice(seqs)
        if t.endswith("= "):
            out += _guard([f"{t}{s}", "print(a)"])
        else:
            names = [n for n in "abc" if n in t]
            out += _guard([f"{t} = {s}", f"print({', '.join(names)})"])
    out += _guard(["for i, (x, y) in enumerate(zip('ab', [1.5, 2])):",
                   "    print(i, x, y, sep='|', end=';\\n')"])
    out += _guard([f"x, y = y, x = {r.choice(['1, 2', '(3, 4)'])}", "print(x, y)"])
    sep = r.choice(['", "', '""', 'None'])
    end = r.choice(['"!\\n"', 'None', '"\\n"'])
    out += _guard([f"print(*{r.choice(seqs)}, sep={sep}, end={end})"])
    return out


def functions(r):
    out = []
    sigs = [("a, b=2, *args, c, d=4, **kw", "a, b, args, c, d, kw"),
            ("a, b=[], *, c=1", "a, b, c"),
            ("*args, **kw", "args, kw"),
            ("a, /, b=1" if False else "a, b=1", "a, b"),
            ("x, y=None, *rest", "x, y, rest")]
    sig, ret = r.choice(sigs)
    out.append(f"def f({sig}):\n    return ({ret})")
    calls = ["f(1)", "f(1, 2)", "f(1, 2, 3)", "f(1, c=3)", "f(1, 2, 3, c=5, d=6, e=7)",
             "f(a=1, c=2)", "f()", "f(1, *[2, 3], c=0)", "f(1, **{'c': 2})", "f(1, a=2, c=3)",
             "f(1, 2, c=3, c=4)" if False else "f(*'ab', c=1)", "f(x=1)", "f(1, y=2, z=3)",
             "f(b=1)", "f(1, 2, 3, 4, 5)"]
    for c in r.sample(calls, r.randint(3, 6)):
        out += _guard([f"print({c})"])
    out.append("def g(v, acc=[]):\n    acc.append(v)\n    return acc")
    out.append("print(g(1), g(2), g(3, []))")
    out.append(r.choice([
        "h = lambda *a, k=1, **kw: (a, k, kw)\nprint(h(), h(1, k=2, z=3))",
        "def k(a, b):\n    '''doc'''\n    return a - b\nprint(k(b=1, a=5), k(*(1, 2)))",
        "def rec(n):\n    return 1 if n <= 1 else n * rec(n - 1)\nprint(rec(20), rec(25))",
        "print((lambda: 1)(), (lambda x, y=2: x * y)(3))",
        "def deco(fn):\n    def w(*a, **k):\n        print('call', a, k)\n        return fn(*a, **k)"
        "\n    return w\n@deco\ndef add(x, y=1):\n    return x + y\nprint(add(2), add(2, y=5))",
    ]))
    return out


def scopes(r):
    return r.choice([
        ["x = 'g'", "def f():\n    global x\n    x = 'set'\n    return x",
         "print(f(), x)"],
        ["def counter():\n    n = 0\n    def inc(step=1):\n        nonlocal n\n        n += step"
         "\n        return n\n    return inc", "c = counter()", "print(c(), c(), c(5))"],
        ["fs = [lambda: i for i in range(3)]", "print([f() for f in fs])",
         "gs = [lambda i=i: i for i in range(3)]", "print([g() for g in gs])"],
        ["i = 'outer'", "ys = [i for i in range(3)]", "print(i, ys)",
         "print([j * k for j in range(3) for k in range(j) if k])"],
        ["x = 1", "def f():\n    print(x)\n    x = 2", "f()"],
        ["def f():\n    return y", "try:\n    f()\nexcept NameError as e:\n    print('NE', e)",
         "y = 5", "print(f())"],
        ["def mk():\n    v = []\n    def add(a):\n        v.append(a)\n        return len(v)\n"
         "    return add, v", "add, v = mk()", "print(add(1), add(2), v)"],
        ["x = 10", "def outer():\n    x = 20\n    def inner():\n        return x\n    x = 30\n"
         "    return inner()", "print(outer(), x)"],
        ["n = 0", "def bump():\n    global n\n    n += 1", "for _ in range(3):\n    bump()",
         "print(n)"],
        ["print([x for x in 'ab' if x != 'c'], {x: i for i, x in enumerate('ab')})",
         "print(sorted({(a, b) for a in range(2) for b in range(2)}))"],
    ])


def excepts(r):
    out = []
    raises = ["raise ValueError('bad')", "raise KeyError('k')", "1 / 0", "[][1]", "{}['x']",
              "int('x')", "raise TypeError", "raise IndexError('i', 2)", "pass",
              "raise RuntimeError()", "assert False, 'msg'", "assert 1 == 2", "None + 1",
              "'a' + 1", "undefined_name", "[1].index(5)", "(1, 2)[5]", "'abc'.index('z')",
              "len(5)", "int(None)", "float('1.2.3')", "[1, 2] < ['a', 1]", "{1: 2}[[1]]",
              "raise Exception('x', 1)", "1 % 0", "2.0 // 0", "divmod(1, 0)", "abs('x')",
              "sorted([1, 'a'])", "max([])", "min()", "sum(['a'])", "dict([1])",
              "raise ZeroDivisionError('mine')", "(-8) ** 0.5 + []", "'%d' % 'x'",
              "print(*[1], sep=1)", "round('x')", "next(iter([]))"]
    handlers = ["ValueError", "KeyError", "(TypeError, ZeroDivisionError)", "IndexError",
                "Exception", "LookupError" if False else "RuntimeError", "AssertionError",
                "ArithmeticError" if False else "ZeroDivisionError", "NameError"]
    for _ in range(r.randint(2, 4)):
        lines = ["try:", "    print('start')", f"    {r.choice(raises)}", "    print('after')"]
        for h in r.sample(handlers, r.randint(1, 3)):
            lines += [f"except {h} as e:", f"    print('caught {h}', repr(e), e.args)"]
        if r.random() < 0.4:
            lines += ["else:", "    print('else')"]
        if r.random() < 0.5:
            lines += ["finally:", "    print('finally')"]
        out += _guard(lines)
    out += _guard(r.choice([
        ["def f():\n    try:\n        return 'try'\n    finally:\n        print('fin')",
         "print(f())"],
        ["def f():\n    for i in range(3):\n        try:\n            if i == 1:\n"
         "                continue\n            print('i', i)\n        finally:\n"
         "            print('f', i)\n    return i", "print(f())"],
        ["try:\n    try:\n        raise ValueError('inner')\n    except ValueError:\n"
         "        raise KeyError('outer')\nexcept KeyError as e:\n    print(repr(e))"],
        ["class MyErr(ValueError):\n    pass",
         "try:\n    raise MyErr('m')\nexcept ValueError as e:\n    print(isinstance(e, MyErr), e)"],
        ["try:\n    raise ValueError\nexcept ValueError as e:\n    print(repr(e), str(e) == '')"],
        ["err = 1", "try:\n    1 / 0\nexcept ZeroDivisionError as err:\n    pass",
         "try:\n    print(err)\nexcept NameError as x:\n    print('gone', x)"],
        ["try:\n    raise KeyError(1, 2)\nexcept KeyError as e:\n    print(e, e.args)"],
        # (`e`, `pi`, `inf` alone are gradcli's bare torch names; once `except ... as` or
        # `del` unbinds them, reading them is a NameError as in Python)
        ["try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    pass",
         "try:\n    print(e)\nexcept NameError as x:\n    print('unbound', x)"],
        ["try:\n    [][0]\nexcept IndexError as pi:\n    print(repr(pi))", "print(pi)"],
        ["inf = 5", "del inf", "try:\n    print(inf)\nexcept NameError as x:\n    print(x)"],
        ["def f():\n    try:\n        raise KeyError('k')\n    except KeyError as nan:\n"
         "        pass\n    return nan", "print(f())"],
        ["try:\n    raise Exception()\nexcept Exception as e:\n    print(repr(e), repr(str(e)))"],
    ]))
    return out


def classes(r):
    base = [
        "class V:",
        "    count = 0",
        "    def __init__(self, x, y=0):",
        "        self.x = x",
        "        self.y = y",
        "        V.count += 1",
        "    def __repr__(self):",
        "        return f'V({self.x!r}, {self.y!r})'",
        "    def __eq__(self, o):",
        "        return isinstance(o, V) and (self.x, self.y) == (o.x, o.y)",
        "    def __hash__(self):",
        "        return hash((self.x, self.y))",
        "    def __add__(self, o):",
        "        if isinstance(o, V):",
        "            return V(self.x + o.x, self.y + o.y)",
        "        return V(self.x + o, self.y + o)",
        "    def __radd__(self, o):",
        "        return self + o",
        "    def __mul__(self, k):",
        "        return V(self.x * k, self.y * k)",
        "    def __neg__(self):",
        "        return V(-self.x, -self.y)",
        "    def __lt__(self, o):",
        "        return (self.x, self.y) < (o.x, o.y)",
        "    def __len__(self):",
        "        return 2",
        "    def __getitem__(self, i):",
        "        return (self.x, self.y)[i]",
        "    def __contains__(self, v):",
        "        return v in (self.x, self.y)",
        "    def __bool__(self):",
        "        return bool(self.x or self.y)",
        "    @property",
        "    def norm1(self):",
        "        return abs(self.x) + abs(self.y)",
        "    @classmethod",
        "    def zero(cls):",
        "        return cls(0)",
        "    @staticmethod",
        "    def dot(a, b):",
        "        return a.x * b.x + a.y * b.y",
    ]
    sub = [
        "class W(V):",
        "    kind = 'w'",
        "    def __init__(self, x):",
        "        super().__init__(x, x)",
        "    def __str__(self):",
        "        return 'W<' + str(self.x) + '>'",
        "    def __iter__(self):",
        "        return iter([self.x, self.y, 'w'])",
    ]
    out = base + sub
    exprs = ["V(1, 2)", "V(1, 2) + V(3, 4)", "V(1) + 5", "5 + V(1)", "V(2, 3) * 2", "-V(1, 2)",
             "V(1, 2) == V(1, 2)", "V(1, 2) != V(1, 3)", "V(1) < V(2)", "V(1) > V(0)",
             "len(V(1))", "V(1, 2)[1]", "V(1, 2)[5]", "2 in V(1, 2)", "bool(V(0))",
             "V(3, -4).norm1", "V.zero()", "W.zero()", "V.dot(V(1, 2), V(3, 4))", "W(3)",
             "str(W(3))", "repr(W(3))", "list(W(2))", "f'{W(1)} {W(1)!r}'", "'%s|%r' % (W(1), W(1))",
             "sorted([V(2), V(1, 5), V(1)])", "{V(1), V(1), V(2)} == {V(2), V(1)}",
             "isinstance(W(1), V)", "issubclass(W, V)", "type(W(1)) is W", "type(V(1)) == W",
             "V.count", "W.kind", "W(1).kind", "sum([V(1), V(2)])", "max([V(2), V(1)])",
             "V(1, 2).z", "V(1) * V(2)", "V(1) - V(2)", "[v.x for v in [V(1), W(2)]]",
             "hash(V(1, 2)) == hash(V(1, 2))", "print(V(1), W(2), sep=' & ')",
             "callable(V), callable(V(1)), callable(V.dot)", "getattr(V(1), 'y', 'none')",
             "hasattr(V(1), 'norm1'), hasattr(V(1), 'q')", "V(1) if V(0) else 'falsy'",
             "str(V(7))", "dict(a=V(1))", "[V(1)] * 2", "{'k': W(1)}"]
    for e in r.sample(exprs, r.randint(5, 10)):
        out += _guard([f"print({e})"])
    out += _guard(r.choice([
        ["v = V(1)", "v.x = 10", "v.extra = 'e'", "print(v, v.extra, V.count)"],
        ["V.count = 100", "print(V(1).count, W.count)", "w = W(1)", "w.count = 5",
         "print(w.count, V.count)"],
        ["v = V(1)", "v.norm1 = 3"],
        ["class C:\n    def __init__(self):\n        self.items = [3, 1, 2]\n    def __len__(self):"
         "\n        return len(self.items)\n    def __getitem__(self, i):\n        return self.items[i]"
         "\n    def __setitem__(self, i, v):\n        self.items[i] = v",
         "c = C()", "c[0] = 9", "print(len(c), c[0], list(c), sorted(c), c[-1], 2 in c)"],
        ["class P:\n    def __init__(self, v):\n        self.hidden = v\n    @property\n    def v(self):"
         "\n        return self.hidden\n    @v.setter\n    def v(self, n):\n        self.hidden = n * 2",
         "p = P(1)", "p.v = 5", "print(p.v)"],
        ["class A:\n    def hi(self):\n        return 'A'", "class B(A):\n    def hi(self):"
         "\n        return 'B' + super().hi()", "class C(B):\n    def hi(self):\n"
         "        return 'C' + super().hi()", "print(C().hi(), B().hi())"],
        ["class It:\n    def __init__(self, n):\n        self.n = n\n    def __iter__(self):"
         "\n        return self\n    def __next__(self):\n        if self.n <= 0:\n"
         "            raise StopIteration\n        self.n -= 1\n        return self.n",
         "print(list(It(3)), [x * 2 for x in It(2)], sum(It(4)))"],
        ["class N:\n    def __init__(self, v):\n        self.v = v\n    def __call__(self, a):"
         "\n        return self.v + a\n    def __str__(self):\n        return 'N'",
         "n = N(2)", "print(n(3), n, [n])"],
    ]))
    return out


def builtins_(r):
    xs = _lit_list(r, r.randint(0, 5))
    return [r.choice([
        f"print(sorted({xs}, key=lambda v: -v), min({xs}, default=0), max({xs}, default=-1))",
        f"print(min({xs}, key=abs), max({xs}, key=abs))",
        f"print(list(enumerate({xs}, start=-1)), list(zip({xs}, 'abc', [1.5] * 9)))",
        f"print(list(map(str, {xs})), list(filter(lambda v: v > 1, {xs})))",
        f"print(sum({xs}) / max(len({xs}), 1), sum([0.1] * 10), sum([], 0.0))",
        f"print(list(reversed({xs})), all([]), any([]), all({xs}), any({xs}))",
        f"print(tuple({xs}), list(range(2, 9, 3)), list(range(5, 0, -2)), range(3), "
        f"len(range(1, 10, 4)))",
        "print(abs(-3), abs(-2.5), round(7.5), round(-7.5), round(0.5 + 1e-16), int(True))",
        "print(str(None), str(True), str([1, 'a', None]), repr('a\\nb'), repr(\"'\"), "
        "repr('\"\\''))",
        "print(isinstance(1, int), isinstance(True, int), isinstance(1.0, (int, float)), "
        "isinstance('a', list), issubclass(bool, int))",
        "print(type(1), type('a'), type([]) is list, type(1.5) == float, type(None))",
        "print(sorted(['b', 'A', 'a', 'B']), sorted(['b', 'A'], key=str.lower) if False else 0, "
        "max('abc'), min('b', 'a'))",
        f"it = iter({xs})\nprint(next(it, 'end'), next(it, 'end'), list(it))",
        f"print(len({xs}), len('héllo'), len({{1: 2}}), len(()), bool(None), float(True))",
        "print(divmod(17, 5), divmod(-17, 5), divmod(17.5, -5), pow(2, -1), pow(-2, 3))",
        "print(hash(1) == hash(1.0), hash('a') == hash('a'), id(1) == id(1) or True)",
        f"print({xs}, sep='-', end='#')\nprint()",
        "print(1, 2, 3, sep='')\nprint('a', 'b', sep=None, end=None)\nprint()",
        "print(int(3.99), int(-3.99), int('  42 '), int('-0'), float('-0'), float(' inf '))",
        "print(str(1e16), str(1e15), str(1.5e-5), str(0.0001), repr(1e-4), str(2 ** 0.5))",
        "print(list('abc'), tuple('ab'), set(), dict(), list(), str(), int(), float(), bool())",
    ])]


def control(r):
    out = []
    out += _guard(r.choice([
        ["i = 0", "while i < 5:", "    i += 2", "    if i == 4:", "        break",
         "else:", "    print('no break')", "print('i', i)"],
        ["for c in 'abc':", "    if c == 'z':", "        break", "else:", "    print('else', c)"],
        ["total = 0", "for i in range(10):", "    if i % 3 == 0:", "        continue",
         "    total += i", "print(total)"],
        ["n = 3", "while n:", "    n -= 1", "    print(n, end=' ')", "else:", "    print('done')"],
        ["for i in range(3):", "    for j in range(3):", "        if j > i:", "            break",
         "    else:", "        print('inner else', i)", "    print(i, j)"],
    ]))
    out += _guard(r.choice([
        ["xs = [1, 2]", "xs += 'ab'", "xs *= 2", "print(xs)"],
        ["t = (1,)", "u = t", "t += (2,)", "print(t, u, t is u)"],
        ["s = 'a'", "s += 'b' * 3", "s *= 2", "print(s)"],
        ["xs = [1]", "ys = xs", "xs += [2]", "print(ys, xs is ys)"],
        ["x = 7", "x //= 2", "x **= 3", "x %= 5", "x -= 0.5", "x /= 4", "print(x)"],
        ["x = 6", "x &= 3", "x |= 8", "x ^= 1", "x <<= 2", "x >>= 1", "print(x)"],
        ["d = {'a': [1]}", "d['a'] += [2]", "d['b'] = d.get('b', 0) + 1", "print(d)"],
        ["a = b = [0]", "a.append(1)", "print(a, b, a is b)"],
        ["x = 1", "del x", "print(x)"],
        ["xs = [1, 2, 3, 4]", "del xs[::2]", "print(xs)", "del xs[5]"],
        ["d = {1: 2}", "del d[1]", "print(d)", "del d[1]"],
        ["assert 1 < 2, 'fine'", "assert [], 'empty list is falsy'"],
        ["assert 0"],
        ["x = 5", "assert x > 9, f'x is {x}'"],
    ]))
    return out


def reprs(r):
    out = ["def f():\n    pass", "class K:\n    def m(self, x):\n        return x",
           "def outer():\n    def inner():\n        pass\n    return inner"]
    exprs = ["f", "K", "K()", "K().m", "K.m", "outer()", "lambda: 0", "print", "len",
             "[f, K]", "type(K())", "K().m(1)", "K().m()",
             "K.m(1)", "K().m(1, 2)", "K().q", "K.m(K(), x=3)", "f(1)",
             "int", "str", "list", "ValueError", "ValueError('v')", "KeyError('k')",
             "Exception('a', 1)", "str(KeyError('k'))", "str(ValueError())", "None",
             "...", "NotImplemented", "range(0, 3)", "range(1, 9, 2)",
             "(1)", "(1,)", "[[]] * 2", "{}", "set()", "{'a': {'b': [1, (2,)]}}",
             "print(end='')", "repr(repr('x'))", "str(str)"]
    for e in r.sample(exprs, r.randint(4, 8)):
        out += _guard([f"print({e})"])
    out += _guard(r.choice([
        ["class E:\n    def __eq__(self, o):\n        return True", "print(E() == 1, E() != 1)",
         "print(hash(E()))"],
        ["class R:\n    def __repr__(self):\n        return 'R!'", "print(R(), str(R()), [R()], "
         "f'{R()}', '%s' % R(), '{}'.format(R()))"],
        ["class S:\n    def __str__(self):\n        return 'S!'", "print(S(), [S()], f'{S()!s}')"],
        ["class A:\n    def __add__(self, o):\n        return NotImplemented\n"
         "    def __radd__(self, o):\n        return 'radd'", "print(1 + A(), A() + 1)"],
        ["class A:\n    def __lt__(self, o):\n        return 'lt'", "print(A() < 1, 1 > A())",
         "print(A() > 1)"],
        ["class A:\n    def __init__(self, n):\n        self.n = n\n    def __iadd__(self, o):\n"
         "        self.n += o\n        return self\n    def __repr__(self):\n"
         "        return 'A%d' % self.n", "a = A(1)", "b = a", "a += 5", "print(a, b, a is b)"],
        ["class A:\n    def __len__(self):\n        return -1", "print(len(A()))"],
        ["class A:\n    def __bool__(self):\n        return 1", "print(bool(A()))"],
        ["class A:\n    def __len__(self):\n        return 0", "print(bool(A()), not A())"],
        ["class A:\n    pass", "a = A()", "a.x = 1", "print(a.x, A.x if hasattr(A, 'x') else 'no')",
         "print(a.y)"],
        ["class A:\n    def __init__(self):\n        return 1", "A()"],
        ["class A:\n    def __hash__(self):\n        return 7", "print(hash(A()), len({A(), A()}))"],
        ["class M:\n    def __matmul__(self, o):\n        return 'mm'\n    def __pow__(self, o):\n"
         "        return 'pw'\n    def __rpow__(self, o):\n        return 'rpw'\n"
         "    def __truediv__(self, o):\n        return 'td'\n    def __rfloordiv__(self, o):\n"
         "        return 'rfd'\n    def __mod__(self, o):\n        return 'md'",
         "m = M()", "print(m @ 1, m ** 2, 2 ** m, m / 3, 3 // m, m % 1)", "print(m - 1)"],
    ]))
    return out


def modules(r):
    out = []
    kind = r.choice(["math", "random", "functools", "collections"])
    if kind == "math":
        out.append("import math")
        calls = ["math.floor(-2.5)", "math.ceil(2.1)", "math.sqrt(2)", "math.sqrt(-1)",
                 "math.pi", "math.e", "math.inf", "-math.inf", "math.nan", "math.log(0)",
                 "math.log(8, 2)", "math.log10(1000)", "math.exp(710)", "math.exp(1)",
                 "math.isclose(0.1 + 0.2, 0.3)", "math.factorial(20)", "math.factorial(-1)",
                 "math.gcd(12, 18)", "math.fabs(-3)", "math.trunc(-2.7)", "math.isnan(math.nan)",
                 "math.isinf(1e308 * 10)", "math.pow(2, 0.5)", "math.atan2(1, -1)",
                 "math.hypot(3, 4)", "math.copysign(1, -0.0)", "math.fsum([0.1] * 10)",
                 "math.degrees(math.pi)", "math.tanh(0.5)", "math.comb(5, 2)",
                 "math.prod([1, 2, 3])", "math.floor(math.inf)", "math.log(-1)", "math.asin(2)",
                 "math.isfinite(1.0)"]
        for c in r.sample(calls, r.randint(3, 7)):
            out += _guard([f"print(repr({c}))"])
    elif kind == "random":
        out.append("import random")
        out.append(f"random.seed({r.randint(0, 1000)})")
        calls = ["random.random()", "random.randint(1, 6)", "random.uniform(-1, 1)",
                 "random.choice('abcdef')", "random.gauss(0, 1)", "random.sample(range(10), 3)",
                 "random.randint(0, 10 ** 12)", "random.choice([])"]
        for c in r.sample(calls, r.randint(3, 6)):
            out += _guard([f"print(repr({c}))"])
        out += ["xs = list(range(8))", "random.shuffle(xs)", "print(xs)"]
    elif kind == "functools":
        out.append("from functools import partial, reduce")
        out += _guard(r.choice([
            ["add = lambda a, b: a + b", "print(reduce(add, [1, 2, 3]), reduce(add, [], 0))",
             "print(reduce(add, []))"],
            ["def p(a, b, c=0):\n    return (a, b, c)", "q = partial(p, 1, c=5)",
             "print(q(2), q(b=3), q(2, c=9))"],
            ["print(reduce(lambda a, b: a * b, range(1, 8), 1))"],
        ]))
    else:
        out.append("from collections import OrderedDict, namedtuple")
        out += _guard(r.choice([
            ["P = namedtuple('P', ['x', 'y'])", "p = P(1, y=2)",
             "print(p, p.x, p[1], p == (1, 2), list(p), len(p))", "a, b = p", "print(a + b)"],
            ["P = namedtuple('P', 'x y')", "print(P(1, 2), P(x=3, y=4))", "print(P(1))"],
            ["od = OrderedDict()", "od['b'] = 1", "od['a'] = 2", "print(od, list(od), od['a'])",
             "print(OrderedDict([(1, 2)]) == {1: 2})"],
        ]))
    return out


def strings2(r):
    lits = ["'\\0'", "'\\a\\b\\f\\v'", "'\\x7f'", "'\\u2603'", "'\\N{BULLET}'", "r'\\n\\d'",
            "'''tri'ple'''", '"""dq\\"q"""', "'a' 'b'", "'\\101'", "'\\''", "'\"'",
            "'\\\\'", "'é\\t'", "'\\r\\n'", "'\\x00\\x1f'", "'%'", "'{}'", "'a\\\nb'"]
    out = []
    for lit in r.sample(lits, r.randint(3, 6)):
        out.append(f"print(repr({lit}), len({lit}), {lit})")
    out.append(r.choice([
        "print('a' < 'b' < 'ba', 'Z' < 'a', 'abc' * -1, 'ab' * 0, 'b' in 'abc', '' in 'x')",
        "print('x'.join(str(i) for i in range(3)), ', '.join([]), '-'.join(['a']))",
        "print(str(123)[::-1], '12' + str(3), int('1' * 5) + 1)",
        "print(' a b '.split(' '), 'a\\nb\\r\\nc'.splitlines(), 'a,b'.split(',', -1))",
        "print('%s=%d' % ('k', 5), 'x'.center(7, '-'), 'abc'.find('c', 1), 'abcabc'.rsplit('b'))",
    ]))
    return out


_WRAPPED_CALLS = [
    "min(3, 1, 2)", "min([3, 1], key=lambda v: -v)", "max('ab', 'b')", "min((), default=None)",
    "sum([1, 2], start=10)", "sorted([3, 1], key=None, reverse=True)", "min(1, 2, default=0)",
    "min()", "max(1)", "sum()", "sum([1], 2, 3)", "sorted()", "sorted([1], lambda v: v)",
    "sum(['a', 'b'], '')", "max([], key=len)", "max([[1], [2, 0]], key=len)",
    "list()", "tuple()", "str()", "dict()", "set()", "list('ab')", "tuple([1])", "dict(a=1)",
    "set('aa') == {'a'}", "list(x for x in 'ab')", "list(1)", "list([1], [2])", "str(1, 2)",
    "dict(1)", "set(1, 2)", "tuple(1)", "list(iterable=[1])", "str(object=5)", "dict([[1, 2]])",
    "dict([(1, 2, 3)])", "dict(((1, 2),), b=3)", "hasattr([], 'append')", "getattr([], 'x', 'd')",
    "getattr([], 'x')", "getattr([])", "pow(2, 10)", "pow(2, -1)", "pow(2.0, 3)", "pow(3, 4, 5)",
    "pow(2)", "pow(base=2, exp=3)", "pow(3, -1, 7)", "pow(2, 0.5, 3)", "next(iter('ab'))",
    "next(iter([]))", "next(iter([]), 'd')", "iter(5)", "len(5)", "len()", "len([], [])",
    "abs()", "abs(1, 2)", "round(2.5, 0)", "round(1.25, 1)", "round(15, -1)", "round(x=1)",
    "divmod(1)", "divmod(-1, 3)", "divmod(1.0, 0.3)", "hash([])", "hash((1, [2]))",
    "callable(len)", "callable(1)", "isinstance(1, 1)", "issubclass(1, int)",
    "isinstance(1, (int, str))", "issubclass(bool, (str, int))", "int('z', 36)", "int('10', 2)",
    "int('9', 8)", "int(2.5e20)", "int(float('inf'))", "int(float('nan'))", "float('1e500')",
    "bool([0])", "str(None)", "repr(None)", "list(range(-3))", "range(1, 2, 0)", "range(1.5)",
    "list(zip())", "list(zip([1, 2], [3]))", "list(enumerate('ab', 5))", "list(map(pow, [2, 3], [2]))",
    "list(filter(None, [0, 1, '', 'a']))", "list(reversed(range(3)))", "reversed(5)",
    "list(reversed({1: 2}))", "all([1, 0])", "any(x > 1 for x in [1, 2])", "sorted({3: 1, 1: 2})",
    "sorted([(1, 'b'), (1, 'a')])", "sorted([1, 'a'])", "max(1, 'a')", "min([[]], [1])",
    "id(1) == id(1)", "type(1)(5)", "type('')", "type([]) is list", "type({}) == dict",
    "type(type(1))", "type(1, 2)", "str(list)", "repr(tuple)", "print(1, 2, sep=None, end=None)",
    "print('a', sep=1)", "print('a', end=1)", "print('a', flush=True)",
]


def wrapped(r):
    return [line for c in r.sample(_WRAPPED_CALLS, r.randint(4, 9))
            for line in _guard([f"print(repr({c}))"])]


FAMILIES = [arith, compare, strings, fstrings, percent, str_format, lists, dicts, sets,
            unpacking, functions, scopes, excepts, classes, builtins_, control, reprs, modules,
            strings2, wrapped]


def generate(seed: int, families_used=None) -> str:
    """One program: 3 to 6 snippets of the families (their names appended to
    ``families_used`` when given)."""
    r = random.Random(seed)
    parts = []
    n = r.randint(3, 6)
    for k in range(n):
        fam = r.choice(FAMILIES)
        if families_used is not None:
            families_used.append(fam.__name__)
        lines = "\n".join(fam(r)).split("\n")
        bare = k == n - 1 and r.random() < 0.3
        parts.append("\n".join(lines if bare else _guard(lines)))
    return "\n".join(parts) + "\n"


if __name__ == "__main__":  # pragma: no cover - exploration helper
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[2]))
    from tests.test_lang_pydiff import run_both

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    bad = 0
    for seed in range(start, start + n):
        src = generate(seed)
        py, gc = run_both(src)
        if py != gc:
            bad += 1
            import difflib
            print(f"===== seed {seed}")
            print("".join(difflib.unified_diff(py.splitlines(True), gc.splitlines(True),
                                               "python", "gradcli", n=1)))
    print(f"{bad} of {n} programs differ")
