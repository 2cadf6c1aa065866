"""Home, setup, results and error handling screens, driven with Pilot."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable, Input

from osce_tui.providers.scripted import ScriptedProvider
from osce_tui.tui.app import OsceApp, RunRequest
from osce_tui.tui.screens.encounter import EncounterScreen
from osce_tui.tui.screens.home import HomeScreen
from osce_tui.tui.screens.results import ResultsScreen
from osce_tui.tui.screens.setup import SetupScreen

from .tui_support import ScriptedEncounter, fixed_clock, fixed_session, mid_history_script, mini_config, mini_library, write_session


async def wait_for(pilot, condition, timeout: float = 10.0, what: str = "condition"):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def messages(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_home_search_setup_and_start(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lib = mini_library(tmp_path)
    started = []

    def factory(setup, bridge):
        started.append(setup)
        return ScriptedEncounter(setup, bridge, [])

    app = OsceApp(mini_config(), lib, clock=fixed_clock, frozen=True, encounter_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen) and home.shown_cases == ["mini-sore-throat"]
        await pilot.press("/")
        await pilot.press(*"chest")
        assert home.shown_cases == []  # no match
        home.query_one("#search", Input).value = "sore throat"
        await pilot.pause()
        assert home.shown_cases == ["mini-sore-throat"]
        home.query_one("#cases", DataTable).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen), what="setup")
        setup_screen = app.screen
        setup_screen.query_one("#doctor", Input).value = "nonsense/"
        await pilot.press("ctrl+s")
        assert "doctor" in str(setup_screen.query_one("#setup-error").render())
        assert not started
        setup_screen.query_one("#doctor", Input).value = "offline"
        setup_screen.query_one("#patient", Input).value = "offline"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, EncounterScreen), what="encounter")
        (setup,) = started
        assert (setup.doctor, setup.patient, setup.judge, setup.rubric.id) == ("offline", "offline", "offline", "tui-mini")
        assert setup.on_error == "pause"  # the TUI waits for the user on provider errors


async def test_home_lists_sessions_and_opens_results_and_replay(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_session(tmp_path / "sessions", fixed_session())
    (tmp_path / "sessions" / "broken.json").write_text("{")
    app = OsceApp(mini_config(), mini_library(tmp_path), clock=fixed_clock, frozen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        home = app.screen
        await wait_for(pilot, lambda: home.sessions_loaded, what="sessions")
        assert len(home.summaries) == 1
        assert "1 unreadable" in str(home.query_one("#sessions-label").render())
        table = home.query_one("#sessions", DataTable)
        table.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen), what="results")
        await pilot.press("escape")
        await pilot.press("p")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ReplayScreen", what="replay")


async def test_results_rescore_and_failures(tmp_path):
    session = fixed_session(case_id="mini-sore-throat")
    lib = mini_library(tmp_path)
    path = write_session(tmp_path / "sessions", session)
    app = OsceApp(mini_config(tmp_path / "sessions"), lib, clock=fixed_clock, frozen=True)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_results(path, session)
        await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen), what="results")
        results = app.screen
        assert len(results.sets) == 1
        # Enter on an item jumps to (and highlights) its evidence turn.
        await pilot.press("down", "enter")
        await pilot.pause()
        assert results.query_one("#results-transcript").view("t0001").has_class("-highlight")
        assert "Asked in t0001" in str(results.query_one("#results-why").render())
        results.rescore("offline")
        await wait_for(pilot, lambda: len(results.sets) == 2, what="second score set")
        # The new set is saved beside the old one and shown first.
        from osce_tui.store import load_session

        assert len(load_session(path).scores) == 2
        assert results.scores.judge == "offline" and results.scores.rubric_id == "tui-mini"
        await pilot.press("s")
        assert results.set_index == 1
        # A model judge without a key fails with a message; nothing is lost.
        results.rescore("openai/gpt-4o-mini")
        await wait_for(pilot, lambda: any("Re-scoring with openai/gpt-4o-mini failed" in m for m in messages(app)), what="error")
        assert len(load_session(path).scores) == 2


async def test_provider_error_pauses_and_takeover_continues(tmp_path):
    # The scripted model has one reply; its second call fails like a provider outage.
    ScriptedProvider.register("tui-flaky", ["What brings you in today?"])
    from osce_tui.library import Library

    lib = Library()
    from osce_tui.config import Config

    start = RunRequest(case=lib.case("chest-pain-46m"), doctor="scripted/tui-flaky", patient="offline", judge="offline", rubric="osce-practice")
    app = OsceApp(Config(sessions_dir=tmp_path), lib, start=start, frozen=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, EncounterScreen), what="encounter")
        screen = app.screen
        await wait_for(pilot, lambda: screen.enc is not None and screen.enc.paused, what="pause after the failure")
        await wait_for(pilot, lambda: any("ran out of replies" in m and "F2 retries" in m for m in messages(app)), what="error toast")
        assert screen.ended is None and screen.enc.session_path.is_file()  # session kept safe
        await pilot.press("f3")  # a human takes the doctor and the encounter goes on
        await wait_for(pilot, lambda: screen.awaiting is not None and screen.awaiting.event.role == "doctor", what="human turn")
        assert not screen.enc.paused


async def test_palette_commands_and_theme(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lib = mini_library(tmp_path)
    encounters = []

    def factory(setup, bridge):
        enc = ScriptedEncounter(setup, bridge, mid_history_script())
        encounters.append(enc)
        return enc

    start = RunRequest(case=lib.case("mini-sore-throat"), doctor="offline", patient="offline", judge="offline", rubric="tui-mini")
    app = OsceApp(mini_config(), lib, clock=fixed_clock, frozen=True, start=start, encounter_factory=factory)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, EncounterScreen), what="encounter")
        screen = app.screen
        titles = {c.title: c for c in app.get_system_commands(screen)}
        for wanted in ("Take over the doctor", "Hand the patient to the offline engine", "Go to phase: exam", "End encounter and score", "Toggle light/dark theme"):
            assert wanted in titles
        titles["Take over the doctor"].callback()
        titles["Go to phase: closure"].callback()
        titles["Pause / resume encounter"].callback()
        enc = encounters[0]
        assert ("takeover", "doctor", "human") in enc.calls and ("phase", "closure") in enc.calls and ("pause",) in enc.calls
        await pilot.pause()
        assert screen.human_role() == "doctor"
        # The input speaks for the human doctor; slash commands pass through.
        box = screen.query_one("#say", Input)
        box.value = "/exam throat"
        box.focus()
        await pilot.press("enter")
        assert ("submit", "doctor", "/exam throat") in enc.calls
        dark = app.current_theme.dark
        await pilot.press("f10")
        assert app.current_theme.dark is not dark


async def test_human_patient_answers_through_the_input(tmp_path, monkeypatch):
    from osce_tui.engine import events as ev

    monkeypatch.chdir(tmp_path)
    lib = mini_library(tmp_path)
    encounters = []
    script = [ev.PhaseChanged("doorway", "history", "start"), ev.AwaitingHuman("patient", "history")]

    def factory(setup, bridge):
        encounters.append(ScriptedEncounter(setup, bridge, script))
        return encounters[-1]

    start = RunRequest(case=lib.case("mini-sore-throat"), doctor="offline", patient="human", judge="offline", rubric="tui-mini")
    app = OsceApp(mini_config(), lib, clock=fixed_clock, frozen=True, start=start, encounter_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, EncounterScreen) and app.screen.awaiting is not None, what="patient turn")
        screen = app.screen
        box = screen.query_one("#say", Input)
        assert "patient" in box.placeholder
        assert "your turn: patient" in str(screen.query_one("#enc-status").render())
        box.value = "/exam heart"  # commands are the doctor's
        await pilot.press("enter")
        box.value = "It started three days ago."
        await pilot.press("enter")
        assert encounters[0].calls == [("submit", "patient", "It started three days ago.")]
        assert box.value == ""


async def test_missing_key_is_a_notification_not_a_crash(tmp_path, monkeypatch):
    from osce_tui.config import Config
    from osce_tui.library import Library

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lib = Library()
    start = RunRequest(case=lib.case("chest-pain-46m"), doctor="openai/gpt-4o-mini", patient="offline", judge="offline", rubric="osce-practice")
    app = OsceApp(Config(sessions_dir=tmp_path), lib, start=start, frozen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: any("OPENAI_API_KEY" in m for m in messages(app)), what="missing key message")
        screen = app.screen
        assert isinstance(screen, EncounterScreen)
        await pilot.pause()
        assert screen.ended == "failed" or screen.enc is not None and screen.enc.paused


async def test_encounter_end_closes_an_open_note_editor(tmp_path, monkeypatch):
    from osce_tui.engine import events as ev
    from osce_tui.tui.screens.note_editor import NoteEditor

    monkeypatch.chdir(tmp_path)
    lib = mini_library(tmp_path)
    script = [ev.PhaseChanged("doorway", "note", "start"), ev.AwaitingHuman("doctor", "note", what="note")]
    encs = []

    def factory(setup, bridge):
        encs.append(ScriptedEncounter(setup, bridge, script))
        return encs[-1]

    start = RunRequest(case=lib.case("mini-sore-throat"), doctor="human", patient="offline", judge="offline", rubric="tui-mini")
    app = OsceApp(mini_config(), lib, clock=fixed_clock, frozen=True, start=start, encounter_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NoteEditor), what="note editor")
        encs[0].observer(ev.EncounterEnded("aborted", "timer"))
        await wait_for(pilot, lambda: isinstance(app.screen, EncounterScreen), what="editor closed")
        assert app.screen.ended == "aborted"
