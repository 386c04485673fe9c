"""The openai SDK client, configured for OpenAI, Azure OpenAI or any compatible server."""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftgraph.config import LLMConfig
from driftgraph.errors import LLMNotConfigured

if TYPE_CHECKING:
    import openai


def llm_configured(cfg: LLMConfig) -> bool:
    return bool(cfg.base_url or cfg.api_key)


def make_openai_client(cfg: LLMConfig) -> openai.OpenAI:
    """Retries are ours (see chat.py), so the SDK's own are off: one policy, one place."""
    import openai

    if not llm_configured(cfg):
        raise LLMNotConfigured(
            "no LLM endpoint configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible server) "
            "or llm.api_key / llm.base_url in driftgraph.yaml"
        )
    key = cfg.api_key or "not-needed"
    if cfg.api_type == "azure":
        return openai.AzureOpenAI(
            api_key=key,
            azure_endpoint=cfg.base_url or "",
            api_version=cfg.azure_api_version,
            timeout=cfg.timeout_s,
            max_retries=0,
        )
    return openai.OpenAI(api_key=key, base_url=cfg.base_url, timeout=cfg.timeout_s, max_retries=0)
