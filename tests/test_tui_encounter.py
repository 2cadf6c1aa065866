"""Full encounters in the TUI with the real engine (offline agents, scripted models)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Input, TextArea

from osce_tui.config import Config
from osce_tui.engine import Encounter
from osce_tui.engine import events as ev
from osce_tui.library import Library
from osce_tui.providers.scripted import ScriptedProvider
from osce_tui.store import list_sessions, load_session
from osce_tui.tui.app import OsceApp, ReplayRequest, RunRequest
from osce_tui.tui.screens.encounter import EncounterScreen
from osce_tui.tui.screens.note_editor import NoteEditor
from osce_tui.tui.screens.replay import ReplayScreen
from osce_tui.tui.screens.results import ResultsScreen
from osce_tui.tui.widgets.dialogue import TurnView

LIB = Library()
CASE_ID = "chest-pain-46m"


async def wait_for(pilot, condition, timeout: float = 10.0, what: str = "condition"):
    """Let the app run until ``condition()`` holds (the engine works in the app's loop)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def encounter_of(app) -> EncounterScreen:
    return next(s for s in app.screen_stack if isinstance(s, EncounterScreen))


async def say(pilot, text: str, role: str = "doctor") -> None:
    """Type a line as the human and wait until the engine wants the human again."""
    screen = encounter_of(pilot.app)
    await wait_for(pilot, lambda: screen.awaiting is not None and screen.awaiting.event.role == role, what=f"{role}'s turn")
    n = len(screen.enc.session.turns)
    box = screen.query_one("#say", Input)
    box.focus()
    box.value = text
    await pilot.press("enter")
    await wait_for(pilot, lambda: len(screen.enc.session.turns) > n, what=f"the engine to take {text!r}")


def run_app(tmp_path: Path, doctor="human", patient="offline", **kw) -> OsceApp:
    config = Config(sessions_dir=tmp_path / "sessions")
    start = RunRequest(case=LIB.case(CASE_ID), doctor=doctor, patient=patient, judge="offline", rubric="osce-practice")
    return OsceApp(config, LIB, start=start, frozen=True, **kw)


async def test_human_doctor_encounter_to_results(tmp_path):
    app = run_app(tmp_path)
    async with app.run_test(size=(100, 32)) as pilot:
        screen = encounter_of(app)
        await say(pilot, "Hello, I'm Dr Lee. What brings you in today?")
        await say(pilot, "When did the chest pain start?")
        await say(pilot, "Does the pain spread anywhere?")
        # The patient answered each question, streamed into the dialogue.
        await wait_for(pilot, lambda: len([v for v in screen.query(TurnView) if v.role == "patient" and v.stream is None]) >= 3, what="answers")
        patient_views = [v for v in screen.query(TurnView) if v.role == "patient"]
        assert all(v.body.source for v in patient_views)
        # Live panels follow the encounter.
        assert screen.score_panel.scores is not None and not screen.score_panel.scores.final
        # Exam and order from the quick picker.
        await pilot.press("f6")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ExamPicker", what="picker")
        app.screen.query_one(Input).value = "heart"
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(t.kind == "exam_result" for t in screen.enc.session.turns), what="exam result")
        await say(pilot, "/order ECG")
        await wait_for(pilot, lambda: any(v.kind == "test_result" and "ECG" in v.body.source for v in screen.query(TurnView)), what="ECG result")
        assert screen.query_one("#phase-bar").phase == "exam"
        await say(pilot, "/phase closure")
        await say(pilot, "This may be your heart. We'll do an ECG, troponin and keep you monitored.")
        # /note moves to the note phase; the engine asks for the note and the editor opens.
        await say(pilot, "/note")
        await wait_for(pilot, lambda: isinstance(app.screen, NoteEditor), what="note editor")
        editor = app.screen
        await pilot.press("ctrl+s")  # empty note: refused with reasons, editor stays
        assert isinstance(app.screen, NoteEditor)
        assert "HPI is empty" in str(editor.query_one("#note-errors").render())
        editor.query_one("#hpi", TextArea).text = "46M with 2 hours of pressure-like chest pain radiating to the left arm."
        editor.query_one("#pe", TextArea).text = "S4 gallop, lungs clear."
        editor.query_one("#dx1-name", Input).value = "Acute coronary syndrome"
        editor.query_one("#dx1-hx", TextArea).text = "pressure-like chest pain\nradiates to left arm"
        editor.query_one("#dx1-pe", TextArea).text = "S4 gallop"
        editor.query_one("#workup", TextArea).text = "ECG\nTroponin\nChest X-ray"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen), timeout=20, what="results screen")
        results = app.screen
        session = results.session
        assert session.status == "finished" and session.note.diagnoses[0].name == "Acute coronary syndrome"
        final = session.latest_scores()
        assert final is not None and final.final and final.total is not None
        # The saved file holds the same.
        saved = load_session(encounter_of(app).enc.session_path)
        assert saved.status == "finished" and saved.latest_scores().total == final.total
        # Evidence links jump to the turn the judge cited.
        with_evidence = [i for s in final.sections for i in s.items if i.evidence]
        assert with_evidence
        target = results.jump_to_evidence(with_evidence[0])
        await pilot.pause()
        assert target and results.query_one("#results-transcript").view(target).has_class("-highlight")
        # Export JSON and Markdown.
        await pilot.press("j")
        await pilot.press("m")
        exports = sorted(p.suffix for p in (tmp_path / "exports").iterdir())
        assert exports == [".json", ".md"]
        # The sessions folder still lists only real sessions.
        summaries, errors = list_sessions(tmp_path / "sessions")
        assert len(summaries) == 1 and errors == []


