"""What `gradcli grad` / `gradcli run` import at start-up (issue 5, W1).

The one-shot commands start in about 1.2x the time of ``import numpy``; these
tests keep out the modules that once cost most of the rest: lark (with regex,
hashlib, logging: the grammar is precompiled), dataclasses (which pulls inspect),
json and typing (only --json and the typer app need them), importlib.resources
(the grammar text is not read). Modules the interpreter's ``site`` or numpy
already loaded do not count. Timings themselves live in bench/run.py.
"""
from __future__ import annotations

import os
import subprocess
import sys

AVOIDED = ("lark", "regex", "hashlib", "logging", "dataclasses", "json", "typing",
           "importlib.resources")

PROBE = """
import sys
before = set(sys.modules)
import numpy  # noqa: F401 -- what numpy loads is not gradcli's
before |= set(sys.modules)
from gradcli.cli.app import main
sys.argv = ["gradcli"] + sys.argv[1:]
try:
    main()
except SystemExit as e:
    code = e.code
new = sorted(m for m in sys.modules if m not in before)
print("CODE", code, file=sys.stderr)
print("NEW", " ".join(new), file=sys.stderr)
"""


def new_modules(*args: str, cwd=None) -> set:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env={**os.environ, "NO_COLOR": "1"})
    lines = proc.stderr.splitlines()
    assert [ln for ln in lines if ln.startswith("CODE")] == ["CODE 0"], proc.stderr[-2000:]
    line = [ln for ln in lines if ln.startswith("NEW")][-1]
    return set(line.split()[1:])


def _avoided(mods: set) -> set:
    return {m for m in mods if m.split(".")[0] in AVOIDED or m in AVOIDED}


def test_grad_start_up_imports_no_lark_dataclasses_json_or_typing():
    mods = new_modules("grad", "(x**2 * y.sin()).sum()", "--at", "x=[1,2,3]", "--at", "y=0.5")
    assert "gradcli.lang._lalr" in mods  # the probe did parse
    assert not _avoided(mods), sorted(_avoided(mods))


def test_run_start_up_imports_no_lark_dataclasses_json_or_typing(tmp_path):
    prog = tmp_path / "w1.grad"
    prog.write_text("import torch\nx = torch.ones(2, 2, requires_grad=True)\n"
                    "out = ((x + 2) * (x + 2) * 3).mean()\nout.backward()\nprint(x.grad)\n")
    mods = new_modules("run", str(prog))
    assert not _avoided(mods), sorted(_avoided(mods))


def test_parsing_writes_no_cache_file(tmp_path):
    # the grammar tables ship with the package: nothing is written under HOME or XDG dirs
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("GRADCLI_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-m", "gradcli", "grad", "(x * x).sum()", "--at",
                           "x=[1.,2.]"], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [p for p in tmp_path.rglob("*")] == []


GC_PROBE = """
import gc, sys
from gradcli.cli import app
pausing, during, after = [False], [], []
def on_gc(phase, info):
    if phase == "start":
        (during if pausing[0] else after).append(1)
gc.callbacks.append(on_gc)
def watched(real=app._import_engine_gc_paused):
    assert "numpy" not in sys.modules  # the heavy imports happen inside the pause
    pausing[0] = True
    real()
    pausing[0] = False
app._import_engine_gc_paused = watched
try:
    app.main(sys.argv[1:])
except SystemExit:
    pass
ran = len(after)
for _ in range(100000):  # cycles made after start-up are still collected
    a = []; a.append(a)
print("GC", len(during), gc.isenabled(), "numpy" in sys.modules, len(after) > ran,
      file=sys.stderr)
"""


def test_engine_commands_import_with_the_collector_paused_then_restore_it(tmp_path):
    prog = tmp_path / "p.grad"
    prog.write_text("x = 1\n")
    for args in (["grad", "x * 2", "--at", "x=1.0"], ["run", str(prog)], ["eval", "1"]):
        proc = subprocess.run([sys.executable, "-c", GC_PROBE, *args], capture_output=True,
                              text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
        line = [ln for ln in proc.stderr.splitlines() if ln.startswith("GC")]
        assert line == ["GC 0 True True True"], proc.stderr[-2000:]


def test_the_pause_keeps_a_disabled_collector_disabled():
    import gc

    from gradcli.cli.app import _import_engine_gc_paused

    gc.disable()
    try:
        _import_engine_gc_paused()
        assert not gc.isenabled()
    finally:
        gc.enable()
    _import_engine_gc_paused()
    assert gc.isenabled()


def test_help_of_engine_commands_imports_no_engine():
    for cmd in ("grad", "run", "eval"):
        mods = new_modules(cmd, "--help")
        assert "gradcli.engine.tensor" not in mods and "gradcli.lang.session" not in mods, cmd
