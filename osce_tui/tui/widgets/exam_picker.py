"""Quick picker for exam requests and test orders.

Picking an entry produces the same slash command a user could type
(``/exam heart`` or ``/order ECG``), so the engine sees one input path.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

COMMON_EXAMS: tuple[tuple[str, str], ...] = (
    ("general appearance", "General appearance"),
    ("heent", "Head, eyes, ears, nose, throat"),
    ("neck", "Neck: JVP, thyroid, lymph nodes"),
    ("heart", "Heart: inspect, palpate, auscultate"),
    ("lungs", "Lungs: percuss, auscultate"),
    ("abdomen", "Abdomen: inspect, auscultate, palpate"),
    ("extremities", "Extremities: pulses, oedema"),
    ("back", "Back and spine"),
    ("musculoskeletal", "Musculoskeletal"),
    ("neurological", "Neurological: cranial nerves, motor, sensory, reflexes"),
    ("skin", "Skin"),
    ("mental status", "Mental status"),
)

COMMON_TESTS: tuple[str, ...] = (
    "ECG",
    "Troponin",
    "Chest X-ray",
    "CBC",
    "BMP",
    "Lipid panel",
    "Urinalysis",
    "Pregnancy test",
    "HbA1c",
    "TSH",
    "CT head",
    "Abdominal ultrasound",
)


def picker_options() -> list[Option]:
    opts: list[Option] = []
    for what, title in COMMON_EXAMS:
        opts.append(Option(f"Exam  · {title}", id=f"/exam {what}"))
    for test in COMMON_TESTS:
        opts.append(Option(f"Order · {test}", id=f"/order {test}"))
    return opts


class ExamPicker(ModalScreen[str | None]):
    """Returns a slash command, or None when dismissed. Typing filters the list."""

    DEFAULT_CSS = """
    ExamPicker { align: center middle; }
    ExamPicker > Vertical { width: 64; max-width: 100%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1; }
    ExamPicker OptionList { height: auto; max-height: 16; }
    ExamPicker Label { color: $text-muted; width: 100%; }
    """
    BINDINGS = [Binding("escape", "dismiss_picker", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Examine or order: type to filter, ↑↓ Enter picks, or type your own")
            yield Input(placeholder="e.g. heart, or /order D-dimer", id="picker-filter")
            yield OptionList(*picker_options(), id="picker-list")

    def on_input_changed(self, event: Input.Changed) -> None:
        needle = event.value.strip().lower()
        options = [o for o in picker_options() if not needle or needle in str(o.prompt).lower()]
        ol = self.query_one(OptionList)
        ol.clear_options()
        ol.add_options(options)
        if options:
            ol.highlighted = 0

    def on_input_submitted(self, event: Input.Submitted) -> None:
        ol = self.query_one(OptionList)
        value = event.value.strip()
        if value.startswith("/"):
            self.dismiss(value)
        elif ol.highlighted is not None and ol.option_count:
            self.dismiss(ol.get_option_at_index(ol.highlighted).id)
        elif value:
            self.dismiss(f"/exam {value}")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def on_key(self, event) -> None:
        # Arrow keys move the list even while the filter has focus.
        if event.key in ("down", "up") and self.focused is self.query_one(Input):
            ol = self.query_one(OptionList)
            if ol.option_count:
                if event.key == "down":
                    ol.action_cursor_down()
                else:
                    ol.action_cursor_up()
                event.stop()

    def action_dismiss_picker(self) -> None:
        self.dismiss(None)
