"""Build the agent for a role from its model spec.

``human`` -> HumanDoctor/HumanPatient on the engine's input queue,
``offline`` -> the embedded engine, anything else -> an LLM agent on a provider.
Imports are lazy so that an offline run never loads the provider SDKs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..config import Config
from ..domain.session import GenerationSettings
from ..providers.base import ModelSpec, parse_spec
from .base import DoctorAgent, PatientAgent


def make_doctor(
    spec: str,
    *,
    config: Config,
    queue: asyncio.Queue,
    settings: GenerationSettings | None = None,
    mode: str = "encounter",
    seed: int | None = None,
    http_client: Any = None,
    limiter: asyncio.Semaphore | None = None,
    on_command_error=None,
) -> DoctorAgent:
    parsed = parse_spec(spec)
    if parsed.provider == "human":
        from .human import HumanDoctor

        return HumanDoctor(queue, on_command_error=on_command_error)
    if parsed.provider == "offline":
        from .offline_doctor import OfflineDoctor

        return OfflineDoctor(seed=seed)
    from .llm_doctor import LlmDoctor

    provider = _provider(parsed, config, http_client, limiter)
    return LlmDoctor(provider, settings or config.generation.doctor, mode=mode)


def make_patient(
    spec: str,
    *,
    config: Config,
    queue: asyncio.Queue,
    settings: GenerationSettings | None = None,
    http_client: Any = None,
    limiter: asyncio.Semaphore | None = None,
) -> PatientAgent:
    parsed = parse_spec(spec)
    if parsed.provider == "human":
        from .human import HumanPatient

        return HumanPatient(queue)
    if parsed.provider == "offline":
        from .offline_patient import OfflinePatient

        return OfflinePatient()
    from .llm_patient import LlmPatient

    provider = _provider(parsed, config, http_client, limiter)
    return LlmPatient(provider, settings or config.generation.patient)


def make_oracle():
    from .oracle import CaseOracle

    return CaseOracle()


def _provider(spec: ModelSpec, config: Config, http_client: Any, limiter: asyncio.Semaphore | None):
    from ..providers.factory import make_provider

    return make_provider(spec, config, http_client=http_client, limiter=limiter)
