"""torch.profiler over gradcli's recorder, compared with PyTorch: schedules (wait,
warmup, active, repeat, skip_first), the steps each cycle records and hands to
on_trace_ready, ProfilerStep ranges, activities, record_function; and a .grad program
using it (without exporting a trace)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from scenario_log import same_recording_warnings

torch = pytest.importorskip("torch")

WATCHED = ("ProfilerStep*", "aten::mul", "aten::add", "blk")


@pytest.mark.parametrize("kwargs", [
    {"wait": 1, "warmup": 1, "active": 2, "repeat": 1},
    {"wait": 0, "warmup": 0, "active": 1, "repeat": 2, "skip_first": 1},
    {"wait": 2, "warmup": 1, "active": 1},
])
def test_schedules_and_the_cycles_they_save(kwargs):
    def scenario(t, log):
        prof = t.profiler
        s = prof.schedule(**kwargs)
        log.append([s(i).name for i in range(9)])
        seen = []
        x = t.ones(3)
        with prof.profile(activities=[prof.ProfilerActivity.CPU], schedule=s,
                          on_trace_ready=lambda p: seen.append(
                              [(e.key, e.count) for e in p.key_averages() if e.key in WATCHED])) as p:
            for i in range(8):
                x = x * 2
                if i % 3 == 0:
                    x = x + 1
                p.step()
        log.append(seen)
        log.append(p.step_num)

    same_recording_warnings(scenario)


def test_without_a_schedule_the_whole_block_is_recorded():
    def scenario(t, log):
        prof = t.profiler
        log.append((str(prof.ProfilerActivity.CPU), sorted(map(str, prof.supported_activities()))))
        x = t.ones(2)
        with prof.profile(record_shapes=True) as q:
            with prof.record_function("blk"):
                x + 1
            x * 3
        log.append([e.name for e in q.events() if e.cpu_parent is None])
        log.append([(e.key, e.count) for e in q.key_averages() if e.key in WATCHED])
        log.append([e.input_shapes for e in q.events() if e.name == "aten::mul"])

    same_recording_warnings(scenario)


def test_a_program_uses_torch_profiler(tmp_path):
    prog = tmp_path / "prof.grad"
    prog.write_text(
        "import torch\n"
        "from torch.profiler import profile, record_function\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "with profile() as p:\n"
        "    with record_function('fwd'):\n"
        "        y = (x * 3).sum()\n"
        "print([e.key for e in p.key_averages()][:3])\n"
        "p.export_chrome_trace('trace.json')\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "['fwd', 'aten::mul', 'aten::sum']" in proc.stdout, proc.stderr
    assert "export_chrome_trace is not supported by gradcli" in proc.stderr
    assert not (tmp_path / "trace.json").exists()
