"""The random-number constructs a program can now reach (torch.Generator objects, the
default generator, torch.random, nn.init, the sampling functions' forwarding wrappers)
leave no way out of the sandbox, and bad input to them is a one-line report."""

from __future__ import annotations

import io
import re

import pytest

from gradcli.lang import Limits
from gradcli.lang.session import run_source

HEADLINE = re.compile(r"^attack\.grad:\d+(:\d+)?: [A-Za-z]+: \S")


def run(src: str):
    out, err = io.StringIO(), io.StringIO()
    code = run_source(src, "attack.grad", limits=Limits(max_elements=10**6, max_steps=10**5),
                      stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


ATTACKS = [
    "g = torch.Generator()\nprint(g._bg)",
    "g = torch.Generator()\nprint(g._engine())",
    "print(torch.default_generator.__class__)",
    "print(torch.default_generator.manual_seed.__func__)",
    "print(torch.random.__dict__)",
    "print(torch.random.contextlib)",
    "print(torch.random.fork_rng.__wrapped__)",
    "print(torch.normal.__closure__)",
    "print(torch.nn.functional.dropout.__globals__)",
    "print(torch.nn.init.np)",
    "print(torch.nn.init.math)",
    "import torch.random as r\nprint(r.__loader__)",
    "x = torch.ones(2)\nprint(x.uniform_.__self__.__class__.__mro__)",
    "import torch.nn.init\nprint(torch.nn.init.__builtins__)",
]


@pytest.mark.parametrize("src", ATTACKS)
def test_attacks_refused(src):
    code, out, err = run("import torch\n" + src)
    assert code in (1, 2), (src, out, err)
    assert "Traceback" not in err and "Traceback" not in out
    assert HEADLINE.match(err), err


BAD_INPUT = [
    ("torch.randint(5, 3, (2,))", "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    ("torch.set_rng_state(torch.zeros(3, dtype=torch.uint8))",
     "Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size to be 3"),
    ("torch.multinomial(torch.tensor([1.0, 0.0]), 3)",
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    ("torch.nn.functional.dropout(torch.ones(2), 2.0)", "dropout probability has to be between 0 and 1, but got 2.0"),
    ("torch.manual_seed(2 ** 70)", "Overflow when unpacking long long"),
]


@pytest.mark.parametrize("src, text", BAD_INPUT)
def test_bad_input_is_one_line(src, text):
    code, out, err = run("import torch\n" + src)
    assert code == 1, (src, out, err)
    assert "Traceback" not in err
    assert HEADLINE.match(err) and text in err.splitlines()[0], err


def test_programs_draw_pytorchs_numbers():
    code, out, err = run("import torch\ng = torch.Generator().manual_seed(0)\nprint(torch.randn(3, generator=g))\n"
                         "with torch.random.fork_rng():\n    torch.rand(5)\nprint(torch.rand(2))")
    assert code == 0, err
    assert out.splitlines()[0] == "tensor([ 1.5410, -0.2934, -2.1788])"
