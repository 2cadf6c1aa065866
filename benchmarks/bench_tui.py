"""TUI speed: cold start to first paint, and streaming throughput.

    python benchmarks/bench_tui.py [--tokens N] [--repeat K]

1. Cold start: a fresh interpreter runs ``osce-tui`` (home screen) and
   ``osce-tui run chest-pain-46m`` headless; time from process launch to the
   first frame after the first screen mounted (includes Python start-up and
   imports). Median of K runs.
2. Streaming: the encounter screen fed by a fake engine that emits text
   deltas as fast as the event loop allows (one delta per loop turn), with a
   live ScoreSet from the real rubric every 20 deltas. Reported: deltas per
   second accepted, time until the last token is on screen after the stream
   ends, how many batched writes the deltas became, and how many panel
   repaints the score sets caused (bursts collapse: ``can_replace`` plus a
   0.1 s repaint interval).
   Then paced runs at fixed rates check that the screen keeps up: the
   backlog after the last delta should stay near zero.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


# -- 1. cold start ------------------------------------------------------------------

CHILD = r"""
import sys, time
from pathlib import Path
t_import = time.perf_counter()
from osce_tui.cli.common import config_from_args  # noqa: F401  (what the CLI imports)
from osce_tui.tui.app import OsceApp, RunRequest
from osce_tui.config import Config
from osce_tui.library import Library

mode, sessions = sys.argv[1], sys.argv[2]
lib = Library()
config = Config(sessions_dir=Path(sessions))
start = None
if mode == "run":
    start = RunRequest(case=lib.case("chest-pain-46m"), doctor="human", patient="offline", judge="offline", rubric="osce-practice")

class Timed(OsceApp):
    def on_mount(self):
        super().on_mount()
        # Two refreshes: the first screen is mounted and composed, then painted.
        self.call_after_refresh(lambda: self.call_after_refresh(self._painted))

    def _painted(self):
        print("PAINTED", time.time(), flush=True)
        self.exit()

