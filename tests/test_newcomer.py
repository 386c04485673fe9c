"""What a first hour trips over (issue 18): doctor on an empty database, config typos, ``-c`` after the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from driftgraph.cli.argv import hoist_config
from driftgraph.config import parse_config
from driftgraph.errors import ConfigError


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "driftgraph", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=180,
    )


# -- config typos -------------------------------------------------------------------------------------
def test_unknown_key_suggests_the_nearest_one() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"local": {"min_similarty": 0.4}}, "x.yaml")
    text = str(err.value)
    assert "unknown key 'local.min_similarty': did you mean 'min_similarity'?" in text
    assert "allowed here:" in text and "chunk_min_similarity" in text


def test_unknown_section_suggests_the_nearest_section() -> None:
    with pytest.raises(ConfigError, match="unknown key 'embedings': did you mean 'embeddings'"):
        parse_config({"embedings": {}}, "x.yaml")


def test_unknown_key_far_from_every_key_gets_no_guess() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"local": {"zzzz": 1}}, "x.yaml")
    assert "did you mean" not in str(err.value) and "unknown key 'local.zzzz'" in str(err.value)


# -- --config/-c anywhere -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["query", "local", "Q", "-c", "a.yaml"], ["-c", "a.yaml", "query", "local", "Q"]),
        (["-c", "a.yaml", "doctor"], ["-c", "a.yaml", "doctor"]),
        (["doctor", "--config", "a.yaml", "--json"], ["--config", "a.yaml", "doctor", "--json"]),
        (["doctor", "--config=a.yaml"], ["--config=a.yaml", "doctor"]),
        (["doctor", "-ca.yaml"], ["-ca.yaml", "doctor"]),
        (["query", "local", "--", "-c", "x"], ["query", "local", "--", "-c", "x"]),
        (["doctor", "-c"], ["doctor", "-c"]),  # no value: left for Click to report
    ],
)
def test_hoist_config(argv: list[str], want: list[str]) -> None:
    assert hoist_config(argv) == want


def test_config_option_after_the_subcommand(tmp_path: Path) -> None:
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("local:\n  min_similarity: 0.37\n")
    for args in (["config", "show", "--json", "-c", str(cfg)], ["config", "show", f"--config={cfg}", "--json"]):
        res = run(*args, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["local"]["min_similarity"] == 0.37
    cfg.write_text("local:\n  min_similarty: 0.37\n")
    res = run("config", "show", "-c", str(cfg), cwd=tmp_path)
    assert res.returncode == 1 and "did you mean 'min_similarity'?" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


# -- doctor: empty is a state, broken is FAIL ---------------------------------------------------------
def _env(cfg) -> dict[str, str]:
    # no LLM endpoint from the caller's environment: its check reads "not configured" (ok), whatever the machine
    return {
        "NEO4J_URI": cfg.neo4j.uri,
        "NEO4J_PASSWORD": cfg.neo4j.password,
        "OPENAI_API_KEY": "",
        "OPENAI_BASE_URL": "",
    }


def test_doctor_reports_an_empty_database_as_a_state(neo4j_cfg, tmp_path: Path) -> None:
    report = json.loads(run("doctor", "--json", cwd=tmp_path, env=_env(neo4j_cfg)).stdout)
    schema = report["schema"]
    assert schema["ok"] is True and schema["state"] == "empty", schema
    assert schema["note"] == "empty — run import-graphrag or index" and "error" not in schema
    assert report["neo4j"]["state"] == "ok" and report["tokenizer"]["state"] == "ok"
    res = run("doctor", cwd=tmp_path, env={**_env(neo4j_cfg), "COLUMNS": "200"})
    assert res.returncode == 0, res.stderr
    line = next(ln for ln in res.stdout.splitlines() if " schema " in ln)
    assert line.split()[:2] == ["empty", "schema"] and "run import-graphrag or index" in line
    assert "FAIL" not in res.stdout


def test_doctor_still_fails_a_database_built_with_another_embedder(neo4j_cfg, store, tmp_path: Path) -> None:
    store.run("schema/write_meta", schema_version=1, embedder="some-other-model", dimensions=768)
    report = json.loads(run("doctor", "--json", cwd=tmp_path, env=_env(neo4j_cfg)).stdout)
    assert report["schema"]["ok"] is False and report["schema"]["state"] == "fail"
    assert "some-other-model" in report["schema"]["error"]
    res = run("doctor", cwd=tmp_path, env={**_env(neo4j_cfg), "COLUMNS": "200"})
    line = next(ln for ln in res.stdout.splitlines() if " schema " in ln)
    assert line.split()[0] == "FAIL" and "some-other-model" in line
    assert res.returncode == 1  # a FAIL is a failure for scripts and health checks too
    assert res.stderr.strip().splitlines() == [
        "doctor: schema failed (each part's error says why; fix it and run doctor again): exit 1"
    ]
    assert run("doctor", "--json", cwd=tmp_path, env=_env(neo4j_cfg)).returncode == 1


def test_doctor_exits_1_when_the_llm_endpoint_fails(neo4j_cfg, tmp_path: Path) -> None:
    (tmp_path / "driftgraph.yaml").write_text("llm:\n  max_retries: 0\n")
    env = {**_env(neo4j_cfg), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "k", "COLUMNS": "200"}
    res = run("doctor", cwd=tmp_path, env=env)
    assert res.returncode == 1, res.stdout + res.stderr
    line = next(ln for ln in res.stdout.splitlines() if " llm " in ln)
    assert line.split()[0] == "FAIL"
    assert next(ln for ln in res.stdout.splitlines() if " schema " in ln).split()[0] in ("ok", "empty")
    assert "doctor: llm failed" in res.stderr and len(res.stderr.strip().splitlines()) == 1
