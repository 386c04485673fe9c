import re
from pathlib import Path

import pytest
import yaml

from driftgraph.config import Config, ConfigError, leaf_paths, load_config, parse_config

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


def test_every_config_key_is_read_by_code():
    """No dead parameters: each leaf key's attribute is accessed somewhere outside config.py."""
    sources = "\n".join(p.read_text() for p in (ROOT / "driftgraph").rglob("*.py") if p.name != "config.py")
    unread = []
    for path in leaf_paths():
        leaf = path.split(".")[-1]
        if not re.search(rf"\.{re.escape(leaf)}\b", sources):
            unread.append(path)
    assert not unread, f"config keys no code reads: {unread}"
