"""Scenarios run twice, with gradcli.torch and with PyTorch, each writing what it sees into
a log (values, flags, node names, error types and texts); the two logs must be the same.
Shared by the autograd test files. Object addresses read 0x? in both logs."""

from __future__ import annotations

import re
import warnings

import pytest

import gradcli.torch as gt

ADDR = re.compile(r"0x[0-9a-fA-F]+")


def run_scenario(mod, scenario, warns: str = "leave") -> list:
    """The log of `scenario(mod, log)`; an uncaught error ends it as its last line.
    `warns`: "leave" them to pytest, "ignore" them, or "record" them into the log."""
    log = []
    with warnings.catch_warnings(record=warns == "record") as caught:
        if warns != "leave":
            warnings.simplefilter("always" if warns == "record" else "ignore")
        try:
            scenario(mod, log)
        except Exception as e:  # noqa: BLE001 - the error is part of the behaviour
            log.append(f"{type(e).__name__}: {e}")
    if caught:
        log += [f"{w.category.__name__}: {w.message}" for w in caught]
    return [ADDR.sub("0x?", str(x)) for x in log]


def same(scenario, warns: str = "leave") -> list:
    """gradcli's log, asserted equal to PyTorch's."""
    torch = pytest.importorskip("torch")
    mine, theirs = run_scenario(gt, scenario, warns), run_scenario(torch, scenario, warns)
    assert mine == theirs
    return mine


def same_ignoring_warnings(scenario) -> list:
    return same(scenario, "ignore")


def same_recording_warnings(scenario) -> list:
    return same(scenario, "record")


def attempt(log, f) -> None:
    """Log f()'s result, or the error it raises."""
    try:
        log.append(f())
    except Exception as e:  # noqa: BLE001 - the error is part of the behaviour
        log.append(f"{type(e).__name__}: {e}")
