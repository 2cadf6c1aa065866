"""Prompt texts, one package file per role or judge section, versioned by hash.

``load_prompt("patient")`` returns the text of ``patient.md`` and its sha256;
``render("patient", name=...)`` fills ``$placeholders`` (string.Template, so
the JSON braces common in prompts need no escaping). Sessions and score sets
record ``prompt_hashes()`` so a result can always be traced to the exact
prompt wording that produced it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from string import Template

__all__ = ["Prompt", "PromptError", "combined_hash", "load_prompt", "prompt_hashes", "prompt_names", "render"]


class PromptError(LookupError):
    """A prompt file that does not exist or a placeholder left unfilled."""


@dataclass(frozen=True)
class Prompt:
    name: str
    text: str
    sha256: str

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]


def prompt_names() -> list[str]:
    """Every prompt shipped with the package, by name (file name without .md)."""
    root = resources.files(__name__)
    return sorted(p.name[:-3] for p in root.iterdir() if p.name.endswith(".md"))


@lru_cache(maxsize=None)
def load_prompt(name: str) -> Prompt:
    path = resources.files(__name__) / f"{name}.md"
    if not path.is_file():
        raise PromptError(f"no prompt named {name!r}; known: {', '.join(prompt_names())}")
    text = path.read_text(encoding="utf-8")
    return Prompt(name, text, hashlib.sha256(text.encode("utf-8")).hexdigest())


def render(name: str, /, **values: object) -> str:
    """The prompt with ``$placeholders`` filled; a missing value is an error, not a blank."""
    try:
        return Template(load_prompt(name).text).substitute({k: str(v) for k, v in values.items()})
    except KeyError as exc:
        raise PromptError(f"prompt {name!r} needs a value for ${exc.args[0]}") from exc


def prompt_hashes(names: list[str] | None = None) -> dict[str, str]:
    """Prompt name -> short sha256, for session/run metadata."""
    return {n: load_prompt(n).short_hash for n in (names if names is not None else prompt_names())}


def combined_hash(names: list[str]) -> str:
    """One hash over several prompts (e.g. all judge prompts of a rubric)."""
    digest = hashlib.sha256()
    for n in sorted(set(names)):
        digest.update(n.encode())
        digest.update(load_prompt(n).sha256.encode())
    return digest.hexdigest()[:12]
