"""`cases`, `rubrics`, `sessions` and `schema` commands."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from ..domain.case import Case
from ..domain.rubric import Rubric
from ..domain.session import Session
from ..library import validate_paths
from ..store import SessionFileError, list_sessions, load_session
from . import imports
from .common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    add_library_args,
    config_from_args,
    console,
    console_err,
    get_case,
    get_rubric,
    library_from_args,
)


def register(sub: argparse._SubParsersAction) -> None:
    # cases -------------------------------------------------------------
    cases = sub.add_parser("cases", help="list, show, validate and import cases")
    csub = cases.add_subparsers(dest="cases_command", metavar="ACTION", required=True)
    p = csub.add_parser("list", help="list available cases")
    add_library_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_cases_list)
    p = csub.add_parser("show", help="show one case")
    add_library_args(p)
    p.add_argument("case", help="case id or path to a .toml file")
    p.add_argument("--json", action="store_true", help="print the whole case as JSON")
    p.set_defaults(handler=cmd_cases_show)
    p = csub.add_parser("validate", help="validate case files (default: every case folder)")
    add_library_args(p)
    p.add_argument("paths", nargs="*", type=Path, help="files or folders to check")
    p.add_argument("--strict", action="store_true", help="also require every protocol's sections")
    p.set_defaults(handler=cmd_cases_validate)
    imports.register_case_import(csub)

    # rubrics -----------------------------------------------------------
    rubrics = sub.add_parser("rubrics", help="list and show scoring rubrics")
    rsub = rubrics.add_subparsers(dest="rubrics_command", metavar="ACTION", required=True)
    p = rsub.add_parser("list", help="list rubrics")
    p.set_defaults(handler=cmd_rubrics_list)
    p = rsub.add_parser("show", help="show one rubric's sections and criteria")
    p.add_argument("rubric")
    p.set_defaults(handler=cmd_rubrics_show)

    # sessions ----------------------------------------------------------
    sessions = sub.add_parser("sessions", help="list, show, replay and import saved sessions")
    ssub = sessions.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    p = ssub.add_parser("list", help="list saved sessions")
    p.add_argument("folder", nargs="?", type=Path, help="folder to list (default: sessions dir)")
    p.add_argument("--sessions-dir", type=Path, help=argparse.SUPPRESS)
    p.set_defaults(handler=cmd_sessions_list)
    p = ssub.add_parser("show", help="print a session's transcript and scores")
    p.add_argument("file", type=Path)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_sessions_show)
    p = ssub.add_parser("replay", help="step through a saved session in the TUI")
    p.add_argument("file", type=Path)
    p.set_defaults(handler=_cmd_replay)
    imports.register_session_import(ssub)

    # schema ------------------------------------------------------------
    p = sub.add_parser("schema", help="print the JSON Schema of a file format")
    p.add_argument("kind", choices=["case", "rubric", "session"])
    p.set_defaults(handler=cmd_schema)


def cmd_cases_list(args: argparse.Namespace) -> int:
    lib = library_from_args(args)
    cases = lib.cases()
    if args.json:
        rows = [
            {"id": c.id, "title": c.title, "specialty": c.specialty, "difficulty": c.difficulty, "path": str(lib._cases.paths[c.id])}
            for c in cases.values()
        ]
        print(json.dumps(rows, indent=2))
    else:
        table = Table(title=f"{len(cases)} cases")
        for col in ("id", "title", "specialty", "patient", "chief complaint"):
            table.add_column(col)
        for c in sorted(cases.values(), key=lambda c: (c.specialty, c.id)):
            d = c.doorway
            table.add_row(c.id, c.title, c.specialty, f"{d.patient_name}, {d.age}{d.age_unit[0]} {d.sex[0].upper()}", d.chief_complaint)
        console.print(table)
    for issue in lib.case_issues():
        console_err.print(f"[yellow]skipped:[/] {issue}", highlight=False)
    return EXIT_OK


def cmd_cases_show(args: argparse.Namespace) -> int:
    lib = library_from_args(args)
    case = get_case(lib, args.case)
    if args.json:
        print(case.model_dump_json(indent=2))
        return EXIT_OK
    print_case(case)
    return EXIT_OK


def print_case(case: Case) -> None:
    d = case.doorway
    v = d.vitals
    console.rule(f"[bold]{case.title}[/]  ({case.id}, {case.specialty})")
    console.print(f"[bold]{d.patient_name}[/], {d.age} {d.age_unit}, {d.sex} — {d.setting}")
    console.print(f"Chief complaint: {d.chief_complaint}")
    console.print("Vitals: " + ", ".join(v.parts()))
    console.print("Tasks: " + "; ".join(d.tasks))
    console.print(
        f"{len(case.history)} history facts, {len(case.exam)} exam findings, {len(case.tests)} tests, "
        f"{len(case.differential)} differential diagnoses, {len(case.guideline_features)} guideline features"
    )
    gaps = case.protocol_gaps()
    if gaps:
        console.print("[yellow]Incomplete for:[/] " + "; ".join(gaps))


def cmd_cases_validate(args: argparse.Namespace) -> int:
    if args.paths:
        paths = list(args.paths)
    else:
        lib = library_from_args(args)
        paths = [d for d in lib.case_dirs if d.is_dir()]
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise CliError(f"no such file or folder: {', '.join(map(str, missing))}")
    issues = validate_paths(paths, strict=args.strict)
    files = sum(len(list(p.glob("*.toml"))) if p.is_dir() else 1 for p in paths)
    for issue in issues:
        console_err.print(f"[red]✗[/] {issue}", highlight=False)
    bad = len({i.path for i in issues})
    if issues:
        console_err.print(f"{files - bad} of {files} case files valid; {len(issues)} problem(s) in {bad} file(s)")
        return EXIT_USAGE
    console.print(f"[green]✓[/] {files} case file(s) valid")
    return EXIT_OK


def cmd_rubrics_list(args: argparse.Namespace) -> int:
    lib = library_from_args(args)
    table = Table(title="rubrics")
    for col in ("id", "protocol", "title", "sections"):
        table.add_column(col)
    for r in lib.rubrics().values():
        table.add_row(r.id, r.protocol, r.title, ", ".join(s.id for s in r.sections))
    console.print(table)
    for issue in lib.rubric_issues():
        console_err.print(f"[yellow]skipped:[/] {issue}", highlight=False)
    return EXIT_OK


def cmd_rubrics_show(args: argparse.Namespace) -> int:
    lib = library_from_args(args)
    rubric = get_rubric(lib, args.rubric)
    console.rule(f"[bold]{rubric.title}[/] ({rubric.id}, protocol {rubric.protocol})")
    if rubric.description:
        console.print(rubric.description)
    for s in rubric.sections:
        table = Table(title=f"{s.title} [{s.id}] — judge: {s.judge}, max {s.max_points:g}", title_justify="left")
        for col in ("criterion", "points", "per", "text"):
            table.add_column(col)
        for c in s.criteria:
            table.add_row(c.id, f"{c.points:g}", c.per, c.text + (" [dim](model judge)[/]" if c.needs_model else ""))
        console.print(table)
    return EXIT_OK


def cmd_sessions_list(args: argparse.Namespace) -> int:
    folder = args.folder or config_from_args(args).sessions_dir
    summaries, errors = list_sessions(folder)
    table = Table(title=f"{len(summaries)} sessions in {folder}")
    for col in ("updated", "case", "status", "turns", "doctor", "patient", "total", "file"):
        table.add_column(col)
    for s in summaries:
        table.add_row(
            s.updated_at.strftime("%Y-%m-%d %H:%M"),
            s.case_id,
            s.status,
            str(s.turns),
            s.doctor,
            s.patient,
            "-" if s.total is None else f"{s.total:.1f}",
            str(s.path),
        )
    console.print(table)
    for err in errors:
        console_err.print(f"[yellow]skipped:[/] {err}", highlight=False)
    return EXIT_OK


def _load(path: Path) -> Session:
    try:
        return load_session(path)
    except SessionFileError as exc:
        raise CliError(str(exc)) from exc


def cmd_sessions_show(args: argparse.Namespace) -> int:
    session = _load(args.file)
    if args.json:
        print(session.model_dump_json(indent=2))
        return EXIT_OK
    roles = ", ".join(f"{k}={v.spec}" for k, v in session.roles.items())
    console.rule(f"[bold]{session.case_id}[/] — {session.status} — {roles}")
    for t in session.turns:
        style = {"doctor": "cyan", "patient": "green", "examiner": "magenta"}.get(t.role, "dim")
        console.print(f"[dim]{t.id} {t.phase:>7}[/] [{style}]{t.role:>8}[/]: {t.text}", highlight=False)
    if session.note:
        console.print(f"[bold]Note:[/] {len(session.note.diagnoses)} diagnoses, {len(session.note.workup)} workup items")
    print_scores(session)
    return EXIT_OK


def print_scores(session: Session) -> None:
    from ..domain.scores import ScoreSet

    scores: ScoreSet | None = session.latest_scores()
    if not scores:
        console.print("[dim]not scored[/]")
        return
    table = Table(title=f"Scores — rubric {scores.rubric_id}, judge {scores.judge}")
    for col in ("section", "points", "max", "score /100"):
        table.add_column(col)
    for s in scores.sections:
        pct = "-" if s.score_100 is None else f"{s.score_100:.1f}"
        table.add_row(s.title, f"{s.points:g}", f"{s.max_points:g}", pct)
    table.add_row("[bold]total[/]", "", "", "-" if scores.total is None else f"[bold]{scores.total:.1f}[/]")
    console.print(table)


def _cmd_replay(args: argparse.Namespace) -> int:
    from .tui import cmd_replay  # imports textual lazily

    return cmd_replay(args)


def cmd_schema(args: argparse.Namespace) -> int:
    model = {"case": Case, "rubric": Rubric, "session": Session}[args.kind]
    print(json.dumps(model.model_json_schema(), indent=2))
    return EXIT_OK
