"""The files a batch run writes into ``--out``, and reading them back.

- ``results.jsonl``: one JSON object per encounter attempt, appended and
  flushed as each encounter ends, so a crash or Ctrl-C keeps every finished
  line. A later line for the same key supersedes an earlier one (a failed
  encounter retried on resume), and a torn last line from a kill is ignored.
- ``summary.json``: counts and per-condition section means, rewritten
  atomically at the end of every run (also after Ctrl-C).
- ``run.json``: the run header (versions, hashes, models, settings, argv);
  each invocation into the same folder is appended to ``runs``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, Field, ValidationError

from ..domain.scores import ScoreSet
from ..domain.session import Session
from ..store import atomic_write_text

RESULTS_NAME = "results.jsonl"
SUMMARY_NAME = "summary.json"
RUN_NAME = "run.json"
SESSIONS_DIR = "sessions"
RESULTS_FORMAT = 1


class ResultsFileError(ValueError):
    """A results folder or file that cannot be read."""


@dataclass(frozen=True, order=True)
class EncounterKey:
    """What makes two encounters 'the same' for resume: rerun skips a finished key."""

    case: str
    doctor: str
    patient: str
    judge: str
    rubric: str
    mode: str = "encounter"
    arm: str | None = None
    answer_format: str | None = None
    trial: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "doctor": self.doctor,
            "patient": self.patient,
            "judge": self.judge,
            "rubric": self.rubric,
            "mode": self.mode,
            "arm": self.arm,
            "answer_format": self.answer_format,
            "trial": self.trial,
        }

    def label(self) -> str:
        parts = [self.case, f"doctor={self.doctor}"]
        if self.arm:
            parts.append(f"arm={self.arm}")
        if self.answer_format:
            parts.append(f"format={self.answer_format}")
        parts.append(f"trial={self.trial}")
        return " ".join(parts)


class UsageSummary(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = None


class ResultRecord(BaseModel):
    """One line of results.jsonl."""

    format: int = RESULTS_FORMAT
    case: str
    doctor: str
    patient: str
    judge: str
    rubric: str
    mode: str = "encounter"
    arm: str | None = None
    answer_format: str | None = None
    trial: int = 0
    seed: int | None = None
    status: Literal["finished", "failed"]
    error: str | None = None
    session_id: str | None = None
    session_path: str | None = Field(default=None, description="Relative to the results folder when inside it.")
    sections: dict[str, float | None] = Field(default_factory=dict, description="Section id -> score 0-100.")
    total: float | None = None
    usage: UsageSummary = Field(default_factory=UsageSummary)
    usage_by_role: dict[str, UsageSummary] = Field(default_factory=dict)
    duration_s: float | None = None
    extra: dict[str, Any] = Field(default_factory=dict, description="Protocol outputs, e.g. CRAFT-MD's answer.")
    finished_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def key(self) -> EncounterKey:
        return EncounterKey(
            self.case, self.doctor, self.patient, self.judge, self.rubric, self.mode, self.arm, self.answer_format, self.trial
        )


def scores_fields(scores: ScoreSet | None) -> dict[str, Any]:
    """sections/total/extra of a record from a final ScoreSet."""
    if scores is None:
        return {"sections": {}, "total": None, "extra": {}}
    extra: dict[str, Any] = {}
    for s in scores.sections:
        # Keep protocol outputs (extracted diagnosis, match, top-k ...) small and flat.
        for k, v in s.extra.items():
            if isinstance(v, (str, int, float, bool)) or v is None:
                extra[f"{s.section_id}.{k}"] = v
    return {
        "sections": {s.section_id: s.score_100 for s in scores.sections},
        "total": scores.total,
        "extra": extra,
    }


def record_from_session(
    key: EncounterKey,
    session: Session,
    *,
    session_path: Path | None,
    out_dir: Path,
    seed: int | None,
    duration_s: float | None,
) -> ResultRecord:
    """A finished encounter's line: the latest final scores of the key's rubric."""
    scores = session.latest_scores(key.rubric)
    fields = scores_fields(scores)
    if session.final_diagnosis is not None:
        fields["extra"]["final_diagnosis"] = session.final_diagnosis
    usage = session.total_usage
    return ResultRecord(
        **key.as_dict(),
        seed=seed,
        status="finished",
        error=session.error,
        session_id=session.id,
        session_path=_rel(session_path, out_dir),
        usage=UsageSummary(**usage.model_dump()),
        usage_by_role={r: UsageSummary(**u.model_dump()) for r, u in session.usage.items()},
        duration_s=duration_s,
        **fields,
    )


def failed_record(
    key: EncounterKey,
    error: str,
    *,
    session: Session | None,
    session_path: Path | None,
    out_dir: Path,
    seed: int | None,
    duration_s: float | None,
) -> ResultRecord:
    usage = session.total_usage if session is not None else None
    return ResultRecord(
        **key.as_dict(),
        seed=seed,
        status="failed",
        error=error,
        session_id=session.id if session is not None else None,
        session_path=_rel(session_path, out_dir),
        usage=UsageSummary(**usage.model_dump()) if usage else UsageSummary(),
        duration_s=duration_s,
    )


def _rel(path: Path | None, base: Path) -> str | None:
    if path is None:
        return None
    try:
        return str(Path(path).resolve().relative_to(Path(base).resolve()))
    except ValueError:
        return str(path)


class ResultsWriter:
    """Appends records to results.jsonl, one flushed line at a time.

    Each line is written with a single ``write`` call and fsynced: a kill can
    only tear the line being written, which readers skip.
    """

    def __init__(self, out_dir: Path):
        self.path = Path(out_dir) / RESULTS_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")
        if self._fh.tell() > 0 and not _ends_with_newline(self.path):
            # A previous run was killed mid-line: start ours on a fresh line.
            self._fh.write("\n")

    def append(self, record: ResultRecord) -> None:
        self._fh.write(record.model_dump_json() + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "ResultsWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


@dataclass
class ResultsRead:
    records: list[ResultRecord]  # every valid line, in file order
    skipped: list[str]  # problems with lines that were ignored

    def latest(self) -> dict[EncounterKey, ResultRecord]:
        """The last record per key: a retried failure is replaced by its rerun."""
        out: dict[EncounterKey, ResultRecord] = {}
        for r in self.records:
            out[r.key] = r
        return out

    def finished(self) -> list[ResultRecord]:
        return [r for r in self.latest().values() if r.status == "finished"]

    def finished_keys(self) -> set[EncounterKey]:
        return {k for k, r in self.latest().items() if r.status == "finished"}


def read_results(path_or_dir: Path) -> ResultsRead:
    """Read results.jsonl (or the one inside a folder), tolerating a torn last line."""
    path = Path(path_or_dir)
    if path.is_dir():
        path = path / RESULTS_NAME
    if not path.is_file():
        raise ResultsFileError(f"{path}: no results file (run `osce-tui batch run --out DIR` first)")
    records: list[ResultRecord] = []
    skipped: list[str] = []
    # errors="replace": a line torn inside a multi-byte character fails validation and is skipped.
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                records.append(ResultRecord.model_validate_json(line))
            except ValidationError as exc:
                skipped.append(f"{path}:{lineno}: {exc.errors(include_url=False)[0]['msg']}")
    return ResultsRead(records, skipped)


def read_finished_keys(out_dir: Path) -> set[EncounterKey]:
    """Keys already finished in ``out_dir`` (empty when there is no results file yet)."""
    path = Path(out_dir) / RESULTS_NAME
    if not path.is_file():
        return set()
    return read_results(path).finished_keys()


# -- run.json and summary.json --------------------------------------------------


def append_run_header(out_dir: Path, header: dict[str, Any]) -> None:
    """Add this invocation's header to run.json (earlier invocations are kept)."""
    path = Path(out_dir) / RUN_NAME
    runs: list[dict[str, Any]] = []
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            runs = list(data.get("runs", []))
        except (json.JSONDecodeError, AttributeError, OSError):
            # A corrupt header must not block the run; keep a copy for the user.
            os.replace(path, path.with_suffix(".json.corrupt"))
    runs.append(header)
    atomic_write_text(path, json.dumps({"format": RESULTS_FORMAT, "runs": runs}, indent=2, default=str))


def write_summary(out_dir: Path, summary: dict[str, Any]) -> Path:
    path = Path(out_dir) / SUMMARY_NAME
    atomic_write_text(path, json.dumps(summary, indent=2, default=str))
    return path


def iter_condition_fields() -> Iterable[str]:
    """Record fields that define a condition (everything in the key but case and trial)."""
    return ("doctor", "patient", "judge", "rubric", "mode", "arm", "answer_format")
