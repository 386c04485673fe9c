from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from driftgraph.config import Config, ConfigError, leaf_paths, load_config, parse_config
from tests.support.config_reads import config_reads, sources_of

ROOT = Path(__file__).resolve().parent.parent


def test_unknown_key_names_path_and_allowed_keys():
    with pytest.raises(ConfigError) as err:
        parse_config({"neo4j": {"urii": "bolt://x"}}, "driftgraph.yaml")
    msg = str(err.value)
    assert "neo4j.urii" in msg and "driftgraph.yaml" in msg and "uri" in msg


def test_bad_value_names_key():
    with pytest.raises(ConfigError, match=r"neo4j\.launcher\.port"):
        parse_config({"neo4j": {"launcher": {"port": 70000}}})
    with pytest.raises(ConfigError, match=r"embeddings\.provider"):
        parse_config({"embeddings": {"provider": "torch"}})


def test_yaml_file_and_env_override(tmp_path):
    f = tmp_path / "driftgraph.yaml"
    f.write_text("neo4j:\n  uri: bolt://file:1\n  database: fromfile\nprompts:\n  dir: p\n")
    cfg = load_config(f, env={"NEO4J_URI": "bolt://env:2", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert cfg.neo4j.uri == "bolt://env:2"
    assert cfg.neo4j.database == "fromfile"
    assert cfg.llm.base_url == "http://127.0.0.1:9/v1"
    assert cfg.prompts.dir == str((tmp_path / "p").resolve())


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml", env={})
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad, env={})


def test_defaults_roundtrip_through_yaml():
    data = yaml.safe_load(yaml.safe_dump(Config().to_dict()))
    assert parse_config(data) == Config()


def test_prompt_override_names_are_validated(tmp_path):
    """An override for a prompt that does not exist would be ignored silently: it fails loading, naming it."""
    with pytest.raises(ConfigError) as err:
        parse_config({"prompts": {"overrides": {"local_serch": "x.txt"}}}, "driftgraph.yaml")
    msg = str(err.value)
    assert "prompts.overrides" in msg and "'local_serch'" in msg and "did you mean 'local_search'" in msg
    with pytest.raises(ConfigError, match="no prompt named 'zzz'; prompts are: .*local_search"):
        parse_config({"prompts": {"overrides": {"zzz": "x.txt"}}})
    edited = tmp_path / "mine.txt"
    edited.write_text("Mine: {question}")
    from driftgraph.prompts import render_prompt

    cfg = parse_config({"prompts": {"overrides": {"rewrite_query": str(edited)}}})
    assert render_prompt("rewrite_query", cfg.prompts, question="q?") == "Mine: q?"


CONFIG_PKG = ROOT / "driftgraph" / "config"  # where the defaults are defined (its validators are not reads)


def test_every_config_key_is_read_by_code():
    """No dead parameters: every leaf path is read through a config-typed value (tests/support/config_reads)."""
    sources = sources_of(p for p in (ROOT / "driftgraph").rglob("*.py") if CONFIG_PKG not in p.parents)
    read, leaves = config_reads(Config, sources)
    assert leaves == set(leaf_paths())
    assert not leaves - read, f"config keys no code reads: {sorted(leaves - read)}"


class _Hops(BaseModel):
    max_hops: int = 3
    dead: int = 0


class _DriftHops(_Hops):
    depth: int = 1


class _Other(BaseModel):
    max_hops: int = 2
    history_turns: int = 5
    unused: bool = False


class _Drift(BaseModel):
    local: _DriftHops = _DriftHops()
    seed: int = 0


class _Root(BaseModel):
    local: _Hops = _Hops()
    other: _Other = _Other()
    drift: _Drift = _Drift()
    name: str = "x"


_SYNTHETIC = """
from typing import Protocol

class HasTurns(Protocol):
    history_turns: int

class Runtime:
    config: _Root

class Backend:
    def __init__(self, rt: Runtime, cfg: _Drift | None) -> None:
        self.rt, self.cfg = rt, cfg

    def step(self) -> int:
        return self.cfg.local.depth + getattr(self.rt.config, "name") and 1

def hops(settings: _Other, turns: HasTurns) -> int:
    other = settings.model_copy()
    return other.max_hops + turns.history_turns

def untyped(cfg):
    return cfg.local.max_hops + cfg.local.dead + cfg.drift.seed

def drift_seed(rt: Runtime) -> int:
    return rt.config.drift.seed
"""


def test_the_dead_key_check_is_by_dotted_path_and_can_fail():
    """Same leaf names elsewhere and untyped reads are no evidence; typed chains of every kind are."""
    read, leaves = config_reads(_Root, {"synthetic.py": _SYNTHETIC})
    assert read == {"drift.local.depth", "name", "other.max_hops", "other.history_turns", "drift.seed"}
    # `other.max_hops` is read, `local.max_hops` not, although a `.max_hops` read exists (the old grep passed it)
    assert leaves - read == {"local.max_hops", "local.dead", "drift.local.max_hops", "drift.local.dead", "other.unused"}
    # a section annotation stands for every place its class (or a subclass) sits
    typed = _SYNTHETIC + "\ndef typed(s: _Hops) -> int:\n    return s.max_hops\n"
    read, _ = config_reads(_Root, {"synthetic.py": typed})
    assert {"local.max_hops", "drift.local.max_hops"} <= read and "local.dead" not in read
    # on the real sources, a key whose only read is removed is reported
    sources = sources_of(p for p in (ROOT / "driftgraph").rglob("*.py") if CONFIG_PKG not in p.parents)
    path = next(k for k, text in sources.items() if "cfg.serve.port" in text)
    sources[path] = sources[path].replace("cfg.serve.port", "cfg.serve.host")
    sources = {k: v for k, v in sources.items() if k == path or "serve.port" not in v}
    read, _ = config_reads(Config, sources)
    assert "serve.port" not in read and "serve.host" in read


def _undescribed(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Dotted paths of the fields of ``model`` and of every model nested in it (also as a dict's or list's values)
    whose ``Field`` has no description."""
    import typing

    out: list[str] = []
    for name, field in model.model_fields.items():
        key = prefix + (field.alias or name)
        if not (field.description or "").strip():
            out.append(key)
        for t in (field.annotation, *typing.get_args(field.annotation)):
            if isinstance(t, type) and issubclass(t, BaseModel):
                out += _undescribed(t, key + ".")
    return out


def test_every_config_field_has_a_description():
    """The configuration reference (docs/hooks/reference.py) prints each key's Field description: a key added
    without one fails here, not as an empty cell on the docs site."""
    from pydantic import Field

    assert not _undescribed(Config), f"config fields without a Field(description=...): {_undescribed(Config)}"

    # the walk reaches nested sections, aliases and models held in a dict, and flags blank text
    class _Price(BaseModel):
        usd: float = Field(0.0, description="cost")
        bare: float = 0.0

    class _Inner(BaseModel):
        ok: int = Field(1, description="fine")
        blank: int = Field(1, description="  ")

    class _Outer(BaseModel):
        inner: _Inner = Field(_Inner(), description="a section")
        plain: _Inner = _Inner()
        prices: dict[str, _Price] = Field(default_factory=dict, alias="price_table", description="by name")

    assert _undescribed(_Outer) == ["inner.blank", "plain", "plain.blank", "price_table.bare"]
