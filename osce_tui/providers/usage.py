"""Token usage and the optional cost estimate from ``config.prices``."""

from __future__ import annotations

from ..config import Config
from ..domain.session import Usage
from .base import ModelSpec

__all__ = ["cost_of", "priced"]


def cost_of(spec: str | ModelSpec, usage: Usage, config: Config | None) -> float | None:
    """USD cost of ``usage`` at ``config.prices[spec]`` (per 1M tokens); None if unpriced."""
    if config is None:
        return None
    price = config.prices.get(str(spec))
    if price is None:
        return None
    return (usage.input_tokens * price.input + usage.output_tokens * price.output) / 1_000_000


def priced(spec: str | ModelSpec, input_tokens: int, output_tokens: int, config: Config | None) -> Usage:
    """A one-call Usage with its cost filled in when the spec has a price."""
    usage = Usage(input_tokens=input_tokens or 0, output_tokens=output_tokens or 0, calls=1)
    usage.cost_usd = cost_of(spec, usage, config)
    return usage
