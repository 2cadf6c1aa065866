"""Everything a user can set, in one typed model.

Sources, lowest precedence first: built-in defaults, a TOML file in the user
config dir (``config.toml``; ``OSCE_TUI_CONFIG`` points elsewhere), ``OSCE_TUI_*``
environment variables (``__`` separates nested keys, e.g.
``OSCE_TUI_PROVIDER__TIMEOUT=30``), then CLI flags.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any, Mapping

from platformdirs import user_config_dir
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .domain.session import GenerationSettings

ENV_PREFIX = "OSCE_TUI_"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProviderSettings(_Section):
    """How model providers are called. The SDKs retry and time out themselves."""

    max_retries: int = Field(default=2, ge=0, le=10, description="SDK retries on 429/5xx/connection errors.")
    timeout: float = Field(default=60.0, gt=0, description="Seconds per request.")
    openai_base_url: str | None = Field(default=None, description="Overrides OPENAI_BASE_URL.")
    anthropic_base_url: str | None = Field(default=None, description="Overrides ANTHROPIC_BASE_URL.")
    ollama_base_url: str = Field(default="http://127.0.0.1:11434/v1", description="Local Ollama's OpenAI endpoint.")


class Price(_Section):
    """USD per million tokens, for the optional cost estimate."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class RoleDefaults(_Section):
    """Default model spec per role (``human``, ``offline`` or a provider spec)."""

    doctor: str = "human"
    patient: str = "offline"
    judge: str = "offline"


class GenerationByRole(_Section):
    doctor: GenerationSettings = Field(default_factory=lambda: GenerationSettings(temperature=0.3))
    patient: GenerationSettings = Field(default_factory=lambda: GenerationSettings(temperature=0.2))
    judge: GenerationSettings = Field(default_factory=lambda: GenerationSettings(temperature=0.0))


class PhaseBudget(_Section):
    """Per-phase turn budget and optional timer (USMLE Step 2 CS-like defaults)."""

    max_turns: int = Field(ge=1)
    minutes: float | None = Field(default=None, gt=0)


class EncounterSettings(_Section):
    timers: bool = Field(default=False, description="Enforce phase timers (off: shown but not enforced).")
    history: PhaseBudget = Field(default_factory=lambda: PhaseBudget(max_turns=40, minutes=8))
    exam: PhaseBudget = Field(default_factory=lambda: PhaseBudget(max_turns=15, minutes=4))
    closure: PhaseBudget = Field(default_factory=lambda: PhaseBudget(max_turns=6, minutes=3))
    note_minutes: float = Field(default=10, gt=0)


class Config(_Section):
    """osce-tui settings. Every field can be set in config.toml, env or flags."""

    cases_dirs: list[Path] = Field(default_factory=list, description="Extra case folders, searched after bundled.")
    rubrics_dirs: list[Path] = Field(default_factory=list, description="Extra rubric folders.")
    sessions_dir: Path = Field(default=Path("sessions"), description="Where sessions are saved.")
    rubric: str = Field(default="osce-practice", description="Default rubric id.")
    roles: RoleDefaults = Field(default_factory=RoleDefaults)
    generation: GenerationByRole = Field(default_factory=GenerationByRole)
    provider: ProviderSettings = Field(default_factory=ProviderSettings)
    encounter: EncounterSettings = Field(default_factory=EncounterSettings)
    prices: dict[str, Price] = Field(default_factory=dict, description="Model spec -> price per 1M tokens.")
    max_connections: int = Field(default=8, ge=1, le=1024, description="Concurrent model calls in batch.")
    theme: str = Field(default="textual-dark", description="TUI theme name.")


class ConfigError(ValueError):
    pass


def default_config_path() -> Path:
    override = os.environ.get(ENV_PREFIX + "CONFIG")
    return Path(override) if override else Path(user_config_dir("osce-tui")) / "config.toml"


def _deep_merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    """OSCE_TUI_A__B=v -> {'a': {'b': v}}; JSON values (lists, numbers) are decoded."""
    result: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name == ENV_PREFIX + "CONFIG":
            continue
        keys = name[len(ENV_PREFIX) :].lower().split("__")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if keys[-1].endswith("dirs") and isinstance(value, str):
            value = [p for p in value.split(os.pathsep) if p]
        node = result
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return result


def load_config(
    cli: Mapping[str, Any] | None = None,
    *,
    path: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Merge file < env < CLI into a validated Config; raise ConfigError on bad input."""
    path = path or default_config_path()
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc
    data = _deep_merge(data, env_overrides(os.environ if environ is None else environ))
    data = _deep_merge(data, {k: v for k, v in (cli or {}).items() if v is not None})
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        lines = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)]
        raise ConfigError(f"invalid configuration ({path} / {ENV_PREFIX}* / flags):\n  " + "\n  ".join(lines)) from exc
