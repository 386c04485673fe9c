"""mkdocs hook: publishes the committed benchmark raw files (``bench/results/raw/*.json``) under ``raw/``.

The benchmarks page links each figure to the file it was read from (``[quality.json](raw/quality.json)``). The
files stay where the bench writes them; the site serves them as they are, and ``--strict`` fails a link to a
raw file that does not exist. Nothing is copied into ``docs/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

RAW_DIR = Path("bench") / "results" / "raw"
SITE_DIR = "raw"


def raw_files(root: Path) -> list[Path]:
    """The raw files the site publishes, sorted by name."""
    return sorted((root / RAW_DIR).glob("*.json"))


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    root = Path(config["config_file_path"]).resolve().parent
    for path in raw_files(root):
        files.append(File.generated(config, f"{SITE_DIR}/{path.name}", abs_src_path=str(path)))
    return files
