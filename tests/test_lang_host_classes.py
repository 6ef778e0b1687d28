"""Program classes deriving from host classes: torch.nn.Module, torch.autograd.Function
(stand-ins here, with the interface the nn and autograd parts provide) and the exception
classes; and the class statement's refusals (bases, metaclasses, special names)."""
from __future__ import annotations

import io

import pytest
from comparison_helpers import printed_by_gradcli  # noqa: E402, I001

import gradcli.torch.autograd as autograd_facade
import gradcli.torch.nn as nn_facade
from gradcli.engine.tensor import Tensor
from gradcli.lang import Session
from gradcli.lang import runtime as R


# ------------------------------------------------------------ stand-in host classes
class Module:
    """What the language relies on in torch.nn.Module: __init__ through super(),
    __setattr__ registration, __getattr__ for registered parts, __call__ -> forward."""

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign before Module.__init__() call")
        if isinstance(value, Tensor) and value.requires_grad:
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for part in ("_parameters", "_modules"):
            found = self.__dict__.get(part, {})
            if name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix=""):
        for name, p in self._parameters.items():
            yield prefix + name, p
        for name, m in self._modules.items():
            yield from m.named_parameters(prefix + name + ".")

    def parameters(self):
        return [p for _, p in self.named_parameters()]


class FunctionCtx:
    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors


class Function:
    """What the language relies on in torch.autograd.Function: ``apply`` a classmethod
    that calls the program's static forward (and here, for the test, backward) with a ctx."""

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        out = cls.forward(ctx, *args)
        return out, cls.backward(ctx, out * 0 + 1)


for _cls in (Module, FunctionCtx, Function):
    _cls.__module__ = "gradcli.torch.nn.modules.module" if _cls is Module \
        else "gradcli.torch.autograd.function"


@pytest.fixture(autouse=True)
def host_classes(monkeypatch):
    monkeypatch.setattr(nn_facade, "Module", Module, raising=False)
    monkeypatch.setattr(autograd_facade, "Function", Function, raising=False)
    R._MODULE_NAMES.clear()
    R._POLICY.clear()
    R._SUBCLASSABLE_CACHE.clear()
    yield
    R._MODULE_NAMES.clear()
    R._POLICY.clear()
    R._SUBCLASSABLE_CACHE.clear()


def run(src):
    return printed_by_gradcli(src, max_steps=100_000)


NET = """\
import torch
import torch.nn as nn
class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = torch.tensor([0.5, -1.0], requires_grad=True)
    def forward(self, x):
        return (x + self.b).sum()
class Net(nn.Module):
    scale = 2.0
    def __init__(self, k):
        super(Net, self).__init__()
        self.w = torch.tensor([1.0, 2.0], requires_grad=True)
        self.inner = Inner()
        self.k = k
    def forward(self, x):
        return self.inner(x * self.w) * self.k * self.scale
net = Net(3)
y = net(torch.tensor([1.0, 2.0]))
print(y)
y.backward()
print(net.w.grad, net.inner.b.grad)
print([n for n, p in net.named_parameters()], len(net.parameters()), net.k, net.training)
print(isinstance(net, nn.Module), issubclass(Net, nn.Module), type(net) is Net)
"""


def test_module_subclass_registers_and_calls_forward():
    assert run(NET) == (
        "tensor(27., grad_fn=<MulBackward0>)\n"
        "tensor([ 6., 12.]) tensor([6., 6.])\n"
        "['w', 'inner.b'] 2 3 True\n"
        "True True True\n")


def test_module_init_called_the_old_way():
    src = ("import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
           "        nn.Module.__init__(self)\n        self.a = 1\n"
           "    def forward(self, x):\n        return x + self.a\nprint(M()(1))\n")
    assert run(src) == "2\n"


def test_module_subclass_private_state_is_out_of_reach():
    for line, expected in [
        ("net._parameters", "!ForbiddenError: attribute '_parameters' is not allowed"),
        ("getattr(net, '_param' + 'eters')", "!AttributeError: attribute '_parameters' is not allowed"),
        ("setattr(net, '_modules', {})", "!AttributeError: attribute '_modules' is not allowed"),
        ("net.__dict__", "!ForbiddenError: attribute '__dict__' is not allowed"),
        ("super(Net, net).__setattr__('w', 1)", "!ForbiddenError: attribute '__setattr__'"),
        ("super(Net, net).__getattr__('w')", "!ForbiddenError: attribute '__getattr__'"),
        ("Net.__init__.__globals__", "!ForbiddenError: attribute '__globals__'"),
        ("net.forward.__func__", "!ForbiddenError: attribute '__func__'"),
    ]:
        out = run(NET + line + "\n")
        assert expected in out, (line, out)


