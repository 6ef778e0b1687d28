"""Which ``.grad`` files are tests: one rule for ``gradcli test`` and the pytest plugin.

A file found by searching a directory is a test when its name matches one of the
``grad_files`` patterns (default ``test_*.grad``), read from the same ini option
pytest reads (``pytest.ini``, ``[tool.pytest.ini_options]`` of ``pyproject.toml``,
``tox.ini``'s ``[pytest]``, ``setup.cfg``'s ``[tool:pytest]``), found as pytest
finds its configuration: in the current directory or the nearest parent that has
one. A file named on the command line runs whatever its name. Other ``.grad``
files (helpers a test imports) are not run. Directories are skipped as pytest skips
them: ``__pycache__``, virtual environments (a ``pyvenv.cfg`` inside) and the
``norecursedirs`` patterns of the same configuration (pytest's default list unless set).

This module is imported by the pytest plugin at start-up: keep it small.
"""

from __future__ import annotations

import configparser
import fnmatch
import os
import shlex

DEFAULT_PATTERNS = ("test_*.grad",)
#: pytest's default ``norecursedirs``
DEFAULT_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv",
                     "{arch}")


def matches(path, patterns) -> bool:
    """Whether ``path`` matches a pattern: a bare pattern matches the file name, a
    pattern with ``/`` the end of the path (as pytest's ``python_files``)."""
    path = os.fspath(path)
    name = os.path.basename(path)
    full = path.replace(os.sep, "/")
    for pat in patterns:
        if "/" in pat:
            if fnmatch.fnmatch(full, pat if pat.startswith("*") else "*/" + pat.lstrip("/")):
                return True
        elif fnmatch.fnmatch(name, pat):
            return True
    return False


def _from_pyproject(path, key):
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            return None
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, ValueError):
        return None
    section = data.get("tool", {}).get("pytest", {}).get("ini_options")
    if section is None:
        return None
    value = section.get(key)
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list) else tuple(shlex.split(str(value)))


def _from_ini(path, section, key):
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, configparser.Error, UnicodeDecodeError):
        return None
    if not parser.has_section(section):
        return None
    value = parser.get(section, key, fallback=None)
    return () if value is None else tuple(shlex.split(value))


def _governing(key: str, start=None):
    """``(folder, value)``: the pytest configuration file that governs ``start`` (default:
    the current directory), found as pytest finds it, and the value it gives the ini
    option ``key`` (``()`` when unset); ``(None, None)`` when there is none."""
    here = os.path.abspath(start or os.getcwd())
    while True:
        for name, read in (("pytest.ini", lambda p: _from_ini(p, "pytest", key)),
                           ("pyproject.toml", lambda p: _from_pyproject(p, key)),
                           ("tox.ini", lambda p: _from_ini(p, "pytest", key)),
                           ("setup.cfg", lambda p: _from_ini(p, "tool:pytest", key))):
            candidate = os.path.join(here, name)
            if os.path.isfile(candidate):
                found = read(candidate)
                if found is not None:  # this file configures pytest: it decides
                    return here, found
        parent = os.path.dirname(here)
        if parent == here:
            return None, None
        here = parent


def configured(key: str, default: tuple, start=None) -> tuple:
    """The value of the ini option ``key`` (a list of words) in the pytest configuration
    that governs ``start`` (default: the current directory), or ``default`` when that
    configuration does not set it (or there is none)."""
    return _governing(key, start)[1] or default


def default_paths() -> list:
    """What to search when no path is given: pytest's ``testpaths`` (glob patterns, from
    the configuration's folder) when run in that folder, as pytest does; else ``.``."""
    import glob

    folder, testpaths = _governing("testpaths")
    if not testpaths or os.path.abspath(os.getcwd()) != folder:
        return ["."]
    found = [p for pattern in testpaths for p in sorted(glob.glob(pattern, recursive=True))]
    return found or ["."]


def configured_patterns(start=None) -> tuple:
    """The ``grad_files`` patterns that govern ``start`` (default ``test_*.grad``)."""
    return configured("grad_files", DEFAULT_PATTERNS, start)


def skipped_dir(path, norecurse) -> bool:
    """Whether a directory met while searching is left out, as pytest leaves it out:
    ``__pycache__``, a virtual environment, or a name matching ``norecurse``."""
    path = os.fspath(path)
    name = os.path.basename(os.path.normpath(path))
    if name == "__pycache__" or os.path.isfile(os.path.join(path, "pyvenv.cfg")):
        return True
    return any(fnmatch.fnmatch(name, pat) if "/" not in pat and os.sep not in pat
               else matches(path, (pat,)) for pat in norecurse)


def grad_files_below(folder) -> list:
    """Every ``.grad`` file below ``folder`` (tests and helpers alike), in sorted order,
    with directories skipped as the test search skips them: what `gradcli check DIR`
    checks."""
    norecurse = configured("norecursedirs", DEFAULT_NORECURSE, folder)
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not skipped_dir(os.path.join(root, d), norecurse))
        found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".grad"))
    return found
