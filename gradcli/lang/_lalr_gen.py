"""Compile grammar/gradcli.lark with lark into gradcli/lang/_lalr_tables.py.

The tables are read from lark's public serialization of the built parser
(``Lark.memo_serialize``, what lark's standalone generator writes): the LALR states,
the rules with their options, the terminals. What lark's tree builder and basic lexer
make of those (kept and inlined children, None placeholders, the lexer's alternation
and keyword table) is derived here from that data, and gradcli.lang._lalr runs it.

Regenerate after any change to the grammar (a test fails while the tables are stale)::

    python -m gradcli.lang._lalr_gen

The output is deterministic for a given grammar text and lark version (both are
recorded in it; ``--check`` compares with what the installed lark makes). lark is
needed here (and by the differential tests), never when gradcli parses; the version the
tables are made with is pinned in pyproject.toml's ``dev`` extra
(``pip install -e ".[dev]"``).
"""
import hashlib
import os
import re
import sys

OPTIONS = dict(parser="lalr", lexer="basic", start=["file_input", "fexpr"],
               propagate_positions=True, maybe_placeholders=True)

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = os.path.join(HERE, "_lalr_tables.py")


def grammar_path() -> str:
    """grammar/gradcli.lark in a checkout, gradcli/grammar/gradcli.lark when installed."""
    for path in (os.path.join(HERE, "..", "..", "grammar", "gradcli.lark"),
                 os.path.join(HERE, "..", "grammar", "gradcli.lark")):
        if os.path.exists(path):
            return os.path.normpath(path)
    raise FileNotFoundError("gradcli.lark not found")


def grammar_text() -> str:
    with open(grammar_path(), encoding="utf-8") as f:
        return f.read()


def grammar_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lark_parser(postlex=None):
    """The lark parser the tables come from (also the oracle of the differential tests)."""
    from lark import Lark

    if postlex is None:
        from gradcli.lang.parser import GradIndenter

        postlex = GradIndenter()
    return Lark(grammar_text(), postlex=postlex, **OPTIONS)


def _child_filter(rule: dict):
    """(include, append_none) of a rule, from its serialized form: which children the tree
    keeps (terminals lark filters out go unless the rule keeps all tokens), which it
    inlines (rules whose name starts with `_`), and how many None placeholders (the rule's
    empty_indices, from `[...]` optionals) go before each kept child and after the last;
    include is None when the tree keeps every child as it is."""
    expansion = rule["expansion"]
    options = rule["options"]
    flags = options.get("empty_indices") or ()
    if flags:  # one flag per child and per placeholder: True for a placeholder
        nones = [len(ones) for ones in "".join(str(int(b)) for b in flags).split("0")]
    else:
        nones = [0] * (len(expansion) + 1)
    include, waiting = [], 0
    for i, sym in enumerate(expansion):
        waiting += nones[i]
        terminal = sym["__type__"] == "Terminal"
        if options.get("keep_all_tokens") or not (terminal and sym.get("filter_out")):
            inline = not terminal and sym["name"].startswith("_")
            include.append((i, inline, waiting))
            waiting = 0
    waiting += nones[len(expansion)]
    if not (flags or len(include) < len(expansion) or any(x for _, x, _ in include)):
        return None, 0
    if flags:
        return tuple(include), waiting
    return tuple((i, x, 0) for i, x, _ in include), 0


def _to_regexp(pattern: dict) -> str:
    value = pattern["value"]
    if pattern["__type__"] == "PatternStr":
        value = re.escape(value)
    for flag in pattern["flags"]:
        value = f"(?{flag}:{value})"
    return value


def _max_width(pattern: dict) -> int:
    return len(pattern["value"]) if pattern["__type__"] == "PatternStr" else pattern["_width"][1]


def _has_newline(regexp: str) -> bool:
    """Whether a token of this pattern may span lines (lark counts lines in those)."""
    return ("\n" in regexp or "\\n" in regexp or "\\s" in regexp or "[^" in regexp
            or ("(?s" in regexp and "." in regexp))


def _lexer(terminals: list, flags: int):
    """(patterns, unless, allowed) of the basic lexer over the serialized terminals: in the
    order they are tried (priority, then longest possible match, then longest text, then
    name); a string terminal that a regexp terminal of the same priority matches whole is
    that terminal's keyword (unless) and leaves the alternation when its flags allow."""
    terminals = sorted(terminals, key=lambda t: (-t["priority"], -_max_width(t["pattern"]),
                                                 -len(t["pattern"]["value"]), t["name"]))
    strings = [t for t in terminals if t["pattern"]["__type__"] == "PatternStr"]
    embedded, unless = set(), {}
    for retok in terminals:
        if retok["pattern"]["__type__"] != "PatternRE":
            continue
        keywords = {}
        for strtok in strings:
            if strtok["priority"] != retok["priority"]:
                continue
            text = strtok["pattern"]["value"]
            m = re.match(_to_regexp(retok["pattern"]), text, flags)
            if m and m.group(0) == text:
                assert not strtok["pattern"]["flags"], strtok
                keywords.setdefault(text, strtok["name"])
                if set(strtok["pattern"]["flags"]) <= set(retok["pattern"]["flags"]):
                    embedded.add(strtok["name"])
        if keywords:
            unless[retok["name"]] = dict(sorted(keywords.items()))
    kept = [t for t in terminals if t["name"] not in embedded]
    alternation = "|".join(f"(?P<{t['name']}>{_to_regexp(t['pattern'])})" for t in kept)
    compiled = re.compile(alternation, flags)  # (one pattern: Python's re has no group limit)
    return ((alternation, compiled.flags),), unless, kept


