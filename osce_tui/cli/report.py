"""`osce-tui report DIR` and `osce-tui agreement FILE`."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import CliError, console, console_err


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="summarise a batch run: means with CIs, paired comparisons, bar chart",
        description=(
            "Per condition (doctor model, arm, answer format ...) and rubric section: mean score with a seeded "
            "bootstrap 95% CI; paired comparisons between conditions that differ in one thing, with bootstrap "
            "p-values adjusted by Holm-Bonferroni within each section."
        ),
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="a batch --out folder (or its results.jsonl)")
    p.add_argument("--format", choices=("table", "csv", "json", "md"), default="table")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--test", choices=("bootstrap", "permutation"), default="bootstrap", help="paired test (default bootstrap)")
    p.set_defaults(handler=cmd_report)

    a = sub.add_parser(
        "agreement",
        help="judge vs expert scores: Pearson, Spearman, Kendall, Kendall's W, kappa, ICC",
        description=(
            "Agreement between raters from a long CSV with columns item,rater,score, or from the CRAFT-MD "
            "expert annotation sheet with --preset craftmd (the offline diagnosis matcher is the judge)."
        ),
    )
    a.add_argument("file", type=Path, metavar="FILE")
    a.add_argument("--preset", choices=("craftmd",), help="read FILE in a named dataset layout")
    a.add_argument("--judge-rater", metavar="NAME", help="compare this rater with every other (default: all pairs)")
    a.add_argument("--format", choices=("table", "csv", "json", "md"), default="table")
    a.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    a.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    a.set_defaults(handler=cmd_agreement)


def _check_resamples(n: int) -> None:
    if n < 100:
        raise CliError("--resamples must be at least 100")


def cmd_report(args: argparse.Namespace) -> int:
    from ..batch.report import build_report, render_csv, render_json, render_md, render_rich
    from ..batch.results import ResultsFileError, read_results

    _check_resamples(args.resamples)
    try:
        read = read_results(args.dir)
    except ResultsFileError as exc:
        raise CliError(str(exc)) from exc
    for problem in read.skipped:
        console_err.print(f"[yellow]skipped line:[/] {problem}", highlight=False)
    records = list(read.latest().values())
    report = build_report(records, seed=args.seed, n_resamples=args.resamples, method=args.test)
    if args.format == "table":
        render_rich(report, console)
    else:
        render = {"csv": render_csv, "json": render_json, "md": render_md}[args.format]
        print(render(report), end="")
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from ..batch import agreement as ag

    _check_resamples(args.resamples)
    judge = args.judge_rater
    try:
        if args.preset == "craftmd":
            table = ag.load_craftmd(args.file)
            judge = judge or "matcher"
        else:
            table = ag.load_long_csv(args.file)
        report = ag.agreement_report(
            table, source=str(args.file), judge_rater=judge, seed=args.seed, n_resamples=args.resamples
        )
    except ag.AgreementInputError as exc:
        raise CliError(str(exc)) from exc
    if args.format == "table":
        ag.render_rich(report, console)
    else:
        render = {"csv": ag.render_csv, "json": ag.render_json, "md": ag.render_md}[args.format]
        print(render(report), end="")
    return 0
