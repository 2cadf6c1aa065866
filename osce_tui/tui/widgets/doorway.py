"""The doorway panel: what the examinee reads on the door before entering."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Collapsible, Static

from ...domain.case import Doorway, Vitals

_SEX_SHORT = {"female": "F", "male": "M", "intersex": "X", "unspecified": "?"}


def age_text(d: Doorway) -> str:
    return f"{d.age}" if d.age_unit == "years" else f"{d.age} {d.age_unit}"


def doorway_summary(d: Doorway) -> str:
    """One line that stays visible when the panel is collapsed."""
    return f"{d.patient_name}, {age_text(d)} {_SEX_SHORT[d.sex]} · {d.setting} · {d.chief_complaint}"


def vitals_text(v: Vitals) -> str:
    return "  ".join(v.parts(compact=True))


def doorway_renderable(d: Doorway) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(ratio=1)
    age = f"{d.age}-year-old" if d.age_unit == "years" else f"{d.age} {d.age_unit} old,"
    grid.add_row("Patient", f"{d.patient_name}, {age} {d.sex}")
    grid.add_row("Setting", d.setting)
    grid.add_row("Complaint", d.chief_complaint)
    grid.add_row("Vitals", vitals_text(d.vitals))
    tasks = Text()
    for i, task in enumerate(d.tasks, 1):
        tasks.append(f"{i}. {task}" + ("\n" if i < len(d.tasks) else ""))
    grid.add_row("Tasks", tasks)
    return grid


class DoorwayPanel(Collapsible):
    """Collapsible doorway; its title keeps name, age, sex, setting and complaint visible."""

    DEFAULT_CSS = """
    DoorwayPanel { height: auto; max-height: 12; border-top: none; padding: 0; margin: 0; }
    DoorwayPanel Contents { padding: 0 1; height: auto; }
    """

    def __init__(self, doorway: Doorway, *, collapsed: bool = False, id: str | None = None) -> None:
        self.doorway = doorway
        super().__init__(
            Static(doorway_renderable(doorway), id="doorway-body"),
            title=doorway_summary(doorway),
            collapsed=collapsed,
            id=id,
        )
