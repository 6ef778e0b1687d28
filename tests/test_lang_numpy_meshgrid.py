"""np.meshgrid in gradcli programs (a decision-region grid fed to a model, as course
notebooks draw class boundaries): numpy's grids, and their size (the inputs' sizes
multiplied) checked before numpy builds them."""

from __future__ import annotations

import pytest
from process_helpers import assert_runs_as_python_does, run_program

pytest.importorskip("torch")




PROGRAM = """\
import numpy as np
import torch
torch.manual_seed(0)
xx1, xx2 = np.meshgrid(np.arange(-1.0, 1.0, 0.5), np.arange(0.0, 0.6, 0.2))
print(xx1)
print(xx2, xx1.shape)
grid = torch.tensor(np.array([xx1.ravel(), xx2.ravel()]).T).float()
net = torch.nn.Linear(2, 3)
z = np.argmax(net(grid).detach().numpy(), axis=1).reshape(xx1.shape)
print(z)
a, b = np.meshgrid([1, 2], [3, 4, 5], indexing="ij")
print(a, b)
s1, s2 = np.meshgrid(np.arange(3), np.arange(2), sparse=True)
print(s1, s2, s1.shape, s2.shape)
print(len(np.meshgrid(np.arange(2), np.arange(2), np.arange(2))))
"""


def test_grids_match_numpy_and_torch(tmp_path):
    assert_runs_as_python_does(tmp_path, PROGRAM)


@pytest.mark.parametrize("call", [
    "np.meshgrid(np.arange(1000), np.arange(1000))",
    "np.meshgrid(np.arange(50), np.arange(50), np.arange(50))",
])
def test_grid_over_the_limit_is_refused(tmp_path, call):
    out = run_program(tmp_path, "import numpy as np\ng = " + call + "\n", "--max-elements", "100000")
    assert out.returncode == 1
    assert "exceeds the limit of 100,000 elements" in out.stderr
    assert "Traceback" not in out.stderr


def test_sparse_grid_keeps_the_inputs_sizes(tmp_path):
    out = run_program(tmp_path, "import numpy as np\n"
               "a, b = np.meshgrid(np.arange(1000), np.arange(1000), sparse=True)\n"
               "print(a.shape, b.shape)\n", "--max-elements", "100000")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "(1, 1000) (1000, 1)\n"
