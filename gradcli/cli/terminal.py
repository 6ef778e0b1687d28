"""The terminal's settings around the REPL's start (no engine, no prompt_toolkit: the
top-level command calls this before anything slow is imported)."""

from __future__ import annotations

import os
import sys


def hold_terminal_echo() -> None:
    """Stop the terminal echoing keys from now until the process ends (the REPL's start).

    Lines typed while the REPL starts (imports take a second) wait in the terminal's
    buffer; echoed by the terminal as well, they would show twice once the prompt reads
    and shows them. The prompt shows them once; the terminal's settings come back at exit.
    """
    try:
        import termios

        fd = sys.stdin.fileno()
        if not os.isatty(fd):
            return
        saved = termios.tcgetattr(fd)
        quiet = list(saved)
        quiet[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except (ImportError, OSError, ValueError, AttributeError):
        return
    import atexit

    def restore():
        try:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except (OSError, ValueError):
            pass
    atexit.register(restore)
