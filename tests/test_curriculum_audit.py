"""Items of issue 23's curriculum that the item-by-item audit found differing from
PyTorch: each program prints the same under PyTorch, under `gradcli run` and in plain
Python on gradcli.torch (object addresses aside)."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

ADDRESS = re.compile(r"0x[0-9a-f]+")


def _exec_with(module, source: str) -> str:
    """What `source` prints with `torch` bound to `module` (its `import torch...` lines
    dropped: the names they bind are given)."""
    lines = [ln for ln in source.splitlines() if not ln.startswith(("import torch", "from torch"))]
    names = {"torch": module, "nn": module.nn, "F": module.nn.functional, "optim": module.optim}
    out = io.StringIO()
    # (PyTorch's own test helpers, imported by other tests of this process for the OpInfo
    # database, lock torch.backends' flags: a program that sets cudnn flags, as a fresh
    # PyTorch process lets it, runs with them unlocked)
    unlocked = getattr(module.backends, "__allow_nonbracketed_mutation", contextlib.nullcontext)
    with contextlib.redirect_stdout(out), unlocked():
        exec(compile("\n".join(lines), "<probe>", "exec"), names)
    return ADDRESS.sub("0xADDR", out.getvalue())


def _run_cli(source: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", "-"], input=source,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return ADDRESS.sub("0xADDR", proc.stdout)


def _check(source: str, cli: bool = True) -> None:
    import gradcli.torch as gtorch

    source = textwrap.dedent(source)
    expected = _exec_with(torch, source)
    assert _exec_with(gtorch, source) == expected
    if cli:
        header = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" \
                 "import torch.optim as optim\n"
        assert _run_cli(header + source) == expected


def test_pack_hook_runs_with_grad_mode_off():
    # what a pack hook computes joins no graph: unpack sees a tensor without grad_fn
    _check("""
        def pack(t):
            print("pack", torch.is_grad_enabled())
            return t * 1
        def unpack(t):
            print("unpack", t, torch.is_grad_enabled())
            return t
        x = torch.tensor([1., 2.], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.pow(2)
        y.sum().backward()
        print(x.grad)
    """)


def test_saved_operand_not_kept_reads_none():
    # x * 3 keeps the scalar (a wrapped 0-d tensor) but not x: _saved_self is None
    _check("""
        x = torch.tensor([1., 2.], requires_grad=True)
        for y in [x * 3, 3 * x, x / 2, x * torch.ones(2), torch.ones(2) * x, x * x]:
            print(y.grad_fn._saved_self, y.grad_fn._saved_other)
    """)


def test_full_backward_pre_hook_sees_and_replaces_output_grads():
    _check("""
        torch.manual_seed(0)
        lin = nn.Linear(2, 1)
        lin.register_full_backward_pre_hook(lambda m, go: print("pre", go))
        lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 3,))
        lin.register_full_backward_hook(lambda m, gi, go: print("full", gi, go))
        x = torch.ones(1, 2, requires_grad=True)
        lin(x).sum().backward()
        print(x.grad, lin.weight.grad)
    """)


def test_full_backward_pre_hook_wrong_count():
    _check("""
        lin = nn.Linear(2, 1)
        lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        x = torch.ones(1, 2, requires_grad=True)
        try:
            lin(x).sum().backward()
        except RuntimeError as e:
            print(e)
    """)


def test_init_sparse_and_dirac():
    # sparse_ draws its normal fill then one randperm per column, as PyTorch does
    _check("""
        torch.manual_seed(0)
        w = torch.empty(4, 3)
        print(nn.init.sparse_(w, sparsity=0.5) is w, w)
        print(nn.init.sparse_(torch.empty(5, 2), 0.3, std=2.0))
        for shape, groups in [((2, 2, 3), 1), ((4, 2, 3, 3), 2), ((2, 3, 1, 3, 2), 1)]:
            print(nn.init.dirac_(torch.empty(shape), groups))
        for bad in [lambda: nn.init.sparse_(torch.empty(3), 0.1),
                    lambda: nn.init.dirac_(torch.empty(2, 2)),
                    lambda: nn.init.dirac_(torch.empty(3, 2, 3), groups=2)]:
            try:
                bad()
            except ValueError as e:
                print(e)
        conv = nn.Conv2d(2, 2, 3, padding=1, bias=False)
        nn.init.dirac_(conv.weight)
        x = torch.randn(1, 2, 4, 4)
        print(torch.equal(conv(x), x), conv.weight.requires_grad)
    """)


def test_logspace_keyword_forms():
    _check("""
        print(torch.logspace(0, 2, 3), torch.logspace(start=0, end=2, steps=5, base=2))
        print(torch.logspace(0, 1, 4, dtype=torch.float64), torch.logspace(0, 3, 4, dtype=torch.int64))
        print(torch.logspace(-1, 1, 3, requires_grad=True), torch.logspace(0, 1, 1), torch.logspace(0, 1, 0))
        try:
            torch.logspace(0, 1, -1)
        except RuntimeError as e:
            print(e)
    """)
    import gradcli.torch as gtorch
    for args in [(0, 1, 7), (-3, 2, 11), (0, 5, 6, 2.0)]:
        torch.testing.assert_close(torch.from_numpy(gtorch.logspace(*args).numpy()),
                                   torch.logspace(*args))


def test_function_apply_keywords_fill_positional_slots():
    # PyTorch's apply maps keywords onto forward's positional slots without defaults:
    # needs_input_grad and the expected gradient count follow what was passed
    _check("""
        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2.0, flag=True, w=None, *, z=1):
                print("needs", ctx.needs_input_grad, k, flag, w, z)
                return x * 2
            @staticmethod
            def backward(ctx, *g):
                return g[0]
        class G(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *a, **kw):
                return a[0] * 2
            @staticmethod
            def backward(ctx, *g):
                return g[0]
        x = torch.ones(2, requires_grad=True)
        t = torch.ones(2, requires_grad=True)
        for f, a, kw in [(F, (x,), dict(k=t)), (F, (x,), dict(w=t)), (F, (x,), dict(z=t)),
                         (F, (x,), dict(w=t, flag=3, k=4)), (F, (x,), dict(k=1, flag=t, w=2)),
                         (F, (x,), dict(k=1, q=2)), (F, (x,), dict(x=t)), (F, (x, 1), dict(x=t)),
                         (G, (x,), dict(k=1)), (F, (), dict(x=x))]:
            try:
                y = f.apply(*a, **kw)
                print(len(y.grad_fn.next_functions))
                y.sum().backward()
            except TypeError as e:
                print("TypeError", e)
            except RuntimeError as e:
                print("RuntimeError", e)
    """)


def test_grad_fn_attribute_assignment_errors_in_a_program():
    # (plain Python on gradcli.torch lets these through: the node class stays lean)
    source = textwrap.dedent("""
        x = torch.ones(2, requires_grad=True)
        y = x.exp()
        for node in [y.grad_fn, (x * 2).grad_fn.next_functions[0][0]]:
            for n in ['foo', 'next_functions', 'metadata', 'name', 'register_hook', 'variable']:
                try:
                    setattr(node, n, 1)
                    print('set', n)
                except AttributeError as e:
                    print(e)
    """)
    assert _run_cli("import torch\n" + source) == _exec_with(torch, source)


def test_optimizer_loaded_from_live_state_dict_shares_its_buffers():
    # PyTorch's load_state_dict keeps a state tensor whose dtype already fits (Tensor.to
    # returns it): two optimizers loaded one from the other update the same buffers
    _check("""
        torch.manual_seed(0)
        X, Y = torch.randn(8, 3), torch.randn(8, 1)
        for cls, kw in [(optim.Adam, dict(lr=0.01, amsgrad=True)),
                        (optim.SGD, dict(lr=0.1, momentum=0.9)), (optim.RMSprop, dict(lr=0.01))]:
            torch.manual_seed(1)
            m = nn.Linear(3, 1)
            m2 = nn.Linear(3, 1)
            m2.load_state_dict(m.state_dict())
            opt, opt2 = cls(m.parameters(), **kw), cls(m2.parameters(), **kw)
            for model, o in [(m, opt), (m, opt)]:
                o.zero_grad()
                ((model(X) - Y) ** 2).mean().backward()
                o.step()
            m2.load_state_dict(m.state_dict())
            opt2.load_state_dict(opt.state_dict())
            for i in range(3):
                for model, o in [(m, opt), (m2, opt2)]:
                    o.zero_grad()
                    ((model(X) - Y) ** 2).mean().backward()
                    o.step()
            print(torch.equal(m.weight, m2.weight), m2.weight, opt2.state[m2.weight])
        p = torch.zeros(2, dtype=torch.float64, requires_grad=True)
        o64 = optim.SGD([p], lr=0.1, momentum=0.9)
        o64.load_state_dict({
            'state': {0: {'momentum_buffer': torch.ones(2)}},
            'param_groups': [dict(o64.state_dict()['param_groups'][0])]})
        print(o64.state[p])
    """)


def test_module_registration_conflicts_and_layer_shape_errors():
    _check("""
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(1, 1)
                self.register_buffer('buf', torch.ones(1))
                self.p = nn.Parameter(torch.ones(1))
                self.plain = 3
        m = M()
        calls = [lambda: m.register_buffer('p', torch.ones(1)),
                 lambda: m.register_buffer('lin', torch.ones(1)),
                 lambda: m.register_buffer('plain', torch.ones(1)),
                 lambda: m.register_buffer('buf', torch.zeros(1)),
                 lambda: m.register_parameter('buf', nn.Parameter(torch.ones(1))),
                 lambda: m.register_parameter('lin', nn.Parameter(torch.ones(1))),
                 lambda: m.register_parameter('p', nn.Parameter(torch.zeros(1))),
                 lambda: m.register_buffer('training', torch.ones(1)),
                 lambda: nn.LayerNorm(3)(torch.ones(2, 2)),
                 lambda: nn.MaxPool2d(2)(torch.ones(1, 1, 1, 1)),
                 lambda: F.max_pool2d(torch.ones(1, 3, 5), (2, 6)),
                 lambda: F.max_pool2d(torch.ones(1, 1, 3, 3), 2, dilation=3),
                 lambda: nn.MaxPool1d(2)(torch.ones(1, 1, 1)),
                 lambda: F.max_pool1d(torch.ones(2, 3), 4),
                 lambda: F.bilinear(torch.ones(1, 2), torch.ones(1, 3), torch.ones(1, 2, 2)),
                 lambda: F.bilinear(torch.ones(1, 3), torch.ones(1, 2), torch.ones(1, 2, 2)),
                 lambda: F.bilinear(torch.ones(2, 2), torch.ones(1, 2), torch.ones(1, 2, 2)),
                 lambda: F.bilinear(torch.ones(1, 2), torch.ones(1, 2), torch.ones(1, 2, 2),
                                    torch.ones(3)),
                 lambda: F.bilinear(torch.ones(1, 2), torch.ones(2), torch.ones(1, 2, 2)),
                 lambda: nn.Bilinear(2, 2, 1)(torch.ones(1, 2), torch.ones(1, 3))]
        for f in calls:
            try:
                f()
                print("ok")
            except (KeyError, RuntimeError) as e:
                print(type(e), e)
        print(list(m.state_dict().keys()), nn.MaxPool2d(2)(torch.ones(1, 1, 2, 2)))
    """)


def test_device_blocks_default_device_and_cudnn_flags():
    _check("""
        with torch.device('cpu') as d:
            print(d, torch.ones(1).device, torch.get_default_device())
        with torch.device('cpu'):
            with torch.device('cpu'):
                print(torch.get_default_device())
        for spec in ['cuda', 'mps']:
            try:
                with torch.device(spec):
                    print(torch.get_default_device())
            except (RuntimeError, AssertionError) as e:
                print(type(e), e)
            torch.set_default_device(spec)
            try:
                print(torch.get_default_device())
            except (RuntimeError, AssertionError) as e:
                print(type(e), e)
        torch.set_default_device(None)
        print(torch.get_default_device())
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        print(torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
        torch.backends.cudnn.deterministic = False
        d = torch.device('cpu')
        for name in ['type', 'index', 'foo']:
            try:
                setattr(d, name, 'cuda')
            except AttributeError as e:
                print(e)
        print(d)
    """)


def test_module_to_refuses_an_integer_dtype():
    _check("""
        m = nn.Linear(2, 2)
        for dt in [torch.int64, torch.bool]:
            try:
                m.to(dt)
            except TypeError as e:
                print(e)
        print(torch.float32.is_complex, torch.int64.is_complex, m.to(torch.float64).bias.dtype)
    """)


def test_parameters_to_vector_takes_any_iterable_of_tensors():
    _check("""
        print(torch.nn.utils.parameters_to_vector(torch.ones(2, 2)))
        print(torch.nn.utils.parameters_to_vector(torch.arange(3.)))
        print(torch.nn.utils.parameters_to_vector((torch.ones(2), torch.zeros(1, 2))))
        try:
            torch.nn.utils.vector_to_parameters([1, 2], [torch.ones(2)])
        except TypeError as e:
            print(e)
    """)


def test_nll_target_rank_is_checked_before_its_dtype():
    _check("""
        calls = [lambda: nn.CrossEntropyLoss()(torch.randn(2, 3), torch.rand(2, 4)),
                 lambda: F.nll_loss(torch.randn(2, 3), torch.rand(2, 3, 1)),
                 lambda: F.nll_loss(torch.randn(3), torch.rand(2)),
                 lambda: F.nll_loss(torch.randn(2, 3, 4), torch.rand(2, 4)),
                 lambda: F.nll_loss(torch.randn(2, 3), torch.zeros(2, 4, dtype=torch.long)),
                 lambda: F.cross_entropy(torch.randn(2, 3), torch.rand(2, 3), ignore_index=1)]
        for f in calls:
            try:
                f()
            except RuntimeError as e:
                print(e)
    """)


def test_variable_is_a_class_every_tensor_is_an_instance_of():
    _check("""
        Variable = torch.autograd.Variable
        t = torch.ones(2)
        v = Variable(t, requires_grad=True)
        print(v is t, t.requires_grad, v.requires_grad, Variable)
        print(isinstance(v, Variable), isinstance(t, Variable), isinstance(1, Variable))
        try:
            Variable(5)
        except TypeError as e:
            print(e)
    """)


def test_numpy_converts_a_tensor_through_its_numpy():
    # (plain Python: np.array(t) made an object array of 0-d tensors)
    import numpy as np

    import gradcli.torch as gtorch

    for T in (torch, gtorch):
        t = T.ones(2, dtype=T.float64)
        a = np.asarray(t)
        assert a.dtype == np.float64 and a.tolist() == [1.0, 1.0]
        a[0] = 7.0  # shares the tensor's memory, as numpy() does
        assert t.tolist() == [7.0, 1.0]
        assert np.array(T.arange(3), dtype=np.float32).dtype == np.float32
        assert np.array(T.tensor(3.5)).shape == ()
        assert np.array([T.tensor(1.0), T.tensor(2.0)]).tolist() == [1.0, 2.0]
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires"):
            np.array(T.ones(2, requires_grad=True))


def test_numpy_scalars_are_python_numbers_to_tensor_arithmetic():
    # x_np[i] is a numpy scalar: PyTorch promotes it as the Python number it holds
    _check("""
        import numpy as np
        print(np.float64(2.0) * torch.ones(2), torch.ones(2) * np.float64(2.0),
              torch.ones(2) + np.float32(1.5), torch.ones(2) * np.int64(2))
        print(np.float32(2.0) * torch.ones(2, dtype=torch.float64),
              torch.ones(2, dtype=torch.int64) * np.float64(0.5), np.int32(3) + torch.ones(2))
        x = np.linspace(0, 1, 3)
        w = torch.ones(1, requires_grad=True)
        y = w * x[1] + x[2] - w / x[2] - np.float64(1.0)
        print(y)
        print(torch.ones(2, dtype=torch.int64) + np.int64(3), np.float64(3.0) - torch.ones(2),
              np.float64(1.0) / torch.full((2,), 4.0), torch.ones(2) ** np.float64(2.0))
    """)


def test_anomaly_mode_and_its_nan_check_are_two_switches():
    # detect_anomaly(check_nan=False) turns anomaly mode on without the NaN check
    _check("""
        print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        torch.set_anomaly_enabled(True, check_nan=False)
        print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        torch.set_anomaly_enabled(False)
        x = torch.tensor([0.0], requires_grad=True)
        with torch.autograd.detect_anomaly(check_nan=False):
            print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
            (x / x).sum().backward()
            print(x.grad)
        print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        with torch.autograd.detect_anomaly():
            x.grad = None
            try:
                (x / x).sum().backward()
            except RuntimeError as e:
                print(e)
        with torch.autograd.set_detect_anomaly(True, check_nan=False):
            print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    """)


def test_environment_cells_on_the_cpu_libraries():
    # what environment cells print beside torch.cuda.is_available()
    _check("""
        print(torch.version.cuda, torch.version.hip, torch.version.debug)
        print(torch.backends.mkldnn.is_available(), torch.backends.mkl.is_available(),
              torch.backends.openmp.is_available())
        print(torch.backends.mkldnn.enabled, torch.backends.mkldnn.deterministic)
        torch.backends.mkldnn.deterministic = True
        print(torch.backends.mkldnn.deterministic)
        torch.backends.mkldnn.deterministic = False
        print(torch.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512"))
    """)


def test_cpu_capability_is_what_pytorch_picks_here():
    import gradcli.torch as gtorch

    assert gtorch.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()
