"""`osce-tui agreement`: long CSV and the CRAFT-MD preset."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from osce_tui.batch import agreement as ag
from osce_tui.cli import main

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CRAFTMD_SHEET = DATA / "craftmd" / "validation_graderai_dev.csv"


def _write_long(tmp_path: Path) -> Path:
    # judge scores x = 1..5; expert y = 2,4,5,4,5; a third rater z = judge + 1.
    rows = ["item,rater,score"]
    for i, (x, y) in enumerate(zip([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])):
        rows += [f"c{i},judge,{x}", f"c{i},expert,{y}", f"c{i},z,{x + 1}"]
    path = tmp_path / "long.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_long_csv_judge_vs_others(tmp_path):
    table = ag.load_long_csv(_write_long(tmp_path))
    rep = ag.agreement_report(table, source="t", judge_rater="judge", n_resamples=200)
    assert [(p.a, p.b) for p in rep.pairs] == [("judge", "expert"), ("judge", "z")]
    je = {c.name: c for c in rep.pairs[0].correlations}
    assert je["pearson"].estimate == pytest.approx(6 / math.sqrt(60))
    assert je["spearman"].estimate == pytest.approx(7 / math.sqrt(90))
    assert je["kendall"].estimate == pytest.approx(6 / math.sqrt(80))
    jz = rep.pairs[1]
    assert {c.name: c.estimate for c in jz.correlations}["pearson"] == pytest.approx(1.0)
    assert jz.exact_agreement == 0.0  # always one point apart
    assert rep.concordance.w is not None and 0 < rep.concordance.w.w <= 1


def test_all_pairs_and_formats(tmp_path, capsys):
    path = _write_long(tmp_path)
    assert main(["agreement", str(path), "--format", "json", "--resamples", "200"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["pairs"]) == 3 and data["kendall_w"]["n_items"] == 5
    assert main(["agreement", str(path), "--format", "csv", "--resamples", "200"]) == 0
    assert capsys.readouterr().out.startswith("rater_a,rater_b,n,statistic")
    assert main(["agreement", str(path), "--format", "md", "--resamples", "200"]) == 0
    assert "Kendall's W" in capsys.readouterr().out


def test_bad_inputs(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("item,who,score\na,b,1\n")
    with pytest.raises(ag.AgreementInputError, match="missing column"):
        ag.load_long_csv(bad)
    bad.write_text("item,rater,score\na,r1,1\na,r2,x\n")
    with pytest.raises(ag.AgreementInputError, match=":3: score 'x'"):
        ag.load_long_csv(bad)
    bad.write_text("item,rater,score\na,r1,1\na,r1,2\n")
    with pytest.raises(ag.AgreementInputError, match="second score"):
        ag.load_long_csv(bad)
    assert main(["agreement", str(bad), "--judge-rater", "nobody"]) == 2


def _write_sheet(tmp_path: Path) -> Path:
    # Synthetic sheet in the CRAFT-MD layout: notes row, blank row, header, trials, key.
    answers = {
        "case_0": (["alpha", "alpha", "beta", "multiple", "alpha"], "alpha", 3),
        "case_1": (["beta", "beta", "beta", "beta", "beta"], "gamma", 0),
        "case_2": (["gamma", "gamma, delta", "gamma", "gamma", "none"], "gamma", 4),
        "case_3": (["delta"] * 5, "delta", 5),
        "case_4": (["x"] * 5, "", ""),  # not annotated: skipped
    }
    cases = list(answers)
    lines = ['"Question: notes for annotators"' + "," * len(cases), "," * len(cases), "," + ",".join(cases)]
    for t in range(5):
        lines.append(f"trial_{t}," + ",".join(f'"{answers[c][0][t]}"' for c in cases))
    lines.append("correct_ans," + ",".join(answers[c][1] for c in cases))
    lines.append("dermatologist_accuracy," + ",".join(str(answers[c][2]) for c in cases))
    path = tmp_path / "sheet.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_craftmd_layout_with_injected_judge(tmp_path):
    def judge(answer: str, correct: str) -> bool:
        return correct in [a.strip() for a in answer.split(",")]

    table = ag.load_craftmd(_write_sheet(tmp_path), judge)
    assert table.items == ["case_0", "case_1", "case_2", "case_3"]
    assert [table.scores[(c, "matcher")] for c in table.items] == [3, 0, 4, 5]
    assert [table.scores[(c, "dermatologist")] for c in table.items] == [3, 0, 4, 5]
    rep = ag.agreement_report(table, source="t", judge_rater="matcher", n_resamples=200)
    assert rep.pairs[0].exact_agreement == 1.0
    assert rep.pairs[0].kappa_quadratic == pytest.approx(1.0)


def test_craftmd_layout_errors(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(ag.AgreementInputError, match="case_N"):
        ag.load_craftmd(p, lambda a, c: True)


def test_craftmd_real_sheet_with_offline_matcher(capsys):
    if not CRAFTMD_SHEET.is_file():
        pytest.skip("shared CRAFT-MD fixture not available")
    assert main(["agreement", "--preset", "craftmd", str(CRAFTMD_SHEET), "--format", "json", "--resamples", "200"]) == 0
    data = json.loads(capsys.readouterr().out)
    pair = data["pairs"][0]
    assert pair["a"] == "matcher" and pair["b"] == "dermatologist" and pair["n"] == 100
    # The matcher should track the dermatologists closely (measured r≈0.92).
    assert pair["pearson"]["estimate"] > 0.8 and pair["pearson"]["p_value"] < 0.001
