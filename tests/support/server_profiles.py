"""How Ollama, vLLM and llama.cpp's server differ from OpenAI where it matters to driftgraph (for fake_openai).

Each profile reproduces what the servers' OpenAI-compatibility documentation and source say, as far as a
driftgraph run can tell the difference:

- **ollama** (``/v1`` of ``ollama serve``): model names carry a tag (``llama3.1:8b``; a bare name means
  ``:latest``) and an unknown one is a 404 "not found, try pulling it first"; ``json_schema`` and
  ``json_object`` are honoured; a stream carries usage only when ``stream_options.include_usage`` asks;
  ``usage.prompt_tokens`` is 0 when the prompt's evaluation was cached (an identical prompt seen before);
  embeddings honour ``dimensions``.
- **vllm** (``vllm serve``): model names are the served Hugging Face ids; errors are a flat
  ``{"object": "error", "message": ...}`` body; ``json_schema`` is honoured (guided decoding); usage in a
  stream only on request; ``dimensions`` is refused (400) for a model without matryoshka training; a request
  whose prompt plus ``max_tokens`` exceeds ``max_model_len`` is refused (400).
- **llamacpp** (``llama-server``): serves one model whatever name is asked, and lists it by its file name;
  builds that predate ``json_schema`` refuse it with a 400 and honour ``json_object`` (with a ``schema``,
  which becomes a grammar); streams end with ``timings`` and no usage chunk (``stream_options`` is
  ignored); ``dimensions`` is ignored (the model's own size comes back).
- **llamacpp-python** (``python -m llama_cpp.server``, 0.3.x): as llamacpp, but its request model knows only
  ``text`` and ``json_object``: ``json_schema`` fails validation, and the server wraps that validation
  error in an HTTP **500** (``internal_server_error``) whose message names ``response_format``.

``wrap_text``: where no response format constrains the reply, the model (a small local one) wraps its JSON
in a sentence and a code fence, as such models do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Profile:
    name: str
    models: tuple[str, ...] | None  # served names; None: any name is answered by the one loaded model
    listed: tuple[str, ...]  # what /v1/models lists
    json_schema: str = "honour"  # honour | refuse
    json_object: str = "honour"  # honour | refuse
    stream_usage: str = "on_request"  # on_request | never
    dimensions: str = "honour"  # honour | refuse | ignore
    native_dims: int = 768
    flat_errors: bool = False
    zero_cached_prompt: bool = False
    max_context: int | None = None
    wrap_text: bool = True
    refusal_status: int = 400  # what a refused response format answers (llama-cpp-python: 500)

    def canonical(self, model: str) -> str:
        if self.name == "ollama" and ":" not in model:
            return f"{model}:latest"
        return model

    def serves(self, model: str) -> bool:
        return self.models is None or self.canonical(model) in self.models

    def not_found(self, model: str) -> tuple[int, dict[str, Any]]:
        if self.name == "ollama":
            return self.error(404, f'model "{model}" not found, try pulling it first', "not_found_error")
        return self.error(404, f"The model `{model}` does not exist.", "NotFoundError")

    def error(self, status: int, message: str, kind: str = "invalid_request_error") -> tuple[int, dict[str, Any]]:
        if self.flat_errors:
            return status, {"object": "error", "message": message, "type": kind, "param": None, "code": status}
        inner: dict[str, Any] = {"message": message, "type": kind, "param": None, "code": None}
        if self.name == "llamacpp":
            inner = {"code": status, "message": message, "type": kind}
        return status, {"error": inner}

    def refuse_format(self, fmt: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        kind = fmt.get("type")
        if (kind == "json_schema" and self.json_schema == "refuse") or (
            kind == "json_object" and self.json_object == "refuse"
        ):
            allowed = '"text" or "json_object"' if self.json_object == "honour" else '"text"'
            if self.refusal_status == 500:
                return self.error(
                    500,
                    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be "
                    f"'text' or 'json_object' [type=literal_error, input_value='{kind}', input_type=str]",
                    "internal_server_error",
                )
            return self.error(400, f"response_format type must be one of {allowed}, but got: {kind}")
        return None

    def refuse_dimensions(self, model: str) -> tuple[int, dict[str, Any]]:
        return self.error(
            400,
            f'Model "{model}" does not support matryoshka representation, changing output dimensions will lead '
            "to poor results.",
            "BadRequestError",
        )

    def too_long(self, prompt: int, completion: int) -> tuple[int, dict[str, Any]] | None:
        if self.max_context is None or prompt + completion <= self.max_context:
            return None
        return self.error(
            400,
            f"This model's maximum context length is {self.max_context} tokens. However, you requested "
            f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the completion). Please "
            "reduce the length of the messages or completion.",
            "BadRequestError",
        )


OLLAMA = Profile(
    "ollama",
    models=("llama3.1:8b", "nomic-embed-text:latest"),
    listed=("llama3.1:8b", "nomic-embed-text:latest"),
    zero_cached_prompt=True,
    native_dims=768,
)
VLLM = Profile(
    "vllm",
    models=("Qwen/Qwen2.5-7B-Instruct", "BAAI/bge-small-en-v1.5"),
    listed=("Qwen/Qwen2.5-7B-Instruct", "BAAI/bge-small-en-v1.5"),
    dimensions="refuse",
    native_dims=384,
    flat_errors=True,
    max_context=32768,
)
LLAMACPP = Profile(
    "llamacpp",
    models=None,
    listed=("qwen2.5-7b-instruct-q4_k_m.gguf",),
    json_schema="refuse",
    stream_usage="never",
    dimensions="ignore",
    native_dims=768,
)
LLAMACPP_PYTHON = Profile(
    "llamacpp-python",
    models=None,
    listed=("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",),
    json_schema="refuse",
    stream_usage="never",
    dimensions="ignore",
    native_dims=768,
    refusal_status=500,
)
PROFILES = {p.name: p for p in (OLLAMA, VLLM, LLAMACPP, LLAMACPP_PYTHON)}
# the chat and embedding model names a user of each server would configure
MODELS = {
    "ollama": ("llama3.1:8b", "nomic-embed-text"),
    "vllm": ("Qwen/Qwen2.5-7B-Instruct", "BAAI/bge-small-en-v1.5"),
    "llamacpp": ("qwen2.5-7b-instruct", "nomic-embed-text-v1.5"),
    "llamacpp-python": ("qwen2.5-coder-1.5b-instruct", "nomic-embed-text-v1.5"),
}


def wrap(text: str) -> str:
    """A JSON reply as an unconstrained small model writes it: a sentence, then a fenced block."""
    return f"Here is the JSON you asked for:\n\n```json\n{text}\n```\n"


# The prompt each structured call's schema belongs to: a model without the schema reads the prompt instead.
_SCHEMA_OF_PROMPT = {
    "extract_graph": "extract_graph",
    "extract_claims": "extract_claims",
    "community_report": "community_report",
    "global_map": "key_points",
    "global_rate": "report_ratings",
    "drift_primer": "drift_primer",
    "drift_local": "drift_step",
    "route_question": "route",
}


def _prompt_openings() -> dict[str, str]:
    from driftgraph.resources import data_dir

    out = {}
    for prompt, name in _SCHEMA_OF_PROMPT.items():
        text = (data_dir("prompts") / f"{prompt}.txt").read_text(encoding="utf-8")
        out[text.split("{", 1)[0][:160]] = name
    return out


def reads_prompts(responder: Any) -> Any:
    """``responder`` behind a server that was not sent the schema (json_object or plain text): the scripted
    answer is chosen from the prompt the request opens with, as a model would, instead of the schema name."""
    openings = _prompt_openings()

    def respond(request: dict[str, Any]) -> str:
        fmt = request.get("response_format") or {}
        if fmt.get("type") != "json_schema":
            first = (request.get("messages") or [{}])[0].get("content") or ""
            name = next((n for opening, n in openings.items() if first.startswith(opening)), None)
            if name is not None:
                request = {**request, "response_format": {"type": "json_schema", "json_schema": {"name": name}}}
        return str(responder(request))

    return respond
