"""TUI building blocks driven by hand-made engine events (no engine, no network)."""

from __future__ import annotations

import json

import pytest
from textual.app import App, ComposeResult

from osce_tui.domain.session import PatientNote
from osce_tui.engine import events as ev
from osce_tui.tui.bridge import EngineBridge
from osce_tui.tui.export import export_session, scores_json, session_markdown
from osce_tui.tui.messages import EngineScoresUpdated, EngineTextDelta, to_message
from osce_tui.tui.screens.note_editor import NoteFields, NoteInvalid, build_note
from osce_tui.tui.screens.replay import truncate_session
from osce_tui.tui.widgets.dialogue import DialogueLog
from osce_tui.tui.widgets.phase_bar import PhaseBar
from osce_tui.tui.widgets.score_panel import ScorePanel, item_mark

from .tui_support import fixed_session, live_scores, turn


class Harness(App):
    """A bare app holding one widget under test."""

    def __init__(self, widget):
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


# -- messages and bridge ------------------------------------------------------


def test_every_engine_event_has_a_message():
    events = [
        ev.TurnStarted("doctor", "t1", "offline"),
        ev.TextDelta("doctor", "t1", "hi"),
        ev.TurnFinished(turn(1, "doctor", "hi")),
        ev.PhaseChanged("history", "exam"),
        ev.ExamResult("exam", "heart", "cardiovascular", "normal", "normal", "t2"),
        ev.ScoresUpdated(live_scores(), final=False),
        ev.RoleChanged("doctor", "offline", "human"),
        ev.AwaitingHuman("doctor", "history"),
        ev.ErrorOccurred("boom"),
        ev.SessionSaved(__import__("pathlib").Path("x.json")),
        ev.EncounterEnded("finished"),
    ]
    names = {type(to_message(e)).__name__ for e in events}
    assert len(names) == len(events)
    with pytest.raises(TypeError):
        to_message(object())


def test_live_score_bursts_collapse_but_final_sets_survive():
    live1 = EngineScoresUpdated(ev.ScoresUpdated(live_scores(1), final=False))
    live2 = EngineScoresUpdated(ev.ScoresUpdated(live_scores(2), final=False))
    final = EngineScoresUpdated(ev.ScoresUpdated(live_scores(2, final=True), final=True))
    assert live2.can_replace(live1)
    assert not live2.can_replace(final)  # a queued final set is never dropped
    assert not live2.can_replace(EngineTextDelta(ev.TextDelta("doctor", "t1", "x")))
    # A final set may replace a queued live one (newest wins).
    assert final.can_replace(live1)


async def test_bridge_batches_deltas_keeps_order_and_stops_after_close():
    received = []

    class Sink(App):
        def on_engine_text_batch(self, message):
            received.append(("text", message.turn_id, bridge.take(message.key)))

        def on_engine_turn_started(self, message):
            received.append(("start", message.event.turn_id, message.event.spec))

        def on_engine_turn_finished(self, message):
            received.append(("done", message.event.turn.id, message.event.turn.text))

    app = Sink()
    async with app.run_test() as pilot:
        bridge = EngineBridge(app)
        bridge(ev.TurnStarted("doctor", "t1", "m"))
        for word in ["a", "b", "c"]:  # posted while the app is not looking: one batch
            bridge(ev.TextDelta("doctor", "t1", word))
        bridge(ev.TurnStarted("doctor", "t1", "human"))  # a retry of the same turn
        bridge(ev.TextDelta("doctor", "t1", "x"))
        bridge(ev.TurnFinished(turn(1, "doctor", "x")))
        await pilot.pause()
        assert bridge.deltas == 4 and bridge.posted == 5
        bridge.close()
        bridge(ev.TextDelta("doctor", "t2", "late"))
        await pilot.pause()
    assert received == [
        ("start", "t1", "m"),
        ("text", "t1", "abc"),
        ("start", "t1", "human"),
        ("text", "t1", "x"),
        ("done", "t0001", "x"),
    ]


# -- dialogue -------------------------------------------------------------------


