"""Differential test of the language against CPython on Python values.

tests/lang/pydiff.py generates seeded programs from SPEC 1.2's constructs (arithmetic
corner cases, formatting, container methods and their errors, unpacking, functions,
closures, exceptions, classes with special methods, builtins). Each runs under CPython's
``exec`` and under a gradcli Session; stdout and the uncaught error (type and message)
must be equal. The seeds here are a fixed range, so a failure names its seed:
``python tests/lang/pydiff.py 1 SEED`` prints the program's diff.

tests/lang/pydiff_found.txt keeps, as short programs, each difference the generator
found (one per kind), so it stays fixed whatever the generator draws later.
"""
import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

from gradcli.lang import GradcliError, Session
from tests.lang import pydiff
from tests.lang.pydiff import generate

FOUND = (Path(__file__).parent / "lang" / "pydiff_found.txt").read_text().split("\n#---\n")
_ADDR = re.compile(r"0x[0-9a-f]{6,}")
SEEDS_PER_CHUNK = 40
CHUNKS = 4


def run_python(src):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(src, "<p>", "exec"), {"__name__": "__main__"})
        return out.getvalue()
    except SyntaxError as e:
        return out.getvalue() + f"!{type(e).__name__}: {e.msg}"
    except Exception as e:  # noqa: BLE001 - the uncaught error is part of the output
        return out.getvalue() + f"!{type(e).__name__}: {e}"


def run_gradcli(src):
    out = io.StringIO()
    try:
        Session(stdout=out).run(src, "<p>")
        return out.getvalue()
    except GradcliError as e:
        return out.getvalue() + f"!{e.kind}: {e.message}"


def run_both(src):
    """Both outputs, object addresses (which SPEC 1.1 lets differ) masked."""
    return _ADDR.sub("0x?", run_python(src)), _ADDR.sub("0x?", run_gradcli(src))


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_generated_programs_print_what_python_prints(chunk):
    differing = []
    for seed in range(chunk * SEEDS_PER_CHUNK, (chunk + 1) * SEEDS_PER_CHUNK):
        py, gc = run_both(generate(seed))
        if py != gc:
            differing.append((seed, py, gc))
    assert not differing, "seeds whose output differs from Python's: " + ", ".join(
        str(s) for s, _, _ in differing) + f"\nfirst:\n--- python\n{differing[0][1]}\n" \
        f"--- gradcli\n{differing[0][2]}"


def test_generator_is_deterministic_and_covers_every_family():
    assert generate(7) == generate(7)
    assert generate(7) != generate(8)
    seen = []
    for seed in range(CHUNKS * SEEDS_PER_CHUNK):
        generate(seed, families_used=seen)
    assert set(seen) == {f.__name__ for f in pydiff.FAMILIES}


@pytest.mark.parametrize("src", FOUND, ids=[f"found{i}" for i in range(len(FOUND))])
def test_differences_found_stay_fixed(src):
    py, gc = run_both(src)
    assert gc == py
