"""``gradcli test PATH...``: run ``.grad`` files as tests (docs/commands.md).

One test per file, each in a fresh session in its own process (see
:mod:`gradcli.cli.testing`, shared with the pytest plugin). Results go to
stdout: a line per file (a rich progress display instead on a terminal), the
reports of the files that failed, a summary table and a count line.
Diagnostics (bad paths, an unwritable report) go to stderr.

Exit codes: 0 all passed; 1 any file failed; 2 no ``.grad`` file found,
a usage error, or the JUnit report could not be written; 130 Ctrl-C (the
report of the files that ran is still written).
"""

import os
import sys
import time
from typing import List, Optional

TEST_HELP = """Run .grad files as tests: one test per file, each in a fresh process.

A file fails at its first failed assert, error or syntax error, and the
report shows the script's own line and, for a failed assert, the values it
compared. Where NAME.out lies beside NAME.grad, the file's stdout must also
equal it (0x... addresses ignored); a unified diff shows the difference.

Examples:

  gradcli test tests/                     every *.grad under tests/

  gradcli test examples -k "seed and not legacy"

  gradcli test tests --timeout 10 --junit-xml reports/grad.xml

  gradcli test tests -n 2 -q --json reports/grad.json

Directories are searched for the files that the grad_files pattern of the
pytest configuration names (default test_*.grad), as pytest collects them;
files named on the command line run whatever their name. Under
GITHUB_ACTIONS=true each failure is also printed as an ::error annotation.

Exit codes: 0 all passed, 1 any failed, 2 no .grad file found (or a usage
error, or the JUnit report could not be written), 130 interrupted (Ctrl-C).
"""

STATUS_WORD = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "timeout": "TIMEOUT"}
STATUS_STYLE = {"passed": "green", "failed": "red", "error": "red", "timeout": "yellow"}


def register(app):
    from typing import Annotated

    import typer

    def positive(value: Optional[int]):
        if value is not None and value <= 0:
            raise typer.BadParameter("must be a positive integer")
        return value

    def non_negative(value: float):
        if value is not None and value < 0:
            raise typer.BadParameter("must be 0 (no limit) or a positive number of seconds")
        return value

    @app.command("test", help=TEST_HELP)
    def test_cmd(
        paths: Annotated[Optional[List[str]], typer.Argument(
            metavar="PATH...", help="Files or directories (default: the testpaths of the "
            "pytest configuration when run in its folder, else the current directory).",
            show_default=False)] = None,
        keyword: Annotated[Optional[str], typer.Option(
            "-k", metavar="EXPR",
            help="Only files whose path matches: words are case-insensitive substrings, "
                 "combined with and/or/not and parentheses (as pytest -k).")] = None,
        timeout: Annotated[float, typer.Option(
            "--timeout", metavar="S", callback=non_negative,
            help="Wall-clock limit per file in seconds (0: none).")] = 60.0,
        junit_xml: Annotated[Optional[str], typer.Option(
            "--junit-xml", metavar="FILE",
            help="Also write a JUnit XML report (one testcase per file).")] = None,
        exitfirst: Annotated[bool, typer.Option(
            "--exitfirst", "-x", help="Stop at the first file that fails.")] = False,
        workers: Annotated[int, typer.Option(
            "-n", "--workers", metavar="N", callback=positive,
            help="Run files on N worker processes at once (reports keep the files' "
                 "order and read as a serial run's).")] = 1,
        quiet: Annotated[bool, typer.Option(
            "-q", "--quiet", help="List failures only: no line per passing file.")] = False,
        update_goldens: Annotated[bool, typer.Option(
            "--update-goldens",
            help="Write each file's stdout to NAME.out beside it (for files that ran to "
                 "the end and printed something or had one); the files then pass.")] = False,
        json_report: Annotated[Optional[str], typer.Option(
            "--json", metavar="FILE",
            help="Also write a JSON report ('-' for stdout; schema gradcli.test/1, "
                 "documented in docs/commands.md).")] = None,
        seed: Annotated[int, typer.Option(
            "--seed", metavar="N", help="Seed of the random generator for every file.")] = 0,
        max_steps: Annotated[Optional[int], typer.Option(
            "--max-steps", callback=positive, metavar="N",
            help="Step budget per file (default 10,000,000; env GRADCLI_MAX_STEPS).")] = None,
        max_elements: Annotated[Optional[int], typer.Option(
            "--max-elements", callback=positive, metavar="N",
            help="Largest tensor allocation in elements (default 100,000,000; "
                 "env GRADCLI_MAX_ELEMENTS).")] = None,
        max_depth: Annotated[Optional[int], typer.Option(
            "--max-depth", callback=positive, metavar="N",
            help="Nested calls of user functions (default 500; env GRADCLI_MAX_DEPTH).")] = None,
        max_length: Annotated[Optional[int], typer.Option(
            "--max-length", callback=positive, metavar="N",
            help="Longest string or list (default 10,000,000; env GRADCLI_MAX_LENGTH).")] = None,
        no_color: Annotated[bool, typer.Option(
            "--no-color", help="Plain text output, no colours.")] = False,
    ):
        if not paths:
            from gradcli.cli.collect import default_paths

            paths = default_paths()
        raise typer.Exit(do_test(
            paths, keyword=keyword, timeout=timeout, junit_xml=junit_xml,
            exitfirst=exitfirst, seed=seed, no_color=no_color, workers=workers or 1,
            quiet=quiet, update_goldens=update_goldens, json_report=json_report,
            max_steps=max_steps,
            max_elements=max_elements, max_depth=max_depth, max_length=max_length))


