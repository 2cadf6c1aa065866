"""Aggregate a batch's results: means with CIs, paired comparisons, renderings.

A *condition* is everything in an encounter's key except the case and trial
(doctor, patient, judge, rubric, mode, arm, answer format). For each condition
and each metric (every rubric section, plus the total) the report gives the
mean over encounters with a seeded bootstrap 95% CI.

Comparisons pair two conditions that differ in exactly one field (two doctor
models on the same arm, two arms for the same doctor ...) on the encounters
they share (same case and trial), test the mean paired difference with a
bootstrap p-value, and adjust the p-values of each metric's family of
comparisons with Holm–Bonferroni.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any, Iterable, Literal

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from . import stats
from .results import ResultRecord, iter_condition_fields

TOTAL = "total"
ReportFormat = Literal["table", "csv", "json", "md"]


@dataclass(frozen=True, order=True)
class Condition:
    doctor: str
    patient: str
    judge: str
    rubric: str
    mode: str
    arm: str | None
    answer_format: str | None

    @classmethod
    def of(cls, r: ResultRecord) -> "Condition":
        return cls(*(getattr(r, f) for f in iter_condition_fields()))

    def get(self, name: str) -> Any:
        return getattr(self, name)


@dataclass
class Cell:
    condition: str
    metric: str
    mean: float
    ci_low: float
    ci_high: float
    n: int


@dataclass
class Comparison:
    metric: str
    a: str
    b: str
    differs_in: str
    mean_diff: float
    ci_low: float
    ci_high: float
    n: int
    p_value: float
    p_holm: float = float("nan")


@dataclass
class Report:
    conditions: dict[str, dict[str, Any]]  # label -> condition fields
    metrics: list[str]
    cells: list[Cell]
    comparisons: list[Comparison]
    counts: dict[str, int]
    notes: list[str] = field(default_factory=list)
    seed: int = 0
    n_resamples: int = stats.DEFAULT_RESAMPLES

    def cell(self, condition: str, metric: str) -> Cell | None:
        return next((c for c in self.cells if c.condition == condition and c.metric == metric), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": self.counts,
            "conditions": self.conditions,
            "metrics": self.metrics,
            "means": [asdict(c) for c in self.cells],
            "comparisons": [asdict(c) for c in self.comparisons],
            "notes": self.notes,
            "bootstrap": {"seed": self.seed, "resamples": self.n_resamples, "confidence": 0.95},
        }


def _labels(conditions: list[Condition]) -> dict[Condition, str]:
    """Short labels naming only the fields that vary (the doctor always)."""
    varying = [f for f in iter_condition_fields() if len({c.get(f) for c in conditions}) > 1]
    if "doctor" not in varying:
        varying.insert(0, "doctor")
    out = {}
    for c in conditions:
        parts = []
        for f in varying:
            v = c.get(f)
            parts.append(str(v) if f == "doctor" else f"{f}={v}")
        out[c] = " ".join(parts)
    return out


def _metric_order(records: list[ResultRecord]) -> list[str]:
    seen: list[str] = []
    for r in records:
        for s in r.sections:
            if s not in seen:
                seen.append(s)
    return seen + [TOTAL]


def _value(r: ResultRecord, metric: str) -> float | None:
    return r.total if metric == TOTAL else r.sections.get(metric)


def build_report(
    records: Iterable[ResultRecord],
    *,
    seed: int = 0,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    method: Literal["bootstrap", "permutation"] = "bootstrap",
) -> Report:
    """Means with CIs and Holm-adjusted paired comparisons from result records.

    Only finished encounters count; failures appear in ``counts``.
    """
    records = list(records)
    finished = [r for r in records if r.status == "finished"]
    counts = {
        "encounters": len(records),
        "finished": len(finished),
        "failed": sum(1 for r in records if r.status == "failed"),
    }
    by_cond: dict[Condition, list[ResultRecord]] = {}
    for r in finished:
        by_cond.setdefault(Condition.of(r), []).append(r)
    conditions = sorted(by_cond)
    labels = _labels(conditions)
    metrics = _metric_order(finished)
    report = Report(
        conditions={labels[c]: {f: c.get(f) for f in iter_condition_fields()} for c in conditions},
        metrics=metrics,
        cells=[],
        comparisons=[],
        counts=counts,
        seed=seed,
        n_resamples=n_resamples,
    )
    for c in conditions:
        for m in metrics:
            values = [v for v in (_value(r, m) for r in by_cond[c]) if v is not None]
            if not values:
                continue
            ci = stats.bootstrap_mean_ci(values, n_resamples=n_resamples, seed=seed)
            report.cells.append(Cell(labels[c], m, ci.mean, ci.low, ci.high, ci.n))
    for m in metrics:
        family = _compare_metric(m, conditions, by_cond, labels, seed=seed, n_resamples=n_resamples, method=method, notes=report.notes)
        if family:
            adjusted = stats.holm_bonferroni([c.p_value for c in family])
            for comp, p in zip(family, adjusted):
                comp.p_holm = p
        report.comparisons.extend(family)
    return report


def _compare_metric(
    metric: str,
    conditions: list[Condition],
    by_cond: dict[Condition, list[ResultRecord]],
    labels: dict[Condition, str],
    *,
    seed: int,
    n_resamples: int,
    method: str,
    notes: list[str],
) -> list[Comparison]:
    out: list[Comparison] = []
    for a, b in combinations(conditions, 2):
        differs = [f for f in iter_condition_fields() if a.get(f) != b.get(f)]
        if len(differs) != 1:
            continue  # comparing two things at once says nothing about either
        va = {(r.case, r.trial): _value(r, metric) for r in by_cond[a]}
        vb = {(r.case, r.trial): _value(r, metric) for r in by_cond[b]}
        units = sorted(u for u in va.keys() & vb.keys() if va[u] is not None and vb[u] is not None)
        if len(units) < 2:
            if metric == TOTAL:
                notes.append(f"{labels[a]} vs {labels[b]}: fewer than 2 shared encounters, not compared")
            continue
        res = stats.paired_difference(
            [va[u] for u in units], [vb[u] for u in units], method=method, n_resamples=n_resamples, seed=seed
        )
        out.append(Comparison(metric, labels[a], labels[b], differs[0], res.mean_diff, res.low, res.high, res.n, res.p_value))
    return out


# -- renderings ------------------------------------------------------------------


def _fmt(v: float | None, digits: int = 1) -> str:
    if v is None or v != v:  # NaN
        return "–"
    return f"{v:.{digits}f}"


def _fmt_p(p: float) -> str:
    if p != p:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def render_rich(report: Report, console: Console, *, bar_width: int = 30) -> None:
    """Means table, comparisons table and a bar chart of section scores."""
    c = report.counts
    console.print(
        f"[bold]{c['finished']}[/] finished, [bold red]{c['failed']}[/] failed "
        f"encounters; means with bootstrap 95% CI (seed {report.seed}, {report.n_resamples} resamples)"
    )
    if not report.cells:
        console.print("[yellow]No finished encounters with scores.[/]")
        return
    # Long layout (one row per metric × condition): readable at any terminal width.
    means = Table(title="Mean score (0-100) with bootstrap 95% CI")
    for col, just in (("metric", "left"), ("condition", "left"), ("mean", "right"), ("95% CI", "right"), ("n", "right")):
        means.add_column(col, justify=just, overflow="fold")
    for m in report.metrics:
        first = True
        for label in report.conditions:
            cell = report.cell(label, m)
            if cell is None:
                continue
            means.add_row(m if first else "", label, f"{cell.mean:.1f}", f"[{cell.ci_low:.1f}, {cell.ci_high:.1f}]", str(cell.n))
            first = False
        means.add_section()
    console.print(means)
    if report.comparisons:
        comp = Table(title="Paired comparisons A − B (p Holm-adjusted within each metric)")
        for col, just in (("metric", "left"), ("A vs B", "left"), ("Δ", "right"), ("95% CI", "right"), ("n", "right"), ("p", "right"), ("p Holm", "right")):
            comp.add_column(col, justify=just, overflow="fold")
        for x in report.comparisons:
            style = "bold green" if x.p_holm < 0.05 else ""
            comp.add_row(
                x.metric, f"{x.a}\nvs {x.b}", f"{x.mean_diff:+.1f}", f"[{x.ci_low:+.1f}, {x.ci_high:+.1f}]",
                str(x.n), _fmt_p(x.p_value), Text(_fmt_p(x.p_holm), style=style),
            )
        console.print(comp)
    console.print(bar_chart(report, width=bar_width))
    for note in report.notes:
        console.print(f"[dim]note: {note}[/]")


def bar_chart(report: Report, *, width: int = 30) -> Group:
    """One block of bars per metric: each condition's mean on a 0-100 scale."""
    blocks: list[Any] = [Text("Section scores", style="bold underline")]
    label_w = max((len(label) for label in report.conditions), default=10)
    palette = ["cyan", "magenta", "green", "yellow", "blue", "red"]
    for m in report.metrics:
        blocks.append(Text(m, style="bold"))
        for i, label in enumerate(report.conditions):
            cell = report.cell(label, m)
            if cell is None:
                continue
            filled = max(0, min(width, round(cell.mean / 100 * width)))
            line = Text(f"  {label:<{label_w}} ")
            line.append("█" * filled, style=palette[i % len(palette)])
            line.append("·" * (width - filled), style="dim")
            line.append(f" {cell.mean:5.1f}")
            blocks.append(line)
    return Group(*blocks)


