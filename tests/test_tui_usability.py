"""Fixes from a hands-on usability pass of the TUI (80×24 terminal, new user).

Each test pins one thing a user tripped on: typed text lost on a typo, note
errors scrolled out of view, a missing API key found only after the screen
opened, dead keys on the home screen, a footer cut before F7/F8, a watch run
too fast to follow or take over, answer-key spoilers in practice mode.
"""

from __future__ import annotations

import io

from textual.containers import VerticalScroll
from textual.widgets import DataTable, Input, Static, TextArea

from osce_tui.cli import main
from osce_tui.config import Config
from osce_tui.domain.scores import ItemScore
from osce_tui.tui import app as app_mod
from osce_tui.tui.app import OsceApp
from osce_tui.tui.screens.encounter import EncounterScreen, command_problem
from osce_tui.tui.screens.note_editor import NoteEditor
from osce_tui.tui.screens.replay import ReplayScreen
from osce_tui.tui.screens.setup import SetupScreen
from osce_tui.tui.spec_check import provider_problem
from osce_tui.tui.widgets.score_panel import ScorePanel, reveals_key

from .test_tui_encounter import LIB, encounter_of, run_app, say, wait_for
from .tui_support import fixed_clock, fixed_session, live_scores, mini_config, mini_library, write_session


def status_text(screen: EncounterScreen) -> str:
    return str(screen.query_one("#enc-status", Static).render())


async def test_typo_command_keeps_the_line_and_says_why(tmp_path):
    app = run_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = encounter_of(app)
        await wait_for(pilot, lambda: screen.awaiting is not None, what="doctor's turn")
        turns = len(screen.enc.session.turns)
        box = screen.query_one("#say", Input)
        box.value = "/exma abdomen"
        await pilot.press("enter")
        await pilot.pause()
        # Nothing reached the engine; the line is still there to fix.
        assert box.value == "/exma abdomen"
        assert len(screen.enc.session.turns) == turns
        assert "unknown command /exma" in status_text(screen) and "/exam" in status_text(screen)
        assert not app._notifications  # said on the status line, not in a toast over the input
        # Editing clears the complaint; the fixed line goes through.
        box.value = "/exam abdomen"
        await pilot.pause()
        assert "unknown command" not in status_text(screen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(t.kind == "exam_result" for t in screen.enc.session.turns), what="exam result")
        assert box.value == ""


def test_command_problem_is_short_and_names_the_commands():
    assert command_problem("How are you?") is None
    assert command_problem("/exam heart") is None
    assert command_problem("/exam") == "what should be examined? e.g. /exam heart, lungs"
    msg = command_problem("/exma heart")
    assert msg.startswith("unknown command /exma") and "/order" in msg and "Commands:" not in msg


async def test_text_in_note_phase_opens_the_editor_and_is_kept(tmp_path):
    app = run_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = encounter_of(app)
        await say(pilot, "/note")
        await wait_for(pilot, lambda: isinstance(app.screen, NoteEditor), what="note editor")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="back in the encounter")
        box = screen.query_one("#say", Input)
        assert "F7" in box.placeholder
        box.focus()
        box.value = "chest pain, probably ACS"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NoteEditor), what="editor reopened")
        assert box.value == "chest pain, probably ACS"
        assert all(t.kind != "utterance" or t.text != box.value for t in screen.enc.session.turns)


