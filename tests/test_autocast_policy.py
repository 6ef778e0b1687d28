"""CPU autocast as a declared policy: each function of PyTorch's CPU lists checks the
state at its call (no function's code is swapped on entering a region), the state is per
thread, nested regions and enabled=False behave as PyTorch's, and the decorator form is
safe across threads and recursion."""

from __future__ import annotations

import importlib
import threading
import types

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402
from gradcli.engine import autocast_state  # noqa: E402
from gradcli.engine.ops import amp  # noqa: E402

LISTED = [(policy, m, n) for policy, table in (("lower", amp.LOWER_PRECISION),
                                               ("fp32", amp.FLOAT32)) for m, n in table]


@pytest.mark.parametrize("policy,module,name", LISTED)
def test_every_listed_function_declares_its_policy(policy, module, name):
    fn = getattr(importlib.import_module(f"gradcli.engine.ops.{module}"), name)
    names = fn.__code__.co_names
    assert "ENABLED" in names and "wanted" in names and policy in names


def _all_codes():
    out = {}
    for mod_name in ("linalg", "linalg_ext", "nn", "nn_layers", "conv_ext", "functional_ext",
                     "losses", "reductions", "layout"):
        mod = importlib.import_module(f"gradcli.engine.ops.{mod_name}")
        for key, value in vars(mod).items():
            if isinstance(value, types.FunctionType):
                out[(mod_name, key)] = value.__code__
    return out


def test_entering_a_region_changes_no_function():
    before = _all_codes()
    with G.autocast("cpu"):
        inside = _all_codes()
        assert (G.ones(2, 3) @ G.ones(3, 2)).dtype is G.bfloat16
    assert inside == before and _all_codes() == before


def test_the_region_is_per_thread():
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def other():
        entered.wait(30)
        seen["enabled"] = G.is_autocast_enabled("cpu")
        seen["mm"] = (G.ones(2, 3) @ G.ones(3, 2)).dtype
        seen["loss"] = G.nn.functional.mse_loss(G.ones(2, dtype=G.bfloat16),
                                                G.ones(2, dtype=G.bfloat16)).dtype
        release.set()

    worker = threading.Thread(target=other)
    worker.start()
    with G.autocast("cpu"):
        entered.set()
        release.wait(30)
        assert (G.ones(2, 3) @ G.ones(3, 2)).dtype is G.bfloat16
    worker.join(30)
    # PyTorch's autocast state is thread-local too: a thread started elsewhere is outside
    assert seen == {"enabled": False, "mm": G.float32, "loss": G.bfloat16}


def test_nested_regions_and_enabled_false_as_pytorch():
    def scenario(lib):
        x = lib.ones(2, 3)
        w = lib.ones(3, 2)
        out = []
        with lib.autocast("cpu"):
            out.append((x @ w).dtype)
            with lib.autocast("cpu", enabled=False):
                out.append((x @ w).dtype)
                out.append(lib.is_autocast_enabled("cpu"))
                with lib.autocast("cpu", dtype=lib.float16):
                    out.append((x @ w).dtype)
                    out.append(lib.get_autocast_dtype("cpu"))
                out.append(lib.get_autocast_dtype("cpu"))
            out.append((x @ w).dtype)
            out.append(lib.is_autocast_enabled("cpu"))
        out.append((x @ w).dtype)
        out.append(lib.is_autocast_enabled("cpu"))
        return [str(v) for v in out]

    assert scenario(G) == scenario(torch)
    assert autocast_state.ENABLED == 0


def test_a_product_inside_a_float32_function_is_not_cast_down():
    a = G.randn(5, 3)
    b = G.randn(4, 3)
    plain = G.cdist(a, b)
    with G.autocast("cpu"):
        inside = G.cdist(a, b)
    assert inside.dtype is G.float32
    assert G.allclose(inside, plain)


def test_decorator_across_threads_and_recursion():
    region = G.autocast("cpu")

    @region
    def product(depth):
        if depth:
            return product(depth - 1)
        return (G.ones(2, 3) @ G.ones(3, 2)).dtype

    results = []
    threads = [threading.Thread(target=lambda: results.append(product(3))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [G.bfloat16] * 4
    assert product(2) is G.bfloat16
    assert autocast_state.ENABLED == 0 and G.is_autocast_enabled("cpu") is False
    assert (G.ones(2, 3) @ G.ones(3, 2)).dtype is G.float32


def test_same_region_object_nested_in_itself():
    region = G.autocast("cpu")
    with region:
        with region:
            assert G.is_autocast_enabled("cpu")
        assert G.is_autocast_enabled("cpu")
    assert not G.is_autocast_enabled("cpu") and autocast_state.ENABLED == 0
