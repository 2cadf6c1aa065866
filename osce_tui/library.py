"""Loading and validating cases/ and rubrics/ from the bundled and user folders.

A broken file never stops the others from loading: each problem becomes a
``LoadIssue`` naming the file, the field path and (where we can find it) the
line, and the library keeps going.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, TypeVar

from pydantic import BaseModel, ValidationError

from .domain.case import Case
from .domain.rubric import Rubric
from .tomlpos import index_lines, line_of

M = TypeVar("M", bound=BaseModel)

_PACKAGE_DIR = Path(__file__).resolve().parent


def _bundled(name: str) -> Path:
    """cases/ or rubrics/: inside an installed wheel, else at the repo top."""
    wheel = _PACKAGE_DIR / "_bundled" / name
    return wheel if wheel.is_dir() else _PACKAGE_DIR.parent / name


def bundled_cases_dir() -> Path:
    return _bundled("cases")


def bundled_rubrics_dir() -> Path:
    return _bundled("rubrics")


@dataclass(frozen=True)
class LoadIssue:
    """One problem in one file."""

    path: Path
    field: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class FileLoadError(ValueError):
    """A case or rubric file could not be loaded; ``issues`` says why and where."""

    def __init__(self, path: Path, issues: list[LoadIssue]):
        self.path = path
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))


class NotFoundError(LookupError):
    """Unknown case or rubric id; the message suggests close matches."""


def format_loc(loc: Iterable[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_TOML_POS = re.compile(r"at line (\d+)")


def load_model_file(path: Path, model: type[M], **defaults: object) -> M:
    """Parse a TOML file into ``model``; raise FileLoadError with positions."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FileLoadError(path, [LoadIssue(path, "", f"cannot read: {exc.strerror or exc}")]) from exc
    except UnicodeDecodeError as exc:
        raise FileLoadError(path, [LoadIssue(path, "", f"not UTF-8 text ({exc.reason})")]) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_POS.search(str(exc))
        line = int(match.group(1)) if match else getattr(exc, "lineno", None)
        raise FileLoadError(path, [LoadIssue(path, "", f"TOML syntax error: {exc}", line)]) from exc
    for key, value in defaults.items():
        data.setdefault(key, value)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        positions = index_lines(text)
        issues = [
            LoadIssue(
                path,
                format_loc(err["loc"]),
                _friendly(err),
                line_of(text, tuple(err["loc"]), positions),
            )
            for err in exc.errors(include_url=False)
        ]
        raise FileLoadError(path, issues) from exc


# Keys that belong at the top of a case file; TOML attaches a key written after
# a [table] header to that table, which reads as a baffling "unknown field".
_TOP_LEVEL_KEYS = {"title", "specialty", "language", "difficulty", "tags", "source", "additional_diagnoses", "workup", "schema_version"}


def _friendly(err: dict) -> str:
    if err["type"] == "extra_forbidden":
        loc = err["loc"]
        if len(loc) > 1 and loc[-1] in _TOP_LEVEL_KEYS:
            return f"unknown field here; top-level keys like {loc[-1]!r} must come before the first [table] header"
        return "unknown field (typo?)"
    if err["type"] == "missing":
        return "required field is missing"
    return err["msg"]


def load_case(path: Path) -> Case:
    case = load_model_file(Path(path), Case)
    case.id = Path(path).stem
    return case


def load_rubric(path: Path) -> Rubric:
    rubric = load_model_file(Path(path), Rubric)
    rubric.id = Path(path).stem
    return rubric


@dataclass
class _Collection:
    """Files of one kind from several folders; first folder wins on id clashes."""

    dirs: list[Path]
    loader: callable  # type: ignore[valid-type]
    items: dict[str, object] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)
    issues: list[LoadIssue] = field(default_factory=list)
    loaded: bool = False

    def load(self) -> None:
        if self.loaded:
            return
        for folder in self.dirs:
            if not folder.is_dir():
                continue
            for path in sorted(folder.glob("*.toml")):
                if path.stem in self.items:
                    continue
                try:
                    self.items[path.stem] = self.loader(path)
                    self.paths[path.stem] = path
                except FileLoadError as exc:
                    self.issues.extend(exc.issues)
        self.loaded = True