# ------------------------------------------------------------------ output
class _Out:
    """stdout that survives a closed pipe (``| head``): the run goes on quietly."""

    def __init__(self, to_stderr: bool = False):
        self.closed = False
        self.to_stderr = to_stderr

    def write(self, text: str):
        if self.closed:
            return
        stream = sys.stderr if self.to_stderr else sys.stdout
        try:
            stream.write(text)
            stream.flush()
        except BrokenPipeError:
            self.closed = True
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, stream.fileno())
                os.close(null)
            except (OSError, ValueError):
                pass
        except (OSError, ValueError):
            self.closed = True


def _err(text: str):
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


_ANSI = {"green": "32", "red": "31", "yellow": "33"}


class PlainReporter:
    """Lines, for logs and pipes; ANSI colours when FORCE_COLOR asks for them.
    ``quiet``: no line per passing file, and the table lists failures only."""

    def __init__(self, total: int, quiet: bool = False, color: bool = False):
        self.out = _Out()
        self.total = total
        self.width = len(str(total))
        self.quiet = quiet
        self.color = color

    def paint(self, text: str, style: str) -> str:
        code = _ANSI.get(style.replace("bold ", ""))
        if not self.color or code is None:
            return text
        return f"\x1b[1;{code}m{text}\x1b[0m"

    def start(self):
        pass

    def begin(self, index: int, path: str):
        if not self.quiet:
            self.out.write(f"[{index + 1:>{self.width}}/{self.total}] {path} ... ")

    def result(self, index: int, o):
        word = self.paint(STATUS_WORD[o.status], STATUS_STYLE[o.status])
        if self.quiet:
            if not o.passed:
                self.out.write(f"{word} {o.path}  {_one_line(o)}\n")
            return
        line = f"{word} ({o.duration:.2f} s)"
        if not o.passed:
            line += f"  {_one_line(o)}"
        self.out.write(line + "\n")

    def interrupted(self):
        if not self.quiet:
            self.out.write("interrupted\n")

    def stop(self):
        pass

    def section(self, title: str):
        self.out.write(f"\n{'=' * 8} {title} {'=' * max(8, 70 - len(title))}\n")

    def failure(self, o):
        head = self.paint(f"---- {o.path} ({STATUS_WORD[o.status]}) ----", STATUS_STYLE[o.status])
        self.out.write(f"\n{head}\n")
        self.out.write(o.report.rstrip("\n") + "\n")
        for name, text in _captures(o):
            self.out.write(f"-- captured {name} --\n{text.rstrip()}\n")

    def table(self, outcomes):
        outcomes = [o for o in outcomes if not o.passed] if self.quiet else list(outcomes)
        if not outcomes:
            return
        rows = [(o.path, STATUS_WORD[o.status], f"{o.duration:.2f} s",
                 "" if o.passed else _one_line(o)) for o in outcomes]
        head = ("file", "result", "time", "message")
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
        lines = [fmt.format(*head).rstrip(),
                 "  ".join("-" * w for w in widths) + "  " + "-" * 7]
        lines += [fmt.format(*r).rstrip() for r in rows]
        self.out.write("\n" + "\n".join(lines) + "\n")

    def summary(self, text: str, ok: bool):
        self.out.write(self.paint(text, "green" if ok else "red") + "\n")

    def annotate(self, lines):
        """GitHub Actions workflow commands, one per failure."""
        for line in lines:
            self.out.write(line + "\n")


