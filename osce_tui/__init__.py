"""osce-tui: OSCE-style clinical consultations in the terminal and headless.

Importing the package must stay cheap and must never import textual: the TUI
lives in ``osce_tui.tui`` and is only imported by the CLI when it is needed.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("osce-tui")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+src"