def _resolve(value, memo):
    """A serialized value with its memo references ({'@': n}) replaced."""
    if isinstance(value, dict):
        if set(value) == {"@"}:
            return _resolve(memo[value["@"]], memo)
        return {k: _resolve(v, memo) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_resolve(v, memo) for v in value)
    return value


def generate() -> str:
    """The text of _lalr_tables.py, from lark's serialization of the parser (what lark's
    standalone generator writes: Lark.memo_serialize), not from lark's objects."""
    import lark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    text = grammar_text()
    data, memo = lark_parser().memo_serialize([TerminalDef, Rule])
    frontend = data["parser"]
    lexer_conf = _resolve(frontend["lexer_conf"], memo)
    assert lexer_conf["lexer_type"] == "basic" and not lexer_conf["use_bytes"]
    table = frontend["parser"]
    tokens = table["tokens"]

    rules, rule_index = [], {}

    def rule_id(ref):
        key = ref["@"]
        if key not in rule_index:
            rule = _resolve(ref, memo)
            include, append_none = _child_filter(rule)
            options = rule["options"]
            expand1 = bool(options.get("expand1") and not rule["alias"])
            name = rule["alias"] or options.get("template_source") or rule["origin"]["name"]
            rule_index[key] = len(rules)
            rules.append((str(rule["origin"]["name"]), len(rule["expansion"]), str(name),
                          expand1, include, append_none))
        return rule_index[key]

    def actions(state):
        return sorted((tokens[t], a) for t, a in table["states"][state].items())

    # lark numbers states in an order that depends on string hashing: renumber them
    # breadth-first from the start states (symbols in sorted order) so that the output
    # depends only on the grammar and lark's version
    order, number = [], {}
    for start in sorted(table["start_states"]):
        queue = [table["start_states"][start]]
        while queue:
            s = queue.pop(0)
            if s in number:
                continue
            number[s] = len(order)
            order.append(s)
            for _sym, (action, arg) in actions(s):
                if action == 0 and arg not in number:
                    queue.append(arg)
    assert len(order) == len(table["states"])
    states = []
    for s in order:
        row = {}
        for sym, (action, arg) in actions(s):
            row[str(sym)] = number[arg] if action == 0 else ~rule_id(arg)
        states.append(row)
    start_states = {k: number[v] for k, v in sorted(table["start_states"].items())}
    end_states = {k: number[v] for k, v in sorted(table["end_states"].items())}
    patterns, unless, kept = _lexer(lexer_conf["terminals"], lexer_conf["g_regex_flags"])
    ignore = set(lexer_conf["ignore"])
    newline = sorted(t["name"] for t in lexer_conf["terminals"]
                     if _has_newline(_to_regexp(t["pattern"])))

    out = [
        '"""Generated by ``python -m gradcli.lang._lalr_gen`` from grammar/gradcli.lark: do not edit.',
        "",
        "The LALR(1) tables and lexer patterns lark builds for the gradcli grammar, run by",
        'gradcli.lang._lalr without lark."""',
        "# ruff: noqa",
        f"GRAMMAR_SHA256 = {grammar_digest(text)!r}",
        f"LARK_VERSION = {lark.__version__!r}",
        f"PATTERNS = {patterns!r}",
        "# a token of these types whose whole text is one of the keys takes the key's type",
        "# (lark's UnlessCallback: its alternation of literal strings, fullmatched)",
        "UNLESS = {",
    ]
    for name, keywords in sorted(unless.items()):
        out.append(f"    {name!r}: {keywords!r},")
    out += [
        "}",
        f"IGNORE = frozenset({sorted(ignore)!r})",
        f"NEWLINE_TYPES = frozenset({newline!r})",
        f"ALLOWED = frozenset({sorted({t['name'] for t in kept} - ignore)!r})",
        f"START = {start_states!r}",
        f"END = {end_states!r}",
        "# (origin, size, tree name, expand single child, (index, inline, Nones before)|None,"
        " Nones after)",
        "RULES = (",
    ]
    out += [f"    {r!r}," for r in rules]
    # the action table, compact (a module of 557 dict displays takes ~2 ms to load; this
    # ~0.8 ms, and the parser builds the dict of a state when it first enters it)
    symbols = sorted({sym for row in states for sym in row})
    index = {sym: i for i, sym in enumerate(symbols)}
    keysets, rows = {}, []
    for row in states:
        keys = tuple(index[sym] for sym in row)
        rows.append((keysets.setdefault(keys, len(keysets)), tuple(row.values())))
    out += [")", f"SYMBOLS = {tuple(symbols)!r}",
            "# the symbol sets (indices in SYMBOLS) that states accept",
            "KEYSETS = ("]
    out += [f"    {keys!r}," for keys in keysets]
    out += [")",
            "# per state: (keyset, actions), the action for each symbol of the keyset: the",
            "# state to shift/go to (>= 0) or ~index in RULES of the rule to reduce (< 0)",
            "STATES = ("]
    out += [f"    {row!r}," for row in rows]
    out += [")", ""]
    return "\n".join(out)


def _check(path: str, text: str) -> bool:
    with open(path, encoding="utf-8") as f:
        return f.read() == text


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = generate()
    if "--check" in argv:
        fresh = _check(TABLES, text)
        print("fresh" if fresh else "stale: run python -m gradcli.lang._lalr_gen")
        return 0 if fresh else 1
    with open(TABLES, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {TABLES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