class Library:
    """Cases and rubrics from the search folders, loaded lazily, cached."""

    def __init__(
        self,
        case_dirs: Iterable[Path] = (),
        rubric_dirs: Iterable[Path] = (),
        *,
        include_bundled: bool = True,
        user_case_dirs: Iterable[Path] = (),
        user_rubric_dirs: Iterable[Path] = (),
    ):
        # Order matters: explicit --cases-dir, then bundled, then user config dirs.
        cdirs = [Path(d) for d in case_dirs]
        rdirs = [Path(d) for d in rubric_dirs]
        if include_bundled:
            cdirs.append(bundled_cases_dir())
            rdirs.append(bundled_rubrics_dir())
        cdirs += [Path(d) for d in user_case_dirs]
        rdirs += [Path(d) for d in user_rubric_dirs]
        self._cases = _Collection(cdirs, load_case)
        self._rubrics = _Collection(rdirs, load_rubric)

    # -- cases ------------------------------------------------------------

    @property
    def case_dirs(self) -> list[Path]:
        return self._cases.dirs

    def cases(self) -> dict[str, Case]:
        self._cases.load()
        return self._cases.items  # type: ignore[return-value]

    def case_issues(self) -> list[LoadIssue]:
        self._cases.load()
        return self._cases.issues

    def case_path(self, case_id: str) -> Path:
        self.case(case_id)
        return self._cases.paths[case_id]

    def case(self, case_id: str) -> Case:
        """A case by id, or by path to a .toml file."""
        if case_id.endswith(".toml") and Path(case_id).is_file():
            return load_case(Path(case_id))
        cases = self.cases()
        if case_id in cases:
            return cases[case_id]
        broken = [i for i in self._cases.issues if i.path.stem == case_id]
        if broken:
            raise FileLoadError(broken[0].path, broken)
        raise NotFoundError(_not_found("case", case_id, cases))

    def select(self, selector: str) -> list[Case]:
        """'all', comma-separated ids, or a specialty (case-insensitive)."""
        cases = self.cases()
        sel = selector.strip()
        if sel.lower() == "all":
            return list(cases.values())
        by_specialty = [c for c in cases.values() if c.specialty.lower() == sel.lower()]
        if by_specialty:
            return by_specialty
        return [self.case(part.strip()) for part in sel.split(",") if part.strip()]

    # -- rubrics ----------------------------------------------------------

    def rubrics(self) -> dict[str, Rubric]:
        self._rubrics.load()
        return self._rubrics.items  # type: ignore[return-value]

    def rubric_issues(self) -> list[LoadIssue]:
        self._rubrics.load()
        return self._rubrics.issues

    def rubric(self, rubric_id: str) -> Rubric:
        if rubric_id.endswith(".toml") and Path(rubric_id).is_file():
            return load_rubric(Path(rubric_id))
        rubrics = self.rubrics()
        if rubric_id in rubrics:
            return rubrics[rubric_id]
        raise NotFoundError(_not_found("rubric", rubric_id, rubrics))


def _not_found(kind: str, wanted: str, known: dict) -> str:
    close = difflib.get_close_matches(wanted, list(known), n=3)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listing = f" Known {kind}s: {', '.join(sorted(known)) or '(none)'}." if not close else ""
    return f"unknown {kind} {wanted!r}.{hint}{listing}"


def validate_paths(paths: Iterable[Path], *, strict: bool = False) -> list[LoadIssue]:
    """Validate case files (or folders of them); strict also requires protocol completeness."""
    issues: list[LoadIssue] = []
    for p in paths:
        files = sorted(Path(p).glob("*.toml")) if Path(p).is_dir() else [Path(p)]
        for f in files:
            try:
                case = load_case(f)
            except FileLoadError as exc:
                issues.extend(exc.issues)
                continue
            if strict:
                issues.extend(LoadIssue(f, "", gap) for gap in case.protocol_gaps())
    return issues
