"""Find the line of a key path in TOML text.

tomllib returns plain dicts without positions, but a validation error should
say *where* in the file the bad field is. This module scans the text once and
records the line of every table header and key, keyed by the same path tuples
pydantic uses in its error ``loc`` (array-of-tables become integer indices).
It is deliberately approximate: it understands headers, dotted keys, and
skips multi-line strings and arrays, which is all our hand-written files use.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\.\"' ]+?)\s*=\s*(.*)$")

Path = tuple[str | int, ...]


def _split_key(raw: str) -> list[str]:
    return [part.strip().strip("\"'") for part in raw.split(".")]


def index_lines(text: str) -> dict[Path, int]:
    """Map key paths to 1-based line numbers."""
    positions: dict[Path, int] = {}
    array_counts: dict[Path, int] = {}  # path of an array of tables -> last index
    current: Path = ()
    in_multiline_string = False
    bracket_depth = 0

    def resolve(components: list[str]) -> Path:
        """Turn 'a.b.c' into a path, inserting the current index of any array."""
        path: Path = ()
        for comp in components:
            path = path + (comp,)
            if path in array_counts:
                path = path + (array_counts[path],)
        return path

    for lineno, line in enumerate(text.splitlines(), start=1):
        if in_multiline_string:
            if line.count('"""') % 2 == 1 or line.count("'''") % 2 == 1:
                in_multiline_string = False
            continue
        if bracket_depth > 0:
            bracket_depth += _bracket_delta(line)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        header = _HEADER.match(line)
        if header and not _KEY.match(line):
            components = _split_key(header.group(2))
            if header.group(1) == "[[":
                parent = resolve(components[:-1])
                array_path = parent + (components[-1],)
                array_counts[array_path] = array_counts.get(array_path, -1) + 1
                positions.setdefault(array_path, lineno)
                current = array_path + (array_counts[array_path],)
            else:
                current = resolve(components)
            positions.setdefault(current, lineno)
            continue
        key = _KEY.match(line)
        if key:
            path = current + tuple(_split_key(key.group(1)))
            positions.setdefault(path, lineno)
            value = key.group(2)
            if value.count('"""') == 1 or value.count("'''") == 1:
                in_multiline_string = True
            bracket_depth = max(0, _bracket_delta(value))
    return positions


def _bracket_delta(text: str) -> int:
    """Net open brackets on a line, ignoring quoted strings and comments."""
    unquoted = re.sub(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'', "", text).split("#", 1)[0]
    return unquoted.count("[") - unquoted.count("]")


def line_of(text: str, loc: Path, positions: dict[Path, int] | None = None) -> int | None:
    """Line of the longest prefix of ``loc`` found in the text (None if none)."""
    positions = positions if positions is not None else index_lines(text)
    for end in range(len(loc), 0, -1):
        if (hit := positions.get(tuple(loc[:end]))) is not None:
            return hit
    return None
