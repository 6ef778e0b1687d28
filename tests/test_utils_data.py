"""torch.utils.data as the from-scratch tutorials use it (d2l's load_array, a training loop
over a DataLoader): the batches, their order after manual_seed (shuffled with PyTorch's
random numbers, drawn at PyTorch's moments), the collate rules and random_split, each
compared with real PyTorch, in plain Python and under `gradcli run`."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402
from gradcli.torch.utils import data as gdata  # noqa: E402


def _libs():
    import torch.utils.data as tdata

    return (torch, tdata), (gt, gdata)


def _same(a, b):
    """Equal nested results: tensors by printed form and dtype, the rest by value."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, gt.Tensor)
        assert str(a) == str(b)
        return
    assert type(a).__name__ == type(b).__name__, (a, b)
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    else:
        assert a == b


def _run_both(build):
    results = []
    for lib, data in _libs():
        lib.manual_seed(3)
        results.append(build(lib, data))
    _same(*results)
    return results


def _features(lib):
    return lib.arange(20.0).reshape(10, 2), lib.arange(10)


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("batch_size,drop_last", [(3, False), (3, True), (5, False), (1, False)])
def test_batches_and_their_order_match(shuffle, batch_size, drop_last):
    def build(lib, data):
        loader = data.DataLoader(data.TensorDataset(*_features(lib)), batch_size=batch_size,
                                 shuffle=shuffle, drop_last=drop_last)
        epochs = [[b for b in loader] for _ in range(2)]
        return [len(loader), epochs, lib.randn(3)]  # (the global generator after the passes)

    _run_both(build)


def test_generator_argument_drives_the_shuffle():
    def build(lib, data):
        g = lib.Generator().manual_seed(7)
        loader = data.DataLoader(data.TensorDataset(*_features(lib)), batch_size=4,
                                 shuffle=True, generator=g)
        return [list(loader), list(loader), lib.randn(2), g.initial_seed()]

    _run_both(build)


def test_d2l_load_array_training_loop():
    """d2l's concise linear regression: the losses each epoch print as PyTorch's."""
    def build(lib, data):
        features = lib.normal(0, 1, (100, 2))
        labels = features @ lib.tensor([2.0, -3.4]) + 4.2
        loader = data.DataLoader(data.TensorDataset(features, labels.reshape(-1, 1)), 10,
                                 shuffle=True)
        net = lib.nn.Sequential(lib.nn.Linear(2, 1))
        net[0].weight.data.normal_(0, 0.01)
        net[0].bias.data.fill_(0)
        trainer = lib.optim.SGD(net.parameters(), lr=0.03)
        loss = lib.nn.MSELoss()
        shown = []
        for _ in range(2):
            for X, y in loader:
                out = loss(net(X), y)
                trainer.zero_grad()
                out.backward()
                trainer.step()
            shown.append(f"{loss(net(features), labels.reshape(-1, 1)):.4f}")
        return shown

    _run_both(build)


def test_collate_rules():
    samples = [
        [(1, 2.5, "a"), (3, 4.5, "b")],
        [{"x": 1.0, "y": [1, 2]}, {"x": 2.0, "y": [3, 4]}],
        [[True, 2], [False, 3]],
    ]
    for batch in samples:
        got = gdata.default_collate(batch)
        import torch.utils.data as tdata

        _same(tdata.default_collate(batch), got)


def test_collate_refuses_ragged_lists():
    import torch.utils.data as tdata

    with pytest.raises(RuntimeError) as ref:
        tdata.default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError) as got:
        gdata.default_collate([[1, 2], [3]])
    assert str(got.value) == str(ref.value)


def test_random_split_and_subset():
    def build(lib, data):
        ds = data.TensorDataset(lib.arange(10.0))
        parts = data.random_split(ds, [7, 3])
        fracs = data.random_split(range(10), [0.5, 0.3, 0.2],
                                  generator=lib.Generator().manual_seed(1))
        return [[len(p) for p in parts], [p[0] for p in parts], [list(p) for p in fracs],
                type(parts[0]).__name__]

    _run_both(build)


def test_class_names_match():
    for name in ("Dataset", "TensorDataset", "DataLoader", "Subset", "RandomSampler",
                 "SequentialSampler", "BatchSampler"):
        import torch.utils.data as tdata

        assert repr(getattr(gdata, name)) == repr(getattr(tdata, name))
    loader = gdata.DataLoader(gdata.TensorDataset(gt.ones(2)))
    import torch.utils.data as tdata

    ref = tdata.DataLoader(tdata.TensorDataset(torch.ones(2)))
    assert repr(type(iter(loader))) == repr(type(iter(ref)))


def test_errors_match():
    import torch.utils.data as tdata

    for lib, data in ((torch, tdata), (gt, gdata)):
        with pytest.raises(AssertionError, match="Size mismatch between tensors"):
            data.TensorDataset(lib.ones(3), lib.ones(2))
        with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
            data.DataLoader([1, 2], sampler=data.SequentialSampler([1, 2]), shuffle=True)
        with pytest.raises(ValueError, match="Sum of input lengths"):
            data.random_split(range(4), [1, 2])


PROGRAM = """\
import torch
from torch.utils.data import Dataset, DataLoader, TensorDataset

class Squares(Dataset):
    def __init__(self, n):
        self.n = n
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        return torch.tensor([float(i)]), i * i

torch.manual_seed(0)
for x, y in DataLoader(Squares(7), batch_size=3, shuffle=True):
    print(x.flatten(), y)
ds = TensorDataset(torch.arange(6.0).reshape(3, 2), torch.tensor([0, 1, 0]))
print(len(ds), ds[1])
loader = DataLoader(ds, batch_size=2)
print(len(loader), next(iter(loader)))
print(type(loader), torch.randn(2))
"""


