"""``python -m gradcli``: the gradcli command line."""
from gradcli.cli.app import main


def _run_as_module() -> None:
    """`main()`, with its exit status kept as chosen.

    Under ``python -m``, CPython 3.11 remembers that the last string ``exec``/``eval`` ended
    in a KeyboardInterrupt (namedtuple and dataclass creation run one; so a module imported
    just as Ctrl-C arrives can leave the mark) and, at exit, kills the process with SIGINT
    even though gradcli caught the interrupt, reported it and chose 130 (Py_RunMain's
    unhandled-interrupt check). Every string exec clears that mark first, so an empty one
    on the way out leaves the exit status gradcli chose."""
    try:
        main()
    finally:
        exec("pass", {})  # noqa: S102 - constant text; only clears the mark described above


if __name__ == "__main__":
    _run_as_module()
