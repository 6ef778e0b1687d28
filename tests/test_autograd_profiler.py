"""torch.autograd.profiler records what PyTorch's does, compared with PyTorch: the op
events (names as ATen's, nesting, record_function ranges, input shapes, backward nodes),
key_averages, the table's layout, and the profiler-state functions. Times differ by
nature; everything else read from a profile is compared. Also: outside a profile no
function is swapped, and a .grad program cannot write a trace file."""

from __future__ import annotations

import subprocess
import sys

import pytest
from scenario_log import same

import gradcli.torch as gt
from gradcli.engine import profiler as recorder

torch = pytest.importorskip("torch")


def _top(p) -> list:
    return [e.name for e in p.function_events if e.cpu_parent is None]


def test_forward_ops_are_named_as_aten_ops_in_call_order():
    def scenario(t, log):
        x = t.ones(3, 4)
        with t.autograd.profiler.profile() as p:
            log.append(t.autograd._profiler_enabled())
            y = x * 2 + 4
            z = t.mul(y, y).sum()
            y - 1
            y / 3
            t.exp(z)
            x.t()
        log.append(t.autograd._profiler_enabled())
        log.append(_top(p))
        log.append([e.count for e in p.function_events][:3])

    log = same(scenario)
    assert log[2] == str(["aten::mul", "aten::add", "aten::mul", "aten::sum", "aten::sub",
                      "aten::div", "aten::exp", "aten::t"])


def test_record_function_ranges_hold_the_ops_run_inside_them():
    def scenario(t, log):
        prof = t.autograd.profiler
        x = t.ones(2, 2)

        @prof.record_function("decorated")
        def f(a):
            return a + 1

        with prof.profile() as p:
            with prof.record_function("outer"):
                y = x * 2
                with prof.record_function("inner"):
                    y = y - 1
            y = y / 1
            f(x)
        log.append(_top(p))
        for e in p.function_events:
            if e.name in ("outer", "inner", "decorated"):
                log.append((e.name, [c.name for c in e.cpu_children], e.count))
        log.append("decorated" in str(p))

    log = same(scenario)
    assert log[0] == str(["outer", "aten::div", "decorated"])


def test_legacy_record_function_ops_open_and_close_a_range():
    def scenario(t, log):
        x = t.ones(3)
        with t.autograd.profiler.profile() as p:
            handle = t.ops.profiler._record_function_enter("bar", None)
            x * 2
            t.ops.profiler._record_function_exit(handle)
        bar = next(e for e in p.function_events if e.name == "bar")
        log.append("aten::mul" in [c.name for c in bar.cpu_children])  # (PyTorch's also
        log.append(bar.count)  # has the aten::empty its record_function op makes)

    assert same(scenario)[0] == "True"


def test_record_shapes_lists_every_argument_of_linear():
    def scenario(t, log):
        layer = t.nn.Linear(4, 3)
        x = t.ones(5, 4)
        with t.autograd.profiler.profile(record_shapes=True) as p:
            layer(x)
            t.nn.functional.linear(x, t.ones(2, 4))
        log.append([e.input_shapes for e in p.function_events if e.name == "aten::linear"])
        with t.autograd.profiler.profile() as p:
            layer(x)
        log.append([e.input_shapes for e in p.function_events if e.name == "aten::linear"])

    assert same(scenario)[0] == "[[[5, 4], [3, 4], [3]], [[5, 4], [2, 4], []]]"


def test_backward_nodes_are_recorded_as_the_engine_evaluates_them():
    def scenario(t, log):
        w = t.ones(2, 3, requires_grad=True)
        x = t.ones(4, 3)
        with t.autograd.profiler.profile() as p:
            (x * w.sum()).sum().backward()
        names = [e.name for e in p.function_events]
        evaluated = [n for n in names if n.startswith("autograd::engine::evaluate_function")]
        log.append(evaluated)
        for e in p.function_events:
            if e.name in evaluated:
                log.append(e.cpu_children[0].name)

    log = same(scenario)
    assert "autograd::engine::evaluate_function: MulBackward0" in log[0]


def test_key_averages_count_calls_per_name_in_first_seen_order():
    def scenario(t, log):
        x = t.ones(3)
        with t.autograd.profiler.profile() as p:
            for _ in range(3):
                x = x * 2 + 1
            x.sum()
        top = set(_top(p))  # (PyTorch's ops call more ATen ops inside than gradcli's)
        log.append([(a.key, a.count) for a in p.key_averages() if a.key in top])
        log.append(p.total_average().key)
        by_shape = p.function_events.key_averages(group_by_input_shapes=True)
        log.append(sorted((a.key, a.input_shapes) for a in by_shape if a.key in top))

    assert same(scenario)[0] == str([("aten::mul", 3), ("aten::add", 3), ("aten::sum", 1)])


