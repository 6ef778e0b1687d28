"""np.bincount in gradcli programs (class counts of a label array or tensor, as course
notebooks print them): numpy's values, and its result's size (the largest label + 1, or
minlength) checked before numpy allocates it, so a tiny input cannot ask for a huge array."""

from __future__ import annotations

import numpy as np
import pytest
from process_helpers import assert_runs_as_python_does, run_program

torch = pytest.importorskip("torch")




PROGRAM = """\
import numpy as np
import torch
labels = np.array([[0.5, 1.0, 0], [1.5, -1.0, 1], [2.0, 0.0, 1], [0.0, 3.0, 0]])[:, 2].astype(np.int64)
print(np.bincount(labels))
print(np.bincount(torch.tensor([2, 0, 2, 3])))
print(np.bincount(np.array([1, 1, 4]), minlength=7))
print(np.bincount(np.array([0, 1, 1]), weights=np.array([0.5, 0.25, 2.0])))
print(np.bincount(np.array([], dtype=np.int64)), np.bincount(labels).dtype)
"""


def test_counts_match_numpy_and_torch(tmp_path):
    assert_runs_as_python_does(tmp_path, PROGRAM)


@pytest.mark.parametrize("call", [
    "np.bincount(np.array([10 ** 9]))",
    "np.bincount(np.array([1]), minlength=10 ** 9)",
    "np.bincount(torch.tensor([5000000]))",
])
def test_large_result_from_a_small_input_is_refused(tmp_path, call):
    out = run_program(tmp_path, "import numpy as np\nimport torch\ny = " + call + "\n",
               "--max-elements", "100000")
    assert out.returncode == 1
    assert "exceeds the limit of 100,000 elements" in out.stderr
    assert "Traceback" not in out.stderr


def test_numpy_errors_stay_numpys(tmp_path):
    out = run_program(tmp_path, "import numpy as np\nnp.bincount(np.array([-1, 2]))\n")
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    with pytest.raises(ValueError) as err:
        np.bincount(np.array([-1, 2]))
    assert str(err.value) in out.stderr


def test_result_is_a_program_array_not_a_way_out(tmp_path):
    """The counts are an array of the allow-list: its private attributes stay closed."""
    out = run_program(tmp_path, "import numpy as np\nc = np.bincount(np.array([0, 1]))\n"
               "print(c.__class__)\n")
    assert out.returncode == 2
    assert "not allowed" in out.stderr
