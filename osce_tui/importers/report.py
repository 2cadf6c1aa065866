"""The import report: what was mapped, defaulted, left unmapped and written.

Nothing in a source record is silently dropped: every field an importer could
not place in the case is listed here (and in ``import_report.json``), as is
every conservative default it had to invent a value for.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


class ImportInputError(ValueError):
    """The input file is missing, unreadable or malformed; names the file and line."""

    def __init__(self, path: Path | str, message: str, line: int | None = None):
        self.path = Path(path)
        self.line = line
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}")


def read_text_file(path: Path | str) -> str:
    """A source file's text, or an ImportInputError that names the file."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ImportInputError(path, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportInputError(path, f"cannot read ({exc})") from None


def read_json_file(path: Path | str) -> Any:
    """A source JSON file, or an ImportInputError that names the file and line."""
    try:
        return json.loads(read_text_file(path))
    except json.JSONDecodeError as exc:
        raise ImportInputError(path, f"not valid JSON ({exc.msg})", exc.lineno) from None


@dataclass
class Unmapped:
    """A source field the case has no place for; ``value`` is a short preview."""

    field: str
    value: str
    reason: str = "no matching case field"


@dataclass
class CaseEntry:
    """One imported record and what became of it."""

    id: str
    source: str  # e.g. "agentclinic_medqa.jsonl line 3"
    file: str = ""
    status: str = ""  # created | updated | unchanged | skipped-hand-edited | skipped-not-ours | overwritten
    unmapped: list[Unmapped] = field(default_factory=list)
    defaults: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    protocol_gaps: list[str] = field(default_factory=list)

    def unmapped_field(self, name: str, value: object, reason: str = "no matching case field") -> None:
        text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        self.unmapped.append(Unmapped(name, text if len(text) <= 160 else text[:157] + "...", reason))


@dataclass
class ImportReport:
    format: str
    source: str
    kind: str = "cases"  # or "sessions"
    entries: list[CaseEntry] = field(default_factory=list)
    sessions: list[dict] = field(default_factory=list)  # {"file", "case_id", "status"}

    def counts(self) -> dict[str, int]:
        statuses = Counter(e.status for e in self.entries)
        statuses.update(s["status"] for s in self.sessions)
        return dict(sorted(statuses.items()))

    def unmapped_summary(self) -> dict[str, int]:
        """Unmapped field names -> how many records had them (for printing)."""
        return dict(Counter(u.field for e in self.entries for u in e.unmapped).most_common())

    def to_json(self) -> str:
        payload = {
            "format": self.format,
            "source": self.source,
            "kind": self.kind,
            "counts": self.counts(),
            "unmapped_summary": self.unmapped_summary(),
            "cases": [asdict(e) for e in self.entries],
        }
        if self.sessions:
            payload["sessions"] = self.sessions
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
