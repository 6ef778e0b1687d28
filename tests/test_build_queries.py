"""torch.* names about the build and process (has_mkl, compiled_with_cxx11_abi,
is_vulkan_available, init_num_threads, is_storage, is_distributed, thread_safe_generator),
the device errors scripts catch, the removed eig/symeig/reinforce, the small Tensor methods
(is_set_to, module_load, const_data_ptr), torch.utils.data.StackDataset and
torch.utils.hooks.RemovableHandle: against PyTorch, and from a program."""

from __future__ import annotations

import io

import pytest

torch = pytest.importorskip("torch")

from comparison_helpers import assert_shown_as_pytorch  # noqa: E402

import gradcli.torch as gt  # noqa: E402
from gradcli.lang import Limits  # noqa: E402
from gradcli.lang.session import run_source  # noqa: E402

CODES = [
    "torch.compiled_with_cxx11_abi()", "torch.compiled_with_cxx11_abi(1)",
    "torch.is_vulkan_available()", "torch.is_vulkan_available(1)", "torch.init_num_threads()",
    "torch.init_num_threads(1)", "torch.init_num_threads(a=2)", "torch.init_num_threads(1, a=2)",
    "torch.is_distributed(1)", "torch.is_distributed(torch.ones(2))",
    "torch.ones(2).is_distributed()", "torch.is_storage(torch.ones(2))",
    "torch.is_storage(torch.ones(2).untyped_storage())", "torch.is_storage(3)",
    "torch.thread_safe_generator()", "torch.random.thread_safe_generator()",
    "torch.ones(2).is_set_to(1)", "torch.ones(0).is_set_to(torch.ones(0))",
    "torch.ones(2).is_set_to(tensor=torch.ones(2))",
    "torch.ones(2).module_load(torch.zeros(3))", "torch.ones(2).module_load(torch.zeros(2))",
    "torch.ones(2, requires_grad=True).module_load(torch.zeros(2), assign=True)",
    "torch.ones(2, requires_grad=True).module_load(torch.zeros(2))",
    "torch.ones(2).reinforce(1)", "torch.ones(2).reinforce()",
    "torch.OutOfMemoryError('x')", "torch.AcceleratorError", "torch.OutOfMemoryError.__mro__",
    "torch.AcceleratorError.__mro__", "str(torch.AcceleratorError('bad'))",
    "torch.legacy_contiguous_format", "torch.legacy_contiguous_format is torch.contiguous_format",
    "torch.has_mkl, torch.has_lapack, torch.has_openmp, torch.has_spectral",
    "torch.eig(torch.ones(2, 2))", "torch.symeig(torch.ones(2, 2))", "torch.ones(2, 2).eig()",
    "torch.ones(2, 2).symeig(True)", "torch.eig(torch.ones(2, 2), eigenvectors=True)",
]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    assert_shown_as_pytorch(code, lambda lib: {"torch": lib}, quiet=True)


def test_is_set_to_follows_memory():
    for lib in (torch, gt):
        t = lib.ones(3)
        assert [t.is_set_to(t), t[1:].is_set_to(t[1:]), t.is_set_to(t.view(3)),
                t.is_set_to(t.view(1, 3)), t.is_set_to(t.clone()),
                t[::2].is_set_to(t[::2]), t[::2].is_set_to(t[:2])] == \
            [True, True, True, False, False, True, False]


def test_const_data_ptr_is_data_ptr():
    t = gt.arange(4.0)
    assert t.const_data_ptr() == t.data_ptr() and t[1:].const_data_ptr() == t[1:].data_ptr()


def test_module_load_copies_into_self():
    for lib in (torch, gt):
        p = lib.ones(2)
        out = p.module_load(lib.tensor([3.0, 4.0]))
        assert p.tolist() == [3.0, 4.0] and out.tolist() == [3.0, 4.0] and out is not p


def test_stack_dataset_as_pytorch():
    got = []
    for lib in (torch, gt):
        from importlib import import_module

        data = import_module(lib.__name__ + ".utils.data")
        a = data.TensorDataset(lib.arange(6.0).reshape(3, 2))
        b = lib.tensor([1, 2, 3])
        s = data.StackDataset(x=a, y=b)
        t = data.StackDataset(a, b)
        rows = [repr(s[1]), repr(t[2]), len(s), len(t)]
        rows += [repr(batch) for batch in data.DataLoader(t, batch_size=2)]
        rows += [repr(batch) for batch in data.DataLoader(s, batch_size=2)]
        for args, kwargs in (((a, lib.ones(5)), {}), ((), {}), ((a,), {"y": b})):
            with pytest.raises(ValueError) as info:
                data.StackDataset(*args, **kwargs)
            rows.append(str(info.value))
        rows.append(data.StackDataset.__module__)
        got.append(rows)
    assert got[0] == got[1]


def test_removable_handle_type_covers_tensor_and_module_hooks():
    from gradcli.torch.utils.hooks import RemovableHandle

    w = gt.ones(2, requires_grad=True)
    lin = gt.nn.Linear(2, 2)
    assert isinstance(w.register_hook(lambda g: g), RemovableHandle)
    assert isinstance(lin.register_forward_hook(lambda m, i, o: None), RemovableHandle)
    assert not isinstance(w, RemovableHandle)
    assert repr(RemovableHandle) == "<class 'torch.utils.hooks.RemovableHandle'>"


BUDGET = dict(max_steps=20_000, max_depth=60, max_elements=1_000_000, max_length=100_000)


def _run(src: str):
    out, err = io.StringIO(), io.StringIO()
    code = run_source("import torch\n" + src, "q.grad", limits=Limits(**BUDGET), stdout=out,
                      stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_a_program_uses_the_new_names():
    code, out, err = _run(
        "try:\n"
        "    raise torch.OutOfMemoryError('no room')\n"
        "except torch.OutOfMemoryError as e:\n"
        "    print('caught', e)\n"
        "try:\n"
        "    torch.eig(torch.ones(2, 2))\n"
        "except RuntimeError as e:\n"
        "    print(str(e).splitlines()[-1])\n"
        "print(torch.has_mkl, torch.compiled_with_cxx11_abi(), torch.legacy_contiguous_format)\n"
        "x = torch.ones(3)\n"
        "print(x.is_set_to(x), x.is_set_to(x.clone()), torch.random.thread_safe_generator())\n"
        "from torch.utils.data import StackDataset\n"
        "from torch.utils.hooks import RemovableHandle\n"
        "print(StackDataset(torch.ones(2), torch.zeros(2))[0])\n"
        "print(isinstance(x.requires_grad_().register_hook(lambda g: g), RemovableHandle))\n")
    assert code == 0, err
    assert out.splitlines() == [
        "caught no room", "L_complex, V_complex = torch.linalg.eig(A)",
        "True True torch.contiguous_format", "True False None",
        "(tensor(1.), tensor(0.))", "True"]


@pytest.mark.parametrize("src", [
    "torch.ones(2).const_data_ptr()",
    "from torch.utils.hooks import RemovableHandle\nRemovableHandle()",
    "from torch.utils.hooks import RemovableHandle\nRemovableHandle.__instancecheck__",
    "import torch.utils.hooks as h\nh._TensorHandle",
    "torch.OutOfMemoryError.__subclasses__()",
    "torch.OutOfMemoryError('x').__traceback__",
    "from torch.utils.data import StackDataset\nStackDataset(torch.ones(1)).__dict__",
])
def test_no_way_out_through_the_new_names(src):
    code, out, err = _run(src)
    assert code != 0 and "Traceback" not in err, (out, err)
