"""One expression evaluated on PyTorch and on gradcli.torch, compared by what each shows.

The distribution, build-query and similar tests check long lists of one-line expressions:
each is evaluated on both libraries (after the same `manual_seed`, so sampling draws the
same numbers) and its `repr` -- or its error as ``Type: message`` -- must be PyTorch's."""

from __future__ import annotations

import warnings


def shown(code: str, lib, make_env, seed: int | None = None, quiet: bool = False) -> str:
    """What evaluating `code` on `lib` shows: its repr, or ``Type: message`` of the error
    it raises, with gradcli's module path written as PyTorch's. `make_env(lib)` gives the
    names the code uses (built after the seed is set); `quiet` silences warnings."""
    if seed is not None:
        lib.manual_seed(seed)
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        try:
            value = repr(eval(code, make_env(lib)))  # noqa: S307 - the tests' fixed strings
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            value = f"{type(e).__name__}: {e}"
    return value.replace("gradcli.torch", "torch")


def assert_shown_as_pytorch(code: str, make_env, seed: int | None = None,
                            quiet: bool = False) -> None:
    """`code` shows on gradcli.torch exactly what it shows on PyTorch."""
    import torch

    import gradcli.torch as gt

    theirs = shown(code, torch, make_env, seed, quiet)
    assert shown(code, gt, make_env, seed, quiet) == theirs
