"""EPAG mode: pre-consultation where the doctor asks a question with answer
options each turn and the patient picks; the engine runs it in ``epag`` mode
and the ``epag`` rubric scores the dialogue against the case's weighted
guideline features.

The protocol fixes the number of question turns (n); here that is the
history-phase turn budget, which ``--epag-turns`` sets for the run.
"""

from __future__ import annotations

from ..config import Config


def epag_config(config: Config, turns: int | None) -> Config:
    """``config`` with the history budget set to ``turns`` question turns (None: unchanged)."""
    if turns is None:
        return config
    if turns < 1:
        raise ValueError("--epag-turns must be at least 1")
    updated = config.model_copy(deep=True)
    updated.encounter.history.max_turns = turns
    return updated
