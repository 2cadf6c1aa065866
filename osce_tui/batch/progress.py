"""How a batch run reports progress: a rich progress bar, or nothing.

The runner only calls ``start``/``finished``/``stop``; the bar shows
encounters done and failed, tokens used and elapsed time, and failures are
printed above it as they happen so a long run never hides an error.
"""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from .results import ResultRecord


class BatchReporter(Protocol):
    def start(self, total: int, skipped: int) -> None: ...

    def finished(self, record: ResultRecord) -> None: ...

    def stop(self) -> None: ...


class NullReporter:
    """For tests and benchmarks; counts what it sees."""

    def __init__(self) -> None:
        self.total = self.skipped = self.done = self.failed = 0

    def start(self, total: int, skipped: int) -> None:
        self.total, self.skipped = total, skipped

    def finished(self, record: ResultRecord) -> None:
        self.done += 1
        self.failed += record.status == "failed"

    def stop(self) -> None:
        return None


class RichProgress:
    def __init__(self, console: Console):
        self.console = console
        self.failed = 0
        self.tokens = 0
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]encounters"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self._task = None

    def _status(self) -> str:
        failed = f"[red]{self.failed} failed[/]" if self.failed else "0 failed"
        return f"{failed} · {self.tokens:,} tokens"

    def start(self, total: int, skipped: int) -> None:
        if skipped:
            self.console.print(f"[dim]{skipped} encounter(s) already finished in this folder: skipped[/]")
        self._progress.start()
        self._task = self._progress.add_task("batch", total=total, status=self._status())

    def finished(self, record: ResultRecord) -> None:
        self.tokens += record.usage.input_tokens + record.usage.output_tokens
        if record.status == "failed":
            self.failed += 1
            self._progress.console.print(f"[red]failed[/] {record.key.label()}: {record.error}", highlight=False)
        if self._task is not None:
            self._progress.update(self._task, advance=1, status=self._status())

    def stop(self) -> None:
        self._progress.stop()
