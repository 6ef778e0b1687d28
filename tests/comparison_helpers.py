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


def printed_by_gradcli(src: str, max_steps: int = 200_000) -> str:
    """What `src` prints run as a gradcli program (file name p.grad); an error it stops
    with is appended as ``!Kind: message``."""
    import io

    from gradcli.lang import GradcliError, Limits, Session

    out = io.StringIO()
    session = Session(stdout=out, limits=Limits(max_steps=max_steps))
    try:
        session.run(src, "p.grad")
    except GradcliError as e:
        return out.getvalue() + f"!{e.kind}: {e.message}"
    return out.getvalue()


def printed_by_python(src: str, module_name: str = "__main__") -> str:
    """What `src` prints run by Python (file name p.py, its `__name__` `module_name`): its
    `import torch` lines import whatever the interpreter has under that name."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(src, "p.py", "exec"), {"__name__": module_name})  # noqa: S102
    return buf.getvalue()


def printed_by_one_gradcli_run(tmp_path, sources: list, tag: str) -> list:
    """What each of `sources` prints when all run as files of one `gradcli run` process
    (real, as users run it; in order, each in a fresh state), checked to end without a
    Python traceback. Files are named `<tag><k>.grad`."""
    import os
    import subprocess
    import sys

    names = []
    for k, src in enumerate(sources):
        (tmp_path / f"{tag}{k}.grad").write_text(f"print('### {tag}{k}')\n" + src)
        names.append(f"{tag}{k}.grad")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", *names], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NO_COLOR="1"))
    assert "Traceback" not in done.stderr
    chunks = done.stdout.split(f"### {tag}")[1:]
    assert len(chunks) == len(sources), done.stderr[-2000:]
    return [chunk.split("\n", 1)[1] for chunk in chunks]
