"""One rule for secrets: a config field that holds a credential is declared with ``secret_field`` (a
``{"secret": true}`` mark in its JSON schema), and everything that shows or stores settings masks through
``mask``/``redact`` here: ``config show``, the retrieval trace's ``params`` (written and read back), and
what the HTTP and MCP interfaces serve from it. The marks are found by walking the model, not by a list of
names (``tests/test_secrets.py`` fails when a field whose name suggests a credential is not marked).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel, Field

MASK = "***"
SECRET_MARK = {"secret": True}


def secret_field(default: Any, *, description: str) -> Any:
    """A pydantic ``Field`` marked as a credential: masked wherever settings are shown or stored."""
    return Field(default, description=description, json_schema_extra=dict(SECRET_MARK))


def is_secret(field: Any) -> bool:
    extra = getattr(field, "json_schema_extra", None)
    return isinstance(extra, Mapping) and extra.get("secret") is True


def _sub_model(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def secret_paths(model: type[BaseModel] | None = None, prefix: str = "") -> list[str]:
    """Dotted paths (by alias, as in the YAML file) of every field marked secret under ``model`` (``Config``)."""
    if model is None:
        from driftgraph.config import Config

        model = Config
    out: list[str] = []
    for name, f in model.model_fields.items():
        key = f.alias or name
        sub = _sub_model(f.annotation)
        if sub is not None:
            out += secret_paths(sub, f"{prefix}{key}.")
        elif is_secret(f):
            out.append(prefix + key)
    return out


@cache
def secret_names() -> frozenset[str]:
    """The key names of the marked fields (``api_key``, ``password``): what ``redact`` masks in any mapping
    built from config sections, whatever section it came from."""
    return frozenset(p.rsplit(".", 1)[-1] for p in secret_paths())


def mask(data: dict[str, Any]) -> dict[str, Any]:
    """``Config.to_dict()`` with every set secret replaced by ``***`` (an unset one stays ``None``)."""
    out: dict[str, Any] = dict(data)
    for path in secret_paths():
        *parents, leaf = path.split(".")
        node: Any = out
        for part in parents:
            if not isinstance(node, dict) or not isinstance(node.get(part), dict):
                node = None
                break
            node[part] = dict(node[part])  # copy on the way down: the caller's dict is left alone
            node = node[part]
        if isinstance(node, dict) and node.get(leaf):
            node[leaf] = MASK
    return out


def redact(value: Any) -> Any:
    """``value`` (settings, a request, a stored trace's params) with every secret-named key masked, at any
    depth; a copy, never the caller's object."""
    if isinstance(value, Mapping):
        names = secret_names()
        return {k: (MASK if k in names and v else redact(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value
