"""Every package of the source tree is in pyproject's package list: an editable install
finds a package the list forgets, a real `pip install .` (CI, users) leaves it out."""

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "gradcli").rglob("__init__.py")}
    assert found - listed == set()
    assert listed - found == {"gradcli.grammar"}
