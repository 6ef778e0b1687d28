"""gradcli.cli.testing in-process: -k expressions, discovery, golden
normalisation, the JUnit writer, and run_grad_test through its API."""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

from gradcli.cli import testing
from gradcli.cli.testing import TestOutcome, keyword_matcher, normalise_output


@pytest.mark.parametrize("expr, path, expected", [
    ("", "a/b.grad", True),
    ("seed", "examples/seed_000.grad", True),
    ("SEED", "examples/seed_000.grad", True),
    ("seed and not errors", "examples/seed_000.grad", True),
    ("seed and not errors", "examples/seed_errors.grad", False),
    ("golden or gradient", "t/test_gradient.grad", True),
    ("not (x or y)", "c.grad", True),
    ("not (x or y)", "y.grad", False),
    ("examples/seed", "examples/seed_1.grad", True),
    ("x and (y or z)", "x_z.grad", True),
    ("x and (y or z)", "x_w.grad", False),
])
def test_keyword_matcher(expr, path, expected):
    assert keyword_matcher(expr)(path) is expected


@pytest.mark.parametrize("expr", ["a and", "(a", "a)", "or a", "not", "a b"])
def test_keyword_matcher_rejects(expr):
    with pytest.raises(ValueError, match="bad -k expression"):
        keyword_matcher(expr)


def test_discover(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / ".hidden").mkdir()
    (tmp_path / "d" / "__pycache__").mkdir()
    for p in ("d/test_b.grad", "d/test_a.grad", "d/sub/test_c.grad", "d/.hidden/test_h.grad",
              "d/__pycache__/test_p.grad", "d/test_a.out", "d/notes.txt", "e.grad",
              "d/helper.grad"):
        (tmp_path / p).write_text("pass\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        files, problems = testing.discover(["d", "e.grad", "d/test_a.grad", "d/test_a.out",
                                            "nope"])
    finally:
        os.chdir(old)
    # directories give test_*.grad files only; a file named on the command line runs
    assert files == ["d/test_a.grad", "d/test_b.grad", os.path.join("d", "sub", "test_c.grad"),
                     "e.grad"]
    assert problems == ["d/test_a.out: not a .grad file (skipped)",
                        "nope: no such file or directory"]


def test_normalise_output():
    assert normalise_output("<X object at 0x7fA1>\r\nz\n\n") == "<X object at 0x?>\nz"
    assert normalise_output("a 0xdead b 0x1") == normalise_output("a 0xbeef b 0x2")


def _outcomes():
    return [
        TestOutcome("t/ok.grad", "passed", 0.25, stdout="hi\n"),
        TestOutcome("t/bad.grad", "failed", 0.5, kind="AssertionError", message="no",
                    report="t/bad.grad:1:1: AssertionError: no\n    1 | assert 0\x00 < 1",
                    line=1, stdout="\x1b[31mred\x1b[0m\n", stderr="warn\n"),
        TestOutcome("t/syn.grad", "error", 0.0, kind="SyntaxError", message="bad",
                    report="t/syn.grad:2:3: SyntaxError: bad"),
        TestOutcome("t/slow.grad", "timeout", 1.0, kind="Timeout", message="timed out",
                    report="t/slow.grad: Timeout: timed out"),
    ]


def test_junit_xml_document():
    data = testing.junit_xml(_outcomes(), duration=1.75, timestamp="2026-01-01T00:00:00",
                             properties={"seed": 3}, note="interrupted")
    assert data.startswith(b'<?xml version="1.0" encoding="utf-8"?>\n')
    root = ET.fromstring(data)
    suite = root.find("testsuite")
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "2")
    assert suite.get("time") == "1.750" and suite.get("timestamp") == "2026-01-01T00:00:00"
    assert suite.find("properties/property").attrib == {"name": "seed", "value": "3"}
    cases = suite.findall("testcase")
    assert [c.get("classname") for c in cases] == ["t.ok", "t.bad", "t.syn", "t.slow"]
    assert [c.get("name") for c in cases] == ["ok.grad", "bad.grad", "syn.grad", "slow.grad"]
    assert [c.get("time") for c in cases] == ["0.250", "0.500", "0.000", "1.000"]
    bad = cases[1].find("failure")
    assert bad.get("message") == "t/bad.grad:1:1: AssertionError: no"
    assert "\\x00" in bad.text                     # illegal in XML: escaped, not dropped
    assert cases[1].findtext("system-out") == "\\x1b[31mred\\x1b[0m\n"
    assert cases[1].findtext("system-err") == "warn\n"
    assert cases[2].find("error").get("type") == "SyntaxError"
    assert cases[3].find("error").get("type") == "Timeout"
    assert cases[0].find("failure") is None and cases[0].find("error") is None
    assert suite.findtext("system-err") == "interrupted"


def test_write_junit_atomic_and_errors(tmp_path):
    target = tmp_path / "r.xml"
    target.write_text("old")
    testing.write_junit(target, b"<testsuites/>\n")
    assert target.read_bytes() == b"<testsuites/>\n"
    assert sorted(os.listdir(tmp_path)) == ["r.xml"]  # no temporary file left
    testing.write_junit(tmp_path / "missing" / "r.xml", b"x")  # folders are made
    assert (tmp_path / "missing" / "r.xml").read_bytes() == b"x"
    (tmp_path / "plain").write_text("")
    with pytest.raises(testing.ReportError, match="is not a directory"):
        testing.write_junit(tmp_path / "plain" / "r.xml", b"x")
    with pytest.raises(testing.ReportError, match="is a directory"):
        testing.write_junit(tmp_path, b"x")


def test_run_grad_test_api(tmp_path):
    (tmp_path / "ok.grad").write_text("x = ones(2, requires_grad=True)\n(x * x).sum().backward()\n"
                                      "print(x.grad)\n")
    (tmp_path / "ok.out").write_text("tensor([2., 2.])\n")
    (tmp_path / "bad.grad").write_text("y = 1\nassert y == 2, 'y is ' + str(y)\n")
    with testing.make_runner() as runner:
        ok = testing.run_grad_test("ok.grad", cwd=tmp_path, runner=runner)
        bad = testing.run_grad_test(tmp_path / "bad.grad", runner=runner, timeout=None)
    assert ok.passed and ok.golden == "ok.out" and ok.stdout == "tensor([2., 2.])\n"
    assert bad.status == "failed" and bad.kind == "AssertionError" and bad.line == 2
    assert bad.message == "y is 1"
    assert bad.headline == f"{tmp_path / 'bad.grad'}:2:1: AssertionError: y is 1"
    assert "    2 | assert y == 2, 'y is ' + str(y)" in bad.report
