"""Golden-output conformance: every case prints exactly what real PyTorch 2.13 printed.

Cases are ``NAME.grad`` programs beside ``NAME.out`` (the stdout of
``python NAME.grad`` under PyTorch 2.13), from this repository's
``tests/conformance/cases`` and from the shared corpus
``<repo>/../shared/conformance/cases`` (skipped when absent). Each case is
run two ways, each in its own process so that nothing here can hide the real
torch from the rest of the test session:

(a) as plain Python with ``torch`` bound to the ``gradcli.torch`` facade;
(b) through the language: ``python -m gradcli run NAME.grad``.

Both must exit 0 with stdout equal to the golden, after object addresses
(``0x...``) are normalised, as shared/conformance/run.py does.
"""
from __future__ import annotations

import ast
import difflib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LOCAL_CASES = REPO / "tests" / "conformance" / "cases"
SHARED_CASES = Path(__file__).resolve().parents[2] / "shared" / "conformance" / "cases"
GENERATE = REPO / "tests" / "conformance" / "generate.py"
TIMEOUT = 60
ADDR = re.compile(r"0x[0-9a-fA-F]+")

# Binds `torch` (and the submodules a program may import) to gradcli's facade,
# then runs the case as __main__ — the same shim as shared/hooks/before-stop.
SHIM = """\
import importlib, runpy, sys
sys.modules["torch"] = importlib.import_module("gradcli.torch")
for sub in ("autograd", "autograd.functional", "autograd.function", "autograd.graph",
            "autograd.forward_ad", "func", "nn", "nn.functional", "optim", "optim.lr_scheduler"):
    try:
        sys.modules["torch." + sub] = importlib.import_module("gradcli.torch." + sub)
    except ImportError:
        pass
case = sys.argv[1]
sys.argv = [case]
runpy.run_path(case, run_name="__main__")
"""


def _cases() -> list:
    params = []
    for label, folder in (("local", LOCAL_CASES), ("shared", SHARED_CASES)):
        if folder.is_dir():
            for case in sorted(folder.glob("*.grad")):
                params.append(pytest.param(case, id=f"{label}/{case.stem}"))
    return params


CASES = _cases()


def normalise(text: str) -> str:
    return ADDR.sub("0x?", text).rstrip("\n")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.setdefault("NO_COLOR", "1")
    return env


def _run_and_compare(cmd: list[str], case: Path) -> None:
    expected = normalise(case.with_suffix(".out").read_text(encoding="utf-8"))
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, encoding="utf-8", errors="replace",
            timeout=TIMEOUT, env=_env(), cwd=str(case.parent), stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else exc.stdout
        pytest.fail(f"{case.name}: timed out after {TIMEOUT} s\nstdout so far:\n{out or ''}")
    got = normalise(proc.stdout)
    if got == expected and proc.returncode == 0:
        return
    diff = "\n".join(difflib.unified_diff(
        expected.splitlines(), got.splitlines(), "pytorch (expected)", "gradcli (got)",
        lineterm=""))
    stderr = proc.stderr.strip()
    if len(stderr) > 4000:
        stderr = "...\n" + stderr[-4000:]
    pytest.fail(
        f"{case.name}: exit code {proc.returncode}"
        f"{'' if got != expected else ' (stdout matches)'}\n"
        f"{diff or '(no stdout difference)'}\n--- stderr ---\n{stderr or '(empty)'}",
        pytrace=False,
    )


@pytest.mark.parametrize("case", CASES)
def test_facade_matches_pytorch(case: Path) -> None:
    """(a) The case as plain Python with torch = gradcli.torch prints what PyTorch printed."""
    _run_and_compare([sys.executable, "-c", SHIM, str(case)], case)


@pytest.mark.parametrize("case", CASES)
def test_gradcli_run_matches_pytorch(case: Path) -> None:
    """(b) `gradcli run case.grad` prints what PyTorch printed."""
    _run_and_compare([sys.executable, "-m", "gradcli", "run", str(case)], case)


def test_corpus_has_cases() -> None:
    assert any(LOCAL_CASES.glob("*.grad")), f"no cases in {LOCAL_CASES}"
    for case in LOCAL_CASES.glob("*.grad"):
        assert case.with_suffix(".out").exists(), f"{case.name} has no .out: run generate.py"


# SPEC 1.2/1.3: what a case may use, so that it stays valid for gradcli's language.
SPEC_BUILTINS = {
    "print", "len", "range", "float", "int", "bool", "str", "repr", "abs", "min", "max", "sum",
    "round", "list", "tuple", "enumerate", "zip", "sorted", "reversed", "all", "any",
    "isinstance", "Exception", "RuntimeError", "TypeError", "ValueError", "IndexError",
    "KeyError", "ZeroDivisionError", "AssertionError",
}
SPEC_MODULES = {"torch", "math", "torch.nn", "torch.nn.functional", "torch.autograd",
                "torch.autograd.functional"}
