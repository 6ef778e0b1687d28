"""`registry.public` exposes a function under each name it lists, and the facade
modules and Tensor pick those names up; missing names still say "not supported"."""

import importlib

import pytest

import gradcli.torch as torch
from gradcli.engine.ops import registry
from gradcli.engine.tensor import Tensor
from gradcli.torch import _namespace


def test_public_names_keeps_only_direct_children():
    saved = dict(registry.PUBLIC)
    try:
        fn = registry.public("torch.fixture_fn", "torch.linalg.fixture_fn", "Tensor.fixture_fn")(
            lambda x: x)
        assert registry.public_names("torch.")["fixture_fn"] is fn
        assert "linalg.fixture_fn" not in registry.public_names("torch.")
        assert registry.public_names("torch.linalg.")["fixture_fn"] is fn
        assert registry.public_names("Tensor.")["fixture_fn"] is fn
    finally:
        registry.PUBLIC.clear()
        registry.PUBLIC.update(saved)


def test_a_public_name_is_declared_once():
    saved = dict(registry.PUBLIC)
    try:
        first = registry.public("torch.fixture_once")(lambda x: x)
        assert registry.public("torch.fixture_once")(first) is first  # (the same function again)
        with pytest.raises(ValueError, match="torch.fixture_once is declared twice"):
            registry.public("torch.fixture_once")(lambda x: -x)
        assert registry.PUBLIC["torch.fixture_once"] is first
    finally:
        registry.PUBLIC.clear()
        registry.PUBLIC.update(saved)


def test_fill_adds_and_never_overrides():
    saved = dict(registry.PUBLIC)
    try:
        registry.public("torch.special.fixture_a", "torch.special.taken")(len)
        space = {"taken": "mine"}
        _namespace.fill(space, "torch.special.")
        assert space["taken"] == "mine" and space["fixture_a"] is len
    finally:
        registry.PUBLIC.clear()
        registry.PUBLIC.update(saved)


@pytest.mark.parametrize("path", ["torch.linalg", "torch.special", "torch.nn.functional"])
def test_submodules_are_real_and_say_what_is_missing(path):
    mod = importlib.import_module("gradcli." + path)
    with pytest.raises(AttributeError, match=f"^{path}.no_such_fn is not supported by gradcli$"):
        mod.no_such_fn  # noqa: B018


def test_every_public_tensor_name_is_installed():
    for name, fn in registry.public_names("Tensor.").items():
        assert getattr(Tensor, name) is fn
    for name, value in registry.public_names("torch.").items():
        # (a value the registry holds as None is one, as torch.newaxis is numpy's None)
        assert (getattr(torch, name) is None) == (value is None), name


DTYPE_NAMES = ("float", "double", "half", "bfloat16", "float16", "float32", "float64", "int",
               "long", "short", "bool", "uint8", "int8", "int16", "int32", "int64",
               "cfloat", "cdouble", "complex64", "complex128")


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_names_stay_dtypes(name):
    """torch.bfloat16 and its kin are dtypes; a wrapper installed over the functions that
    share a Tensor conversion method's name (x.bfloat16()) must leave them alone."""
    assert isinstance(getattr(torch, name), torch.dtype)
    assert isinstance(registry.PUBLIC.get(f"torch.{name}", torch.float32), torch.dtype)