async def test_dialogue_streams_then_shows_the_recorded_text():
    log = DialogueLog()
    app = Harness(log)
    async with app.run_test(size=(60, 20)) as pilot:
        await log.start_turn("doctor", "t0001", "openai/x")
        for chunk in ["What ", "brings ", "you in", "?\nEXAM: heart"]:
            await log.append("t0001", chunk)
        await pilot.pause()
        view = log.view("t0001")
        assert view is not None and view.stream is not None
        # The engine records the text without the marker line.
        await log.finish_turn(turn(1, "doctor", "What brings you in?", spec="openai/x"))
        await pilot.pause()
        assert view.stream is None
        assert view.body.source == "What brings you in?"
        # A turn that never streamed (a human's) is mounted complete.
        await log.finish_turn(turn(2, "patient", "Chest pain.", spec="human"))
        assert log.view("t0002").body.source == "Chest pain."
        assert [v.turn_id for v in log.query("TurnView")] == ["t0001", "t0002"]


async def test_dialogue_restarts_an_interrupted_stream():
    log = DialogueLog()
    async with Harness(log).run_test() as pilot:
        await log.start_turn("doctor", "t0003", "openai/x")
        await log.append("t0003", "half a sent")
        await log.start_turn("doctor", "t0003", "human")  # takeover: same id again
        await log.finish_turn(turn(3, "doctor", "A new question?", spec="human"))
        await pilot.pause()
        assert log.view("t0003").body.source == "A new question?"


async def test_dialogue_stays_pinned_unless_scrolled_up():
    log = DialogueLog()
    async with Harness(log).run_test(size=(50, 12)) as pilot:
        for i in range(1, 15):
            await log.finish_turn(turn(i, "doctor" if i % 2 else "patient", f"line {i}"))
        await pilot.pause()
        assert log.is_anchored
        assert log.scroll_y == log.max_scroll_y > 0
        log.jump_to("t0002")  # reading back releases the pin
        await pilot.pause()
        assert log.scroll_y < log.max_scroll_y
        assert log.view("t0002").has_class("-highlight")


# -- score panel, phase bar ----------------------------------------------------


async def test_score_panel_updates_in_place_and_shows_reasons():
    panel = ScorePanel()
    async with Harness(panel).run_test(size=(50, 20)) as pilot:
        panel.update_scores(live_scores(asked=1))
        await pilot.pause()
        tree = panel.tree
        node = tree.item_nodes[("history", "facts", "f1")]
        assert str(node.label).startswith("·")
        panel.update_scores(live_scores(asked=2))
        await pilot.pause()
        assert tree.item_nodes[("history", "facts", "f1")] is node  # same node, new label
        assert str(node.label).startswith("✓")
        tree.focus()
        tree.move_cursor(node)
        await pilot.pause()
        reason = str(panel.query_one("#score-reason").render())
        assert "Asked in t0003" in reason
        total = str(panel.query_one("#score-total").render())
        assert "Total" in total and "live" in total


def test_item_marks():
    s = live_scores(asked=1)
    items = s.sections[0].items
    assert item_mark(items[0])[0] == "✓"
    assert item_mark(items[1])[0] == "·"
    assert item_mark(items[1].model_copy(update={"status": "excluded"}))[0] == "–"
    assert item_mark(items[1].model_copy(update={"status": "unscored"}))[0] == "!"
    assert item_mark(items[1].model_copy(update={"points": 4.0}))[0] == "◐"


async def test_phase_bar_timer_turns_and_pause():
    now = [100.0]
    bar = PhaseBar(clock=lambda: now[0])
    async with Harness(bar).run_test(size=(100, 3)):
        bar.enter_phase("history")
        bar.count_turn()
        now[0] += 65
        text = str(bar.render())
        assert "01:05/08:00" in text and "turns 1/40" in text
        bar.set_paused(True)
        now[0] += 600
        assert "01:05" in str(bar.render()) and "PAUSED" in str(bar.render())
        bar.set_paused(False)
        now[0] += 5
        assert "01:10" in str(bar.render())
        bar.enter_phase("exam")
        assert "00:00/04:00" in str(bar.render()) and "turns 0/15" in str(bar.render())


# -- note editor validation ------------------------------------------------------


