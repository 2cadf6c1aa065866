"""Report aggregation and its four output formats, from a hand-made results file."""

from __future__ import annotations

import csv
import io
import json

import pytest
from rich.console import Console

from osce_tui.batch import report as rep
from osce_tui.batch.results import ResultRecord, ResultsWriter, read_results
from osce_tui.cli import main


def _rec(doctor: str, case: str, trial: int, hist: float, total: float, status: str = "finished") -> ResultRecord:
    return ResultRecord(
        case=case, doctor=doctor, patient="offline", judge="offline", rubric="osce-practice",
        trial=trial, status=status, sections={"history": hist} if status == "finished" else {},
        total=total if status == "finished" else None, error=None if status == "finished" else "boom",
    )


@pytest.fixture
def records() -> list[ResultRecord]:
    out = []
    for i, case in enumerate(["a", "b", "c", "d", "e"]):
        for t in range(2):
            out.append(_rec("model-x", case, t, 80 + i + t, 70 + i))
            out.append(_rec("model-y", case, t, 50 + i, 40 + i + t))
    out.append(_rec("model-y", "z", 0, 0, 0, status="failed"))
    return out


def test_means_and_cis(records):
    r = rep.build_report(records, seed=3, n_resamples=500)
    assert r.counts == {"encounters": 21, "finished": 20, "failed": 1}
    assert set(r.conditions) == {"model-x", "model-y"}
    assert r.metrics == ["history", "total"]
    cell = r.cell("model-x", "history")
    # 80..84 with +0 and +1 for the two trials: mean 82.5
    assert cell.mean == pytest.approx(82.5) and cell.n == 10
    assert cell.ci_low <= 82.5 <= cell.ci_high


def test_paired_comparison_with_holm(records):
    r = rep.build_report(records, seed=3, n_resamples=500)
    comps = {c.metric: c for c in r.comparisons}
    assert set(comps) == {"history", "total"}
    hist = comps["history"]
    assert hist.differs_in == "doctor" and hist.n == 10
    assert hist.mean_diff == pytest.approx(82.5 - 52.0)
    assert hist.p_value < 0.01
    # One comparison per metric family: Holm leaves it unchanged.
    assert hist.p_holm == pytest.approx(hist.p_value)


def test_conditions_differing_in_two_fields_are_not_compared():
    recs = [_rec("x", c, 0, 50, 50) for c in "abc"]
    other = [_rec("y", c, 0, 60, 60).model_copy(update={"arm": "vignette"}) for c in "abc"]
    r = rep.build_report(recs + other, n_resamples=200)
    assert r.comparisons == []


def test_formats(records):
    r = rep.build_report(records, seed=0, n_resamples=300)
    data = json.loads(rep.render_json(r))
    assert data["counts"]["failed"] == 1 and len(data["means"]) == 4
    rows = list(csv.DictReader(io.StringIO(rep.render_csv(r))))
    assert {row["kind"] for row in rows} == {"mean", "comparison"}
    assert float(next(row for row in rows if row["condition"] == "model-x" and row["metric"] == "history")["mean"]) == 82.5
    md = rep.render_md(r)
    assert "| condition | history | total |" in md and "p (Holm)" in md
    console = Console(record=True, width=140)
    rep.render_rich(r, console)
    text = console.export_text()
    assert "Section scores" in text and "█" in text and "model-y" in text


def test_results_file_roundtrip_and_torn_line(tmp_path, records):
    with ResultsWriter(tmp_path) as w:
        for rec in records:
            w.append(rec)
    with open(tmp_path / "results.jsonl", "a") as fh:
        fh.write('{"case": "torn"')  # killed mid-write
    read = read_results(tmp_path)
    assert len(read.records) == 21 and len(read.skipped) == 1
    # The next writer starts on a fresh line; a retried key supersedes the failure.
    with ResultsWriter(tmp_path) as w:
        w.append(_rec("model-y", "z", 0, 10, 10))
    read = read_results(tmp_path)
    assert len(read.finished()) == 21 and len(read.skipped) == 1


def test_report_cli(tmp_path, records, capsys):
    with ResultsWriter(tmp_path) as w:
        for rec in records:
            w.append(rec)
    assert main(["report", str(tmp_path), "--format", "json", "--resamples", "200"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"]["finished"] == 20
    assert main(["report", str(tmp_path / "nope")]) == 2
