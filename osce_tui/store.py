"""Session files: atomic saves, versioned loads, listing.

Every save writes a temporary file in the target folder, flushes it to disk
and ``os.replace``s it over the old one. A reader therefore sees either the
previous complete file or the new complete file, never half of one, and a
crash or kill loses at most the turn in flight.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from .domain.session import SESSION_SCHEMA_VERSION, Session


class SessionFileError(ValueError):
    """A session file is unreadable, corrupt, foreign or from a newer version."""


def session_filename(session: Session) -> str:
    stamp = session.created_at.strftime("%Y%m%d-%H%M%S")
    return f"{stamp}_{session.case_id}_{session.id}.json"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers never see a partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        # Never leave temp files behind, even on KeyboardInterrupt.
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def save_session(session: Session, path: Path) -> Path:
    """Save atomically to ``path`` (a file path). Returns the path."""
    session.touch()
    atomic_write_text(Path(path), session.model_dump_json(indent=2))
    return Path(path)


def load_session(path: Path) -> Session:
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SessionFileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise SessionFileError(f"{path}: not a text file") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SessionFileError(f"{path}:{exc.lineno}: corrupt JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or "schema_version" not in data or "case_id" not in data:
        raise SessionFileError(f"{path}: not an osce-tui session file (no schema_version/case_id)")
    version = data["schema_version"]
    if not isinstance(version, int) or version > SESSION_SCHEMA_VERSION:
        raise SessionFileError(
            f"{path}: session schema_version {version!r} is newer than this osce-tui understands "
            f"({SESSION_SCHEMA_VERSION}); upgrade osce-tui"
        )
    try:
        return Session.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise SessionFileError(f"{path}: invalid session at {loc}: {first['msg']} ({exc.error_count()} error(s))") from exc


@dataclass(frozen=True)
class SessionSummary:
    path: Path
    id: str
    case_id: str
    status: str
    updated_at: datetime
    turns: int
    total: float | None
    doctor: str
    patient: str


def list_sessions(folder: Path, *, recursive: bool = True) -> tuple[list[SessionSummary], list[str]]:
    """Summaries of every session under ``folder`` (newest first) and load errors."""
    folder = Path(folder)
    summaries: list[SessionSummary] = []
    errors: list[str] = []
    if not folder.exists():
        return summaries, errors
    pattern = "**/*.json" if recursive else "*.json"
    for path in folder.glob(pattern):
        if path.name.startswith(".") or path.name in {"summary.json", "run.json"}:  # batch run files
            continue
        try:
            s = load_session(path)
        except SessionFileError as exc:
            errors.append(str(exc))
            continue
        scores = s.latest_scores()
        summaries.append(
            SessionSummary(
                path=path,
                id=s.id,
                case_id=s.case_id,
                status=s.status,
                updated_at=s.updated_at,
                turns=len(s.turns),
                total=scores.total if scores else None,
                doctor=s.roles.get("doctor").spec if "doctor" in s.roles else "?",
                patient=s.roles.get("patient").spec if "patient" in s.roles else "?",
            )
        )
    summaries.sort(key=lambda x: x.updated_at, reverse=True)
    return summaries, errors
