"""Judge-vs-expert agreement: correlations, kappa, ICC and Kendall's W.

Input is a table of scores, one per (item, rater):

- a long CSV with the columns ``item, rater, score`` (other columns ignored);
- the CRAFT-MD expert-annotation layout (``--preset craftmd``): a wide table
  whose columns are cases and whose rows are ``trial_0..trial_4`` (the doctor
  model's extracted diagnoses), ``correct_ans`` and ``dermatologist_accuracy``
  (how many of the five trials a dermatologist judged correct). The offline
  diagnosis matcher plays the judge: its per-case count of matching trials is
  compared with the dermatologist's.

For each pair of raters (the chosen judge against every other rater, or all
pairs) the report gives Pearson r, Spearman ρ and Kendall τ with p-values and
paired bootstrap CIs, weighted kappa for integer scores, ICC(2,1), and
Kendall's W across all raters with its χ² p-value and a bootstrap CI.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np
from rich.console import Console
from rich.table import Table

from . import stats

PRESETS = ("craftmd",)
CRAFTMD_TRIALS = 5
# Rows of the CRAFT-MD sheet that stand for "no single answer was extracted".
_NO_ANSWER = {"", "none", "multiple", "n/a", "na"}


class AgreementInputError(ValueError):
    """A ratings file that cannot be read as the layout asked for."""


@dataclass
class RatingTable:
    """Scores keyed by item and rater, in first-seen order."""

    items: list[str] = field(default_factory=list)
    raters: list[str] = field(default_factory=list)
    scores: dict[tuple[str, str], float] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)  # per item, preset-specific

    def add(self, item: str, rater: str, score: float) -> None:
        if item not in self.items:
            self.items.append(item)
        if rater not in self.raters:
            self.raters.append(rater)
        self.scores[(item, rater)] = score

    def paired(self, a: str, b: str) -> tuple[list[str], list[float], list[float]]:
        items = [i for i in self.items if (i, a) in self.scores and (i, b) in self.scores]
        return items, [self.scores[(i, a)] for i in items], [self.scores[(i, b)] for i in items]

    def complete_matrix(self) -> tuple[list[str], np.ndarray]:
        """Items every rater scored, as an items × raters array."""
        items = [i for i in self.items if all((i, r) in self.scores for r in self.raters)]
        return items, np.array([[self.scores[(i, r)] for r in self.raters] for i in items], dtype=float)


# -- loading -------------------------------------------------------------------


def load_long_csv(path: Path) -> RatingTable:
    """``item, rater, score`` rows (header required, case-insensitive)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise AgreementInputError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    reader = csv.DictReader(io.StringIO(text))
    header = {(h or "").strip().lower(): h for h in (reader.fieldnames or [])}
    missing = [c for c in ("item", "rater", "score") if c not in header]
    if missing:
        raise AgreementInputError(
            f"{path}: missing column(s) {', '.join(missing)}; expected a header 'item,rater,score' "
            "(or use --preset craftmd for the CRAFT-MD annotation sheet)"
        )
    table = RatingTable()
    for lineno, row in enumerate(reader, start=2):
        item = (row.get(header["item"]) or "").strip()
        rater = (row.get(header["rater"]) or "").strip()
        raw = (row.get(header["score"]) or "").strip()
        if not item and not rater and not raw:
            continue
        if not item or not rater:
            raise AgreementInputError(f"{path}:{lineno}: empty item or rater")
        try:
            score = float(raw)
        except ValueError:
            raise AgreementInputError(f"{path}:{lineno}: score {raw!r} is not a number") from None
        if not math.isfinite(score):
            raise AgreementInputError(f"{path}:{lineno}: score {raw!r} is not finite")
        if (item, rater) in table.scores:
            raise AgreementInputError(f"{path}:{lineno}: second score for item {item!r} by rater {rater!r}")
        table.add(item, rater, score)
    if len(table.raters) < 2:
        raise AgreementInputError(f"{path}: need scores from at least 2 raters (found {len(table.raters)})")
    return table


