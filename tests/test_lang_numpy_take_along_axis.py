"""np.take_along_axis in gradcli programs (the torch.func tutorial's NumpySort): numpy's
values, and the size of a broadcast result checked before numpy allocates it."""

from __future__ import annotations

import numpy as np
import pytest
from process_helpers import run_program

PROGRAM = """\
import numpy as np
x = np.array([[3.0, 1.0, 2.0], [0.5, 2.5, 1.5]])
ind = np.argsort(x, axis=1)
print(np.take_along_axis(x, ind, axis=1))
print(np.take_along_axis(x, np.argsort(x, axis=0), 0))
print(np.take_along_axis(x, np.array([[0], [2]]), 1))
print(np.take_along_axis(np.array([4, 5, 6]), np.array([2, 0]), None))
"""


def test_values_match_numpy(tmp_path):
    out = run_program(tmp_path, PROGRAM)
    assert out.returncode == 0, out.stderr
    x = np.array([[3.0, 1.0, 2.0], [0.5, 2.5, 1.5]])
    expected = "\n".join(str(v) for v in (
        np.take_along_axis(x, np.argsort(x, axis=1), axis=1),
        np.take_along_axis(x, np.argsort(x, axis=0), 0),
        np.take_along_axis(x, np.array([[0], [2]]), 1),
        np.take_along_axis(np.array([4, 5, 6]), np.array([2, 0]), None))) + "\n"
    assert out.stdout == expected


@pytest.mark.parametrize("call", [
    "np.take_along_axis(np.ones((1000, 1)), np.zeros((1, 1000), dtype=np.int64), 1)",
    "np.take_along_axis(np.ones((1, 1000)), np.zeros((1000, 1), dtype=np.int64), 0)",
])
def test_broadcast_result_over_the_limit_is_refused(tmp_path, call):
    out = run_program(tmp_path, "import numpy as np\ny = " + call + "\n", "--max-elements", "100000")
    assert out.returncode == 1
    assert "exceeds the limit of 100,000 elements" in out.stderr
    assert "Traceback" not in out.stderr


def test_numpy_errors_stay_numpys(tmp_path):
    out = run_program(tmp_path, "import numpy as np\n"
               "np.take_along_axis(np.ones((2, 2)), np.zeros(2, dtype=np.int64), 1)\n")
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    try:
        np.take_along_axis(np.ones((2, 2)), np.zeros(2, dtype=np.int64), 1)
    except ValueError as e:
        assert str(e) in out.stderr
