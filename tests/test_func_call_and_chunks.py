"""torch.func.functional_call with tied weights (PyTorch's refusal of two different values
for one tied tensor, not with the same value or tie_weights=False) and vmap's chunk_size
checks (PyTorch's ValueError when vmap is made, a float's TypeError when it runs)."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        got = fn()
    except Exception as err:  # noqa: BLE001 - the exception is what is compared
        return type(err).__name__, str(err)
    return "ok", repr(got.tolist())


def _tied(module):
    nn = module.nn

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.a(x) + self.b(x)

    return Tied()


CALLS = {
    "first_name": lambda m, w: ({"a.weight": w}, {}),
    "second_name": lambda m, w: ({"b.weight": w}, {}),
    "both_same_tensor": lambda m, w: ({"a.weight": w, "b.weight": w}, {}),
    "both_different": lambda m, w: ({"a.weight": w, "b.weight": w * 2}, {}),
    "untied_both_different": lambda m, w: ({"a.weight": w, "b.weight": w * 2},
                                           {"tie_weights": False}),
    "untied_one": lambda m, w: ({"a.weight": w}, {"tie_weights": False}),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_tied_weights_as_pytorch(name):
    def run(module):
        model = _tied(module)
        w = module.full((2, 2), 2.0)
        given, options = CALLS[name](module, w)
        return _outcome(lambda: module.func.functional_call(model, given, (module.ones(1, 2),),
                                                            **options).detach())

    got, want = run(gt), run(torch)
    if want[0] == "ok":  # (the untouched weight is random: compare only what is given)
        assert got[0] == "ok"
        if "untied_one" not in name:
            assert got == want
    else:
        assert got == want


@pytest.mark.parametrize("chunk_size", [0, -1, 2.0, 4, 1])
def test_vmap_chunk_size_as_pytorch(chunk_size):
    def run(module):
        xs = module.arange(12.0).reshape(6, 2)

        def call():
            mapped = module.vmap(lambda r: r * 2, chunk_size=chunk_size)
            return mapped(xs)

        return _outcome(call)

    assert run(gt) == run(torch)
