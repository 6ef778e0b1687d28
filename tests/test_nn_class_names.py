"""nn's modules, Parameter, the optimizers and the schedulers name PyTorch's modules as
theirs, so `type(m)` prints as PyTorch prints it, in plain Python and under `gradcli run`
(a tutorial printing `[type(m) for m in net.modules()]`); a whole module saved with
torch.save loads back (and loads in PyTorch)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

NN = ("ELU GELU Hardtanh LeakyReLU LogSoftmax ReLU ReLU6 Sigmoid SiLU Softmax Softplus Tanh "
      "ModuleDict ModuleList ParameterDict ParameterList Sequential Dropout Dropout1d Dropout2d "
      "Dropout3d Flatten Unflatten Bilinear Identity Linear BCELoss BCEWithLogitsLoss "
      "CrossEntropyLoss HuberLoss KLDivLoss L1Loss MSELoss NLLLoss SmoothL1Loss Module "
      "AdaptiveAvgPool2d AvgPool2d BatchNorm1d BatchNorm2d BatchNorm3d Conv1d Conv2d Embedding "
      "LayerNorm MaxPool1d MaxPool2d RNN LSTM GRU RNNCell LSTMCell GRUCell Parameter").split()
OPTIM = "SGD Adam AdamW RMSprop Adagrad Optimizer".split()
SCHEDULERS = ("LRScheduler StepLR MultiStepLR ExponentialLR CosineAnnealingLR LambdaLR "
              "ReduceLROnPlateau").split()


@pytest.mark.parametrize("name", NN)
def test_nn_class_prints_as_pytorch(name):
    assert repr(getattr(gt.nn, name)) == repr(getattr(torch.nn, name))


@pytest.mark.parametrize("name", OPTIM)
def test_optimizer_class_prints_as_pytorch(name):
    assert repr(getattr(gt.optim, name)) == repr(getattr(torch.optim, name))


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_class_prints_as_pytorch(name):
    assert repr(getattr(gt.optim.lr_scheduler, name)) == \
        repr(getattr(torch.optim.lr_scheduler, name))


def test_whole_module_round_trips_through_save():
    net = gt.nn.Sequential(gt.nn.Linear(2, 3), gt.nn.ReLU(), gt.nn.BatchNorm1d(3))
    buf = io.BytesIO()
    gt.save(net, buf)
    buf.seek(0)
    back = gt.load(buf, weights_only=False)
    assert type(back) is gt.nn.Sequential and type(back[0]) is gt.nn.Linear
    assert repr(back) == repr(net)
    assert gt.equal(back[0].weight, net[0].weight)
    buf.seek(0)
    ref = torch.load(buf, weights_only=False)  # PyTorch finds its own classes
    assert type(ref[0]) is torch.nn.Linear


PROGRAM = """\
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2))
        self.w = nn.Parameter(torch.ones(1))
net = Net()
print([type(m) for m in net.modules()])
print(type(net.w), type(torch.optim.SGD(net.parameters(), lr=0.1)))
print(type(torch.optim.lr_scheduler.StepLR(torch.optim.Adam(net.parameters()), 2)))
print(type(net.body[0]))
"""


def test_run_and_pytorch_print_the_same_types(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    env = {**os.environ, "NO_COLOR": "1"}
    ours = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert ours.returncode == 0, ours.stderr
    ref = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=120, env=env)
    assert ref.returncode == 0, ref.stderr
    assert ours.stdout == ref.stdout
    assert "torch.nn.modules.normalization.LayerNorm" in ours.stdout
