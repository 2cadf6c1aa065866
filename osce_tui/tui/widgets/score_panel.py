"""Live score panels: rubric sections with their checklist items.

Built once from the first ScoreSet and then updated in place (labels only),
so the user's cursor and folded sections survive the many updates an
encounter produces. The highlighted item's explanation shows on one line
under the tree.

Practice mode (``reveal=False``) hides items that are not yet earned and come
from the case key (history facts, target exams, guideline features): listing
them would hand a student the answer sheet. Earned items appear as they tick;
each section says how many are still to earn.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from ...domain.scores import ItemScore, ScoreSet, SectionScore

ItemKey = tuple[str, str, str | None]  # section id, criterion id, item id

_TURN_ID = re.compile(r"^t\d+$")


def reveals_key(item: ItemScore) -> bool:
    """True for an unearned item whose label comes from the case's answer key."""
    from_case = item.item_id is not None and not _TURN_ID.match(item.item_id)
    # "excluded" counts too: a closure item waiting for the patient's
    # challenging question is labelled with that question, a spoiler.
    return from_case and item.status in ("scored", "excluded") and item.points <= 0


def hidden_label(count: int) -> Text:
    return Text(f"… {count} more to earn (F9 shows all)", style="dim italic")


def fmt_points(x: float) -> str:
    return f"{x:g}" if x == int(x) else f"{x:.1f}"


def item_mark(item: ItemScore) -> tuple[str, str]:
    """Glyph and style for a checklist item."""
    if item.status == "excluded":
        return "–", "dim"
    if item.status == "unscored":
        return "!", "bold red"
    if item.met:
        return "✓", "bold green"
    if item.points > 0:
        return "◐", "yellow"
    return "·", "dim"


def item_label(item: ItemScore) -> Text:
    mark, style = item_mark(item)
    text = Text()
    text.append(f"{mark} ", style=style)
    text.append(item.label, style="dim" if item.status == "excluded" else "")
    if item.status == "scored":
        text.append(f" {fmt_points(item.points)}/{fmt_points(item.max_points)}", style="dim")
    return text


def section_label(section: SectionScore) -> Text:
    # Percentage before points: on a narrow panel the points are what gets cut.
    text = Text(section.title, style="bold")
    if section.score_100 is None:
        text.append("  –", style="dim")
    else:
        text.append(f"  {section.score_100:.0f}%", style="cyan")
        text.append(f"  {fmt_points(section.points)}/{fmt_points(section.max_points)}", style="dim")
    return text


def total_text(scores: ScoreSet | None) -> Text:
    if scores is None:
        return Text("Scores: waiting for the first turn", style="dim")
    total = "–" if scores.total is None else f"{scores.total:.1f}"
    text = Text("Total ", style="bold")
    text.append(total, style="bold cyan")
    text.append(" / 100", style="dim")
    text.append("  final" if scores.final else "  live", style="green" if scores.final else "dim italic")
    return text


def explanation_line(item: ItemScore | None, section: SectionScore | None) -> str:
    if item is not None:
        why = item.explanation or "no explanation given"
        ev = f" [{', '.join(item.evidence)}]" if item.evidence else ""
        return f"{why}{ev}"
    if section is not None:
        return f"{section.title}: judged by {section.judge}"
    return ""


class ScoreTree(Tree):
    """Sections as branches, items as leaves; node data is the score object."""

    DEFAULT_CSS = """
    ScoreTree { height: 1fr; padding: 0; background: $surface; }
    """

    def __init__(self, *, id: str | None = None, reveal: bool = True) -> None:
        super().__init__("scores", id=id)
        self.show_root = False
        self.guide_depth = 2
        self.reveal = reveal
        self.section_nodes: dict[str, TreeNode] = {}
        self.item_nodes: dict[ItemKey, TreeNode] = {}
        self.hidden_nodes: dict[str, TreeNode] = {}

    def reset(self) -> None:
        self.clear()
        self.section_nodes.clear()
        self.item_nodes.clear()
        self.hidden_nodes.clear()

    def show_scores(self, scores: ScoreSet) -> None:
        for section in scores.sections:
            node = self.section_nodes.get(section.section_id)
            if node is None:
                node = self.root.add(section_label(section), data=section, expand=True)
                self.section_nodes[section.section_id] = node
            elif node.data != section:
                node.data = section
                node.set_label(section_label(section))
            hidden = 0
            for item in section.items:
                key = (section.section_id, item.criterion_id, item.item_id)
                leaf = self.item_nodes.get(key)
                if leaf is None:
                    if not self.reveal and reveals_key(item):
                        hidden += 1
                        continue
                    self.item_nodes[key] = node.add_leaf(item_label(item), data=item)
                elif leaf.data != item:  # relabel only what changed: cheap bursts
                    leaf.data = item
                    leaf.set_label(item_label(item))
            self._show_hidden_count(section.section_id, node, hidden)

    def _show_hidden_count(self, section_id: str, node: TreeNode, hidden: int) -> None:
        leaf = self.hidden_nodes.get(section_id)
        if hidden and leaf is None:
            self.hidden_nodes[section_id] = node.add_leaf(hidden_label(hidden))
        elif hidden and leaf is not None:
            leaf.set_label(hidden_label(hidden))
        elif leaf is not None:
            leaf.remove()
            del self.hidden_nodes[section_id]


class ScorePanel(Vertical):
    """Total, per-section trees and the focused item's reason."""

    DEFAULT_CSS = """
    ScorePanel { width: 34; height: 1fr; border-left: vkey $primary 50%; padding: 0 0 0 1; }
    ScorePanel > #score-total { height: 1; }
    ScorePanel > #score-reason { height: auto; max-height: 4; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None, reveal: bool = True) -> None:
        super().__init__(id=id)
        self.scores: ScoreSet | None = None
        self.updates = 0
        self.reveal = reveal

    def compose(self):
        yield Static(total_text(None), id="score-total")
        yield ScoreTree(id="score-tree", reveal=self.reveal)
        yield Static("", id="score-reason")

    @property
    def tree(self) -> ScoreTree:
        return self.query_one(ScoreTree)

    def update_scores(self, scores: ScoreSet) -> None:
        self.scores = scores
        self.updates += 1
        self.query_one("#score-total", Static).update(total_text(scores))
        self.tree.show_scores(scores)
        self._show_reason(self.tree.cursor_node)

    def clear(self) -> None:
        self.scores = None
        self.tree.reset()
        self.query_one("#score-total", Static).update(total_text(None))
        self.query_one("#score-reason", Static).update("")

    def set_reveal(self, reveal: bool) -> None:
        """Show or hide the not-yet-earned answer-key items (rebuilds the tree)."""
        self.reveal = reveal
        tree = self.tree
        tree.reveal = reveal
        tree.reset()
        if self.scores is not None:
            tree.show_scores(self.scores)

    def _show_reason(self, node: TreeNode | None) -> None:
        data = node.data if node is not None else None
        item = data if isinstance(data, ItemScore) else None
        section = data if isinstance(data, SectionScore) else None
        reason = Text()
        if item is not None:
            # The tree cuts long labels on a narrow panel: the full one is read here.
            reason.append(item.label, style="bold")
            reason.append(" — ")
        reason.append(explanation_line(item, section))
        self.query_one("#score-reason", Static).update(reason)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        self._show_reason(event.node)