Timed(config, lib, start=start).run(headless=True, size=(100, 30))
"""


def cold_start(mode: str, repeat: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, OSCE_TUI_CONFIG=str(Path(tmp) / "none.toml"))
        for _ in range(repeat):
            t0 = time.time()
            out = subprocess.run([sys.executable, "-c", CHILD, mode, tmp], capture_output=True, text=True, env=env, cwd=tmp, timeout=60)
            line = next((ln for ln in out.stdout.splitlines() if ln.startswith("PAINTED")), None)
            if line is None:
                raise RuntimeError(f"child failed: {out.stderr[-2000:]}")
            times.append(float(line.split()[1]) - t0)
    return times


# -- 2. streaming ------------------------------------------------------------------------


def make_fake(total_tokens: int, rate: float | None, scores_every: int, stats: dict):
    """Encounter factory whose engine streams one long doctor turn."""
    from osce_tui.domain.session import RoleAssignment, Session, Turn
    from osce_tui.engine import events as ev
    from osce_tui.judges.runner import score_live

    class FakeEngine:
        def __init__(self, setup, observer):
            self.setup, self.observer = setup, observer
            self.session = Session(case_id=setup.case.id, rubric_id=setup.rubric.id,
                                   roles={r: RoleAssignment(spec=s) for r, s in (("doctor", "scripted/fast"), ("patient", "offline"), ("judge", "offline"))})
            self.session_path = Path(tempfile.gettempdir()) / "bench.json"
            self.paused = False
            self.done = asyncio.Event()

        async def run(self):
            s = self.session
            s.add_turn("doctor", "What brings you in today? When did the pain start? Does it spread anywhere?")
            scores = score_live(self.setup.case, s, self.setup.rubric)  # a realistic-size ScoreSet
            self.observer(ev.PhaseChanged("doorway", "history", "start"))
            self.observer(ev.TurnStarted("doctor", "t0100", "scripted/fast"))
            words = [f"word{i % 97} " + ("\n\n" if i % 40 == 39 else "") for i in range(total_tokens)]
            stats["text"] = "".join(words)
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            stats["t_start"] = time.perf_counter()
            for i, w in enumerate(words):
                self.observer(ev.TextDelta("doctor", "t0100", w))
                if i % scores_every == 0:
                    stats["scores_sent"] += 1
                    self.observer(ev.ScoresUpdated(scores, final=False))
                if rate is None:
                    await asyncio.sleep(0)
                else:
                    delay = t0 + (i + 1) / rate - loop.time()
                    await asyncio.sleep(max(0.0, delay))
            stats["t_emitted"] = time.perf_counter()
            turn = Turn(id="t0100", role="doctor", text=stats["text"], spec="scripted/fast")
            self.observer(ev.TurnFinished(turn))
            await self.done.wait()

        def end(self):
            self.done.set()

        def submit(self, *a): ...
        def submit_note(self, *a): ...
        def takeover(self, *a): ...
        def pause(self): ...
        def resume_running(self): ...
        def request_phase(self, *a): ...

    return FakeEngine


async def stream_once(total_tokens: int, rate: float | None, scores_every: int = 20) -> dict:
    from osce_tui.config import Config
    from osce_tui.library import Library
    from osce_tui.tui.app import OsceApp, RunRequest

    lib = Library()
    stats = {"scores_sent": 0}
    sessions = Path(tempfile.mkdtemp(prefix="bench-tui-"))  # empty: the home screen has nothing to scan
    factory = make_fake(total_tokens, rate, scores_every, stats)
    start = RunRequest(case=lib.case("chest-pain-46m"), doctor="scripted/fast", patient="offline", judge="offline", rubric="osce-practice")
    app = OsceApp(Config(sessions_dir=sessions), lib, start=start, frozen=True, encounter_factory=factory)
    async with app.run_test(size=(120, 40)) as pilot:
        from osce_tui.tui.screens.encounter import EncounterScreen

        while not isinstance(app.screen, EncounterScreen) or "t_emitted" not in stats:
            await asyncio.sleep(0.01)
        screen = app.screen
        backlog = len(stats["text"]) - len(screen.dialogue.views["t0100"].streamed) if "t0100" in screen.dialogue.views else None
        queued = screen._message_queue.qsize()
        # Wait until the finished turn's full text is in the widget, then one more frame.
        while True:
            view = screen.dialogue.views.get("t0100")
            if view is not None and view.stream is None and view.body.source == stats["text"]:
                break
            await asyncio.sleep(0.001)
        await pilot.pause()
        t_shown = time.perf_counter()
        emitted = stats["t_emitted"] - stats["t_start"]
        return {
            "tokens": total_tokens,
            "rate_target": rate,
            "emit_seconds": emitted,
            "tokens_per_s": total_tokens / emitted,
            "catch_up_ms": 1000 * (t_shown - stats["t_emitted"]),
            "queued_messages_at_end": queued,
            "chars_not_yet_streamed_at_end": backlog,
            "score_sets_sent": stats["scores_sent"],
            "score_sets_rendered": screen.score_panel.updates,
            "deltas_received": screen.bridge.deltas,
            "text_batches_rendered": screen.batches,
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = ap.parse_args()

    results: dict = {}
    for mode in ("home", "run"):
        t = cold_start(mode, args.repeat)
        results[f"cold_start_{mode}_s"] = {"median": statistics.median(t), "min": min(t), "max": max(t)}
    results["stream_unpaced"] = asyncio.run(stream_once(args.tokens, None))
    results["stream_paced"] = [asyncio.run(stream_once(min(args.tokens, int(r * 2)), r)) for r in (200.0, 1000.0)]

    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"cold start to first paint (median of {args.repeat}, headless, includes interpreter start):")
    for mode in ("home", "run"):
        r = results[f"cold_start_{mode}_s"]
        print(f"  osce-tui {'' if mode == 'home' else 'run chest-pain-46m':<20} {r['median'] * 1000:7.0f} ms  (min {r['min'] * 1000:.0f}, max {r['max'] * 1000:.0f})")
    u = results["stream_unpaced"]
    print(f"streaming, unpaced, {u['tokens']} tokens, live scores every 20 tokens:")
    print(f"  accepted {u['tokens_per_s']:,.0f} tokens/s; last token on screen {u['catch_up_ms']:.0f} ms after the stream ended")
    print(f"  {u['deltas_received']} deltas arrived as {u['text_batches_rendered']} batched writes to the Markdown stream")
    print(f"  score sets sent {u['score_sets_sent']}, panel repaints {u['score_sets_rendered']} (the rest collapsed)")
    for p in results["stream_paced"]:
        print(f"streaming paced at {p['rate_target']:.0f} tok/s ({p['tokens']} tokens): achieved {p['tokens_per_s']:,.0f} tok/s, "
              f"queued messages at end {p['queued_messages_at_end']}, catch-up {p['catch_up_ms']:.0f} ms, "
              f"panel repaints {p['score_sets_rendered']} for {p['score_sets_sent']} score sets")


if __name__ == "__main__":
    main()