DiagnosisJudge = Callable[[str, str], bool]
"""(stated answer, correct answer) -> is it correct."""


def default_diagnosis_judge() -> DiagnosisJudge:
    """The offline diagnosis matcher: any stated diagnosis matching the correct one counts."""
    from ..judges.diagnosis_match import DiagnosisMatcher, split_diagnoses

    cache: dict[str, DiagnosisMatcher] = {}

    def judge(answer: str, correct: str) -> bool:
        if answer.strip().lower() in _NO_ANSWER:
            return False
        matcher = cache.get(correct)
        if matcher is None:
            matcher = cache[correct] = DiagnosisMatcher([correct])
        return matcher.match_any(split_diagnoses(answer)) is not None

    return judge


def load_craftmd(path: Path, judge: DiagnosisJudge | None = None, *, judge_name: str = "matcher") -> RatingTable:
    """The CRAFT-MD annotation sheet → per-case counts of correct trials (judge vs dermatologist)."""
    path = Path(path)
    try:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    except OSError as exc:
        raise AgreementInputError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    header_idx = next((i for i, r in enumerate(rows) if any(c.strip().startswith("case_") for c in r[1:])), None)
    if header_idx is None:
        raise AgreementInputError(f"{path}: no header row with case_N columns; is this the CRAFT-MD annotation sheet?")
    header = rows[header_idx]
    named = {r[0].strip(): r for r in rows[header_idx + 1 :] if r and r[0].strip()}
    wanted = [f"trial_{t}" for t in range(CRAFTMD_TRIALS)] + ["correct_ans", "dermatologist_accuracy"]
    missing = [w for w in wanted if w not in named]
    if missing:
        raise AgreementInputError(f"{path}: missing row(s) {', '.join(missing)}")
    judge = judge or default_diagnosis_judge()
    table = RatingTable()
    for col, case in enumerate(header):
        case = case.strip()
        if col == 0 or not case:
            continue
        cell = lambda name: (named[name][col] if col < len(named[name]) else "").strip()  # noqa: E731
        expert_raw, correct = cell("dermatologist_accuracy"), cell("correct_ans")
        if not expert_raw or not correct:
            continue  # not annotated
        try:
            expert = float(expert_raw)
        except ValueError:
            raise AgreementInputError(f"{path}: {case}: dermatologist_accuracy {expert_raw!r} is not a number") from None
        answers = [cell(f"trial_{t}") for t in range(CRAFTMD_TRIALS)]
        verdicts = [judge(a, correct) for a in answers]
        table.add(case, judge_name, float(sum(verdicts)))
        table.add(case, "dermatologist", expert)
        table.details[case] = {"correct": correct, "answers": answers, "judge_correct": verdicts}
    if not table.items:
        raise AgreementInputError(f"{path}: no annotated cases")
    return table


# -- analysis ----------------------------------------------------------------------


@dataclass
class PairAgreement:
    a: str
    b: str
    n: int
    correlations: list[stats.Correlation]
    kappa_quadratic: float | None  # integer scores only
    exact_agreement: float
    icc_2_1: float | None
    mean_a: float
    mean_b: float


@dataclass
class ConcordanceResult:
    raters: list[str]
    w: stats.KendallW | None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""


@dataclass
class AgreementReport:
    source: str
    pairs: list[PairAgreement]
    concordance: ConcordanceResult
    n_items: int
    raters: list[str]
    seed: int
    n_resamples: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return _nan_to_none(
            {
                "source": self.source,
                "items": self.n_items,
                "raters": self.raters,
                "pairs": [
                    {
                        "a": p.a,
                        "b": p.b,
                        "n": p.n,
                        "mean_a": p.mean_a,
                        "mean_b": p.mean_b,
                        **{c.name: {"estimate": c.estimate, "p_value": c.p_value, "ci_low": c.low, "ci_high": c.high} for c in p.correlations},
                        "kappa_quadratic": p.kappa_quadratic,
                        "exact_agreement": p.exact_agreement,
                        "icc_2_1": p.icc_2_1,
                    }
                    for p in self.pairs
                ],
                "kendall_w": {
                    "raters": self.concordance.raters,
                    **(asdict(self.concordance.w) if self.concordance.w else {}),
                    "ci_low": self.concordance.ci_low,
                    "ci_high": self.concordance.ci_high,
                    "note": self.concordance.note,
                },
                "bootstrap": {"seed": self.seed, "resamples": self.n_resamples, "confidence": 0.95},
                "notes": self.notes,
            }
        )


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_to_none(v) for v in obj]
    return obj