FUNCTION = """\
import torch
from torch.autograd import Function
class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.note = "kept"
        return x * x
    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * x * grad
out, grad = Square.apply(torch.tensor([3.0, -1.0]))
print(out, grad)
print(issubclass(Square, Function), Square.forward(None, 2) if False else "ok")
"""


def test_function_subclass_static_forward_backward_called_with_ctx():
    assert run(FUNCTION) == "tensor([9., 1.]) tensor([ 6., -2.])\nTrue ok\n"


@pytest.mark.parametrize("base,shown", [
    ("torch.Tensor", "torch.Tensor"), ("int", "int"), ("list", "list"), ("type", "type"),
    ("dict", "dict"), ("str", "str"), ("torch.autograd.Function.apply", None),
    ("type(len)", "builtin_function_or_method"), ("type(print)", "builtin_function_or_method"),
    ("type(lambda: 1)", "function"), ("type(range(1))", "range"),
    ("type(torch.ones(1).grad_fn)", None),
])
def test_bases_other_than_classes_modules_functions_exceptions_are_refused(base, shown):
    out = run(f"import torch\nclass X({base}):\n    pass\n")
    assert out.startswith("!TypeError: "), out
    if shown:
        assert f"cannot derive from {shown}" in out, out


@pytest.mark.parametrize("body,fragment", [
    ("__slots__ = ('a',)", "name '__slots__' is not allowed in a class body"),
    ("def __getattr__(self, n):\n        return 1", "'__getattr__' is not allowed in a class body"),
    ("def __getattribute__(self, n):\n        return 1", "'__getattribute__' is not allowed"),
    ("def __del__(self):\n        pass", "'__del__' is not allowed in a class body"),
    ("def __init_subclass__(cls):\n        pass", "'__init_subclass__' is not allowed"),
    ("def __class_getitem__(cls, k):\n        pass", "'__class_getitem__' is not allowed"),
    ("def __set_name__(self, o, n):\n        pass", "'__set_name__' is not allowed"),
    ("def __new__(cls):\n        pass", "'__new__' is not allowed in a class body"),
    ("def __format__(self, s):\n        pass", "'__format__' is not allowed in a class body"),
    ("def __reduce__(self):\n        pass", "'__reduce__' is not allowed in a class body"),
    ("def __index__(self):\n        return 10 ** 9", "'__index__' is not allowed"),
    ("def __get__(self, o, t):\n        pass", "'__get__' is not allowed in a class body"),
    ("def __setattr__(self, n, v):\n        pass", "'__setattr__' is not allowed"),
    ("def __enter__(self):\n        pass", "'__enter__' is not allowed in a class body"),
    ("def _helper(self):\n        pass", "'_helper' is not allowed in a class body"),
    ("_hidden = 1", "'_hidden' is not allowed in a class body"),
    ("__metaclass__ = type", "'__metaclass__' is not allowed in a class body"),
    ("__dict__ = {}", "'__dict__' is not allowed in a class body"),
    ("for __module__ in [1]:\n        pass", "'__module__' is not allowed in a class body"),
    ("__qualname__ = 'x'", "'__qualname__' is not allowed in a class body"),
    ("import math as __doc__", "name '__doc__' is not allowed"),
])
def test_class_bodies_define_only_the_listed_special_names(body, fragment):
    out = run(f"print('ran')\nclass X:\n    {body}\n")
    assert out.startswith("!ForbiddenError: ") and fragment in out, out


