"""`osce-tui batch run` and `osce-tui batch score`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from ..config import ConfigError, load_config
from ..library import FileLoadError, NotFoundError
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    CliError,
    add_library_args,
    console,
    console_err,
    get_rubric,
    library_from_args,
)


def register(sub: argparse._SubParsersAction) -> None:
    batch = sub.add_parser("batch", help="run or re-score many encounters headlessly")
    bsub = batch.add_subparsers(dest="batch_command", metavar="COMMAND", required=True)

    run = bsub.add_parser(
        "run",
        help="run encounters (cases × doctors × trials) and write results",
        description=(
            "Run encounters headlessly into --out: sessions/*.json, results.jsonl, summary.json, run.json. "
            "Running again into the same --out skips encounters already finished."
        ),
    )
    run.add_argument("--cases", required=True, metavar="SEL", help="'all', comma-separated case ids, or a specialty")
    add_library_args(run)
    run.add_argument("--doctor", metavar="S[,S...]", help="doctor model spec(s); several compare models (default offline)")
    run.add_argument("--patient", metavar="S", help="patient model spec (default from config: offline)")
    run.add_argument("--judge", metavar="S", help="judge model spec (default from config: offline)")
    run.add_argument("--rubric", metavar="R", help="rubric id or path (default per mode: osce-practice, craft-md, epag)")
    run.add_argument("--trials", type=int, default=1, metavar="N", help="repeats of each encounter (default 1)")
    run.add_argument("--seed", type=int, default=0, metavar="N", help="run seed; each encounter's seed derives from it")
    run.add_argument("--max-connections", type=int, metavar="N", help="model calls in flight at once (default from config: 8)")
    run.add_argument("--limit", type=int, metavar="N", help="use only the first N selected cases")
    run.add_argument("--out", type=Path, required=True, metavar="DIR", help="results folder (reused to resume)")
    run.add_argument("--mode", choices=("encounter", "craftmd", "epag"), default="encounter")
    run.add_argument(
        "--arms",
        metavar="A[,A...]",
        help="craftmd arms: vignette, single-turn, multi-turn, summarized, exam-only (default all)",
    )
    run.add_argument(
        "--answer-format",
        metavar="F[,F...]",
        help="craftmd answer format(s): 4-choice, many-choice, free (default free)",
    )
    run.add_argument("--epag-turns", type=int, metavar="N", help="epag: question turns before the diagnosis (default: history budget)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(handler=cmd_run)

    score = bsub.add_parser(
        "score",
        help="score saved sessions again (adds a score set; never overwrites)",
        description="Re-score sessions (files or folders of them) with a judge and rubric; saved in place or into --out.",
    )
    score.add_argument("paths", nargs="+", type=Path, metavar="SESSION_OR_DIR")
    score.add_argument("--judge", metavar="S", help="judge model spec (default from config: offline)")
    score.add_argument("--rubric", metavar="R", help="rubric id or path (default: each session's own rubric)")
    score.add_argument("--out", type=Path, metavar="DIR", help="write re-scored sessions here instead of in place")
    score.add_argument("--max-connections", type=int, metavar="N", help="judge calls in flight at once")
    add_library_args(score)
    score.set_defaults(handler=cmd_score)


def _config(args: argparse.Namespace, judge: str | None = None):
    cli: dict[str, Any] = {}
    if getattr(args, "max_connections", None):
        cli["max_connections"] = args.max_connections
    try:
        return load_config(cli)
    except ConfigError as exc:
        raise CliError(str(exc)) from exc


def _check_spec(spec: str, role: str) -> str:
    from ..providers.base import SpecError, parse_spec

    try:
        parsed = parse_spec(spec)
    except SpecError as exc:
        raise CliError(f"--{role}: {exc}") from exc
    if parsed.provider == "human":
        raise CliError(f"--{role} human: a batch run has nobody at the keyboard; use offline or a model spec")
    return spec.strip()


def _batch_default(value: str) -> str:
    """Config defaults may say 'human' (right for the TUI); batch falls back to offline."""
    return "offline" if value == "human" else value


def _preflight(specs: list[str], config) -> None:
    """Build each model's provider once so a missing key fails now, not in every encounter."""
    from ..providers.base import ProviderError, SpecError
    from ..providers.factory import make_provider

    for spec in specs:
        try:
            make_provider(spec, config)
        except (ProviderError, SpecError) as exc:
            raise CliError(str(exc)) from exc