def pair_agreement(table: RatingTable, a: str, b: str, *, seed: int = 0, n_resamples: int = stats.DEFAULT_RESAMPLES) -> PairAgreement:
    _, xa, xb = table.paired(a, b)
    if len(xa) < 3:
        raise AgreementInputError(f"raters {a!r} and {b!r} share {len(xa)} item(s); need at least 3")
    corrs = [stats.correlation(xa, xb, name, seed=seed, n_resamples=n_resamples) for name in ("pearson", "spearman", "kendall")]
    integer = all(float(v).is_integer() for v in xa + xb)
    kappa = stats.cohen_kappa([int(v) for v in xa], [int(v) for v in xb], weights="quadratic") if integer else None
    exact = float(np.mean(np.isclose(xa, xb)))
    icc = stats.icc_2_1(np.column_stack([xa, xb]))
    return PairAgreement(a, b, len(xa), corrs, kappa, exact, icc, float(np.mean(xa)), float(np.mean(xb)))


def concordance(table: RatingTable, *, seed: int = 0, n_resamples: int = stats.DEFAULT_RESAMPLES) -> ConcordanceResult:
    """Kendall's W over the items every rater scored, with a bootstrap CI over items."""
    items, m = table.complete_matrix()
    if len(items) < 3:
        return ConcordanceResult(table.raters, None, note=f"only {len(items)} item(s) scored by every rater")
    w = stats.kendall_w(m)
    rng = np.random.default_rng(seed)
    boot = []
    for _ in range(n_resamples):
        sample = m[rng.integers(0, len(items), size=len(items))]
        try:
            value = stats.kendall_w(sample).w
        except stats.StatsError:
            continue
        if value == value:
            boot.append(value)
    low, high = (float(v) for v in np.quantile(boot, [0.025, 0.975])) if boot else (None, None)
    return ConcordanceResult(table.raters, w, low, high)


def agreement_report(
    table: RatingTable,
    *,
    source: str,
    judge_rater: str | None = None,
    seed: int = 0,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
) -> AgreementReport:
    """The judge against every other rater (or all pairs when no judge is named)."""
    if judge_rater is not None:
        if judge_rater not in table.raters:
            raise AgreementInputError(f"no rater {judge_rater!r}; raters are: {', '.join(table.raters)}")
        pairs = [(judge_rater, r) for r in table.raters if r != judge_rater]
    else:
        pairs = list(combinations(table.raters, 2))
    notes: list[str] = []
    results = []
    for a, b in pairs:
        try:
            results.append(pair_agreement(table, a, b, seed=seed, n_resamples=n_resamples))
        except AgreementInputError as exc:
            notes.append(str(exc))
    if not results:
        raise AgreementInputError("no pair of raters shares 3 or more items: " + "; ".join(notes))
    conc = concordance(table, seed=seed, n_resamples=min(n_resamples, 1000))
    return AgreementReport(source, results, conc, len(table.items), list(table.raters), seed, n_resamples, notes)


# -- renderings -----------------------------------------------------------------------

AgreementFormat = Literal["table", "json", "csv", "md"]


def _f(v: float | None, digits: int = 3) -> str:
    return "–" if v is None or v != v else f"{v:.{digits}f}"


def _p(v: float | None) -> str:
    return "–" if v is None or v != v else ("<0.001" if v < 0.001 else f"{v:.3f}")


