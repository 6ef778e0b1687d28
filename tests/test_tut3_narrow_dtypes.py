"""The narrow dtypes a fundamentals tour casts to (float16/half, int8, int16/short), torch.finfo
and torch.iinfo, against real PyTorch in plain Python (the .grad side is the tut_dtypes_narrow
conformance case)."""

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

CASES = [
    "T.tensor([1.5, 2.25, 3.0], dtype=T.float16)",
    "T.tensor([1.5, 2.25, 3.0], dtype=T.half) + 1.1",
    "T.tensor([1.5, 2.25, 3.0], dtype=T.half) + T.tensor([1, 2, 3])",
    "T.tensor([1.5, 2.25, 3.0], dtype=T.half) + T.tensor([1.0, 2, 3])",
    "T.randn(30, generator=T.Generator().manual_seed(1)).half().mean()",
    "T.randn(3, 4, generator=T.Generator().manual_seed(1)).half().mean(dim=0)",
    "T.arange(10., 300., 30.).type(T.int8)",
    "T.arange(10, 100, 10).to(T.int16) * 1000",
    "T.tensor([1, 2], dtype=T.int8) + T.tensor([1, 2], dtype=T.uint8)",
    "T.tensor([100, 120], dtype=T.int8).sum()",
    "T.tensor([1.0, 2.0]).half().type()",
    "T.tensor([1, 2]).char().type()",
    "T.tensor([1, 2]).short()",
    "T.tensor([1, 2]).byte()",
    "T.promote_types(T.int8, T.uint8)",
    "T.promote_types(T.float16, T.int64)",
    "T.promote_types(T.float16, T.float32)",
    "T.result_type(T.tensor([1], dtype=T.int8), 5)",
    "T.tensor([0.1, 0.2], dtype=T.float16).tolist()",
    "T.tensor([3, 4], dtype=T.int8).element_size()",
    "T.finfo(T.float16)",
    "T.finfo()",
    "(T.finfo(T.float32).eps, T.finfo(T.float64).max, T.finfo(T.half).bits)",
    "T.iinfo(T.int32)",
    "(T.iinfo(T.uint8).max, T.iinfo(T.int8).min, T.iinfo(T.int64).bits)",
    "T.nn.Linear(2, 2).half().weight.dtype",
    "T.from_numpy(__import__('numpy').array([1, 2], dtype='int8')).dtype",
]


@pytest.mark.parametrize("expr", CASES)
def test_same_as_pytorch(expr):
    assert repr(eval(expr, {"T": gt})) == repr(eval(expr, {"T": torch}))


def test_float16_backward_matches():
    def run(T):
        w = T.tensor([0.3, 0.7], dtype=T.float16, requires_grad=True)
        z = (w.exp() * T.tensor([1.0, 2.0], dtype=T.float16)).sum()
        z.backward()
        return repr((z, w.grad))

    assert run(gt) == run(torch)


@pytest.mark.parametrize("call, kind", [("T.finfo(T.int32)", TypeError),
                                        ("T.iinfo(T.float32)", TypeError),
                                        ("T.iinfo(T.bool)", TypeError),
                                        ("T.tensor([1, 2], dtype=T.int8).mean()", RuntimeError)])
def test_errors_as_pytorch(call, kind):
    messages = []
    for T in (gt, torch):
        with pytest.raises(kind) as info:
            eval(call, {"T": T})
        messages.append(str(info.value))
    assert messages[0] == messages[1]
