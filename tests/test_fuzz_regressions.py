"""Regression cases found by fuzzing (tests/regressions/NAME.grad + NAME.out).

Each ``.grad`` is a program that is also plain Python; its ``.out`` is what it
printed under real PyTorch 2.13 (tests/fuzz/make_regressions.py writes both).
``gradcli run`` must print the same, after object addresses are normalised.
Cases listed in tests/regressions/XFAIL.txt fail because of the engine and are
``xfail(strict=True)``: they flip to a failure (and must leave the list) once
the engine is fixed.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from gradcli.lang import Limits
from gradcli.lang.session import run_source

HERE = Path(__file__).resolve().parent / "regressions"
ADDR = re.compile(r"0x[0-9a-fA-F]+")


def _xfails() -> dict:
    out = {}
    for line in (HERE / "XFAIL.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(":")
            out[name.strip()] = reason.strip()
    return out


XFAILS = _xfails()
CASES = sorted(HERE.glob("*.grad"))


def _params():
    for case in CASES:
        marks = []
        if case.stem in XFAILS:
            marks.append(pytest.mark.xfail(strict=True, reason=XFAILS[case.stem]))
        yield pytest.param(case, id=case.stem, marks=marks)


def test_every_xfail_names_a_case():
    assert set(XFAILS) <= {c.stem for c in CASES}
    assert all(r.startswith("engine:") for r in XFAILS.values())


@pytest.mark.parametrize("case", list(_params()))
def test_regression_case(case):
    out, err = io.StringIO(), io.StringIO()
    code = run_source(case.read_text(encoding="utf-8"), case.name, stdout=out, stderr=err,
                      limits=Limits())
    expected = case.with_suffix(".out").read_text(encoding="utf-8")
    assert code == 0, err.getvalue()
    assert ADDR.sub("0x?", out.getvalue()) == ADDR.sub("0x?", expected)
