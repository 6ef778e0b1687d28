"""type() of a function, method, generator... gives a class that prints and checks as
Python's but cannot be called: FunctionType(code, globals) would build a function from a
code object, MethodType would bind any callable to any object."""

import pytest

from gradcli.lang import Session
from gradcli.lang.errors import ProgramError


@pytest.mark.parametrize("program", [
    "def f():\n    pass\ntype(f)(1, 2)\n",
    "type(lambda: 0)(None, {})\n",
    "class A:\n    def m(self):\n        pass\ntype(A().m)(print, 1)\n",
])
def test_code_level_classes_cannot_be_called(program):
    with pytest.raises(ProgramError, match="cannot create '(function|method)' instances"):
        Session().run(program, "p.grad")


def test_they_still_print_and_check_as_pythons(capsys):
    Session().run("def f():\n    pass\nprint(type(f), isinstance(f, type(f)), "
                  "isinstance(1, type(f)))\n", "p.grad")
    assert capsys.readouterr().out == "<class 'function'> True False\n"
