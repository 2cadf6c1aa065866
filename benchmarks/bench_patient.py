"""Offline patient benchmark: fact-match accuracy, not-covered precision/recall, latency.

    /tmp/venv/bin/python benchmarks/bench_patient.py [--split dev|heldout|heldout2|heldout3|all] [--failures]

Reads benchmarks/patient_paraphrases.toml (see its header), answers every item
with a fresh session, and compares the reply's ``meta['fact_ids']`` with the
expected ids ("none" means: no fact, the persona's default answer).

Latency is the wall time of one ``OfflinePatient.reply`` call (streaming to a
no-op callback) with the case index already built; index build time is
reported separately. Items whose text equals a case question/paraphrase after
normalisation are counted and listed: the set is meant to be all paraphrase.
Items repeated, for the same case, in two splits are listed too: a held-out
number only means something if its questions were not tuned on.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from osce_tui.agents.offline_patient import OfflinePatient  # noqa: E402
from osce_tui.agents.retrieval import FactIndex, index_for  # noqa: E402
from osce_tui.domain.case import Case  # noqa: E402
from osce_tui.domain.session import Session  # noqa: E402
from osce_tui.library import load_case  # noqa: E402


SPLITS = ("dev", "heldout", "heldout2", "heldout3")


@dataclass
class Result:
    case: str
    split: str
    text: str
    expected: frozenset[str]  # empty = not covered
    got: tuple[str, ...]
    ms: float

    @property
    def ok(self) -> bool:
        return frozenset(self.got) == self.expected


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def load_items(path: Path) -> list[dict]:
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    return data["case"]


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def cross_split_duplicates(items_path: Path) -> list[str]:
    """Items whose text appears, for the same case, in another split: a held-out
    number is only honest if its questions were not tuned on."""
    first: dict[tuple[str, str], str] = {}
    dups: list[str] = []
    for block in load_items(items_path):
        for text, _expected in block["items"]:
            key = (block["id"], _norm(text))
            other = first.setdefault(key, block["split"])
            if other != block["split"]:
                dups.append(f"{block['id']}: {text!r} in {other} and {block['split']}")
    return dups


async def run(items_path: Path, cases_dir: Path, split: str) -> tuple[list[Result], list[str], list[float], list[str]]:
    patient = OfflinePatient()
    results: list[Result] = []
    copies: list[str] = []
    build_ms: list[float] = []
    missing: list[str] = []
    stale: list[str] = []

    async def sink(_text: str) -> None:
        return None

    for block in load_items(items_path):
        if split != "all" and block["split"] != split:
            continue
        path = cases_dir / f"{block['id']}.toml"
        if not path.exists():
            missing.append(block["id"])
            continue
        case: Case = load_case(path)
        t0 = time.perf_counter()
        FactIndex.build(case.history)
        build_ms.append((time.perf_counter() - t0) * 1000)
        index_for(case)  # warm the cache the agent uses
        known = {_norm(p) for f in case.history for p in (f.question, *f.paraphrases)}
        ids = {f.id for f in case.history}
        for text, expected in block["items"]:
            exp = frozenset() if expected == "none" else frozenset(expected.split("+"))
            unknown = exp - ids
            if unknown:  # the case was edited after the item was written
                stale.append(f"{block['id']}: {text!r} expects unknown {sorted(unknown)}")
                continue
            if _norm(text) in known:
                copies.append(f"{block['id']}: {text}")
            session = Session(case_id=case.id)
            t0 = time.perf_counter()
            reply = await patient.reply(case, session, text, sink)
            ms = (time.perf_counter() - t0) * 1000
            results.append(Result(block["id"], block["split"], text, exp, tuple(reply.meta.get("fact_ids", [])), ms))
    for line in stale:
        print("stale item skipped:", line)
    return results, copies, build_ms, missing


def summarise(results: list[Result], label: str) -> None:
    covered = [r for r in results if r.expected]
    single = [r for r in covered if len(r.expected) == 1]
    multi = [r for r in covered if len(r.expected) > 1]
    none_expected = [r for r in results if not r.expected]
    none_predicted = [r for r in results if not r.got]
    tp = sum(1 for r in none_predicted if not r.expected)
    acc = sum(r.ok for r in covered) / len(covered) if covered else float("nan")
    prec = tp / len(none_predicted) if none_predicted else float("nan")
    rec = tp / len(none_expected) if none_expected else float("nan")
    overall = sum(r.ok for r in results) / len(results) if results else float("nan")
    ms = [r.ms for r in results]
    print(f"\n== {label}: {len(results)} items ({len(single)} single, {len(multi)} multi-question, {len(none_expected)} not covered)")
    print(f"fact-match accuracy (covered items): {acc:6.1%}  [single {_rate(single)}, multi {_rate(multi)}]")
    print(f"not-covered precision: {prec:6.1%}   recall: {rec:6.1%}")
    print(f"overall exact accuracy: {overall:6.1%}")
    if ms:
        print(f"answer latency ms: p50 {statistics.median(ms):.2f}  p95 {_percentile(ms, 95):.2f}  max {max(ms):.2f}")


def _rate(rs: list[Result]) -> str:
    return f"{sum(r.ok for r in rs)}/{len(rs)}" if rs else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    ap.add_argument("--items", type=Path, default=ROOT / "benchmarks" / "patient_paraphrases.toml")
    ap.add_argument("--cases-dir", type=Path, default=ROOT / "cases")
    ap.add_argument("--failures", action="store_true", help="list every item answered wrongly")
    args = ap.parse_args()

    results, copies, build_ms, missing = asyncio.run(run(args.items, args.cases_dir, args.split))
    if missing:
        print(f"skipped (case file not found): {', '.join(missing)}")
    print(f"cases: {len({r.case for r in results})}; index build ms per case: "
          f"median {statistics.median(build_ms):.1f}, max {max(build_ms):.1f}" if build_ms else "no cases")
    print(f"items identical to a case question/paraphrase: {len(copies)}")
    for c in copies:
        print("   copy:", c)
    dups = cross_split_duplicates(args.items)
    print(f"items repeated across splits: {len(dups)}")
    for d in dups:
        print("   repeat:", d)
    for split in SPLITS:
        part = [r for r in results if r.split == split]
        if part:
            summarise(part, split)
    summarise(results, "all")
    if args.failures:
        print("\nfailures:")
        for r in results:
            if not r.ok:
                exp = "+".join(sorted(r.expected)) or "none"
                got = "+".join(r.got) or "none"
                print(f"  [{r.split}] {r.case}: {r.text!r}  expected {exp}  got {got}")


if __name__ == "__main__":
    main()
