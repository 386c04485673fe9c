"""The CLI as a user runs it: a subprocess of the installed console script."""

import json
import os
import subprocess
import sys

import yaml


def run(*args, cwd=None, env=None):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "driftgraph", *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120
    )


def test_help_lists_commands():
    res = run("--help")
    assert res.returncode == 0
    for cmd in ("init", "doctor", "neo4j", "config"):
        assert cmd in res.stdout


def test_help_does_not_import_heavy_modules():
    code = (
        "import sys, driftgraph.cli as c; heavy = [m for m in ('numpy','onnxruntime','neo4j','openai',"
        "'pyarrow','tiktoken','pandas') if m in sys.modules]; print(heavy)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.stdout.strip() == "[]"


def test_typo_in_config_fails_naming_key(tmp_path):
    (tmp_path / "driftgraph.yaml").write_text("neo4j:\n  pasword: x\n")
    res = run("config", "show", cwd=tmp_path)
    assert res.returncode != 0
    assert "neo4j.pasword" in res.stderr and "Traceback" not in res.stderr


def test_init_writes_every_default_and_prompts(tmp_path):
    res = run("init", str(tmp_path))
    assert res.returncode == 0, res.stderr
    data = yaml.safe_load((tmp_path / "driftgraph.yaml").read_text())
    assert data["neo4j"]["uri"] == "bolt://127.0.0.1:7687"
    assert data["prompts"]["dir"] == "prompts"
    assert (tmp_path / "prompts").is_dir()
    again = run("init", str(tmp_path))
    assert again.returncode != 0 and "exists" in again.stderr
    shown = run("config", "show", "--json", cwd=tmp_path)
    assert json.loads(shown.stdout)["prompts"]["dir"] == str((tmp_path / "prompts").resolve())


def test_config_show_masks_secrets(tmp_path):
    res = run("config", "show", "--json", cwd=tmp_path, env={"NEO4J_PASSWORD": "s3cret-pass"})
    assert json.loads(res.stdout)["neo4j"]["password"] == "***"
    assert "s3cret-pass" not in res.stdout


def test_unreachable_neo4j_is_one_line(tmp_path):
    res = run("doctor", "--json", cwd=tmp_path, env={"NEO4J_URI": "bolt://127.0.0.1:1"})
    assert res.returncode == 1
    report = json.loads(res.stdout)
    assert report["neo4j"]["ok"] is False and "not reachable" in report["neo4j"]["error"]
    assert report["tokenizer"]["ok"] is True


def test_wrong_password_is_one_line(neo4j_config, tmp_path):
    env = {"NEO4J_URI": neo4j_config["uri"], "NEO4J_PASSWORD": "definitely-wrong"}
    res = run("doctor", cwd=tmp_path, env=env)
    assert res.returncode == 1
    assert "wrong password" in res.stdout + res.stderr
    assert "Traceback" not in res.stdout + res.stderr


def test_doctor_json_against_real_neo4j(neo4j_cfg, tmp_path):
    env = {"NEO4J_URI": neo4j_cfg.neo4j.uri, "NEO4J_PASSWORD": neo4j_cfg.neo4j.password}
    res = run("doctor", "--json", cwd=tmp_path, env=env)
    report = json.loads(res.stdout)
    assert report["neo4j"]["ok"] is True and report["neo4j"]["version"].startswith("5.")
    assert report["embedder"]["dimensions"] == 384


def test_serve_without_its_extra_is_one_line_naming_the_install():
    """An install whose serve extra lacks a package (here prometheus_client, hidden from the import system)."""
    code = (
        "import sys; sys.modules['prometheus_client'] = None; sys.argv = ['driftgraph', 'serve']; "
        "from driftgraph.cli import main; main()"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0, res.stderr
    assert "prometheus_client missing" in res.stderr and "pip install 'driftgraph[serve]'" in res.stderr


def test_the_serve_extra_check_names_what_pyproject_installs():
    import re
    import tomllib
    from pathlib import Path

    from driftgraph.cli.serve import SERVE_EXTRA

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = [
        re.split(r"[<>=!~\[ ;]", dep, maxsplit=1)[0] for dep in project["project"]["optional-dependencies"]["serve"]
    ]
    assert sorted(SERVE_EXTRA) == sorted(wanted)
