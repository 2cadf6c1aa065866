"""`osce-tui chat CASE`: the encounter in plain line mode on stdin/stdout.

Works over ssh, with screen readers and from scripts: one line per human turn,
slash commands for the encounter (/exam, /order, /phase, /note, /dx, /end,
/help), the other side's replies printed as they stream, scores with
explanations at the end. Reading from a pipe works: EOF ends the encounter and
scores it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
from pathlib import Path
from typing import TextIO

from ..agents.commands import help_text
from ..domain.session import NoteDiagnosis, PatientNote, Session
from ..engine import Encounter, EncounterFailed, EncounterSetup
from ..engine import events as ev
from ..providers.base import ProviderError, SpecError
from ..store import SessionFileError
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    CliError,
    add_library_args,
    add_role_args,
    config_from_args,
    get_case,
    get_rubric,
    library_from_args,
)

ROLE_LABEL = {"doctor": "Doctor", "patient": "Patient", "examiner": "Examiner", "system": "System"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chat", help="run an encounter in plain line mode (stdin/stdout)")
    p.add_argument("case", help="case id or path to a .toml file")
    add_role_args(p)
    add_library_args(p)
    p.add_argument("--seed", type=int, default=None, help="seed for agents that sample")
    p.add_argument("--timers", action="store_true", help="enforce phase timers")
    p.add_argument("--resume", type=Path, metavar="FILE", help="continue an interrupted session file")
    p.add_argument("--details", action="store_true", help="print every scored item at the end, not just misses")
    p.set_defaults(handler=cmd_chat)


def cmd_chat(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    if args.timers:
        config.encounter.timers = True
    library = library_from_args(args, config)
    case = get_case(library, args.case)
    rubric = get_rubric(library, config.rubric)
    setup = EncounterSetup(
        case=case,
        rubric=rubric,
        doctor=config.roles.doctor,
        patient=config.roles.patient,
        judge=config.roles.judge,
        config=config,
        seed=args.seed,
    )
    printer = LinePrinter(sys.stdout, sys.stdin, details=args.details)
    try:
        session = asyncio.run(printer.run(setup, resume=args.resume))
    except (SpecError, ProviderError, SessionFileError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    except EncounterFailed as exc:
        print(f"\nEncounter failed: {exc}", file=sys.stderr)
        print(f"Session kept: {printer.session_path}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(f"\nInterrupted. Session kept: {printer.session_path}", file=sys.stderr)
        return 130
    # An encounter whose judging failed is kept, but a script must not read it as a success.
    ok = session.status == "finished" and session.latest_scores() is not None
    return EXIT_OK if ok and not printer.unsaved else EXIT_FAILED


class LinePrinter:
    """Prints engine events as plain lines and feeds stdin to the human role."""

    def __init__(self, out: TextIO, inp: TextIO, *, details: bool = False):
        self.out = out
        self.inp = inp
        self.details = details
        self.interactive = inp.isatty()
        self.encounter: Encounter | None = None
        self.session_path: Path | None = None
        self.unsaved: str | None = None  # why the final save failed, if it did
        self._streaming: str | None = None  # turn id being streamed
        self._eof = False
        self._reader: asyncio.Task | None = None

    async def run(self, setup: EncounterSetup, resume: Path | None = None) -> Session:
        enc = Encounter.resume(resume, setup, self.on_event) if resume else Encounter(setup, self.on_event)
        self.encounter = enc
        self.session_path = enc.session_path
        self._print_doorway(setup, enc.session)
        session = await enc.run()
        self._print_scores(session)
        self.unsaved = enc.unsaved
        if enc.unsaved:
            self._say(f"\nSession NOT saved: {enc.unsaved}")
        else:
            self._say(f"\nSession saved: {enc.session_path}")
        return session

    # -- output ----------------------------------------------------------------

    def _say(self, text: str = "", end: str = "\n") -> None:
        self.out.write(text + end)
        self.out.flush()

    def _print_doorway(self, setup: EncounterSetup, session: Session) -> None:
        d = setup.case.doorway
        self._say(f"== {setup.case.title} ==")
        self._say(f"{d.patient_name}, {d.age} {d.age_unit}, {d.sex}. {d.setting}.")
        self._say(f"Chief complaint: {d.chief_complaint}")
        self._say("Vitals: " + ", ".join(d.vitals.parts()))
        self._say("Tasks:\n" + "\n".join(f"  - {t}" for t in d.tasks))
        # The session's own roles: a resumed session keeps the players it was started with.
        roles = (session.roles[r].spec for r in ("doctor", "patient", "judge"))
        self._say("Doctor: {}, patient: {}, judge: {}. Type /help for commands.\n".format(*roles))

    def on_event(self, event: ev.EngineEvent) -> None:
        if isinstance(event, ev.TurnStarted) and event.role in ("doctor", "patient"):
            self._streaming = event.turn_id
            self._say(f"{ROLE_LABEL[event.role]}: ", end="")
            self._streamed_any = False
        elif isinstance(event, ev.TextDelta) and event.turn_id == self._streaming:
            self._streamed_any = True
            self._say(event.text, end="")
        elif isinstance(event, ev.TurnFinished):
            self._turn_finished(event.turn)
        elif isinstance(event, ev.PhaseChanged):
            self._say(f"-- phase: {event.new} ({event.reason}) --")
        elif isinstance(event, ev.AwaitingHuman):
            self._start_reading(event)
        elif isinstance(event, ev.ErrorOccurred):
            if self._streaming is not None:
                # A reply was cut off mid-line: end that line before the error.
                self._say()
                self._streaming = None
            print(f"! {event.message}", file=sys.stderr, flush=True)

    def _turn_finished(self, turn) -> None:
        if turn.id == self._streaming:
            self._streaming = None
            if self._streamed_any:
                self._say()
            else:
                self._say(turn.text)
            return
        if turn.kind in ("exam_result", "test_result"):
            label = turn.meta.get("system") or turn.meta.get("test") or turn.meta.get("request")
            self._say(f"  [{label}] {turn.text}")
        elif turn.kind in ("exam_request", "test_order", "diagnosis", "note") or (
            turn.role in ("doctor", "patient") and not self.interactive
        ):
            # Echo what a human typed when the input is a pipe, so the output reads as a transcript.
            self._say(f"{ROLE_LABEL[turn.role]}: {turn.text}")

    def _print_scores(self, session: Session) -> None:
        scores = session.latest_scores()
        if scores is None:
            self._say("\nNot scored." + (f" ({session.error})" if session.error else ""))
            return
        self._say(f"\n== Scores: rubric {scores.rubric_id}, judge {scores.judge} ==")
        for section in scores.sections:
            pct = "n/a" if section.score_100 is None else f"{section.score_100:.0f}/100"
            self._say(f"{section.title}: {section.points:g}/{section.max_points:g} points ({pct})")
            for item in section.items:
                if item.status == "scored" and item.met and not self.details:
                    continue
                mark = {"scored": "✓" if item.met else "✗", "excluded": "–", "unscored": "?"}[item.status]
                why = f" — {item.explanation}" if item.explanation else ""
                self._say(f"  {mark} {item.label} ({item.points:g}/{item.max_points:g}){why}")
        total = "n/a" if scores.total is None else f"{scores.total:.1f}/100"
        self._say(f"Total: {total}")
        if session.error:
            self._say(f"Note: {session.error}")

    # -- input -----------------------------------------------------------------

    def _start_reading(self, event: ev.AwaitingHuman) -> None:
        if self._reader and not self._reader.done():
            return
        self._reader = asyncio.get_running_loop().create_task(self._read_for(event))

    async def _readline(self, prompt: str = "") -> str | None:
        """One line from stdin (None at EOF); prompts only on a terminal."""
        if self._eof:
            return None
        try:
            if self.interactive:
                line = await _in_daemon_thread(input, prompt)
            else:
                line = await _in_daemon_thread(self.inp.readline)
                if line == "":
                    raise EOFError
        except EOFError:
            self._eof = True
            return None
        except (OSError, ValueError) as exc:
            # The terminal went away (EIO) or stdin was closed: nothing more will
            # come, so end like EOF rather than leave the encounter waiting forever.
            print(f"! cannot read input: {exc}", file=sys.stderr, flush=True)
            self._eof = True
            return None
        return _valid_text(line.rstrip("\n"))

    async def _read_for(self, event: ev.AwaitingHuman) -> None:
        enc = self.encounter
        assert enc is not None
        if event.what == "note":
            note = await self._read_note()
            if note is None:
                enc.end()
            else:
                enc.submit_note(note)
            return
        while True:
            line = await self._readline(f"[{event.phase}] {ROLE_LABEL[event.role]} (you): ")
            if line is None:
                enc.end()  # EOF: finish and score what we have
                return
            if not line.strip():
                continue
            if line.strip() in ("/help", "/?"):
                self._say(help_text())
                continue
            enc.submit(event.role, line)
            return

    async def _read_note(self) -> PatientNote | None:
        self._say("Patient note — one line per field; separate findings with ';'. Blank diagnosis ends the list.")
        hpi = await self._readline("HPI: ")
        if hpi is None:
            return None
        pe = await self._readline("PE: ") or ""
        diagnoses: list[NoteDiagnosis] = []
        for i in range(1, 4):
            name = await self._readline(f"Diagnosis {i}: ")
            if not name:
                break
            hx = await self._readline("  history findings: ") or ""
            ex = await self._readline("  exam findings: ") or ""
            diagnoses.append(NoteDiagnosis(name=name.strip(), history_findings=_split(hx)[:3], exam_findings=_split(ex)[:3]))
        workup = await self._readline("Workup: ") or ""
        return PatientNote(hpi=hpi, pe=pe, diagnoses=diagnoses, workup=_split(workup)[:8])


async def _in_daemon_thread(fn, *args):
    """Run a blocking stdin read in a daemon thread and await its result.

    Not ``asyncio.to_thread``: executor threads are joined when the loop and
    the interpreter shut down, so a read blocked on a terminal or an open pipe
    would keep Ctrl-C (or the end of the encounter) waiting for one more line.
    A daemon thread is simply abandoned at exit.
    """
    loop = asyncio.get_running_loop()
    fut = loop.create_future()

    def deliver(ok: bool, value) -> None:
        if not fut.done():
            fut.set_result(value) if ok else fut.set_exception(value)

    def work() -> None:
        try:
            value, ok = fn(*args), True
        except BaseException as exc:  # EOFError from input(), OSError from a closed stream ...
            value, ok = exc, False
        try:
            loop.call_soon_threadsafe(deliver, ok, value)
        except RuntimeError:
            pass  # the loop is gone: nobody is waiting for this line any more

    threading.Thread(target=work, name="osce-chat-stdin", daemon=True).start()
    return await fut


def _valid_text(text: str) -> str:
    """Replace undecodable input (lone surrogates under a C/POSIX locale): JSON cannot save them."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(";") if part.strip()]
