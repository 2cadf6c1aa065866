"""Exports from the results screen: scores as JSON, the session as Markdown.

Pure functions (no textual), so they are easy to test and reuse.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..domain.scores import ScoreSet
from ..domain.session import Session
from ..store import atomic_write_text

_ROLE = {"doctor": "Doctor", "patient": "Patient", "examiner": "Examiner", "system": "System"}


def scores_json(session: Session, scores: ScoreSet) -> str:
    payload = {
        "session_id": session.id,
        "case_id": session.case_id,
        "rubric_id": scores.rubric_id,
        "judge": scores.judge,
        "prompt_hash": scores.prompt_hash,
        "final": scores.final,
        "total": scores.total,
        "sections": [
            {
                "section_id": s.section_id,
                "title": s.title,
                "judge": s.judge,
                "points": s.points,
                "max_points": s.max_points,
                "score_100": s.score_100,
                "items": [i.model_dump(mode="json") for i in s.items],
                "extra": s.extra,
            }
            for s in scores.sections
        ],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def session_markdown(session: Session, scores: ScoreSet | None) -> str:
    """Transcript, note and scores as one readable Markdown document."""
    roles = ", ".join(f"{r}: {a.spec}" for r, a in session.roles.items())
    out = [f"# {session.case_id} — session {session.id}", "", f"- Roles: {roles}", f"- Status: {session.status}"]
    if scores is not None:
        total = "–" if scores.total is None else f"{scores.total:.1f}"
        out += [f"- Total: **{total}** / 100 (judge {scores.judge}, rubric {scores.rubric_id})"]
    out += ["", "## Transcript", ""]
    for t in session.turns:
        if t.kind == "phase":
            out += [f"*— {t.text} —*", ""]
            continue
        out += [f"**{_ROLE.get(t.role, t.role)}** `{t.id}`: {t.text}", ""]
    if session.note is not None:
        n = session.note
        out += ["## Patient note", "", "**HPI.** " + n.hpi, "", "**PE.** " + n.pe, ""]
        for i, d in enumerate(n.diagnoses, 1):
            out.append(f"{i}. **{d.name}** — history: {'; '.join(d.history_findings) or '–'}; exam: {'; '.join(d.exam_findings) or '–'}")
        if n.workup:
            out += ["", "**Workup:** " + ", ".join(n.workup)]
        out.append("")
    if scores is not None:
        out += ["## Scores", ""]
        for s in scores.sections:
            pct = "–" if s.score_100 is None else f"{s.score_100:.1f}"
            out += [f"### {s.title} — {s.points:g}/{s.max_points:g} ({pct})", "", "| item | points | why | evidence |", "|---|---|---|---|"]
            for i in s.items:
                pts = i.status if i.status != "scored" else f"{i.points:g}/{i.max_points:g}"
                out.append(f"| {_md_cell(i.label)} | {pts} | {_md_cell(i.explanation)} | {', '.join(i.evidence)} |")
            out.append("")
    return "\n".join(out)


def export_paths(session_path: Path, out_dir: Path) -> tuple[Path, Path]:
    """Where exports go: ``out_dir/<session stem>.scores.json`` and ``.md``.

    Not beside the session: the sessions folder is scanned for session JSON,
    and a scores file there would show up as an unreadable session.
    """
    stem = Path(session_path).stem
    return Path(out_dir) / f"{stem}.scores.json", Path(out_dir) / f"{stem}.md"


def export_session(session: Session, scores: ScoreSet | None, session_path: Path, fmt: str, out_dir: Path) -> Path:
    json_path, md_path = export_paths(session_path, out_dir)
    if fmt == "json":
        if scores is None:
            raise ValueError("this session has no scores to export")
        atomic_write_text(json_path, scores_json(session, scores))
        return json_path
    if fmt == "md":
        atomic_write_text(md_path, session_markdown(session, scores))
        return md_path
    raise ValueError(f"unknown export format {fmt!r} (json or md)")
