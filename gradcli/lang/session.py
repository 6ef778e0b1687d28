"""Sessions: a program namespace that runs source after source, and run_file."""
from __future__ import annotations

import os
import sys
import warnings

from . import runtime as R
from .bare_names import bare_functions
from .compiler import Compiler, Program, compile_program
from .errors import CompileError, GradcliError, InternalError, Interrupted, LimitError, ProgramError
from .limits import LimitExceeded, Limits, raise_with
from .parser import parse

_COMPILED_FILE = None


def warning_location():
    """(filename, line) Python would give a warning raised now by the program's code: the
    line of the innermost expression of the program being evaluated (a call, an attribute,
    a statement), as Python's warning points at the line its frame is running; None outside
    the program's code."""
    global _COMPILED_FILE
    if _COMPILED_FILE is None:
        _COMPILED_FILE = Compiler.block_from.__code__.co_filename
    from .compiler import PYTHON_LINES

    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        name = code.co_filename
        if name == _COMPILED_FILE or name.startswith("<gradcli fused"):
            names = code.co_varnames + code.co_freevars
            for key in ("loc", "l0", "aloc"):
                if key in names:
                    loc = f.f_locals.get(key)
                    if type(loc) is tuple and len(loc) == 3 and type(loc[1]) is tuple:
                        fname, pos = loc[0], loc[1]
                        return fname, PYTHON_LINES.get((fname, pos), pos[0])
        f = f.f_back
    return None


_LIBRARY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LANGUAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _inside_library(filename: str) -> bool:
    """Whether Python placed a warning in gradcli's library code (the torch facade, the
    engine) rather than in the program (whose frames are the language's compiled code)."""
    return filename.startswith(_LIBRARY_DIR) and not filename.startswith(_LANGUAGE_DIR)