def render_csv(report: Report) -> str:
    """One CSV: ``kind`` is ``mean`` (a condition's cell) or ``comparison``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["kind", "metric", "condition", "vs", "differs_in", "mean", "ci_low", "ci_high", "n", "p_value", "p_holm"])
    for c in report.cells:
        w.writerow(["mean", c.metric, c.condition, "", "", _num(c.mean), _num(c.ci_low), _num(c.ci_high), c.n, "", ""])
    for x in report.comparisons:
        w.writerow(
            ["comparison", x.metric, x.a, x.b, x.differs_in, _num(x.mean_diff), _num(x.ci_low), _num(x.ci_high), x.n,
             _num(x.p_value, 6), _num(x.p_holm, 6)]
        )
    return buf.getvalue()


def _num(v: float, digits: int = 4) -> str:
    return "" if v != v else f"{round(v, digits)}"


def render_json(report: Report) -> str:
    # NaN is not JSON: emit null instead.
    return json.dumps(_nan_to_none(report.to_dict()), indent=2, default=str)


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_to_none(v) for v in obj]
    return obj


def render_md(report: Report) -> str:
    c = report.counts
    lines = [
        f"{c['finished']} finished, {c['failed']} failed encounters. "
        f"Means with bootstrap 95% CI (seed {report.seed}, {report.n_resamples} resamples).",
        "",
        "| condition | " + " | ".join(report.metrics) + " |",
        "|---|" + "---:|" * len(report.metrics),
    ]
    for label in report.conditions:
        cells = []
        for m in report.metrics:
            cell = report.cell(label, m)
            cells.append(f"{cell.mean:.1f} [{cell.ci_low:.1f}, {cell.ci_high:.1f}] (n={cell.n})" if cell else "–")
        lines.append(f"| {_md(label)} | " + " | ".join(cells) + " |")
    if report.comparisons:
        lines += [
            "",
            "Paired comparisons (A − B), p-values Holm-adjusted within each metric:",
            "",
            "| metric | A | B | Δ mean | 95% CI | n | p | p (Holm) |",
            "|---|---|---|---:|---:|---:|---:|---:|",
        ]
        for x in report.comparisons:
            lines.append(
                f"| {x.metric} | {_md(x.a)} | {_md(x.b)} | {x.mean_diff:+.1f} | [{x.ci_low:+.1f}, {x.ci_high:+.1f}] "
                f"| {x.n} | {_fmt_p(x.p_value)} | {_fmt_p(x.p_holm)} |"
            )
    for note in report.notes:
        lines.append(f"\n_note: {note}_")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def summary_dict(records: list[ResultRecord], *, seed: int = 0) -> dict[str, Any]:
    """What summary.json holds: counts, usage and the report (without the chart)."""
    report = build_report(records, seed=seed)
    usage = {"input_tokens": 0, "output_tokens": 0, "calls": 0}
    for r in records:
        usage["input_tokens"] += r.usage.input_tokens
        usage["output_tokens"] += r.usage.output_tokens
        usage["calls"] += r.usage.calls
    failures = [{"key": r.key.label(), "error": r.error} for r in records if r.status == "failed"]
    return _nan_to_none({**report.to_dict(), "usage": usage, "failures": failures})
