"""bench/run.py still runs and still checks its peers' gradients (its timings are never
asserted: they live in the benchmark's own output)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_quick_small_ops_run_writes_json_with_checked_gradients(tmp_path):
    out = tmp_path / "w2.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "-k", "W2",
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(out.read_text())["W2 small ops (us per op)"]
    assert rows["gradcli"]["grad_ok"] is True
    assert rows["gradcli"]["total_us"] > 0 and rows["numpy"]["total_us"] > 0
    assert "gradcli/numpy" in proc.stdout


def _probe(fwd, bwd):
    return {"forward_s": fwd, "backward_s": bwd, "memory_bytes": 100, "backward_peak_bytes": 0,
            "grad": 1.0}


def test_w5_row_is_the_round_of_median_time_with_the_range():
    rounds = [_probe(5.0, 1.0), _probe(4.0, 1.0), {"error": "killed"}, _probe(9.0, 1.0)]
    row = bench._median_round(rounds)
    assert (row["forward_s"], row["backward_s"]) == (5.0, 1.0)
    assert (row["time_min_s"], row["time_max_s"], row["rounds"]) == (5.0, 10.0, 3)
    row["bytes_per_node"] = 1.0
    assert "over 3 rounds" in bench.fmt_row("gradcli", row)
    assert bench._median_round([{"error": "boom"}]) == {"error": "boom"}


def _quick(tmp_path, workload: str) -> dict:
    out = tmp_path / f"{workload}.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "-k", workload,
                           "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_quick_seed_loop_times_every_path_in_turn(tmp_path):
    rows = _quick(tmp_path, "W3")["W3 seed loop (us per run)"]
    for path in ("gradcli (python)", "gradcli run"):
        assert rows[path]["grad_ok"] is True and rows[path]["n"] >= 3
    assert rows["gradcli run"]["n"] == 2 * rows["gradcli (python)"]["n"]  # two a turn
    assert rows["numpy"]["median"] > 0


def test_quick_large_workloads_take_turns_in_live_processes(tmp_path):
    """Each peer's process answers every turn and its gradient is checked at the end."""
    results = _quick(tmp_path, "W4")
    for title in ("W4 elementwise 300x300 (ms)", "W4 matmul 128x128 (ms)"):
        rows = results[title]
        assert all("error" not in row for row in rows.values()), rows
        assert rows["gradcli"]["grad_ok"] is True
        assert rows["gradcli"]["n"] == rows["numpy"]["n"] == 4  # 2 turns of 2 timed runs
