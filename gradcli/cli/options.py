"""Option helpers shared by the commands (app, grad, repl): resource limits from flags
and the environment, and the hand-written fast paths' reading of options exactly as typer
reads them. Its own module so that the command modules import it, not each other."""

import sys


def _err(text):
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _limits(max_steps=None, max_elements=None, max_depth=None, max_length=None):
    from gradcli.lang.limits import Limits
    try:
        return Limits.from_env(max_steps=max_steps, max_elements=max_elements,
                               max_depth=max_depth, max_length=max_length)
    except (ValueError, TypeError) as e:
        _err(f"gradcli: {e}")
        return None


def _option_value(rest, i):
    """``(name, value, i)`` for the option at ``rest[i]``, written ``--name=value`` or
    ``--name value`` (then ``i`` moves on to the value); value is None when it is missing.

    Shared by the hand-written fast paths here and in gradcli.cli.grad, which must read
    options exactly as typer does."""
    name, eq, value = rest[i].partition("=")
    if not eq:
        i += 1
        if i >= len(rest):
            return name, None, i
        value = rest[i]
    return name, value, i


def _int_value(text, positive):
    """The integer ``text`` holds, or None when it is not one (or is not > 0 where
    ``positive``): the fast paths then leave the arguments to typer, which reports them."""
    try:
        number = int(text)
    except ValueError:
        return None
    if positive and number <= 0:
        return None
    return number


def _positive(value):
    import typer
    if value is not None and value <= 0:
        raise typer.BadParameter("must be a positive integer")
    return value