@pytest.mark.parametrize("src,fragment", [
    ("class X(metaclass=type):\n    pass", "!ForbiddenError: metaclasses are not allowed"),
    ("class X(object, metaclass=type):\n    pass", "!ForbiddenError: metaclasses are not allowed"),
    ("class X(foo=1):\n    pass", "!ForbiddenError: class keywords are not allowed"),
    ("class X(*[object]):\n    pass", "!ForbiddenError: starred base classes are not allowed"),
    ("def deco(c):\n    return c\n@deco\nclass X:\n    pass",
     "!SyntaxError: class decorators are not supported by gradcli"),
    ("type('X', (object,), {'__del__': print})", "!TypeError: type() with three arguments"),
    ("type(type(1))('X', (), {})", "!TypeError: type() with three arguments"),
    ("type(int)('X', (), {})", "!TypeError: type() with three arguments"),
    ("type(list)('X', (), {})", "!TypeError: type() with three arguments"),
    ("class A:\n    pass\ntype(A)('X', (A,), {})", "!TypeError: type() with three arguments"),
    ("super(int, 1).real", "!TypeError: super() argument 1 must be a gradcli class"),
    ("class A:\n    pass\nsuper(A, 1)", "!TypeError: super(type, obj): obj must be an instance"),
    ("class A:\n    pass\nsuper(A)", "!TypeError: super() takes a class and an object"),
    ("super()", "!RuntimeError: super(): no arguments"),
    ("def f():\n    return super()\nf()", "!RuntimeError: super(): __class__ cell not found"),
    ("class A:\n    def m():\n        return super()\nA.m()", "!RuntimeError: super(): no arguments"),
    ("class A:\n    pass\nA.mro()", "!AttributeError: A.mro is not supported by gradcli"),
    ("class A:\n    pass\nA.__call__('x')", "!AttributeError: A.__call__ is not supported"),
    ("class A:\n    pass\nsuper(A, A).__call__", "!AttributeError: 'super' object has no attribute"),
    ("class A:\n    pass\nsuper(A, A()).__init__.__self__", "!ForbiddenError"),
    ("class A:\n    pass\nA.__subclasses__()", "!ForbiddenError"),
    ("class A:\n    pass\nA.__mro__", "!ForbiddenError"),
    ("class A:\n    pass\nA().__class__", "!ForbiddenError"),
    ("class A:\n    def m(self):\n        pass\nA.m.__globals__", "!ForbiddenError"),
    ("class A:\n    def __init__(self):\n        pass\nA.__init__.__globals__", "!ForbiddenError"),
    ("class A:\n    pass\ngetattr(A, '__' + 'dict__')", "!AttributeError: attribute '__dict__' is not"),
    ("class A:\n    pass\ngetattr(A(), '__cl' + 'ass__')", "!AttributeError: attribute '__class__'"),
    ("class A:\n    pass\ngetattr(A, '__init__').__globals__", "!ForbiddenError"),
    ("class A:\n    pass\nsetattr(A, '__init__', print)", "!AttributeError: attribute '__init__' is"),
    ("class A:\n    pass\nsetattr(A, '__' + 'getattr__', print)", "!AttributeError: attribute '__getattr__'"),
    ("class A:\n    pass\ndelattr(A, '__init__')", "!AttributeError: attribute '__init__' is not"),
    ("class A:\n    pass\nA.__init__ = print", "!ForbiddenError"),
    ("class A(Exception):\n    pass\nA('x').with_traceback(None)",
     "!AttributeError: A.with_traceback is not supported"),
    ("class A(Exception):\n    pass\nA.with_traceback", "!AttributeError: A.with_traceback is not"),
    ("class A:\n    pass\ngetattr(A, 'mro')()", "!AttributeError: A.mro is not supported"),
    ("int.__add__(1, 2)", "!AttributeError: int.__add__ is not supported"),
    ("(1).__add__(2)", "!ForbiddenError"),
    ("x = 1\nx.__add__(2)", "!AttributeError: int.__add__ is not supported"),
    ("class A:\n    pass\ntype(A())().__init__", "!ForbiddenError"),
    ("class A:\n    pass\nB = type(A())\nB.__init__(B())", None),
])
def test_class_machinery_cannot_be_turned_against_the_sandbox(src, fragment):
    out = run(src + "\n")
    if fragment is None:
        assert "!" not in out, out
    else:
        assert fragment in out, (src, out)


def test_a_subclass_of_an_exception_is_raised_and_reported():
    out = run("class Oops(ValueError):\n    pass\nraise Oops('bad value')\n")
    assert out == "!Oops: bad value"


def test_methods_show_host_code_the_parameters_the_program_wrote():
    import inspect
    s = Session(stdout=io.StringIO())
    s.run("class F:\n    @staticmethod\n    def forward(ctx, x, k=2, *a, w=1, **kw):\n"
          "        return x\n    def m(self, /, q):\n        return q\n", "p.grad")
    cls = s.globals["F"]
    assert str(inspect.signature(cls.forward)) == "(ctx, x, k=2, *a, w=1, **kw)"
    assert str(inspect.signature(cls.m)) == "(self, /, q)"
    assert cls.forward(None, 5) == 5 and cls.m(cls(), q=3) == 3
