"""Write imported files idempotently, never clobbering hand edits.

Every file we write carries a hash of what we wrote: a header comment in
case TOML files, ``run.extra["import_hash"]`` in session JSON. On the next
import we re-hash the file's current body; if it no longer matches the
recorded hash, someone edited it by hand and we leave it alone unless
``force`` is set. Unchanged content is not rewritten at all, so mtimes stay
put and re-running an import is a no-op.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import tomli_w

from ..domain.case import Case
from ..store import atomic_write_text

_HASH_LINE = re.compile(r"^# import-hash: (sha256:[0-9a-f]{16})\s*$", re.MULTILINE)
CREATED, UPDATED, UNCHANGED, OVERWRITTEN = "created", "updated", "unchanged", "overwritten"
SKIPPED_EDITED, SKIPPED_FOREIGN = "skipped-hand-edited", "skipped-not-ours"


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def case_toml(case: Case) -> str:
    """The case as TOML (without the header); defaults left out to keep files short."""
    data = case.model_dump(mode="json", exclude={"id"}, exclude_defaults=True, exclude_none=True)
    data = {"schema_version": case.schema_version, **data}
    return tomli_w.dumps(data, multiline_strings=True)


def render_case_file(case: Case, provenance: str) -> str:
    body = case_toml(case)
    header = (
        f"# Imported by osce-tui from {provenance}.\n"
        "# Re-importing updates this file only while it is unedited; after hand edits it is kept\n"
        "# (use --force to overwrite). Delete the import-hash line to mark it as yours.\n"
        f"# import-hash: {_digest(body)}\n\n"
    )
    return header + body


def _split_header(text: str) -> tuple[str | None, str]:
    """(recorded hash, body) of a file we wrote; (None, text) for anyone else's."""
    m = _HASH_LINE.search(text)
    if not m:
        return None, text
    return m.group(1), text[m.end() :].lstrip("\n")


def write_case_file(path: Path, case: Case, provenance: str, *, force: bool) -> str:
    """Write ``case`` to ``path``; returns the outcome (one of the status constants)."""
    new_text = render_case_file(case, provenance)
    return _write(path, new_text, force=force, recorded_and_body=_split_header)


def write_json_file(path: Path, payload: dict, *, force: bool, hash_key: tuple[str, ...] = ("run", "extra", "import_hash")) -> str:
    """Write a JSON document with its own content hash stored at ``hash_key``."""
    digest = _digest(_canonical_json(payload))
    stamped = json.loads(json.dumps(payload))
    _set_path(stamped, hash_key, digest)
    new_text = json.dumps(stamped, indent=2, ensure_ascii=False) + "\n"

    def split(text: str) -> tuple[str | None, str]:
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None, text
        recorded = _get_path(data, hash_key)
        if not isinstance(recorded, str):
            return None, text
        _del_path(data, hash_key)
        return recorded, _canonical_json(data)

    return _write(path, new_text, force=force, recorded_and_body=split)


def _write(path: Path, new_text: str, *, force: bool, recorded_and_body) -> str:
    path = Path(path)
    if not path.exists():
        atomic_write_text(path, new_text)
        return CREATED
    old_text = path.read_text(encoding="utf-8")
    if old_text == new_text:
        return UNCHANGED
    recorded, body = recorded_and_body(old_text)
    if recorded is None:
        if not force:
            return SKIPPED_FOREIGN
    elif _digest(body) != recorded and not force:
        return SKIPPED_EDITED
    edited = recorded is None or _digest(body) != recorded
    atomic_write_text(path, new_text)
    return OVERWRITTEN if edited else UPDATED


def write_plain(path: Path, text: str) -> bool:
    """Write a generated file (like the report) only if its content changed."""
    path = Path(path)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    atomic_write_text(path, text)
    return True


def _canonical_json(data: dict) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _get_path(data: dict, keys: tuple[str, ...]):
    for k in keys:
        if not isinstance(data, dict) or k not in data:
            return None
        data = data[k]
    return data


def _set_path(data: dict, keys: tuple[str, ...], value) -> None:
    for k in keys[:-1]:
        data = data.setdefault(k, {})
    data[keys[-1]] = value


def _del_path(data: dict, keys: tuple[str, ...]) -> None:
    for k in keys[:-1]:
        data = data.get(k, {})
    data.pop(keys[-1], None)
