"""Reusable widgets of the encounter, replay and results screens."""
