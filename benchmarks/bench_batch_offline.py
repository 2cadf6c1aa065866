"""Offline batch: every bundled case × N trials with the embedded engine.

Doctor, patient and judge are all ``offline``, so this measures the batch
runner, the engine, the offline agents and judges and the file writing —
no model calls. Prints wall time, encounters per second, CPU time and peak
memory (resident set, from ``resource``/psutil), then re-runs the same command
into the same folder to show that resume skips everything.

Run: /tmp/venv/bin/python benchmarks/bench_batch_offline.py [--trials 10] [--mode encounter]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import psutil

from osce_tui.batch.runner import run_batch
from osce_tui.batch.selection import DEFAULT_RUBRIC_BY_MODE, BatchPlan, parse_arms, parse_formats
from osce_tui.config import Config
from osce_tui.library import Library


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--mode", choices=("encounter", "craftmd", "epag"), default="encounter")
    ap.add_argument("--keep", action="store_true", help="keep the output folder")
    args = ap.parse_args()

    library = Library()
    cases = list(library.cases().values())
    mode = args.mode
    plan = BatchPlan(
        cases=cases,
        rubric=library.rubric(DEFAULT_RUBRIC_BY_MODE.get(mode, "osce-practice")),
        doctors=["offline"], patient="offline", judge="offline", trials=args.trials, mode=mode,
        arms=parse_arms(None) if mode == "craftmd" else [],
        answer_formats=parse_formats(None) if mode == "craftmd" else [],
    )
    out = Path(tempfile.mkdtemp(prefix="bench-offline-"))
    proc = psutil.Process()
    rss_before = proc.memory_info().rss
    t0, cpu0 = time.perf_counter(), time.process_time()
    outcome = asyncio.run(run_batch(plan, out, Config()))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    # ru_maxrss is KiB on Linux: the process's peak resident set so far.
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t1 = time.perf_counter()
    again = asyncio.run(run_batch(plan, out, Config()))
    resume_s = time.perf_counter() - t1
    size_mib = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**20

    n = outcome.finished + outcome.failed
    print(f"offline batch, mode {mode}: {len(cases)} cases × {args.trials} trials = {n} encounters "
          f"(python {sys.version.split()[0]})")
    print(f"  finished {outcome.finished}, failed {outcome.failed}")
    print(f"  wall {wall:.2f} s, {n / wall:.1f} encounters/s, {wall / max(n, 1) * 1000:.0f} ms/encounter, CPU {cpu:.2f} s")
    print(f"  peak RSS {peak_mib:.0f} MiB (start {rss_before / 2**20:.0f} MiB); output {size_mib:.1f} MiB")
    print(f"  rerun into the same folder: {again.skipped} skipped, {again.finished} run, {resume_s:.2f} s")
    if args.keep:
        print(f"  output kept in {out}")
    else:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
