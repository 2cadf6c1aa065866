"""Snapshots of the main screens (pytest-textual-snapshot).

Deterministic by construction: the fixture case and a test-owned rubric, a
scripted event stream instead of live agents, fixed session times and ids, a
frozen clock and no blinking cursors. Update with ``--snapshot-update`` after
an intended visual change and review the SVGs.
"""

from __future__ import annotations

import asyncio

import pytest

from osce_tui.tui.app import OsceApp, RunRequest
from osce_tui.tui.screens.note_editor import NoteEditor, NoteFields
from osce_tui.tui.widgets.dialogue import DialogueLog

from .tui_support import ScriptedEncounter, fixed_clock, fixed_session, mid_history_script, mini_config, mini_library, write_session


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    # Sessions are shown by relative folder name, so the snapshot has no tmp path.
    monkeypatch.chdir(tmp_path)
    return tmp_path


def make_app(workdir, **kw) -> OsceApp:
    return OsceApp(mini_config("sessions"), mini_library(workdir), clock=fixed_clock, frozen=True, **kw)


async def settle(pilot, condition, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition() and loop.time() < deadline:
        await pilot.pause(0.02)
    await pilot.pause()


def test_home_snapshot(workdir, snap_compare):
    write_session(workdir / "sessions", fixed_session(sid="aaaa00000001"))
    write_session(workdir / "sessions", fixed_session(sid="bbbb00000002", status="in_progress"))
    app = make_app(workdir)

    async def run_before(pilot):
        # Sessions are read in a thread; wait for the table.
        await settle(pilot, lambda: getattr(app.screen, "sessions_loaded", False))

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_encounter_mid_history_snapshot(workdir, snap_compare):
    lib = mini_library(workdir)
    start = RunRequest(case=lib.case("mini-sore-throat"), doctor="openai/gpt-4o", patient="offline", judge="offline", rubric="tui-mini")

    def factory(setup, bridge):
        return ScriptedEncounter(setup, bridge, mid_history_script())

    app = OsceApp(mini_config("sessions"), lib, clock=fixed_clock, frozen=True, start=start, encounter_factory=factory)

    async def run_before(pilot):
        await settle(pilot, lambda: len(app.screen.query_one(DialogueLog).views) == 5 and app.screen.score_panel.updates == 2)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_note_editor_snapshot(workdir, snap_compare):
    app = make_app(workdir)
    draft = NoteFields(
        hpi="21-year-old woman with 3 days of sore throat, fever to 38.4 °C, no cough.",
        pe="Tonsils enlarged with white exudate; tender anterior cervical nodes.",
        diagnoses=[("Streptococcal pharyngitis", "sore throat\nfever\nno cough", "tonsillar exudate\ntender nodes"), ("Infectious mononucleosis", "fatigue", ""), ("", "", "")],
        workup="Rapid strep test\nThroat culture",
    )

    async def run_before(pilot):
        app.push_screen(NoteEditor(draft))
        await settle(pilot, lambda: isinstance(app.screen, NoteEditor))

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_results_snapshot(workdir, snap_compare):
    app = make_app(workdir)
    session = fixed_session()
    path = write_session(workdir / "sessions", session)

    async def run_before(pilot):
        app.open_results(path, session)
        await settle(pilot, lambda: app.screen.__class__.__name__ == "ResultsScreen")
        await pilot.press("down")  # highlight the first item: its reason shows
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