class Session:
    """A program namespace.

    ``run(source, filename)`` parses, compiles and runs ``source`` in this
    session's globals and returns the value of its last statement if that
    is an expression statement (else None). Errors are raised as
    :class:`~gradcli.lang.errors.GradcliError` subclasses with ``render()``.

    ``interactive=True`` (the REPL) resolves global names at run time, so a
    later input can redefine a name earlier functions use; otherwise each
    ``run`` is a whole program and names of the builtins/facade that the
    program never assigns are bound when it is compiled.
    """

    def __init__(self, *, limits: Limits | None = None, stdout=None, stderr=None,
                 interactive: bool = False, seed: int | None = None, facade: bool = True):
        self.limits = limits if limits is not None else Limits.from_env()
        self.state = R.RunState(self.limits, out=stdout)
        self.stderr = stderr
        self.interactive = interactive
        self.globals: dict = {"__name__": "__main__"}
        self.sources: dict = {}
        self._with_facade = facade
        self._builtins = None
        self._warned = set()
        if seed is not None:
            self.seed(seed)

    # ------------------------------------------------------------ namespace
    @property
    def builtins(self) -> dict:
        if self._builtins is None:
            from .view_builtins import view_builtins

            self._builtins = R.make_builtins(self.state, with_facade=self._with_facade)
            self._builtins.update(bare_functions(self._builtins))  # bare exp(1) is e
            self._builtins.update(view_builtins(self.globals, self.state))
        return self._builtins

    def lookup(self, name):
        """A name as the program would see it (KeyError if undefined)."""
        if name in self.globals:
            return self.globals[name]
        return self.builtins[name]

    def names(self) -> list:
        """Every name the program can use (for completion)."""
        return sorted(n for n in set(self.globals) | set(self.builtins)
                      if not n.startswith("__"))  # (not the session's module cache)

    def reset(self):
        self.globals.clear()
        self.globals["__name__"] = "__main__"
        self.sources.clear()

    def seed(self, n: int):
        fac = R.facade() if self._with_facade else None
        fn = getattr(fac, "manual_seed", None) if fac is not None else None
        if fn is not None:
            fn(n)

    # ------------------------------------------------------------ running
    def compile(self, source: str, filename: str = "<string>", *, echo: bool = False) -> Program:
        self.sources[filename] = source
        try:
            module = parse(source, filename, max_nesting=self.limits.max_nesting)
            return compile_program(module, filename, source, globals_=self.globals,
                                   builtins=self.builtins, state=self.state, limits=self.limits,
                                   echo=echo, static_globals=not self.interactive,
                                   display=self.display)
        except GradcliError:
            raise
        except RecursionError:
            raise CompileError("the program is nested too deeply to compile", filename,
                               (1, 1, 1, 1), source) from None
        except Exception as e:  # a bug in gradcli
            raise _internal(e, filename) from e

    def run(self, source: str, filename: str = "<string>", *, echo: bool = False):
        return self.execute(self.compile(source, filename, echo=echo))

    def display(self, value):
        """Echo a value as Python's interactive prompt does."""
        if value is None:
            return
        R.check_repr_size(value)
        out = self.state.out or sys.stdout
        out.write(repr(value) + "\n")

    def execute(self, program: Program):
        state = self.state
        state.reset_budget()
        old_elements = R.set_active_limits(self.limits)
        old_limit = sys.getrecursionlimit()
        want = max(old_limit, 2000 + 60 * self.limits.max_depth)
        sys.setrecursionlimit(min(want, 200_000))
        program.last_holder[0] = None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                warnings.showwarning = self._show_warning
                program.code(None)
        except LimitExceeded as e:
            raise self._report(e, program, LimitError, str(e)) from None
        except KeyboardInterrupt as e:
            raise self._report(e, program, Interrupted, "interrupted") from None
        except RecursionError as e:
            raise self._report(e, program, LimitError,
                               "maximum recursion depth exceeded (the program nests calls or "
                               "expressions too deeply)") from None
        except Exception as e:
            if type(e).__name__ == "AllocationLimitError":  # the engine's element guard
                raise self._report(e, program, LimitError,
                                   f"{e} (raise it with {raise_with('max_elements')})") from None
            raise self._report(e, program, ProgramError, str(e), kind=type(e).__name__) from None
        finally:
            R.restore_engine_limits(old_elements)
            sys.setrecursionlimit(old_limit)
            state.depth = 0
        return program.last_holder[0]

    def _report(self, exc, program, cls, message, kind=None):
        tb = exc.__dict__.get("_gradcli_tb") or []
        if tb:
            filename, pos, _ = tb[0]
        else:
            filename, pos = program.filename, None
        chain = [(fn, p[0], name) for fn, p, name in reversed(tb)]
        source = self.sources.get(filename, program.source if filename == program.filename
                                  else None)
        if source is None:  # a line of a helper .grad file the program imported
            from .grad_modules import SOURCES

            source = SOURCES.get(filename)
        if isinstance(exc, MemoryError) and not message:
            message = "out of memory"
        details = _assert_details(exc)
        if details and not message:
            message, details = details[0], details[1:]
        err = cls(message, filename, pos, source, kind=kind, exc=exc, chain=chain,
                  details=details)
        if isinstance(exc, BrokenPipeError):
            err.broken_pipe = True
        return err

    def _show_warning(self, message, category, filename, lineno, file=None, line=None):
        """Print a warning as Python prints it: `file:line: Category: message`, then the
        program's source line at that place, indented; once per place and text (Python's
        default action)."""
        where = warning_location()
        if where is not None:
            fname, at_line = where
            text = f"{fname}:{at_line}: {category.__name__}: {message}"
            source_line = self._source_line(fname, at_line)
        else:
            text, source_line = f"<gradcli>: {category.__name__}: {message}", ""
        # a warning PyTorch raises from inside its own Python code (a module's, a loss's)
        # is shown once per process whatever line of the program reaches it: gradcli's
        # counterpart points inside gradcli's library, and is kept once per that place
        key = (filename, lineno, category, str(message)) if _inside_library(filename) else text
        if key in self._warned:
            return
        self._warned.add(key)
        if source_line:
            text += "\n  " + source_line
        err = self.stderr or sys.stderr
        try:
            err.write(text + "\n")
        except (OSError, ValueError):
            pass

    def _source_line(self, filename, lineno) -> str:
        """Line `lineno` of the program file (or .grad module) `filename`, stripped as
        Python's warning display strips it; '' when unknown."""
        source = self.sources.get(filename)
        if source is None:
            from .grad_modules import SOURCES

            source = SOURCES.get(filename)
        if not source:
            return ""
        lines = source.split("\n")
        return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""


def _assert_details(exc) -> list:
    """The lines a failed assert's introspection explains it with (gradcli.lang.assertions)."""
    from .assertions import EXPLAIN_KEY

    explain = exc.__dict__.get(EXPLAIN_KEY) if isinstance(exc, AssertionError) else None
    if explain is None:
        return []
    try:
        return list(explain())
    except Exception:  # the explanation is a courtesy: never let it hide the failure
        return []


def _internal(exc, filename):
    msg = f"{type(exc).__name__}: {exc} (this is a bug in gradcli; rerun with GRADCLI_DEBUG=1)"
    err = InternalError(msg, filename)
    err.exc = exc
    return err


