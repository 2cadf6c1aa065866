"""`cases import` and `sessions import`: public datasets into case and session files."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table

from ..importers import CASE_FORMATS, REPORT_NAME, SESSION_FORMATS, ImportInputError, ImportReport
from .common import EXIT_OK, CliError, console


def _format_help(formats: dict) -> str:
    return "; ".join(f"{name} {f.sources}: {f.help}" for name, f in formats.items())


def register_case_import(cases_sub: argparse._SubParsersAction) -> None:
    """Add `cases import FORMAT SRC... --out DIR`."""
    p = cases_sub.add_parser(
        "import",
        help="convert a public dataset into case files",
        description="Formats: " + _format_help(CASE_FORMATS),
    )
    p.add_argument("format", choices=sorted(CASE_FORMATS), metavar="FORMAT", help=", ".join(sorted(CASE_FORMATS)))
    p.add_argument("sources", nargs="+", type=Path, metavar="SRC", help="input file(s); epag takes PROFILES.json GOLD.csv")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the case files and import_report.json")
    p.add_argument("--force", action="store_true", help="overwrite files that were edited by hand since the last import")
    p.set_defaults(handler=cmd_cases_import)


def register_session_import(sessions_sub: argparse._SubParsersAction) -> None:
    """Add `sessions import FORMAT SRC --out DIR`."""
    p = sessions_sub.add_parser(
        "import",
        help="convert published transcripts into sessions (plus minimal cases)",
        description="Formats: " + _format_help(SESSION_FORMATS),
    )
    p.add_argument("format", choices=sorted(SESSION_FORMATS), metavar="FORMAT", help=", ".join(sorted(SESSION_FORMATS)))
    p.add_argument("sources", nargs="+", type=Path, metavar="SRC", help="results folder (results/<model>/case_*.json or one model folder)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="writes DIR/sessions/, DIR/cases/ and DIR/import_report.json")
    p.add_argument("--choices", type=Path, metavar="CSV", help="CRAFT-MD case table to take the 4 answer choices from")
    p.add_argument("--force", action="store_true", help="overwrite files that were edited by hand since the last import")
    p.set_defaults(handler=cmd_sessions_import)


def cmd_cases_import(args: argparse.Namespace) -> int:
    from ..importers import import_cases

    try:
        report = import_cases(args.format, list(args.sources), args.out, force=args.force)
    except ImportInputError as exc:
        raise CliError(str(exc)) from exc
    print_report(report, args.out)
    return EXIT_OK


def cmd_sessions_import(args: argparse.Namespace) -> int:
    from ..importers import import_sessions

    options = {"choices_csv": args.choices} if args.choices else {}
    try:
        report = import_sessions(args.format, list(args.sources), args.out, force=args.force, **options)
    except ImportInputError as exc:
        raise CliError(str(exc)) from exc
    print_report(report, args.out)
    return EXIT_OK


def print_report(report: ImportReport, out: Path) -> None:
    counts = report.counts()
    console.print(f"[bold]{report.format}[/] import from {report.source} into {out}", highlight=False)
    table = Table()
    table.add_column("status")
    table.add_column("files", justify="right")
    for status, n in counts.items():
        table.add_row(status, str(n))
    console.print(table)
    unmapped = report.unmapped_summary()
    if unmapped:
        console.print("[yellow]Unmapped source fields[/] (kept out of the cases; see the report for values):")
        for name, n in unmapped.items():
            console.print(f"  {name}: {n} record(s)", highlight=False)
    else:
        console.print("Unmapped source fields: none")
    defaults = sum(len(e.defaults) for e in report.entries)
    gaps = sum(1 for e in report.entries if e.protocol_gaps)
    console.print(
        f"{len(report.entries)} case(s); {defaults} default(s)/placeholder(s) recorded; "
        f"{gaps} case(s) partial for some protocols (cases validate --strict lists them)."
    )
    for e in report.entries:
        if e.status.startswith("skipped"):
            console.print(f"[yellow]kept[/] {e.file}: {e.status} (use --force to overwrite)", highlight=False)
    for s in report.sessions:
        if s["status"].startswith("skipped"):
            console.print(f"[yellow]kept[/] {s['file']}: {s['status']} (use --force to overwrite)", highlight=False)
    console.print(f"Report: {Path(out) / REPORT_NAME}", highlight=False)