def cmd_run(args: argparse.Namespace) -> int:
    from ..batch.epag import epag_config
    from ..batch.progress import NullReporter, RichProgress
    from ..batch.runner import run_batch
    from ..batch.selection import DEFAULT_RUBRIC_BY_MODE, BatchPlan, PlanError, parse_arms, parse_formats, split_list

    if args.trials < 1:
        raise CliError("--trials must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise CliError("--limit must be at least 1")
    if args.max_connections is not None and args.max_connections < 1:
        raise CliError("--max-connections must be at least 1")
    if args.mode != "craftmd" and (args.arms or args.answer_format):
        raise CliError("--arms and --answer-format only apply to --mode craftmd")
    if args.mode != "epag" and args.epag_turns is not None:
        raise CliError("--epag-turns only applies to --mode epag")
    if args.out.exists() and not args.out.is_dir():
        raise CliError(f"--out {args.out} is not a folder")
    config = _config(args)
    try:
        if args.mode == "epag":
            config = epag_config(config, args.epag_turns)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    library = library_from_args(args, config)
    try:
        cases = library.select(args.cases)
    except (NotFoundError, FileLoadError) as exc:
        raise CliError(str(exc)) from exc
    if args.limit:
        cases = cases[: args.limit]
    rubric = get_rubric(library, args.rubric or DEFAULT_RUBRIC_BY_MODE.get(args.mode) or config.rubric)
    doctors = [_check_spec(s, "doctor") for s in split_list(args.doctor)] or [_batch_default(config.roles.doctor)]
    patient = _check_spec(args.patient or _batch_default(config.roles.patient), "patient")
    judge = _check_spec(args.judge or config.roles.judge, "judge")
    try:
        plan = BatchPlan(
            cases=cases,
            rubric=rubric,
            doctors=doctors,
            patient=patient,
            judge=judge,
            trials=args.trials,
            seed=args.seed,
            mode=args.mode,
            arms=parse_arms(args.arms) if args.mode == "craftmd" else [],
            answer_formats=parse_formats(args.answer_format) if args.mode == "craftmd" else [],
        )
    except PlanError as exc:
        raise CliError(str(exc)) from exc
    _preflight(plan.model_specs(), config)
    reporter = NullReporter() if args.quiet else RichProgress(console_err)
    try:
        outcome = asyncio.run(
            run_batch(
                plan,
                args.out,
                config,
                max_connections=args.max_connections,
                reporter=reporter,
                argv=["osce-tui", *sys.argv[1:]],
                limit=args.limit,
            )
        )
    except OSError as exc:
        # Disk full, folder not writable ...: the run stopped; what finished is kept.
        console_err.print(
            f"[red]error:[/] {exc}\nThe run stopped; finished encounters are kept in {args.out}. "
            "Fix the problem and run the same command again to continue.",
            highlight=False,
        )
        return EXIT_FAILED
    line = (
        f"{outcome.finished} finished, {outcome.failed} failed, {outcome.skipped} already done "
        f"of {outcome.total} encounters in {outcome.elapsed_s:.1f}s → {args.out}"
    )
    if outcome.interrupted:
        console_err.print(f"[yellow]interrupted:[/] {line}; run the same command again to continue", highlight=False)
    else:
        console_err.print(line, highlight=False)
    if outcome.failed and not outcome.interrupted:
        console_err.print("[red]some encounters failed[/]: see 'error' in results.jsonl; rerun to retry them")
    return outcome.exit_code


def cmd_score(args: argparse.Namespace) -> int:
    config = _config(args)
    library = library_from_args(args, config)
    judge = _check_spec(args.judge or config.roles.judge, "judge")
    if args.rubric:
        rubric = get_rubric(library, args.rubric)
    else:
        rubric = None
    _preflight([judge] if judge != "offline" else [], config)
    results, problems = asyncio.run(_score_all(args, library, rubric, judge, config))
    for p in problems:
        console_err.print(f"[red]error:[/] {p}", highlight=False)
    scored = failed = 0
    for r in results:
        if r.warning:
            console_err.print(f"[yellow]warning:[/] {r.source}: {r.warning}", highlight=False)
        if r.status == "scored":
            scored += 1
            total = "–" if r.total is None else f"{r.total:.1f}"
            console.print(f"scored {r.target}  total {total}", highlight=False)
        else:
            failed += 1
            console_err.print(f"[red]failed[/] {r.source}: {r.error}", highlight=False)
    if not results and problems:
        raise CliError("no sessions to score")
    console_err.print(f"{scored} scored, {failed} failed", highlight=False)
    return EXIT_FAILED if failed or problems else EXIT_OK


async def _score_all(args, library, rubric, judge, config):
    from ..batch.rescore import rescore

    return await rescore(
        args.paths, library=library, rubric=rubric, judge=judge, config=config,
        out_dir=args.out, max_connections=args.max_connections,
    )
