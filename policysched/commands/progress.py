"""The progress bar of long offline runs (``simulate``, ``test``): rich's, on stderr, only
when stderr is a terminal, so stdout and piped or JSON output stay exactly as they are.

The commands report through plain callbacks and know nothing of rich. A report is cheap
(one clock read) except when it renders, at most ``REFRESH_INTERVAL`` apart; the bar shows
only once a run has lasted ``SHOW_AFTER``, so short runs print nothing, and it is erased
when the run ends.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

if TYPE_CHECKING:
    from .simulate import SimulationProgress

SIMULATING = "simulating"
SIMULATED = "pods decided, {seconds:g}s simulated"
TESTING = "testing"

SHOW_AFTER = 0.5  # seconds of a run before its bar appears
REFRESH_INTERVAL = 0.25  # seconds between two renderings: at most 4 a second


def stderr_console() -> Console:
    """The console of the bars (a function, so that tests can force a terminal)."""
    return Console(stderr=True)


class ProgressBar:
    """One bar, ``description  [bar]  completed/total  detail  elapsed``; a no-op unless
    its console is a terminal. Use as a context manager, so the bar goes with the run."""

    def __init__(self, description: str, enabled: bool = True) -> None:
        self._description = description
        self._console = stderr_console()
        self.enabled = enabled and self._console.is_terminal
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._next_render = time.monotonic() + SHOW_AFTER

    def update(self, completed: int, total: int, detail: str = "") -> None:
        if self._due():
            self._render(completed, total, detail)

    def on_simulation(self, progress: SimulationProgress) -> None:
        """A ``simulate`` progress callback."""
        if self._due():
            self._render(progress.decided, progress.total,
                         SIMULATED.format(seconds=progress.elapsed))

    def _due(self) -> bool:
        if not self.enabled:
            return False
        now = time.monotonic()
        if now < self._next_render:
            return False
        self._next_render = now + REFRESH_INTERVAL
        return True

    def _render(self, completed: int, total: int, detail: str) -> None:
        if self._progress is None:
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                console=self._console, transient=True, auto_refresh=False,
                redirect_stdout=False)  # stdout is the command's output, never the bar's
            self._task = self._progress.add_task(self._description, total=total,
                                                 completed=completed, detail=detail)
            self._progress.start()
            return
        assert self._task is not None
        self._progress.update(self._task, completed=completed, total=total, detail=detail,
                              refresh=True)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
