"""Can a role spec be used right now? (no textual import: the CLI uses it too)

Building a provider checks its key and base URL without any network call, so
a missing ``OPENAI_API_KEY`` is reported where the spec was typed (setup
screen, command line) instead of after the encounter screen opened.
"""

from __future__ import annotations

from ..config import Config
from ..providers.base import ProviderError, SpecError, parse_spec


def provider_problem(spec: str, config: Config) -> str | None:
    """Why ``spec`` cannot play a role with this config (missing key, bad spec); None if it can."""
    try:
        parsed = parse_spec(spec)
    except SpecError as exc:
        return str(exc)
    if parsed.provider in ("human", "offline", "scripted"):
        return None
    from ..providers.factory import make_provider

    try:
        make_provider(parsed, config)
    except (ProviderError, SpecError) as exc:
        return str(exc)
    return None