def read_source(path: str) -> tuple:
    """(source, filename) of a file or '-' (stdin); CompileError when unreadable
    or not UTF-8."""
    if path == "-":
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else \
            sys.stdin.read().encode()
        filename = "<stdin>"
    else:
        filename = path
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            err = CompileError(f"cannot read file: {e.strerror or e}", filename, kind="Error")
            err.exit_code = 2
            raise err from None
    try:
        return data.decode("utf-8"), filename
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise CompileError(f"the file is not valid UTF-8 (byte 0x{data[e.start]:02x})", filename,
                           (line, col, line, col + 1)) from None


def _forget_given_warnings() -> None:
    from gradcli.engine.warn_site import forget_given

    forget_given()


def _forget_distribution_registrations():
    """A program's register_kl / biject_to.register pairs end with it (the distributions
    package, once loaded, keeps its own)."""
    package = sys.modules.get("gradcli.torch.distributions")
    if package is not None:
        package._forget_program_registrations()


def _forget_global_module_hooks():
    """A program's register_module_*_hook hooks end with it (nn, once loaded, stays)."""
    module = sys.modules.get("gradcli.torch.nn.modules.module")
    if module is not None:
        module._forget_global_hooks()


def reset_engine(seed: int = 0):
    """Fresh engine state for a new file, as a new Python process has: print options,
    grad mode, default dtype, RNG seed, default device, cuDNN flags, determinism, float32
    matmul precision, anomaly mode, warn_always, the once-per-process warnings (a REPL keeps them between its inputs,
    as one Python session does; `:reset` starts afresh), the kl_divergence pairs,
    constraint transforms and global module hooks a program registered."""
    try:
        fac = R.facade()
    except ImportError:
        return
    for call in (lambda: fac.set_printoptions(profile="default", sci_mode=None),
                 lambda: fac.set_grad_enabled(True),
                 lambda: fac.set_default_dtype(fac.float32),
                 lambda: fac.manual_seed(seed),
                 lambda: fac.set_default_device(None),
                 lambda: fac.backends.cudnn._reset_flags(),
                 lambda: fac.backends.mkldnn._reset_flags(),
                 lambda: fac.backends.cuda._reset_flags(),
                 lambda: fac.use_deterministic_algorithms(False, warn_only=False),
                 lambda: fac.set_float32_matmul_precision("highest"),
                 lambda: fac.set_anomaly_enabled(False),
                 lambda: fac.set_warn_always(False),
                 _forget_given_warnings, _forget_distribution_registrations,
                 _forget_global_module_hooks):
        try:
            call()
        except Exception:
            pass


def run_file(path: str, *, limits: Limits | None = None, seed: int = 0, echo: bool = False,
             stdout=None, stderr=None, on_done=None) -> int:
    """Run one program file ('-' for stdin) in a fresh session; report any
    error on stderr; return the exit code (0, 1, 2 or 130)."""
    err = stderr or sys.stderr
    try:
        source, filename = read_source(path)
    except CompileError as e:
        _emit(err, e.render())
        if on_done is not None:
            on_done(None, e)
        return e.exit_code
    return run_source(source, filename, limits=limits, seed=seed, echo=echo, stdout=stdout,
                      stderr=stderr, on_done=on_done)


def run_source(source: str, filename: str, *, limits: Limits | None = None, seed: int = 0,
               echo: bool = False, stdout=None, stderr=None, show_last: bool = False,
               on_done=None) -> int:
    """Like :func:`run_file` for source text; ``show_last`` echoes the value
    of a final expression statement (``gradcli eval``). ``on_done(session,
    error_or_None)`` runs after the program (``run --graph/--grads/--json``)."""
    err = stderr or sys.stderr
    session = Session(limits=limits, stdout=stdout, stderr=stderr)
    try:
        reset_engine(seed)
        value = session.run(source, filename, echo=echo)
        if show_last and not echo:
            session.display(value)
        out = stdout or sys.stdout
        out.flush()
        if on_done is not None:
            on_done(session, None)
        return 0
    except GradcliError as e:
        if getattr(e, "broken_pipe", False):
            return 0
        _emit(err, render_error(e))
        if on_done is not None:
            on_done(session, e)
        return e.exit_code
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        _emit(err, f"{filename}: KeyboardInterrupt: interrupted")
        return 130
    except Exception as e:  # pragma: no cover - defensive: bugs must not print tracebacks
        if os.environ.get("GRADCLI_DEBUG"):
            raise
        _emit(err, _internal(e, filename).render())
        return 1


def render_error(e: GradcliError) -> str:
    if isinstance(e, CompileError):
        return e.render_all()
    return e.render()


def _emit(stream, text):
    try:
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass
