"""The headless batch runner behind `osce-tui batch run`.

Work is a queue of job groups drained by a pool of workers. A group is one
encounter, except in CRAFT-MD mode where it is every arm of one
case/doctor/format/trial, run in order so the arms made from the multi-turn
conversation (single-turn, summarized) find it.

Concurrency: one ``asyncio.Semaphore(max_connections)`` is handed to every
provider as its ``limiter``, so at most that many model calls are in flight
across the whole run. Each encounter makes one call at a time, so the pool
runs twice as many encounters as connections: while one encounter is between
calls (parsing, judging offline, saving) another is waiting for the semaphore
and no connection sits idle. Offline-only runs are CPU-bound in one thread,
where more workers only add memory, so they use one.

Every encounter ends in one line of results.jsonl — finished or failed with
its error — written the moment it ends. Failures never stop the run.
Cancellation (Ctrl-C) stops the workers, keeps what finished, marks nothing
as done that was not, and still writes summary.json.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import platform
import subprocess
import sys
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable

from .. import __version__
from ..config import Config
from ..domain.session import Session
from ..providers.base import ProviderError, SpecError, parse_spec
from ..store import SessionFileError, load_session
from .progress import BatchReporter, NullReporter
from .report import summary_dict
from .results import (
    SESSIONS_DIR,
    EncounterKey,
    ResultRecord,
    ResultsWriter,
    append_run_header,
    failed_record,
    read_results,
    record_from_session,
    write_summary,
)
from .selection import DERIVED_ARMS, BatchPlan, Job

log = logging.getLogger(__name__)


@dataclass
class RunContext:
    """What every job needs besides its own key."""

    plan: BatchPlan
    config: Config
    out_dir: Path
    limiter: asyncio.Semaphore
    http_client: Any = None
    batch_id: str = ""

    @property
    def sessions_dir(self) -> Path:
        return self.out_dir / SESSIONS_DIR


@dataclass
class BatchOutcome:
    total: int  # jobs in the plan
    skipped: int  # already finished before this run
    finished: int = 0
    failed: int = 0
    interrupted: bool = False
    elapsed_s: float = 0.0
    records: list[ResultRecord] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if self.failed else 0


# -- provenance ------------------------------------------------------------------


def git_revision() -> str | None:
    """The source checkout's commit, when running from one (None from a wheel)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    rev = out.stdout.strip()
    if out.returncode != 0 or not rev:
        return None
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True, text=True, timeout=5, check=False,
    ).stdout.strip()
    return rev + ("+dirty" if dirty else "")


def _model_hash(model: Any) -> str:
    blob = json.dumps(model.model_dump(mode="json"), sort_keys=True).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()[:16]


def _prompt_hashes() -> dict[str, str]:
    try:
        from ..prompts import prompt_hashes
    except ImportError:
        return {}
    hashes = dict(prompt_hashes())
    from .craftmd import summarizer_prompt_hash

    hashes["batch_summarize"] = summarizer_prompt_hash()
    return hashes


def run_header(ctx: RunContext, *, argv: list[str] | None, max_connections: int, limit: int | None, total: int, skipped: int) -> dict[str, Any]:
    plan, config = ctx.plan, ctx.config
    return {
        "batch_id": ctx.batch_id,
        "started_at": datetime.now(timezone.utc).isoformat(),
        "argv": list(argv) if argv is not None else sys.argv,
        "package_version": __version__,
        "git_revision": git_revision(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "mode": plan.mode,
        "arms": plan.arms,
        "answer_formats": plan.answer_formats,
        "models": {"doctors": plan.doctors, "patient": plan.patient, "judge": plan.judge},
        "rubric": {"id": plan.rubric.id, "hash": _model_hash(plan.rubric)},
        "cases": {c.id: c.content_hash() for c in plan.cases},
        "prompts": _prompt_hashes(),
        "generation": config.generation.model_dump(mode="json"),
        "provider": {"timeout": config.provider.timeout, "max_retries": config.provider.max_retries},
        "encounter": config.encounter.model_dump(mode="json"),
        "seed": plan.seed,
        "trials": plan.trials,
        "max_connections": max_connections,
        "limit": limit,
        "jobs": total,
        "already_finished": skipped,
    }


# -- running ---------------------------------------------------------------------------


def _groups(jobs: list[Job]) -> list[list[Job]]:
    """CRAFT-MD: all arms of one case/doctor/format/trial together, in run order."""
    groups: dict[tuple, list[Job]] = {}
    for job in jobs:
        k = job.key
        gk = (k.case, k.doctor, k.patient, k.judge, k.rubric, k.mode, k.answer_format, k.trial)
        groups.setdefault(gk if k.mode == "craftmd" else (k,), []).append(job)
    return list(groups.values())


def shared_http_client(max_connections: int):
    """One connection pool for every provider in the run.

    Without it each encounter's providers would build their own SDK client,
    TLS context and connections (tens of ms of CPU each, and a fresh TCP/TLS
    handshake per encounter). The pool is sized to the connection limit; the
    SDKs still apply their own per-request timeouts and retries.
    """
    import httpx2

    return httpx2.AsyncClient(
        limits=httpx2.Limits(max_connections=max_connections + 4, max_keepalive_connections=max_connections + 4),
        follow_redirects=True,
    )


def worker_count(plan: BatchPlan, max_connections: int, pending: int) -> int:
    if not plan.model_specs():
        return 1 if pending else 0
    return max(1, min(pending, 2 * max_connections))


async def run_batch(
    plan: BatchPlan,
    out_dir: Path,
    config: Config,
    *,
    max_connections: int | None = None,
    reporter: BatchReporter | None = None,
    http_client: Any = None,
    argv: list[str] | None = None,
    limit: int | None = None,
) -> BatchOutcome:
    """Run every job of ``plan`` not already finished in ``out_dir``."""
    started = time.monotonic()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    max_connections = max_connections or config.max_connections
    reporter = reporter or NullReporter()
    previous = read_results(out_dir).latest() if (out_dir / "results.jsonl").is_file() else {}
    done_keys = {k for k, r in previous.items() if r.status == "finished"}
    jobs = list(plan.jobs())
    pending = [j for j in jobs if j.key not in done_keys]
    owned_client = None
    if http_client is None and plan.model_specs():
        http_client = owned_client = shared_http_client(max_connections)
    ctx = RunContext(plan, config, out_dir, asyncio.Semaphore(max_connections), http_client, uuid.uuid4().hex[:12])
    ctx.sessions_dir.mkdir(parents=True, exist_ok=True)
    append_run_header(
        out_dir, run_header(ctx, argv=argv, max_connections=max_connections, limit=limit, total=len(jobs), skipped=len(jobs) - len(pending))
    )
    outcome = BatchOutcome(total=len(jobs), skipped=len(jobs) - len(pending))
    queue = deque(g for g in _groups(jobs) if any(j.key not in done_keys for j in g))
    writer = ResultsWriter(out_dir)

    def emit(record: ResultRecord) -> None:
        writer.append(record)
        outcome.records.append(record)
        if record.status == "finished":
            outcome.finished += 1
        else:
            outcome.failed += 1
        reporter.finished(record)

    async def worker() -> None:
        while queue:
            group = queue.popleft()
            await _run_group(group, ctx, done_keys, previous, emit)
            await asyncio.sleep(0)  # a cancellation point between groups, even offline

    reporter.start(len(pending), outcome.skipped)
    tasks = [asyncio.create_task(worker()) for _ in range(worker_count(plan, max_connections, len(pending)))]
    try:
        await asyncio.gather(*tasks)
    except asyncio.CancelledError:
        outcome.interrupted = True
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    except BaseException:
        # A worker died outside an encounter (disk full writing results.jsonl,
        # a reporter bug): stop the others, so their sessions are saved as
        # aborted, before the shared client and the results file close under them.
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        writer.close()
        reporter.stop()
        if owned_client is not None:
            await owned_client.aclose()
        outcome.elapsed_s = time.monotonic() - started
        _write_summary(out_dir, plan.seed)
    return outcome


def _write_summary(out_dir: Path, seed: int) -> None:
    read = read_results(out_dir)
    records = list(read.latest().values())
    summary = summary_dict(records, seed=seed)
    summary["skipped_lines"] = read.skipped
    write_summary(out_dir, summary)


async def _run_group(
    group: list[Job],
    ctx: RunContext,
    done_keys: set[EncounterKey],
    previous: dict[EncounterKey, ResultRecord],
    emit: Callable[[ResultRecord], None],
) -> None:
    conversation: Session | None = None
    conversation_error: str | None = None
    for job in group:
        arm = job.key.arm
        if job.key in done_keys:
            if arm == "multi-turn":
                conversation, conversation_error = _load_previous_conversation(previous.get(job.key), ctx.out_dir)
            continue
        if arm in DERIVED_ARMS and conversation is None:
            reason = conversation_error or "no multi-turn conversation"
            emit(failed_record(job.key, f"needs the multi-turn conversation: {reason}", session=None,
                               session_path=None, out_dir=ctx.out_dir, seed=job.seed, duration_s=0.0))
            continue
        record, session = await run_job(job, ctx, conversation)
        if arm == "multi-turn":
            conversation = session if record.status == "finished" else None
            conversation_error = record.error if record.status == "failed" else None
        emit(record)


def _load_previous_conversation(record: ResultRecord | None, out_dir: Path) -> tuple[Session | None, str | None]:
    if record is None or not record.session_path:
        return None, "the finished multi-turn encounter has no session file"
    path = Path(record.session_path)
    path = path if path.is_absolute() else out_dir / path
    try:
        return load_session(path), None
    except SessionFileError as exc:
        return None, str(exc)


async def run_job(job: Job, ctx: RunContext, conversation: Session | None = None) -> tuple[ResultRecord, Session | None]:
    """One encounter, whatever happens: a finished or a failed record (never raises but on cancel)."""
    started = time.monotonic()
    path = ctx.sessions_dir / job.session_filename
    runner: Callable[[], Awaitable[Session]]
    holder: dict[str, Session] = {}
    if job.key.mode == "craftmd" and job.key.arm != "multi-turn":
        from .craftmd import run_oneshot_arm

        runner = lambda: run_oneshot_arm(job, ctx, path, conversation, holder)  # noqa: E731
    else:
        runner = lambda: _run_encounter(job, ctx, path, holder)  # noqa: E731
    try:
        session = await runner()
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure is recorded, the run goes on
        from ..engine import EncounterFailed

        if isinstance(exc, (ProviderError, EncounterFailed)):
            message = str(exc)  # already a readable, user-facing message
        else:
            # A bug, not a provider problem: keep the traceback in the log, the gist in the record.
            log.exception("encounter %s crashed", job.key.label())
            message = f"{type(exc).__name__}: {exc}"
        session = holder.get("session")
        rec = failed_record(job.key, message, session=session, session_path=path if path.exists() else None,
                            out_dir=ctx.out_dir, seed=job.seed, duration_s=time.monotonic() - started)
        return rec, session
    if not scored_by(session, job.key.rubric, job.key.judge):
        # Judging failed (or fell back to the offline judge because the model
        # judge was down): the conversation is kept, but the encounter is not
        # done; a rerun continues the session and only scores it.
        rec = failed_record(job.key, session.error or "the encounter was not scored", session=session,
                            session_path=path if path.exists() else None, out_dir=ctx.out_dir, seed=job.seed,
                            duration_s=time.monotonic() - started)
        return rec, session
    rec = record_from_session(job.key, session, session_path=path, out_dir=ctx.out_dir, seed=job.seed,
                              duration_s=time.monotonic() - started)
    return rec, session


async def _run_encounter(job: Job, ctx: RunContext, path: Path, holder: dict[str, Session]) -> Session:
    """encounter / epag / CRAFT-MD multi-turn: the engine drives the conversation."""
    from ..engine import EncounterSetup

    key = job.key
    run_extra: dict[str, Any] = {}
    if key.answer_format in ("4-choice", "many-choice"):
        from .craftmd import choices_for

        run_extra["choices"] = choices_for(job.case, key.answer_format)
    setup = EncounterSetup(
        case=job.case,
        rubric=ctx.plan.rubric,
        doctor=key.doctor,
        patient=key.patient,
        judge=key.judge,
        config=ctx.config,
        sessions_dir=ctx.sessions_dir,
        session_path=path,
        mode=key.mode,
        seed=job.seed,
        trial=key.trial,
        http_client=ctx.http_client,
        limiter=ctx.limiter,
        live_scoring=False,  # nobody watches live panels in a batch; score once at the end
        on_error="fail",
        batch_id=ctx.batch_id,
        arm=key.arm,
        answer_format=key.answer_format,
        run_extra=run_extra,
    )
    done = _finished_session(path, setup.case, key.rubric, key.judge)
    if done is not None:
        # Saved finished and scored, but killed before its results line was written.
        holder["session"] = done
        return done
    enc = _resume_or_new(path, setup)
    holder["session"] = enc.session
    if run_extra.get("choices") and not enc.session.turns:
        from .craftmd import options_text

        # CRAFT-MD multiple choice: the doctor has the options from the start.
        enc.session.add_turn("system", options_text(run_extra["choices"]), kind="system", phase="history", spec="batch")
    session = await enc.run()
    if enc.unsaved:
        # Scored in memory only: the file on disk is stale, so this is not done.
        raise OSError(enc.unsaved)
    return session


def scored_by(session: Session, rubric_id: str, judge: str) -> bool:
    """True when the session holds final scores for ``rubric_id`` from ``judge`` itself."""
    try:
        wanted = str(parse_spec(judge))
    except SpecError:
        wanted = judge
    return any(s.final and s.rubric_id == rubric_id and s.judge == wanted for s in session.scores)


def _finished_session(path: Path, case, rubric_id: str, judge: str) -> Session | None:
    """The session at ``path`` when it is finished and scored for ``rubric_id`` by ``judge``."""
    if not path.is_file():
        return None
    try:
        old = load_session(path)
    except SessionFileError:
        return None
    if old.status == "finished" and old.case_hash == case.content_hash() and scored_by(old, rubric_id, judge):
        return old
    return None


def _resume_or_new(path: Path, setup):
    """Continue a session this folder left unfinished; otherwise start afresh.

    Unfinished means cut off (Ctrl-C, kill: in_progress/aborted), stopped by a
    provider failure (failed) or finished without scores (judging failed):
    a rerun continues the conversation instead of overwriting it.
    """
    from ..engine import Encounter

    if path.is_file():
        try:
            old = load_session(path)
        except SessionFileError:
            old = None
        resumable = ("in_progress", "aborted", "failed", "finished")
        if old is not None and old.status in resumable and old.case_hash == setup.case.content_hash():
            try:
                return Encounter.resume(path, setup)
            except (ValueError, SessionFileError):
                pass
    return Encounter(setup)
