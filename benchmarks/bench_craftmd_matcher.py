"""How well does the offline diagnosis matcher agree with dermatologists?

Data: CRAFT-MD's expert annotation table (validation_graderai_dev.csv, see
/work/shared/data/README.md): per case, five trials' extracted diagnoses, the
correct answer, and how many of the five trials a dermatologist judged correct.

For every case the matcher grades the five trials; its count (0-5) is compared
with the dermatologist's count: Spearman rho (scipy), exact agreement of the
counts, mean absolute difference, and trial-level agreement where the expert's
count is 0 or 5 (the only cases where each trial's expert verdict is known).
Run twice: with the case name only, and with the built-in synonym table.

Usage: python benchmarks/bench_craftmd_matcher.py [CSV]
"""

from __future__ import annotations

import csv
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from scipy import stats

from osce_tui.judges.diagnosis_match import DiagnosisMatcher, split_diagnoses

DEFAULT_CSV = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "craftmd" / "validation_graderai_dev.csv"
TRIALS = [f"trial_{i}" for i in range(5)]


@dataclass
class ValidationCase:
    case_id: str
    trials: list[str]
    correct: str
    expert_count: int


def load_validation(path: Path) -> list[ValidationCase]:
    """Parse the wide table: rows are labelled in column 0, cases are columns."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    by_label = {r[0].strip(): r for r in rows if r and r[0].strip() in {*TRIALS, "correct_ans", "dermatologist_accuracy"}}
    header = next((r for r in rows if len(r) > 1 and r[1].strip().startswith("case_")), None)
    missing = {*TRIALS, "correct_ans", "dermatologist_accuracy"} - by_label.keys()
    if header is None or missing:
        raise ValueError(f"{path}: not a CRAFT-MD validation table (missing rows: {sorted(missing) or 'case header'})")
    cases = []
    for j in range(1, len(header)):
        cid = header[j].strip()
        expert = by_label["dermatologist_accuracy"][j].strip()
        if not cid or not expert:
            continue
        cases.append(
            ValidationCase(
                case_id=cid,
                trials=[by_label[t][j].strip() for t in TRIALS],
                correct=by_label["correct_ans"][j].strip(),
                expert_count=int(float(expert)),
            )
        )
    return cases


def grade_trial(extracted: str, matcher: DiagnosisMatcher) -> bool:
    """One trial's extracted answer: 'multiple'/'none' are wrong; a list is right if any item matches."""
    key = extracted.strip().lower().rstrip(".")
    if key in {"", "multiple", "none"}:
        return False
    return matcher.match_any(split_diagnoses(extracted)) is not None


def evaluate(cases: list[ValidationCase], *, builtin: bool = True) -> dict:
    ours, theirs = [], []
    trial_agree = trial_total = 0
    disagreements = []
    for c in cases:
        matcher = DiagnosisMatcher([c.correct], builtin=builtin)
        verdicts = [grade_trial(t, matcher) for t in c.trials]
        n = sum(verdicts)
        ours.append(n)
        theirs.append(c.expert_count)
        if c.expert_count in (0, 5):
            expected = c.expert_count == 5
            trial_agree += sum(v == expected for v in verdicts)
            trial_total += len(verdicts)
        if n != c.expert_count:
            disagreements.append((c.case_id, c.correct, n, c.expert_count))
    rho, p = stats.spearmanr(ours, theirs)
    exact = sum(a == b for a, b in zip(ours, theirs)) / len(cases)
    within1 = sum(abs(a - b) <= 1 for a, b in zip(ours, theirs)) / len(cases)
    mae = sum(abs(a - b) for a, b in zip(ours, theirs)) / len(cases)
    return {
        "cases": len(cases),
        "spearman_rho": float(rho),
        "spearman_p": float(p),
        "exact_agreement": exact,
        "within_one": within1,
        "mean_abs_diff": mae,
        "trial_agreement_known": trial_agree / trial_total if trial_total else None,
        "trials_known": trial_total,
        "matcher_total_correct": sum(ours),
        "expert_total_correct": sum(theirs),
        "disagreements": disagreements,
    }


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_CSV
    if not path.is_file():
        print(f"data not found: {path}", file=sys.stderr)
        return 2
    cases = load_validation(path)
    for builtin in (False, True):
        t0 = time.perf_counter()
        r = evaluate(cases, builtin=builtin)
        ms = (time.perf_counter() - t0) * 1000
        label = "case name + built-in synonym table" if builtin else "case name only (no built-in table)"
        print(f"== {label}")
        print(
            f"cases {r['cases']}  spearman rho {r['spearman_rho']:.3f} (p={r['spearman_p']:.2g})  "
            f"exact {r['exact_agreement']:.2f}  within-1 {r['within_one']:.2f}  MAD {r['mean_abs_diff']:.2f}"
        )
        print(
            f"trial-level agreement where the expert count is 0 or 5: {r['trial_agreement_known']:.3f} "
            f"({r['trials_known']} trials)  totals: matcher {r['matcher_total_correct']} / experts {r['expert_total_correct']}"
        )
        print(f"time {ms:.0f} ms for {r['cases'] * 5} trials")
        if builtin:
            print("disagreements (case, correct answer, matcher, expert):")
            for d in r["disagreements"]:
                print("  ", *d)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