#: tutorial_* cases follow the curriculum (SPEC 1.2 as widened for it): classes, dicts and
#: sets, *args, the added builtins and modules, torch.__version__ and Tensor.numpy()
TUTORIAL_BUILTINS = {
    "dict", "set", "map", "filter", "iter", "next", "divmod", "pow", "issubclass", "type",
    "callable", "getattr", "setattr", "hasattr", "delattr", "id", "hash", "super", "property",
    "staticmethod", "classmethod",
}
TUTORIAL_MODULES = {"random", "numpy", "functools", "collections", "torch.optim",
                    "torch.autograd.function", "torch.autograd.graph",
                    "torch.autograd.forward_ad", "torch.func", "torch.functional",
                    "torch.accelerator", "torch.distributions"}
TUTORIAL_DUNDERS = {"__version__", "__init__", "__call__", "__repr__", "__str__", "__len__",
                    "__getitem__", "__iter__", "__next__"}
TUTORIAL_ALLOWED = (ast.Dict, ast.Set, ast.DictComp, ast.SetComp, ast.ClassDef, ast.Starred)
NOT_IN_SPEC = (ast.Dict, ast.Set, ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.ClassDef,
               ast.Starred, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr,
               ast.AsyncFunctionDef, ast.Match, ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift,
               ast.RShift, ast.Invert)


def spec_violations(source: str, tutorial: bool = False) -> list[str]:
    """Constructs outside SPEC 1.2/1.3 that a case must not use (a cheap static check).

    ``tutorial`` widens it to what tutorial_* cases may use (TUTORIAL_*): the rest of
    the checks (private attributes, imports, format(), the first line) hold for them too."""
    tree = ast.parse(source)
    not_in_spec = tuple(t for t in NOT_IN_SPEC if not (tutorial and t in TUTORIAL_ALLOWED))
    builtins = SPEC_BUILTINS | (TUTORIAL_BUILTINS if tutorial else set())
    modules = SPEC_MODULES | (TUTORIAL_MODULES if tutorial else set())
    private_ok = {"_version"} | (TUTORIAL_DUNDERS if tutorial else set())
    formatting = ("format", "format_map") if tutorial else ("format", "format_map", "numpy")
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.ClassDef) and tutorial:
            bound.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            if isinstance(node, ast.FunctionDef):
                bound.add(node.name)
            bound.update(a.arg for a in node.args.args + node.args.kwonlyargs)
            bound.update(a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    problems = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, not_in_spec):
            problems.append(f"line {line}: {type(node).__name__}")
        elif isinstance(node, ast.AugAssign) and not isinstance(
                node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            problems.append(f"line {line}: augmented {type(node.op).__name__}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and node.attr not in private_ok \
                and not (tutorial and node.attr.startswith("_saved_")):  # grad_fn._saved_self
            problems.append(f"line {line}: attribute {node.attr}")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                and node.id not in bound | builtins | {"True", "False", "None"}:
            problems.append(f"line {line}: name {node.id}")
        elif isinstance(node, ast.Import):
            problems += [f"line {line}: import {a.name}" for a in node.names
                         if a.name not in modules]
        elif isinstance(node, ast.ImportFrom) and node.module not in modules:
            problems.append(f"line {line}: from {node.module} import")
        elif isinstance(node, ast.ExceptHandler) and node.type is not None \
                and not isinstance(node.type, ast.Name):
            problems.append(f"line {line}: except with a non-name")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in formatting:
            problems.append(f"line {line}: .{node.func.attr}()")
    if not source.startswith("import torch"):
        problems.append("line 1: a case must start with `import torch`")
    return problems


@pytest.mark.parametrize("case", [p for p in CASES if "local/" in p.id])
def test_case_uses_only_the_spec_subset(case: Path) -> None:
    tutorial = case.stem.startswith(("tutorial_", "tutorial2_", "tut_"))  # (later rounds)
    assert spec_violations(case.read_text(encoding="utf-8"), tutorial=tutorial) == []


def test_tutorial_relaxation_keeps_the_other_checks() -> None:
    """Classes, dicts and random pass for tutorial cases only; private attributes, other
    imports and format() are refused for them as for every case."""
    allowed = ("import torch\nimport random\nclass M(torch.nn.Module):\n"
               "    def __init__(self, *args):\n        super().__init__()\n"
               "d = {'a': 1}\nprint(torch.__version__ >= '2.0', random.random())\n")
    assert spec_violations(allowed, tutorial=True) == []
    assert spec_violations(allowed) != []
    for bad in ("import torch\nimport os\n", "import torch\nprint(torch.__dict__)\n",
                "import torch\nprint('{}'.format(1))\n", "import torch\nprint(eval('1'))\n",
                "x = 1\n"):
        assert spec_violations(bad, tutorial=True) != [], bad


def test_goldens_are_fresh() -> None:
    """Every .out is what real PyTorch prints now (needs PyTorch 2.13 in this python).

    Re-running every case under PyTorch is most of the suite's time, so it happens only
    when a case, a golden or the PyTorch version changed since generate.py last found them
    all fresh (its hash in tests/conformance/FRESH.sha256, which the run then updates)."""
    spec = importlib.util.spec_from_file_location("conformance_generate", GENERATE)
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    if generate.stamp_is_current():
        return
    pytest.importorskip("torch")
    proc = subprocess.run(
        [sys.executable, str(GENERATE), "--check"], capture_output=True, text=True,
        timeout=1800, cwd=str(REPO),
    )
    if proc.returncode == 2:
        pytest.skip(proc.stderr.strip() or proc.stdout.strip())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert generate.stamp_is_current(), "generate.py --check passed but did not record it"