class RichReporter(PlainReporter):
    """A live progress display and a rich table, on a terminal."""

    def __init__(self, total: int, no_color: bool, quiet: bool = False):
        super().__init__(total, quiet)
        from rich.console import Console
        self.console = Console(no_color=no_color or None, highlight=False, soft_wrap=False)
        self.progress = None
        self.task = None

    def start(self):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        self.progress = Progress(SpinnerColumn(), TextColumn("[bold]testing[/]"),
                                 BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.description}", markup=False),
                                 console=self.console, transient=True)
        self.progress.start()
        self.task = self.progress.add_task("", total=self.total)

    def begin(self, index: int, path: str):
        self.progress.update(self.task, description=path)

    def result(self, index: int, o):
        from rich.text import Text
        if self.quiet and o.passed:
            self.progress.advance(self.task)
            return
        t = Text()
        t.append(f"{STATUS_WORD[o.status]:<7}", style=f"bold {STATUS_STYLE[o.status]}")
        t.append(o.path)
        t.append(f"  {o.duration:.2f} s", style="dim")
        if not o.passed:
            t.append(f"  {_one_line(o)}", style=STATUS_STYLE[o.status])
        self.progress.console.print(t)
        self.progress.advance(self.task)

    def interrupted(self):
        pass

    def stop(self):
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def section(self, title: str):
        self.console.print()
        self.console.rule(f"[bold]{title}[/]")

    def failure(self, o):
        from rich.text import Text
        self.console.print()
        self.console.print(Text(f"{o.path} ({STATUS_WORD[o.status]})",
                                style=f"bold {STATUS_STYLE[o.status]}"))
        body = Text(o.report.rstrip("\n"))
        if o.diff:
            body = Text()
            first, _, rest = o.report.partition("\n")
            body.append(first + "\n")
            for line in rest.split("\n"):
                style = ("green" if line.startswith("+") and not line.startswith("+++") else
                         "red" if line.startswith("-") and not line.startswith("---") else
                         "cyan" if line.startswith("@@") else None)
                body.append(line + "\n", style=style)
            body.rstrip()
        self.console.print(body)
        for name, text in _captures(o):
            self.console.print(Text(f"-- captured {name} --", style="dim"))
            self.console.print(Text(text.rstrip()))

    def table(self, outcomes):
        from rich import box
        from rich.table import Table
        from rich.text import Text
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        table.add_column("file", overflow="fold")
        table.add_column("result")
        table.add_column("time", justify="right")
        table.add_column("message", overflow="ellipsis", no_wrap=True)
        if self.quiet:
            outcomes = [o for o in outcomes if not o.passed]
            if not outcomes:
                return
        for o in outcomes:
            table.add_row(Text(o.path), Text(STATUS_WORD[o.status],
                                             style=f"bold {STATUS_STYLE[o.status]}"),
                          f"{o.duration:.2f} s", Text("" if o.passed else _one_line(o)))
        self.console.print()
        self.console.print(table)

    def summary(self, text: str, ok: bool):
        self.console.print(f"[bold {'green' if ok else 'red'}]{text}[/]")