def test_build_note_validates_every_field():
    good = NoteFields(
        hpi="46M with 2 h of chest pain.",
        pe="S4 gallop.",
        diagnoses=[("Acute coronary syndrome", "pressure-like pain\n- radiates to left arm", "S4"), ("", "", ""), ("GERD", "", "")],
        workup="ECG\nTroponin\n\n",
    )
    note = build_note(good)
    assert isinstance(note, PatientNote)
    assert [d.name for d in note.diagnoses] == ["Acute coronary syndrome", "GERD"]
    assert note.diagnoses[0].history_findings == ["pressure-like pain", "radiates to left arm"]
    assert note.workup == ["ECG", "Troponin"]

    bad = NoteFields(hpi="", pe="x", diagnoses=[("", "a", ""), ("B", "1\n2\n3\n4", "")], workup="\n".join(f"t{i}" for i in range(9)))
    with pytest.raises(NoteInvalid) as err:
        build_note(bad)
    problems = " | ".join(err.value.problems)
    assert "HPI is empty" in problems
    assert "Diagnosis 1 has findings but no name" in problems
    assert "Diagnosis 2: 4 history findings" in problems
    assert "9 workup items" in problems
    with pytest.raises(NoteInvalid, match="at least one diagnosis"):
        build_note(NoteFields(hpi="x", pe="y"))


# -- replay truncation and export -------------------------------------------------


def test_truncate_session_hides_the_future():
    s = fixed_session()
    s.exams = []
    cut = truncate_session(s, 3)
    assert [t.id for t in cut.turns] == ["t0001", "t0002", "t0003"]
    assert cut.note is None and cut.scores == [] and cut.status == "in_progress"
    assert len(s.turns) == 7  # the original is untouched
    assert truncate_session(s, 0).phase == "doorway"


def test_exports(tmp_path):
    s = fixed_session()
    scores = s.latest_scores()
    data = json.loads(scores_json(s, scores))
    assert data["total"] == scores.total and data["sections"][0]["items"][0]["evidence"] == ["t0001"]
    md = session_markdown(s, scores)
    assert "## Transcript" in md and "Streptococcal pharyngitis" in md and "| Onset of sore throat | 10/10 |" in md
    out = tmp_path / "exports"
    p_json = export_session(s, scores, tmp_path / "sessions" / "x_1.json", "json", out)
    p_md = export_session(s, scores, tmp_path / "sessions" / "x_1.json", "md", out)
    assert p_json == out / "x_1.scores.json" and p_json.is_file() and p_md.suffix == ".md"
    with pytest.raises(ValueError):
        export_session(s, None, tmp_path / "x.json", "json", out)
    with pytest.raises(ValueError):
        export_session(s, scores, tmp_path / "x.json", "pdf", out)


async def test_practice_mode_hides_unearned_answer_key_items():
    """A student must not see the case's question bank before earning it."""
    from textual.app import App

    from osce_tui.domain.scores import ItemScore, ScoreSet, SectionScore
    from osce_tui.tui.widgets.score_panel import ScorePanel

    def scores(earned: bool) -> ScoreSet:
        items = [
            ItemScore(criterion_id="intro", label="Introduced self", points=1, max_points=1),
            ItemScore(criterion_id="q", item_id="t0002", label="Q: when did it start?", points=0, max_points=1),
            ItemScore(criterion_id="cov", item_id="onset", label="onset: When did the pain start?", points=2 if earned else 0, max_points=2),
            ItemScore(criterion_id="cov", item_id="smoking", label="smoking: Do you smoke?", points=0, max_points=2),
        ]
        return ScoreSet(rubric_id="r", judge="offline", final=False, sections=[SectionScore(section_id="h", title="History", judge="offline", items=items)])

    class PanelApp(App):
        def compose(self):
            yield ScorePanel(id="scores", reveal=False)

    app = PanelApp()
    async with app.run_test() as pilot:
        panel = app.query_one(ScorePanel)
        panel.update_scores(scores(earned=False))
        await pilot.pause()
        labels = [str(n.label) for n in panel.tree.root.children[0].children]
        assert not any("Do you smoke" in label or "When did the pain" in label for label in labels)
        assert any("Q: when did it start?" in label for label in labels), "the doctor's own questions stay visible"
        assert any("2 more to earn" in label for label in labels)

        panel.update_scores(scores(earned=True))
        await pilot.pause()
        labels = [str(n.label) for n in panel.tree.root.children[0].children]
        assert any("When did the pain start" in label for label in labels)
        assert any("1 more to earn" in label for label in labels)
        assert not any("Do you smoke" in label for label in labels)

        panel.set_reveal(True)
        await pilot.pause()
        labels = [str(n.label) for n in panel.tree.root.children[0].children]
        assert any("Do you smoke" in label for label in labels)
        assert not any("more to earn" in label for label in labels)
