"""Headless Chromium for the page tests: Debian's ``chromium`` (``apt-get install -y chromium``; scripts/test.sh
installs it when root). Missing, a test that needs it skips on a dev machine and FAILS under CI (env CI set)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest


def find_chromium() -> str:
    """The browser's path, or skip/fail the test (fail under CI)."""
    path = os.environ.get("DRIFTGRAPH_CHROMIUM") or next(
        (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None
    )
    if not path:
        message = "no headless browser: install Debian's chromium (apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def run_browser(chromium: str, tmp: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """One headless run with a throwaway profile (no first-run, extensions or background networking)."""
    profile = tmp / f"profile-{time.monotonic_ns()}"
    cmd = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"]
    cmd += ["--disable-extensions", "--disable-background-networking", f"--user-data-dir={profile}", *args]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def dump_dom(chromium: str, page: Path, fragment: str = "") -> str:
    """The DOM of a local file after its scripts ran."""
    res = run_browser(chromium, page.parent, "--dump-dom", page.as_uri() + fragment)
    assert res.returncode == 0 and "<html" in res.stdout, res.stderr[-2000:]
    return res.stdout


def screenshot(chromium: str, url: str, out: Path, tmp: Path, size: str = "1400,2000", wait_ms: int = 0) -> Path:
    """A PNG of ``url``; ``wait_ms`` lets a page's own scripts (e.g. Neo4j Browser's) settle first."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    extra = [f"--virtual-time-budget={wait_ms}"] if wait_ms else []
    res = run_browser(chromium, tmp, f"--screenshot={out}", f"--window-size={size}", *extra, url)
    assert res.returncode == 0 and out.is_file() and out.stat().st_size > 20_000, res.stderr[-2000:]
    return out
