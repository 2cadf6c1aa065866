"""Screens of the osce-tui app."""
