"""pytest plugin (entry point ``pytest11``): ``.grad`` scripts as tests.

Files whose name matches ``test_*.grad`` (the ``grad_files`` ini option), and
``.grad`` files named on the command line, are collected (the rule of
:mod:`gradcli.cli.collect`, shared with ``gradcli test``), one test item per file,
judged exactly as ``gradcli test`` judges them
(:func:`gradcli.cli.testing.run_grad_test`): the test fails at the script's
first failed ``assert``, error or syntax error, and where ``NAME.out`` lies
beside ``NAME.grad`` its stdout must equal it. A failure shows gradcli's own
report (the script's line with a caret), never a Python traceback.

ini options (``pytest.ini``, ``[tool.pytest.ini_options]``, or ``-o``), each also a
command-line flag that wins over the ini file (``--grad-timeout 10``,
``--grad-max-steps 1000``, ``--grad-seed 3``...)::

    grad_files        = test_*.grad      # glob patterns (space separated)
    grad_timeout      = 60               # wall-clock seconds per file (0: none)
    grad_seed         = 0
    grad_max_steps    = 10000000         # the guards (docs/language.md);
    grad_max_elements = 100000000        # unset: the GRADCLI_MAX_* env vars
    grad_max_depth    = 500              # or gradcli's defaults
    grad_max_length   = 10000000

Items carry the ``grad`` marker (``pytest -m grad``). Importing this module is
cheap, so projects that have no ``.grad`` files pay nothing for it.
"""
from __future__ import annotations

import os

import pytest

from gradcli.cli.collect import DEFAULT_PATTERNS, matches

LIMIT_KEYS = ("max_steps", "max_elements", "max_depth", "max_length")


#: the settings that are both ini keys and command-line flags: name -> help
SETTINGS_HELP = {
    "grad_timeout": "wall-clock limit per .grad file in seconds (0: none; default 60)",
    "grad_seed": "random seed of every .grad file (default 0)",
    **{f"grad_{key}": f"the {key.replace('_', '-')} resource guard of every .grad file"
       for key in LIMIT_KEYS},
}
INI_DEFAULTS = {"grad_timeout": "60", "grad_seed": "0"}


def pytest_addoption(parser):
    parser.addini("grad_files", type="args", default=list(DEFAULT_PATTERNS),
                  help="glob patterns of gradcli scripts collected as tests (default: "
                       "test_*.grad)")
    group = parser.getgroup("gradcli", "gradcli .grad scripts")
    for name, text in SETTINGS_HELP.items():
        parser.addini(name, default=INI_DEFAULTS.get(name, ""), help=f"gradcli: {text}")
        group.addoption(f"--{name.replace('_', '-')}", dest=name, metavar="N", default=None,
                        help=f"{text} (overrides the {name} ini option)")


def pytest_configure(config):
    config.addinivalue_line("markers", "grad: a gradcli .grad script collected as a test")


def pytest_collection_modifyitems(session, config, items):
    # bad ini values (or GRADCLI_MAX_* variables) are usage errors, reported once
    if any(isinstance(item, GradItem) for item in items):
        _settings(config)


def pytest_collect_file(parent, file_path):
    """A ``.grad`` file matching ``grad_files``, or named on the command line whatever its
    name (as ``gradcli test`` runs a file it is given, and pytest a ``.py`` file)."""
    if file_path.suffix != ".grad":
        return None
    patterns = parent.config.getini("grad_files") or DEFAULT_PATTERNS
    if matches(file_path, patterns) or parent.session.isinitpath(file_path):
        return GradFile.from_parent(parent, path=file_path)
    return None


_SETTINGS = pytest.StashKey[dict]()