def _rows(report: AgreementReport) -> list[dict[str, str]]:
    rows = []
    for p in report.pairs:
        for c in p.correlations:
            rows.append(
                {"a": p.a, "b": p.b, "n": str(p.n), "statistic": c.name, "estimate": _f(c.estimate),
                 "ci": f"[{_f(c.low)}, {_f(c.high)}]", "p": _p(c.p_value)}
            )
        if p.kappa_quadratic is not None:
            rows.append({"a": p.a, "b": p.b, "n": str(p.n), "statistic": "kappa (quadratic)", "estimate": _f(p.kappa_quadratic), "ci": "", "p": ""})
        rows.append({"a": p.a, "b": p.b, "n": str(p.n), "statistic": "ICC(2,1)", "estimate": _f(p.icc_2_1), "ci": "", "p": ""})
        rows.append({"a": p.a, "b": p.b, "n": str(p.n), "statistic": "exact agreement", "estimate": _f(p.exact_agreement), "ci": "", "p": ""})
    w = report.concordance
    if w.w is not None:
        rows.append(
            {"a": "all raters", "b": "", "n": str(w.w.n_items), "statistic": f"Kendall's W ({w.w.n_raters} raters)",
             "estimate": _f(w.w.w), "ci": f"[{_f(w.ci_low)}, {_f(w.ci_high)}]", "p": _p(w.w.p_value)}
        )
    return rows


def render_rich(report: AgreementReport, console: Console) -> None:
    t = Table(title=f"Agreement — {report.source} ({report.n_items} items, raters: {', '.join(report.raters)})")
    for col in ("rater A", "rater B", "n", "statistic", "estimate", "95% CI", "p"):
        t.add_column(col, justify="right" if col in ("n", "estimate", "p") else "left")
    for r in _rows(report):
        t.add_row(r["a"], r["b"], r["n"], r["statistic"], r["estimate"], r["ci"], r["p"])
    console.print(t)
    for p in report.pairs:
        console.print(f"[dim]mean {p.a} = {p.mean_a:.3f}, mean {p.b} = {p.mean_b:.3f} (n={p.n})[/]")
    console.print(f"[dim]bootstrap: seed {report.seed}, {report.n_resamples} resamples, percentile 95% CI[/]")
    for note in report.notes + ([report.concordance.note] if report.concordance.note else []):
        console.print(f"[yellow]note:[/] {note}")


def render_json(report: AgreementReport) -> str:
    return json.dumps(report.to_dict(), indent=2)


def render_csv(report: AgreementReport) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["rater_a", "rater_b", "n", "statistic", "estimate", "ci_low", "ci_high", "p_value"])
    for p in report.pairs:
        for c in p.correlations:
            w.writerow([p.a, p.b, p.n, c.name, _num(c.estimate), _num(c.low), _num(c.high), _num(c.p_value)])
        if p.kappa_quadratic is not None:
            w.writerow([p.a, p.b, p.n, "kappa_quadratic", _num(p.kappa_quadratic), "", "", ""])
        w.writerow([p.a, p.b, p.n, "icc_2_1", _num(p.icc_2_1), "", "", ""])
        w.writerow([p.a, p.b, p.n, "exact_agreement", _num(p.exact_agreement), "", "", ""])
    c = report.concordance
    if c.w is not None:
        w.writerow(["all", "", c.w.n_items, "kendall_w", _num(c.w.w), _num(c.ci_low), _num(c.ci_high), _num(c.w.p_value)])
    return buf.getvalue()


def _num(v: float | None) -> str:
    return "" if v is None or v != v else f"{v:.6g}"


def render_md(report: AgreementReport) -> str:
    lines = [
        f"Agreement — {report.source}: {report.n_items} items, raters {', '.join(report.raters)}. "
        f"Bootstrap 95% CI (seed {report.seed}, {report.n_resamples} resamples).",
        "",
        "| rater A | rater B | n | statistic | estimate | 95% CI | p |",
        "|---|---|---:|---|---:|---|---:|",
    ]
    for r in _rows(report):
        lines.append(f"| {r['a']} | {r['b']} | {r['n']} | {r['statistic']} | {r['estimate']} | {r['ci']} | {r['p']} |")
    return "\n".join(lines) + "\n"