def _one_line(o) -> str:
    """A short message for a line or a table cell: ``Kind: message (line N)``."""
    msg = o.message.split("\n", 1)[0]
    text = (f"{o.kind}: {msg}" if msg else o.kind) if o.kind else msg
    if o.line:
        text += f" (line {o.line})"
    return text


def _captures(o):
    """The program's output worth showing under a failure's report."""
    if o.stdout.strip() and not o.diff:
        yield "stdout", o.stdout
    if o.stderr.strip():
        yield "stderr", o.stderr


# ----------------------------------------------------------------- command
def do_test(paths, *, keyword=None, timeout=60.0, junit_xml=None, exitfirst=False, seed=0,
            no_color=False, workers=1, quiet=False, update_goldens=False, json_report=None,
            **limit_flags) -> int:
    from gradcli.cli import testing
    from gradcli.lang.limits import Limits

    try:
        limits = Limits.from_env(**limit_flags)
    except (ValueError, TypeError) as e:
        _err(f"gradcli test: {e}")
        return 2
    try:
        selected = testing.keyword_matcher(keyword)
    except ValueError as e:
        _err(f"gradcli test: {e}")
        return 2
    files, problems = testing.discover(paths)
    for p in problems:
        _err(f"gradcli test: {p}")
    if any(p.endswith("no such file or directory") for p in problems):
        return 2
    if not files:
        from gradcli.cli.collect import configured_patterns

        _err(f"gradcli test: no .grad file found in {' '.join(paths)} whose name matches "
             f"{' '.join(configured_patterns())} (the grad_files option of the pytest "
             f"configuration; files named on the command line always run)")
        return 2
    chosen = [f for f in files if selected(f)]
    deselected = len(files) - len(chosen)
    if not chosen:
        _err(f"gradcli test: no .grad file matches -k {keyword!r} "
             f"({len(files)} deselected)")
        return 2

    for target, what in ((junit_xml, "JUnit XML"), (json_report, "JSON")):
        if target and target != "-":
            try:
                testing.check_report_target(target, what)
            except testing.ReportError as e:  # said now, and again (exit 2) after the run
                _err(f"gradcli test: warning: {e}; running the tests anyway")
    if no_color:
        os.environ["NO_COLOR"] = "1"
    tty = _isatty()
    if tty and json_report != "-":
        reporter = RichReporter(len(chosen), no_color, quiet)
    else:
        reporter = PlainReporter(len(chosen), quiet, color=_force_color() and not no_color)
    if json_report == "-":  # stdout carries the JSON alone; the human report goes to stderr
        reporter.out = _Out(to_stderr=True)
    started = time.perf_counter()
    outcomes, interrupted = _run_all(chosen, reporter, workers=workers, exitfirst=exitfirst,
                                     timeout=timeout, limits=limits, seed=seed)
    elapsed = time.perf_counter() - started

    # A second Ctrl-C while reporting must not lose the reports: hold it until written.
    import signal
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN) if interrupted else None
    except ValueError:  # not the main thread
        old = None
    try:
        if update_goldens and not interrupted:
            _update_goldens(outcomes)
        code = _finish(reporter, outcomes, chosen, elapsed, deselected, interrupted,
                       junit_xml, json_report, seed, timeout)
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)
    return code


def _run_all(chosen, reporter, *, workers, exitfirst, timeout, limits, seed):
    """Run the files, reporting each in the files' order; ``workers`` runners run
    files at once. Returns ``(outcomes, interrupted)``."""
    from concurrent.futures import ThreadPoolExecutor
    from queue import SimpleQueue

    from gradcli.cli import testing

    workers = max(1, min(workers, len(chosen)))
    runners = [testing.make_runner() for _ in range(workers)]
    idle = SimpleQueue()
    for runner in runners:
        idle.put(runner)

    began = time.perf_counter()

    def run_one(path):
        runner = idle.get()
        start = time.perf_counter() - began
        try:
            outcome = testing.run_grad_test(path, timeout=timeout, limits=limits, seed=seed,
                                            runner=runner)
        finally:
            idle.put(runner)
        outcome.extra["start"] = start
        return outcome

    outcomes, interrupted = [], False
    pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
    try:
        for runner in runners:
            runner.prepare()  # the helpers start while the display is set up
        reporter.start()
        pending = [pool.submit(run_one, p) for p in chosen] if pool else None
        for i, path in enumerate(chosen):
            reporter.begin(i, path)
            try:
                outcome = pending[i].result() if pending else run_one(path)
            except KeyboardInterrupt:
                interrupted = True
                reporter.interrupted()
                break
            outcomes.append(outcome)
            reporter.result(i, outcome)
            if exitfirst and not outcome.passed:
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        try:
            reporter.stop()
        except Exception:
            pass
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        for runner in runners:
            try:
                runner.close()
            except BaseException:
                pass
    return outcomes, interrupted


