"""Public datasets -> cases (and, for CRAFT-MD, sessions).

``CASE_FORMATS`` and ``SESSION_FORMATS`` are the registries the CLI reads:
format name -> (importer function, number of source paths, help text).
``import_cases`` / ``import_sessions`` run one importer and write its output
idempotently into ``out`` together with ``import_report.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..domain.case import Case
from .report import CaseEntry, ImportInputError, ImportReport
from .writer import write_case_file, write_plain

REPORT_NAME = "import_report.json"

CaseImporter = Callable[..., list[tuple[CaseEntry, Case]]]


@dataclass(frozen=True)
class Format:
    name: str
    sources: str  # metavar shown in help, e.g. "FILE.jsonl"
    nargs: int
    help: str
    loader: str  # "module:function", imported lazily

    def load(self) -> Callable:
        from importlib import import_module

        module, func = self.loader.split(":")
        return getattr(import_module(f"{__name__}.{module}"), func)


CASE_FORMATS: dict[str, Format] = {
    f.name: f
    for f in [
        Format("agentclinic", "FILE.jsonl", 1, "AgentClinic OSCE JSONL (one OSCE_Examination per line)", "agentclinic:import_file"),
        Format("craftmd", "FILE.csv", 1, "CRAFT-MD table: case_vignette, choice_1..4, answer[, case_id, category]", "craftmd:import_csv"),
        Format("medqa-cs", "FILE.json", 1, "MedQA-CS release JSON (rows per section and conversation turn)", "medqa_cs:import_file"),
        Format("epag", "PROFILES.json GOLD.csv", 2, "EPAG patient profiles + weighted guideline table", "epag:import_files"),
    ]
}

SESSION_FORMATS: dict[str, Format] = {
    "craftmd": Format("craftmd", "DIR", 1, "CRAFT-MD results/<model>/case_*.json transcripts", "craftmd:import_sessions"),
}


def check_sources(fmt: Format, sources: list[Path], out: Path) -> None:
    if Path(out).exists() and not Path(out).is_dir():
        raise ImportInputError(out, "--out must be a folder, not a file")
    if len(sources) != fmt.nargs:
        raise ImportInputError(
            " ".join(map(str, sources)) or "(none)",
            f"format {fmt.name!r} takes {fmt.nargs} source path(s): {fmt.sources}",
        )


def import_cases(format_name: str, sources: list[Path], out: Path, *, force: bool = False, **options) -> ImportReport:
    """Convert ``sources`` with the named importer and write cases into ``out``."""
    fmt = CASE_FORMATS[format_name]
    check_sources(fmt, sources, out)
    results = fmt.load()(*sources, **options)  # raises ImportInputError before anything is written
    report = ImportReport(format=format_name, source=" ".join(Path(s).name for s in sources))
    write_cases(results, Path(out), report, force=force)
    write_plain(Path(out) / REPORT_NAME, report.to_json())
    return report


def write_cases(results: list[tuple[CaseEntry, Case]], out: Path, report: ImportReport, *, force: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for entry, case in results:
        if entry.id in seen:  # two records slug to the same id: keep both, distinguishably
            n = 2
            while f"{entry.id}-{n}" in seen:
                n += 1
            entry.id = case.id = f"{entry.id}-{n}"
        seen.add(entry.id)
        path = out / f"{entry.id}.toml"
        entry.file = path.name
        entry.status = write_case_file(path, case, f"{report.format}: {entry.source}", force=force)
        report.entries.append(entry)


def import_sessions(format_name: str, sources: list[Path], out: Path, *, force: bool = False, **options) -> ImportReport:
    fmt = SESSION_FORMATS[format_name]
    check_sources(fmt, sources, out)
    report = fmt.load()(*sources, out=Path(out), force=force, **options)
    write_plain(Path(out) / REPORT_NAME, report.to_json())
    return report


__all__ = [
    "CASE_FORMATS",
    "SESSION_FORMATS",
    "REPORT_NAME",
    "ImportInputError",
    "ImportReport",
    "import_cases",
    "import_sessions",
]