async def test_empty_note_errors_stay_in_view_and_focus_the_first_field(tmp_path):
    app = OsceApp(mini_config(), mini_library(tmp_path), clock=fixed_clock, frozen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        results = []
        await app.push_screen(NoteEditor(), results.append)
        editor = app.screen
        editor.query_one("#dx1-name", Input).focus()
        await pilot.press("ctrl+s")
        await pilot.pause()
        errors = editor.query_one("#note-errors", Static)
        # Docked outside the scrolling form, so visible at 80×24 wherever the form is scrolled.
        assert not any(isinstance(a, VerticalScroll) for a in errors.ancestors)
        assert errors.display and errors.region.height >= 1
        assert errors.region.bottom <= 23  # above the footer, on screen
        assert "HPI is empty" in str(errors.render())
        assert editor.focused.id == "hpi"
        editor.query_one("#hpi", TextArea).text = "Sore throat for 3 days."
        editor.query_one("#pe", TextArea).text = "Tonsillar exudate."
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert editor.focused.id == "dx1-name"
        editor.query_one("#dx1-name", Input).value = "Streptococcal pharyngitis"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert results and results[0].diagnoses[0].name == "Streptococcal pharyngitis"


def test_provider_problem_names_the_missing_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "OPENAI_API_KEY" in provider_problem("openai/gpt-4o", Config())
    assert provider_problem("offline", Config()) is None
    assert provider_problem("human", Config()) is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert provider_problem("openai/gpt-4o", Config()) is None


def test_run_without_key_exits_before_the_screen(monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    opened = []
    monkeypatch.setattr(app_mod.OsceApp, "run", lambda self, *a, **k: opened.append(self))
    assert main(["run", "chest-pain-46m", "--doctor", "openai/gpt-4o"]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err and opened == []


async def test_setup_reports_missing_key_and_stays(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    app = OsceApp(mini_config(), mini_library(tmp_path), clock=fixed_clock, frozen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(SetupScreen(app.library.case("mini-sore-throat")))
        setup = app.screen
        setup.query_one("#doctor", Input).value = "openai/gpt-4o"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is setup  # nothing started; the typed specs are still there
        error = setup.query_one("#setup-error", Static)
        assert "doctor:" in str(error.render()) and "OPENAI_API_KEY" in str(error.render())
        assert setup.query_one("#doctor", Input).value == "openai/gpt-4o"


async def test_start_failure_stays_readable_after_the_toast(tmp_path):
    def broken(setup, bridge):
        raise RuntimeError("no API key for the doctor")

    app = run_app(tmp_path, encounter_factory=broken)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, EncounterScreen), what="encounter screen")
        screen = app.screen
        await wait_for(pilot, lambda: screen.dialogue.view("failure") is not None, what="failure note")
        assert "no API key for the doctor" in screen.dialogue.view("failure").body.source
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen


async def test_home_p_and_c_work_from_the_case_list(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_session(tmp_path / "sessions", fixed_session())
    app = OsceApp(mini_config(), mini_library(tmp_path), clock=fixed_clock, frozen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        home = app.screen
        await wait_for(pilot, lambda: home.sessions_loaded, what="sessions")
        assert app.focused is home.query_one("#cases", DataTable)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen), what="replay")
        await pilot.press("escape")
        await pilot.pause()
        # Letters typed into the search box are text, not commands.
        await pilot.press("slash", "p")
        await pilot.pause()
        assert app.screen is home and home.query_one("#search", Input).value == "p"


async def test_encounter_footer_shows_every_f_key_at_80_columns(tmp_path):
    app = run_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = encounter_of(app)
        await pilot.pause()
        keys = {fk.key: fk for fk in screen.query("FooterKey")}
        for key in ("f2", "f3", "f4", "f5", "f6", "f7", "f8"):
            assert key in keys, key
            assert keys[key].region.right <= 80 - 12, f"{key} hidden under the palette hint"


async def test_watching_two_agents_is_paced_and_can_be_taken_over(tmp_path):
    app = run_app(tmp_path, doctor="offline", patient="offline", watch_pace=0.25)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = encounter_of(app)
        await wait_for(pilot, lambda: len(screen.enc.session.turns) >= 4, what="a few turns")
        await pilot.pause(0.3)
        # Paced: far from the end after a moment (unpaced, the offline pair finishes in ~1 s).
        assert screen.enc.session.phase == "history" and screen.ended is None
        # F2 during a hold is a real pause: nothing moves until F2 again.
        await wait_for(pilot, lambda: screen._pace_timer is not None, what="a hold")
        await pilot.press("f2")
        n = len(screen.enc.session.turns)
        await pilot.pause(0.6)
        assert len(screen.enc.session.turns) == n and "paused" in status_text(screen)
        await pilot.press("f2")
        await wait_for(pilot, lambda: len(screen.enc.session.turns) > n, what="resumed")
        # Take over the doctor midway, ask one thing, hand it back.
        await pilot.press("f3")
        await say(pilot, "Have you had this pain before?")
        assert screen.enc.session.roles["doctor"].spec == "human"
        await pilot.press("f3")
        await wait_for(pilot, lambda: screen.enc.session.roles["doctor"].spec == "offline", what="handed back")
        n = len(screen.enc.session.turns)
        await wait_for(pilot, lambda: len(screen.enc.session.turns) > n + 1, what="agents going on")


def test_practice_mode_hides_the_unasked_challenging_question():
    waiting = ItemScore(
        criterion_id="challenging", item_id="q1", label="Am I going to die?", points=0.0, max_points=5.0,
        status="excluded", explanation="The patient has not asked this question in this session.",
    )
    assert reveals_key(waiting)
    # Excluded criteria without a case item (no key behind them) stay listed.
    assert not reveals_key(waiting.model_copy(update={"item_id": None, "label": "No closure key"}))


async def test_score_reason_shows_the_full_label(tmp_path):
    app = OsceApp(mini_config(), mini_library(tmp_path), clock=fixed_clock, frozen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = ScorePanel(id="p")
        await app.screen.mount(panel)
        panel.update_scores(live_scores(asked=2))
        await pilot.pause()
        tree = panel.tree
        tree.focus()
        tree.move_cursor(tree.item_nodes[("history", "facts", "f0")])
        await pilot.pause()
        reason = str(panel.query_one("#score-reason").render())
        assert "Onset of sore throat" in reason and "Asked in t0001" in reason


async def test_human_patient_gets_a_script_and_the_doctor_does_not(tmp_path):
    from osce_tui.tui.widgets.patient_script import PatientScript

    app = run_app(tmp_path, doctor="offline", patient="human")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = encounter_of(app)
        await wait_for(pilot, lambda: screen.awaiting is not None and screen.awaiting.event.role == "patient", what="patient's turn")
        box = screen.query_one("#say", Input)
        assert "F1" in box.placeholder
        box.value = "It's my chest"
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, PatientScript), what="script")
        from rich.console import Console

        from osce_tui.tui.widgets.patient_script import script_renderable

        case = LIB.case("chest-pain-46m")
        console = Console(width=80, record=True, file=io.StringIO())
        console.print(script_renderable(case))
        body = " ".join(console.export_text().split())
        assert " ".join(case.persona.opening_statement.split()[:4]) in body and "If asked" in body
        assert case.history[1].answer.split()[0] in body
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="back")
        assert box.value == "It's my chest"  # the half-typed answer survives

    app = run_app(tmp_path)  # human doctor: the script is the answer key
    async with app.run_test(size=(80, 24)) as pilot:
        screen = encounter_of(app)
        await wait_for(pilot, lambda: screen.awaiting is not None, what="doctor's turn")
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen is screen
        assert any("answer key" in n.message for n in app._notifications)


def test_run_honours_sessions_dir_given_before_the_command(monkeypatch, tmp_path):
    opened = []
    monkeypatch.setattr(app_mod.OsceApp, "run", lambda self, *a, **k: opened.append(self))
    assert main(["--sessions-dir", str(tmp_path / "s"), "run", "chest-pain-46m", "--doctor", "offline"]) == 0
    assert opened[0].config.sessions_dir == tmp_path / "s"
    # The command's own option still wins.
    assert main(["--sessions-dir", str(tmp_path / "s"), "run", "chest-pain-46m", "--sessions-dir", str(tmp_path / "own")]) == 0
    assert opened[1].config.sessions_dir == tmp_path / "own"


async def test_results_footer_keeps_back_visible_at_80_columns(tmp_path):
    from osce_tui.tui.screens.results import ResultsScreen

    session = fixed_session(case_id="mini-sore-throat")
    path = write_session(tmp_path / "sessions", session)
    app = OsceApp(mini_config(tmp_path / "sessions"), mini_library(tmp_path), clock=fixed_clock, frozen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_results(path, session)
        await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen), what="results")
        await pilot.pause()
        keys = {fk.key: fk for fk in app.screen.query("FooterKey")}
        for key in ("r", "s", "j", "m", "p", "escape"):
            assert keys[key].region.right <= 80 - 12, f"{key} hidden under the palette hint"


async def test_setup_rows_do_not_overlap_at_80_columns(tmp_path):
    app = OsceApp(Config(sessions_dir=tmp_path), LIB, frozen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(SetupScreen(LIB.case("chest-pain-46m")))
        await pilot.pause()
        setup = app.screen
        rubric, timers = setup.query_one("#rubric"), setup.query_one("#timers")
        assert rubric.region.bottom <= timers.region.y  # the long rubric title no longer wraps over the timers row


async def test_spec_prompt_refuses_a_model_without_key(tmp_path, monkeypatch):
    from osce_tui.tui.common import SpecPrompt

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    app = OsceApp(mini_config(), mini_library(tmp_path), clock=fixed_clock, frozen=True)
    async with app.run_test(size=(80, 24)) as pilot:
        got = []
        await app.push_screen(SpecPrompt("Re-score with judge:", "openai/gpt-4o", allow_human=False, config=Config()), got.append)
        prompt = app.screen
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is prompt and got == []
        assert "OPENAI_API_KEY" in str(prompt.query_one("#spec-error", Static).render())
        prompt.query_one("#spec-input", Input).value = "offline"
        await pilot.press("enter")
        await pilot.pause()
        assert got == ["offline"]
