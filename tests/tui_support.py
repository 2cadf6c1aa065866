"""Shared pieces of the TUI tests: a small library, fixed sessions and scores,
and a scripted stand-in for the engine used where output must not move
(snapshots, benchmarks). Full-flow tests drive the real ``Encounter``.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path

import tomli_w

from osce_tui.config import Config
from osce_tui.domain.scores import ItemScore, ScoreSet, SectionScore
from osce_tui.domain.session import NoteDiagnosis, PatientNote, RoleAssignment, Session, Turn
from osce_tui.engine import events as ev
from osce_tui.library import Library

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXED = datetime(2026, 3, 14, 9, 30, tzinfo=timezone.utc)

# A rubric the tests own, so snapshots do not move when bundled rubrics change.
MINI_RUBRIC = {
    "title": "Mini practice rubric",
    "protocol": "custom",
    "sections": [
        {
            "id": "history",
            "title": "History",
            "judge": "history",
            "criteria": [{"id": "facts", "text": "Asks about the case's history facts", "points": 40, "per": "fact"}],
        },
        {
            "id": "exam",
            "title": "Physical exam",
            "judge": "physical_exam",
            "criteria": [{"id": "coverage", "text": "Examines the target systems", "points": 60, "per": "exam"}],
        },
    ],
}


def mini_library(tmp_path: Path) -> Library:
    """Only the fixture case (mini-sore-throat) and the mini rubric."""
    rdir = tmp_path / "rubrics"
    rdir.mkdir(exist_ok=True)
    (rdir / "tui-mini.toml").write_text(tomli_w.dumps(MINI_RUBRIC), encoding="utf-8")
    return Library(case_dirs=[FIXTURES / "cases"], rubric_dirs=[rdir], include_bundled=False)


def fixed_clock() -> float:
    return 1000.0


def mini_config(sessions_dir: Path | str = "sessions") -> Config:
    return Config(sessions_dir=Path(sessions_dir), rubric="tui-mini")


def turn(i: int, role: str, text: str, phase: str = "history", kind: str = "utterance", spec: str | None = None) -> Turn:
    return Turn(id=f"t{i:04d}", role=role, text=text, phase=phase, kind=kind, spec=spec, started_at=FIXED, finished_at=FIXED)


def live_scores(asked: int = 2, final: bool = False) -> ScoreSet:
    """Hand-made scores: ``asked`` of four history facts met, one exam."""
    labels = ["Onset of sore throat", "Fever", "Cough", "Sick contacts"]
    hist = [
        ItemScore(
            criterion_id="facts",
            item_id=f"f{i}",
            label=label,
            points=10.0 if i < asked else 0.0,
            max_points=10.0,
            explanation=f"Asked in t{2 * i + 1:04d}" if i < asked else "Not asked yet",
            evidence=[f"t{2 * i + 1:04d}"] if i < asked else [],
        )
        for i, label in enumerate(labels)
    ]
    exam = [
        ItemScore(criterion_id="coverage", item_id="throat", label="Throat inspection", points=30.0 if final else 0.0, max_points=30.0,
                  explanation="Throat examined" if final else "Not examined", evidence=["t0006"] if final else []),
        ItemScore(criterion_id="coverage", item_id="nodes", label="Cervical lymph nodes", points=0.0, max_points=30.0,
                  explanation="Lymph nodes not examined"),
    ]
    return ScoreSet(
        rubric_id="tui-mini",
        judge="offline",
        created_at=FIXED,
        final=final,
        sections=[
            SectionScore(section_id="history", title="History", judge="offline", items=hist),
            SectionScore(section_id="exam", title="Physical exam", judge="offline", items=exam),
        ],
    )


def fixed_session(case_id: str = "mini-sore-throat", sid: str = "abc123def456", status: str = "finished") -> Session:
    turns = [
        turn(1, "system", "Phase: history", kind="phase", spec="engine"),
        turn(2, "doctor", "Hello, I'm Dr Lee. What brings you in today?", spec="human"),
        turn(3, "patient", "My throat has been killing me for three days.", spec="offline"),
        turn(4, "doctor", "Have you had a fever?", spec="human"),
        turn(5, "patient", "Yes, I felt hot and shivery last night.", spec="offline"),
        turn(6, "doctor", "Examine: throat", phase="exam", kind="exam_request", spec="human"),
        turn(7, "examiner", "Tonsils enlarged with white exudate.", phase="exam", kind="exam_result", spec="oracle"),
    ]
    s = Session(
        id=sid,
        case_id=case_id,
        rubric_id="tui-mini",
        created_at=FIXED,
        updated_at=FIXED,
        status=status,
        phase="scored" if status == "finished" else "history",
        roles={r: RoleAssignment(spec=spec) for r, spec in (("doctor", "human"), ("patient", "offline"), ("judge", "offline"))},
        turns=turns,
        note=PatientNote(hpi="21F, 3 days of sore throat and fever.", pe="Tonsillar exudate.",
                         diagnoses=[NoteDiagnosis(name="Streptococcal pharyngitis", history_findings=["fever"], exam_findings=["exudate"])],
                         workup=["Rapid strep test"]),
    )
    if status == "finished":
        s.scores.append(live_scores(asked=2, final=True))
    return s


def write_session(folder: Path, session: Session) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"20260314-093000_{session.case_id}_{session.id}.json"
    # Written directly (not save_session) so updated_at stays fixed.
    path.write_text(session.model_dump_json(indent=2), encoding="utf-8")
    return path


class ScriptedEncounter:
    """Stands in for ``Encounter`` with a fixed list of events.

    Implements the controls the encounter screen calls and records them, so
    tests can check what the UI asked for. ``run`` emits the script, then
    waits until ``end`` is called.
    """

    def __init__(self, setup, observer, script: list, *, session: Session | None = None, session_path: Path | None = None):
        self.setup = setup
        self.observer = observer
        self.script = script
        self.session = session or Session(
            id="fixed0000001",
            case_id=setup.case.id,
            rubric_id=setup.rubric.id,
            created_at=FIXED,
            roles={"doctor": RoleAssignment(spec=setup.doctor), "patient": RoleAssignment(spec=setup.patient), "judge": RoleAssignment(spec=setup.judge)},
        )
        self.session_path = session_path or Path("sessions") / "fixed.json"
        self.calls: list[tuple] = []
        self.paused = False
        self._done = asyncio.Event()

    async def run(self) -> Session:
        for event in self.script:
            if isinstance(event, ev.TurnFinished):
                self.session.turns.append(event.turn)
            if isinstance(event, ev.PhaseChanged):
                self.session.phase = event.new
            self.observer(event)
            await asyncio.sleep(0)
        await self._done.wait()
        return self.session

    def submit(self, role, text):
        self.calls.append(("submit", role, text))

    def submit_note(self, note):
        self.calls.append(("note", note))

    def takeover(self, role, spec):
        old = self.session.roles[role].spec
        self.calls.append(("takeover", role, spec))
        self.session.roles[role] = RoleAssignment(spec=spec)
        self.observer(ev.RoleChanged(role, old, spec))

    def pause(self):
        self.paused = True
        self.calls.append(("pause",))

    def resume_running(self):
        self.paused = False
        self.calls.append(("resume",))

    def request_phase(self, phase):
        self.calls.append(("phase", phase))

    def end(self):
        self.calls.append(("end",))
        self._done.set()


def mid_history_script() -> list:
    """Two exchanges done, the third doctor question streaming, live scores in."""
    return [
        ev.PhaseChanged("doorway", "history", "start"),
        ev.TurnFinished(turn(1, "doctor", "Hello, I'm Dr Lee. What brings you in today?", spec="openai/gpt-4o")),
        ev.TurnFinished(turn(2, "patient", "My throat has been **killing me** for three days.", spec="offline")),
        ev.ScoresUpdated(live_scores(asked=1), final=False),
        ev.TurnFinished(turn(3, "doctor", "Have you had a fever?", spec="openai/gpt-4o")),
        ev.TurnFinished(turn(4, "patient", "Yes, I felt hot and shivery last night.", spec="offline")),
        ev.ScoresUpdated(live_scores(asked=2), final=False),
        ev.TurnStarted("doctor", "t0005", "openai/gpt-4o"),
        ev.TextDelta("doctor", "t0005", "Any cough "),
        ev.TextDelta("doctor", "t0005", "or runny "),
    ]
