"""`osce-tui batch score`: score saved sessions again with another judge or rubric.

Without a rubric each session is scored with the rubric it names.
Sessions from the TUI, from batch runs or from importers are loaded, scored
with ``judges.runner.score_session`` and saved atomically — in place, or into
``--out`` keeping the layout below the folder they came from. The new score
set is added beside the old ones (``Session.put_scores``): earlier scores are
never overwritten, so a session can carry one set per judge and rubric.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..domain.rubric import Rubric
from ..library import FileLoadError, Library, NotFoundError
from ..providers.base import ProviderError
from ..store import SessionFileError, load_session, save_session
from .results import RESULTS_NAME, RUN_NAME, SUMMARY_NAME

log = logging.getLogger(__name__)

_NOT_SESSIONS = {RUN_NAME, SUMMARY_NAME, RESULTS_NAME}


@dataclass
class RescoreResult:
    source: Path
    target: Path | None
    status: str  # scored / failed
    case_id: str = ""
    total: float | None = None
    error: str | None = None
    warning: str | None = None


def collect_session_files(paths: list[Path]) -> tuple[list[tuple[Path, Path]], list[str]]:
    """(file, base folder) pairs: explicit files, and every *.json below given folders."""
    found: list[tuple[Path, Path]] = []
    problems: list[str] = []
    for p in paths:
        p = Path(p)
        if p.is_file():
            found.append((p, p.parent))
        elif p.is_dir():
            for f in sorted(p.rglob("*.json")):
                if f.name.startswith(".") or f.name in _NOT_SESSIONS:
                    continue
                found.append((f, p))
        else:
            problems.append(f"{p}: no such file or folder")
    return found, problems


async def rescore(
    paths: list[Path],
    *,
    library: Library,
    rubric: Rubric | None,
    judge: str,
    config: Config,
    out_dir: Path | None = None,
    max_connections: int | None = None,
    http_client: Any = None,
) -> tuple[list[RescoreResult], list[str]]:
    from ..judges.runner import score_session

    files, problems = collect_session_files(paths)
    limiter = asyncio.Semaphore(max_connections or config.max_connections)
    provider = None
    if judge not in ("offline", "human"):
        from ..providers.factory import make_provider

        provider = make_provider(judge, config, http_client=http_client, limiter=limiter)
    # Bound the sessions held in memory at once; model calls are bounded by the limiter.
    slots = asyncio.Semaphore(2 * (max_connections or config.max_connections))

    async def one(path: Path, base: Path) -> RescoreResult:
        async with slots:
            try:
                session = load_session(path)
            except SessionFileError as exc:
                return RescoreResult(path, None, "failed", error=str(exc))
            try:
                case = library.case(session.case_id)
            except (NotFoundError, FileLoadError) as exc:
                return RescoreResult(path, None, "failed", session.case_id, error=f"{exc} (add --cases-dir?)")
            try:
                use_rubric = rubric or library.rubric(session.rubric_id)
            except (NotFoundError, FileLoadError) as exc:
                return RescoreResult(path, None, "failed", session.case_id, error=f"rubric: {exc}")
            warning = None
            if session.case_hash and session.case_hash != case.content_hash():
                warning = f"case {case.id} changed since this session was recorded ({session.case_hash} → {case.content_hash()})"
            try:
                scores = await score_session(case, session, use_rubric, judge, config=config, provider=provider)
            except ProviderError as exc:
                return RescoreResult(path, None, "failed", case.id, error=str(exc), warning=warning)
            except Exception as exc:  # a judge bug on one session must not stop (or hide) the others
                log.exception("scoring %s crashed", path)
                return RescoreResult(path, None, "failed", case.id, error=f"{type(exc).__name__}: {exc}", warning=warning)
            session.put_scores(scores)
            target = path if out_dir is None else Path(out_dir) / path.resolve().relative_to(base.resolve())
            try:
                save_session(session, target)
            except OSError as exc:
                return RescoreResult(path, None, "failed", case.id, error=f"cannot save {target}: {exc}")
            return RescoreResult(path, target, "scored", case.id, scores.total, warning=warning)

    try:
        results = await asyncio.gather(*(one(f, b) for f, b in files))
    finally:
        if provider is not None:
            await provider.aclose()
    return list(results), problems