def _scripted_doctor(messages) -> str:
    """A model doctor: asks two questions, examines, closes; the note is JSON."""
    system = messages[0].content.lower()
    if "patient note" in system and "json" in system:
        return (
            '{"hpi": "Chest pain for two hours.", "pe": "S4.", "diagnoses": '
            '[{"name": "Acute coronary syndrome", "history_findings": ["chest pain"], "exam_findings": ["S4"]}], '
            '"workup": ["ECG"]}'
        )
    asked = sum(1 for m in messages if m.role == "assistant")
    script = [
        "Hello, I'm the doctor. What brings you in today?",
        "When did the pain start?",
        "Does it spread anywhere?",
        "Thank you.\nEXAM: heart",
        "PHASE: closure",
    ]
    return script[min(asked, len(script) - 1)]


def pause_after_patient_turns(n: int):
    """Encounter factory that pauses the engine after the patient's n-th answer.

    Scripted agents answer instantly, so a test cannot press F2 "in time" the
    way a user watching the stream would; this does it at a fixed point.
    """

    def factory(setup, bridge):
        enc = Encounter(setup)

        def observer(event):
            bridge(event)
            if isinstance(event, ev.TurnFinished) and event.turn.role == "patient" and len(enc.session.utterances("patient")) == n:
                enc.pause()

        enc.observer = observer
        return enc

    return factory


async def test_model_encounter_with_human_takeover(tmp_path):
    ScriptedProvider.register("tui-doctor", _scripted_doctor)
    app = run_app(tmp_path, doctor="scripted/tui-doctor", encounter_factory=pause_after_patient_turns(2))
    async with app.run_test(size=(100, 32)) as pilot:
        screen = encounter_of(app)
        # The model streams its questions; the engine pauses after two exchanges.
        await wait_for(pilot, lambda: len(screen.enc.session.utterances("patient")) >= 2, what="two model exchanges")
        assert screen.enc.paused and screen.ended is None
        # The engine runs ahead of the screen; let the screen catch up.
        await wait_for(pilot, lambda: len([v for v in screen.query(TurnView) if v.role == "patient"]) >= 2, what="rendered turns")
        doctor_views = [v for v in screen.query(TurnView) if v.role == "doctor" and v.kind == "utterance"]
        assert doctor_views and doctor_views[0].spec == "scripted/tui-doctor"
        assert screen.bridge.deltas > 0 and screen.batches > 0  # text arrived as a stream
        await pilot.press("f3")  # the human takes the doctor over
        await wait_for(pilot, lambda: screen.awaiting is not None and screen.awaiting.event.role == "doctor", what="handover")
        assert screen.enc.session.roles["doctor"].spec == "human"
        assert screen.enc.session.role_changes[-1].to_spec == "human"
        await say(pilot, "Have you ever had pain like this before?")
        human_turns = [t for t in screen.enc.session.turns if t.role == "doctor" and t.spec == "human"]
        assert human_turns and human_turns[-1].text.startswith("Have you ever")
        # Hand it back to the model, which finishes the encounter (closure, note).
        await pilot.press("f3")
        await wait_for(pilot, lambda: screen.enc.session.roles["doctor"].spec == "scripted/tui-doctor", what="hand back")
        await wait_for(pilot, lambda: screen.ended is not None, timeout=20, what="encounter end")
        specs = [c.to_spec for c in screen.enc.session.role_changes]
        assert specs == ["human", "scripted/tui-doctor"]
        assert screen.enc.session.status == "finished"


