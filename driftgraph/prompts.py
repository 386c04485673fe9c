"""Prompts are files in prompts/, loaded by name, overridable from the config."""

from __future__ import annotations

import string
from pathlib import Path

from driftgraph.config import PromptsConfig
from driftgraph.errors import PromptError
from driftgraph.resources import data_dir


def prompt_path(name: str, cfg: PromptsConfig) -> Path:
    if name in cfg.overrides:
        return Path(cfg.overrides[name])
    if cfg.dir:
        edited = Path(cfg.dir) / f"{name}.txt"
        if edited.is_file():
            return edited
    return data_dir("prompts") / f"{name}.txt"


def load_prompt(name: str, cfg: PromptsConfig) -> str:
    path = prompt_path(name, cfg)
    if not path.is_file():
        raise PromptError(f"prompt '{name}' not found at {path}")
    return path.read_text(encoding="utf-8")


def placeholders(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def render_prompt(name: str, cfg: PromptsConfig, **values: object) -> str:
    """Fill a prompt's ``{named}`` placeholders; a missing or unknown value is an error, not a blank."""
    template = load_prompt(name, cfg)
    wanted = placeholders(template)
    missing = wanted - values.keys()
    if missing:
        raise PromptError(f"prompt '{name}' needs values for {sorted(missing)}")
    extra = values.keys() - wanted
    if extra:
        raise PromptError(f"prompt '{name}' has no placeholder for {sorted(extra)}")
    return template.format(**values)