def _layout(table: str) -> list:
    """A table's lines with the numbers blanked (times differ between any two runs)."""
    import re

    return [" ".join(re.sub(r"-?[0-9.]+(us|ms|s|%)|NaN", "#", line).split()).strip("-= ")
            for line in table.splitlines()]  # (column widths follow the names)


def test_the_table_has_pytorchs_columns_header_and_footer():
    def scenario(t, log):
        x = t.ones(4)
        with t.autograd.profiler.profile(record_shapes=True) as p:
            t.einsum("i->", x)
            x * 3
        log.append(str(p) == p.table())
        log += _layout(p.key_averages().table(sort_by="count", row_limit=10))[:3]
        log.append(_layout(p.table(header="TEST", top_level_events_only=True))[:6])
        table = _layout(p.key_averages(group_by_input_shape=True).table())
        log.append(table[1])
        log.append(table[-1].split(":")[0])

    same(scenario)


def test_time_formatting_and_event_arithmetic():
    def scenario(t, log):
        util = sys.modules[t.autograd.profiler_util.__name__]
        log.append([util._format_time(v) for v in (0.5, 999.0, 1234.5, 2.5e6)])
        a = util.FunctionEvent(id=1, name="f", thread=0, start_us=10, end_us=15)
        b = util.FunctionEvent(id=2, name="f", thread=0, start_us=20, end_us=30)
        avg = util.FunctionEventAvg()
        avg.add(a)
        avg.add(b)
        avg.add(avg)
        log.append((avg.key, avg.count, avg.cpu_time_total, avg.self_cpu_time_total, avg.cpu_time))
        events = util.EventList([
            util.FunctionEvent(id=1, name="", thread=0, start_us=0, end_us=4),
            util.FunctionEvent(id=2, name="", thread=0, start_us=1, end_us=2),
            util.FunctionEvent(id=3, name="", thread=1, start_us=0, end_us=1)])
        events._populate_cpu_children()
        log.append([[c.id for c in e.cpu_children] for e in events])
        log.append(str(util.EventList([])))

    same(scenario)


def test_profile_state_functions_and_a_nested_profile():
    def scenario(t, log):
        log.append(t.autograd.kineto_available())
        p = t.autograd.profiler.profile()
        log.append(str(p))
        x = t.ones(2)
        with p:
            with t.autograd.profiler.profile() as inner:
                x + 1
        log.append(_top(p))
        log.append(_top(inner))
        log.append(t.autograd._profiler_enabled())

    same(scenario)


def test_outside_a_profile_nothing_is_swapped_or_recorded():
    before = (gt.Tensor.__mul__, gt.mul, gt.nn.functional.linear)
    with gt.autograd.profiler.profile():
        assert gt.Tensor.__mul__ is not before[0]
        assert gt.nn.functional.linear is not before[2]
    assert (gt.Tensor.__mul__, gt.mul, gt.nn.functional.linear) == before
    assert recorder.ACTIVE[0] is None
    with gt.autograd.profiler.record_function("nothing records this"):
        gt.ones(2) * 2  # no profile: a range is a no-op
    assert recorder.ACTIVE[0] is None


def test_an_error_inside_the_block_still_restores_every_function():
    before = gt.Tensor.__add__
    with pytest.raises(RuntimeError):
        with gt.autograd.profiler.profile():
            gt.ones(2) + gt.ones(3)
    assert gt.Tensor.__add__ is before and recorder.ACTIVE[0] is None


def test_a_program_profiles_but_cannot_write_a_trace(tmp_path):
    target = tmp_path / "trace.json"
    prog = tmp_path / "prof.grad"
    prog.write_text(
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "with torch.autograd.profiler.profile() as p:\n"
        "    y = (x * 3).sum()\n"
        "print([e.name for e in p.function_events][:2])\n"
        f"p.export_chrome_trace({str(target)!r})\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)
    assert "['aten::mul', 'aten::sum']" in proc.stdout
    assert "export_chrome_trace is not supported by gradcli" in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
    assert not target.exists()


def test_a_disabled_or_unfinished_profile_has_no_events():
    def scenario(t, log):
        with t.autograd.profiler.profile(enabled=False) as p:
            t.ones(2) * 2
        log.append(p)
        idle = t.autograd.profiler.profile()
        log.append(str(idle))
        log.append(len(idle.function_events))
        log.append(len(idle.key_averages()))
        with t.autograd.profiler.profile() as running:
            t.ones(2) * 2
            log.append(len(running.function_events))
        log.append(_top(running))

    same(scenario)
