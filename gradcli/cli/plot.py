"""`gradcli grad --plot [FILE]`: EXPR and its derivative over a 1-D range.

In the terminal with plotext (a runtime dependency, imported here only); to an image file
(.png, .svg, .pdf) with matplotlib when it is installed (`pip install 'gradcli[plot]'`).
"""

from __future__ import annotations

IMAGE_SUFFIXES = (".png", ".svg", ".pdf")


class PlotError(Exception):
    """--plot cannot be done (exit 2)."""


def check_target(target: str) -> None:
    """Before anything runs: an image target needs matplotlib and a known suffix."""
    if not target:
        return
    if not target.lower().endswith(IMAGE_SUFFIXES):
        raise PlotError(f"--plot {target}: the file must end in .png, .svg or .pdf")
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise PlotError(f"--plot {target}: writing an image needs matplotlib, which is not "
                        "installed (pip install 'gradcli[plot]'); --plot alone draws in the "
                        "terminal")


def _size():
    """(width, height) for the plot: the terminal's (COLUMNS/LINES honoured), bounded."""
    import shutil

    cols, lines = shutil.get_terminal_size((80, 24))
    return max(40, min(cols, 120)), max(12, min(lines - 4, 30))


def terminal(xs, series: dict, xname: str, title: str, color: bool) -> str:
    """The plot as text (plotext 6: braille lines; without colour the derivative is drawn
    with dots so the two curves stay apart)."""
    import plotext

    fig = plotext.figure
    fig.clear()
    width, height = _size()
    fig.plot_size(width, height)
    for k, (label, ys) in enumerate(series.items()):
        marker = "braille" if color or k == 0 else "•"
        points = [(x, y) for x, y in zip(xs, ys) if y == y and abs(y) != float("inf")]
        if not points:
            continue
        signal = fig.signal([x for x, _ in points], [y for _, y in points], marker=marker)
        if marker == "braille":
            signal = signal.lines()
        fig.draw(signal.label(label))
    fig.label(xname, "x")
    fig.title(title)
    text = fig.build().string(colorless=not color)
    fig.clear()
    return text


def _uncolor(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def image(path: str, xs, series: dict, xname: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    fig, ax = pyplot.subplots(figsize=(7, 4.5))
    for label, ys in series.items():
        ax.plot(xs, ys, label=label)
    ax.set_xlabel(xname)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    pyplot.close(fig)