def test_programs_under_gradcli_run_and_plain_python(tmp_path):
    prog = tmp_path / "loader.py"
    prog.write_text(PROGRAM)
    plain = tmp_path / "loader_plain.py"
    plain.write_text(PROGRAM.replace("import torch\n", "import gradcli.torch as torch\n")
                     .replace("from torch.utils.data", "from gradcli.torch.utils.data"))
    outs = [subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            for cmd in ([sys.executable, str(prog)], [sys.executable, str(plain)],
                        [sys.executable, "-m", "gradcli", "run", str(prog)])]
    assert outs[0].returncode == 0, outs[0].stderr
    assert "torch.utils.data.dataloader.DataLoader" in outs[0].stdout
    assert outs[1].stdout == outs[0].stdout, outs[1].stderr
    assert outs[2].stdout == outs[0].stdout, outs[2].stderr


@pytest.mark.parametrize("source,message", [
    ("import torch.utils.data as d\nprint(d.PUBLIC)", "PUBLIC"),
    ("from torch.utils.data import PUBLIC", "PUBLIC"),
    ("from torch.utils.data import math", "math"),
    ("import torch.utils.data as d\nprint(d.dtypes)", "dtypes"),
    ("from torch.utils.data import _draw_seed", "'_draw_seed'"),
    ("import torch\nit = iter(torch.utils.data.DataLoader([1, 2]))\nprint(it._loader)",
     "'_loader'"),
    ("import torch\nl = torch.utils.data.DataLoader([1, 2])\nprint(l.collate_fn.__globals__)",
     "'__globals__'"),
    ("import torch\nl = torch.utils.data.DataLoader([1], num_workers=2)", "num_workers=0"),
    ("from torch.utils.data.sampler import PUBLIC", "PUBLIC"),
    ("import torch.utils.data.sampler as s\nprint(s._torch)", "'_torch'"),
    ("import torch.utils.data as d\nprint(d.sampler.dtypes)", "dtypes"),
])
def test_sandbox_keeps_the_module_internals_out_of_reach(tmp_path, source, message):
    """A program reaches the loader's public API only: not the module's imports and
    helpers, not private attributes, not a function's globals; no worker processes."""
    prog = tmp_path / "attack.py"
    prog.write_text(source + "\n")
    out = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_subset_random_sampler_as_cs231n_uses_it():
    """CS231n: DataLoader(ds, batch_size, sampler=sampler.SubsetRandomSampler(range(n)))."""
    def build(lib, data):
        ds = data.TensorDataset(*_features(lib))
        train = data.DataLoader(ds, batch_size=3, sampler=data.sampler.SubsetRandomSampler(range(7)))
        val = data.DataLoader(ds, batch_size=3,
                              sampler=data.SubsetRandomSampler(range(7, 10),
                                                               generator=lib.Generator().manual_seed(2)))
        return [list(train), list(val), list(train), lib.randn(2), len(train)]

    _run_both(build)


_STREAM_PROGRAM = """
import torch
from torch.utils.data import DataLoader, IterableDataset, WeightedRandomSampler, TensorDataset
from torch.utils.data import get_worker_info
torch.manual_seed(0)
class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n
    def __iter__(self):
        return iter([torch.tensor([float(i), float(i * i)]) for i in range(self.n)])
    def __len__(self):
        return self.n
dl = DataLoader(Stream(7), batch_size=3)
print(len(dl))
for b in dl:
    print(b)
for b in DataLoader(Stream(7), batch_size=3, drop_last=True):
    print(b.shape)
print(len(DataLoader(Stream(7), batch_size=3, drop_last=True)))
for b in DataLoader(Stream(2), batch_size=None):
    print(b)
for b in DataLoader(Stream(2) + Stream(3), batch_size=2):
    print(b)
for kw in ({"shuffle": True}, {"sampler": [0, 1]}, {"batch_sampler": [[0]]}):
    try:
        DataLoader(Stream(2), **kw)
    except ValueError as e:
        print(e)
print(get_worker_info())
w = WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 5, replacement=True)
print(list(w), len(w))
print(list(WeightedRandomSampler([0.9, 0.4, 0.05, 0.2, 0.3, 0.1], 5, replacement=False)))
g = torch.Generator().manual_seed(3)
ds = TensorDataset(torch.arange(6.0))
for b in DataLoader(ds, batch_size=2, sampler=WeightedRandomSampler([1.0] * 6, 6, generator=g)):
    print(b)
for bad in ((torch.ones(2, 2), 3), ([1.0], 0), ([1.0], 2, 1)):
    try:
        WeightedRandomSampler(*bad)
    except ValueError as e:
        print(e)
print(torch.rand(2))
"""


def test_iterable_datasets_and_weighted_sampling_as_pytorch(tmp_path):
    """A stream dataset batched in order (the last short batch, drop_last, batch_size None,
    chained streams, the options it refuses), WeightedRandomSampler's draws with PyTorch's
    numbers: PyTorch, plain Python and `gradcli run` print the same."""
    prog = tmp_path / "stream.py"
    prog.write_text(_STREAM_PROGRAM)
    expected = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                              timeout=120)
    assert expected.returncode == 0, expected.stderr
    shim = ("import sys, gradcli.torch\nsys.modules['torch'] = gradcli.torch\n"
            "sys.modules['torch.utils.data'] = gradcli.torch.utils.data\n")
    plain = subprocess.run([sys.executable, "-c", shim + _STREAM_PROGRAM], capture_output=True,
                           text=True, timeout=120)
    assert plain.stdout == expected.stdout, plain.stderr
    run = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected.stdout