def _settings(config) -> dict:
    """timeout, seed and Limits from the ini file (read once per session)."""
    cached = config.stash.get(_SETTINGS, None)
    if cached is not None:
        return cached
    from gradcli.lang.limits import Limits, parse_limit

    def ini(name):
        flag = config.getoption(name, None)
        if flag is not None:
            return str(flag).strip()
        return str(config.getini(name) or "").strip()

    try:
        raw = ini("grad_timeout") or "60"
        timeout = float(raw)
        if not timeout >= 0:
            raise ValueError
    except ValueError:
        raise pytest.UsageError(f"grad_timeout must be a number of seconds, not {raw!r}") from None
    try:
        raw = ini("grad_seed") or "0"
        seed = int(raw)
    except ValueError:
        raise pytest.UsageError(f"grad_seed must be an integer, not {raw!r}") from None
    overrides = {}
    for key in LIMIT_KEYS:
        raw = ini(f"grad_{key}")
        if raw:
            try:
                overrides[key] = parse_limit(raw, f"grad_{key}")
            except ValueError as e:
                raise pytest.UsageError(str(e)) from None
    try:
        limits = Limits.from_env(**overrides)
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    settings = {"timeout": timeout, "seed": seed, "limits": limits}
    config.stash[_SETTINGS] = settings
    return settings


class GradFile(pytest.File):
    """A ``.grad`` script: one test item named after the file."""

    def collect(self):
        yield GradItem.from_parent(self, name=self.path.stem)


class GradTestFailed(Exception):
    """Raised by a failing item; carries the TestOutcome."""

    def __init__(self, outcome):
        super().__init__(outcome.headline)
        self.outcome = outcome


class _Crash:
    """What pytest's short summary reads (``reprcrash``): the failure in one line,
    without the file name the summary line already starts with."""

    def __init__(self, outcome):
        o = outcome
        msg = o.message.split("\n", 1)[0]
        text = (f"{o.kind}: {msg}" if msg else o.kind) if o.kind else msg or o.status
        self.message = f"line {o.line}: {text}" if o.line else text
        self.path = o.path
        self.lineno = o.line or 0


class GradFailureRepr:
    """A failed ``.grad`` item's report: gradcli's own text, never a traceback."""

    def __init__(self, outcome):
        self.report = outcome.report
        self.reprcrash = _Crash(outcome)

    def toterminal(self, tw) -> None:
        for line in self.report.rstrip("\n").split("\n"):
            tw.line(line)

    def __str__(self) -> str:
        return self.report


def failure_repr(outcome):
    """A failed item's report as pytest's own exception representation, whose lines are
    gradcli's report verbatim (the "value" style) and whose crash line is the one-line
    failure: it is what pytest-xdist can send from a worker, so the short summary reads the
    same with ``-n`` as without. :class:`GradFailureRepr` where pytest's classes differ."""
    try:
        from _pytest._code.code import (
            ExceptionChainRepr,
            ReprEntry,
            ReprFileLocation,
            ReprTraceback,
        )

        crash = _Crash(outcome)
        lines = outcome.report.rstrip("\n").split("\n")
        entry = ReprEntry(lines=lines, reprfuncargs=None, reprlocals=None, reprfileloc=None,
                          style="value")
        return ExceptionChainRepr([(
            ReprTraceback(reprentries=[entry], extraline=None, style="value"),
            ReprFileLocation(path=str(crash.path), lineno=crash.lineno,
                             message=crash.message),
            None)])
    except (ImportError, TypeError):
        return GradFailureRepr(outcome)


class GradItem(pytest.Item):
    """One ``.grad`` file run as a test by gradcli."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_marker("grad")
        self.outcome = None

    def _shown_path(self) -> str:
        """The script's path as reports show it: relative to the rootdir."""
        try:
            return os.path.relpath(self.path, self.config.rootpath)
        except ValueError:  # another drive (Windows)
            return str(self.path)

    def runtest(self):
        from gradcli.cli.testing import run_grad_test
        s = _settings(self.config)
        outcome = run_grad_test(self._shown_path(), timeout=s["timeout"], limits=s["limits"],
                                seed=s["seed"], cwd=str(self.config.rootpath),
                                runner_name="pytest")
        self.outcome = outcome
        if outcome.stdout and not outcome.diff:
            self.add_report_section("call", "stdout", outcome.stdout)
        if outcome.stderr:
            self.add_report_section("call", "stderr", outcome.stderr)
        if not outcome.passed:
            raise GradTestFailed(outcome)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, GradTestFailed):
            return failure_repr(excinfo.value.outcome)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        """The script and, once it has failed, the script's failing line (0-based)."""
        line = 0
        if self.outcome is not None and not self.outcome.passed and self.outcome.line:
            line = self.outcome.line - 1
        return self.path, line, self.name