async def test_pause_and_end_controls(tmp_path):
    app = run_app(tmp_path)
    async with app.run_test(size=(90, 28)) as pilot:
        screen = encounter_of(app)
        await say(pilot, "What brings you in today?")
        await pilot.press("f2")
        assert screen.enc.paused and screen.query_one("#phase-bar").state == "paused"
        await pilot.press("f2")
        assert not screen.enc.paused
        await pilot.press("f8")
        await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen), timeout=20, what="results")
        assert app.screen.session.status == "finished"


async def test_bad_model_spec_is_reported_not_fatal(tmp_path):
    app = run_app(tmp_path)
    async with app.run_test(size=(90, 28)) as pilot:
        screen = encounter_of(app)
        await wait_for(pilot, lambda: screen.awaiting is not None, what="start")
        screen.hand_role("patient", "nosuch/model")
        await pilot.pause()
        assert screen.enc.session.roles["patient"].spec == "offline"
        assert any("Cannot hand the patient" in n.message for n in app._notifications)


async def test_replay_of_saved_session(tmp_path):
    # Make a real session first, headless through the engine.
    from osce_tui.engine import EncounterSetup

    ScriptedProvider.register("tui-doctor", _scripted_doctor)
    setup = EncounterSetup(case=LIB.case(CASE_ID), rubric=LIB.rubric("osce-practice"), doctor="scripted/tui-doctor",
                           patient="offline", judge="offline", sessions_dir=tmp_path)
    enc = Encounter(setup)
    session = await enc.run()
    n = len(session.turns)
    assert n > 5
    app = OsceApp(Config(sessions_dir=tmp_path), LIB, start=ReplayRequest(session=load_session(enc.session_path), path=enc.session_path), frozen=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen), what="replay screen")
        replay = app.screen
        assert replay.position == 0 and len(replay.query(TurnView)) == 0
        for _ in range(n):
            await pilot.press("right")
        await pilot.pause()
        assert replay.position == n and len(replay.query(TurnView)) == n
        totals = [s.total for s in replay.history if s is not None]
        assert totals[0] is not None and totals[-1] >= totals[0]
        assert len(set(totals)) > 1, "panels should evolve while stepping"
        await pilot.press("left")
        await pilot.pause()
        assert replay.position == n - 1 and len(replay.query(TurnView)) == n - 1
        await pilot.press("home")
        await pilot.pause()
        assert replay.position == 0 and len(replay.query(TurnView)) == 0


async def test_quit_mid_encounter_then_continue_from_home(tmp_path, monkeypatch):
    app = run_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = encounter_of(app)
        await say(pilot, "Hello, what brings you in today?")
        path = screen.enc.session_path
    # Leaving the app cancels the engine; the session is on disk, unfinished.
    saved = load_session(path)
    assert saved.status == "aborted" and len(saved.utterances("patient")) == 1

    monkeypatch.chdir(tmp_path)
    app = OsceApp(Config(sessions_dir=tmp_path / "sessions"), LIB, frozen=True)
    async with app.run_test(size=(100, 30)) as pilot:
        home = app.screen
        await wait_for(pilot, lambda: home.sessions_loaded, what="sessions")
        home.query_one("#sessions").focus()
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, EncounterScreen), what="resumed encounter")
        screen = app.screen
        # The earlier turns are back on screen and the doctor is asked again.
        await wait_for(pilot, lambda: screen.awaiting is not None, what="doctor's turn")
        assert [v.turn_id for v in screen.query(TurnView)][: len(saved.turns)] == [t.id for t in saved.turns]
        await say(pilot, "When did it start?")
        assert screen.enc.session_path == path
        await wait_for(pilot, lambda: len(load_session(path).utterances("patient")) == 2, what="the answer saved in the same file")
