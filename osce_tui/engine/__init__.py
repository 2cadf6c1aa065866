"""The encounter engine: phases, turns, live scoring events, autosave, takeover."""

from .encounter import Encounter, EncounterFailed, EncounterSetup

__all__ = ["Encounter", "EncounterFailed", "EncounterSetup"]