def _update_goldens(outcomes):
    """NAME.out := the stdout of each file that ran to its end (passed, or failed only
    on its golden); the outcome then passes. A file that printed nothing and has no
    NAME.out yet gets none (an empty golden for every assert-only test is clutter)."""
    from gradcli.cli import testing

    written = 0
    for o in outcomes:
        if not (o.passed or o.kind == "OutputMismatch"):
            continue
        if not o.stdout and o.golden is None:
            continue
        target = testing.golden_target(o.path)
        try:
            with open(target, "w", encoding="utf-8", newline="\n") as f:
                f.write(o.stdout)
        except OSError as e:
            _err(f"gradcli test: cannot write {target}: {e.strerror or e}")
            continue
        written += 1
        if not o.passed:
            o.status, o.kind, o.message, o.report, o.diff = testing.PASSED, "", "", "", ""
        o.golden = str(target)
    _err(f"gradcli test: wrote {written} golden file{'s' if written != 1 else ''} (NAME.out)")


def _finish(reporter, outcomes, chosen, elapsed, deselected, interrupted, junit_xml,
            json_report, seed, timeout) -> int:
    from gradcli.cli import testing
    bad = [o for o in outcomes if not o.passed]
    if bad:
        reporter.section("failures")
        for o in bad:
            reporter.failure(o)
    if outcomes:
        reporter.table(outcomes)
    counts = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    parts = [f"{counts[s]} {w}" for s, w in (("passed", "passed"), ("failed", "failed"),
                                              ("error", "error" if counts.get("error") == 1
                                               else "errors"),
                                              ("timeout", "timed out")) if counts.get(s)]
    if deselected:
        parts.append(f"{deselected} deselected")
    text = ", ".join(parts) or "no tests ran"
    text += f" in {elapsed:.2f} s"
    if interrupted:
        text += f" (interrupted after {len(outcomes)} of {len(chosen)} files)"
    if bad and os.environ.get("GITHUB_ACTIONS") == "true":
        reporter.annotate(testing.github_annotation(o) for o in bad)
    reporter.summary(text, ok=not bad and not interrupted)
    if interrupted:
        _err("gradcli test: interrupted")

    code = 130 if interrupted else (1 if bad else 0)
    note = (f"interrupted by Ctrl-C after {len(outcomes)} of {len(chosen)} files"
            if interrupted else None)
    reports = []
    if junit_xml:
        reports.append((junit_xml, testing.junit_xml(
            outcomes, duration=elapsed, properties={"seed": seed, "timeout": timeout},
            note=note), "JUnit XML"))
    if json_report:
        reports.append((json_report, testing.json_report(
            outcomes, duration=elapsed, deselected=deselected, interrupted=interrupted,
            exit_code=code, seed=seed, timeout=timeout), "JSON"))
    for target, data, what in reports:
        if target == "-":
            _Out().write(data.decode("utf-8"))
            continue
        try:
            testing.write_report(target, data, what)
        except testing.ReportError as e:
            _err(f"gradcli test: {e}")
            code = 130 if interrupted else 2
    return code


def _force_color() -> bool:
    """FORCE_COLOR set to anything but an empty string or 0, and NO_COLOR unset."""
    if os.environ.get("NO_COLOR"):
        return False
    return os.environ.get("FORCE_COLOR", "") not in ("", "0")


def _isatty() -> bool:
    try:
        return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False

