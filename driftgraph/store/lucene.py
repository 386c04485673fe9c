"""The one Lucene query builder for the fulltext indexes: user words become plain terms, never syntax.

Local search's entity entry drops stop words (they match every title) and keeps at most 32 terms; basic
search's hybrid chunk retrieval keeps every word. Words are lower-cased (so AND/OR/NOT are never operators)
and Lucene's special characters escaped, so no question can change the query's meaning.
"""

from __future__ import annotations

import re

WORD = re.compile(r"\w+", re.UNICODE)
_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
    }
)


def or_query(text: str, *, drop_stop_words: bool = False, max_terms: int | None = None) -> str:
    """``text``'s words as a Lucene OR-query ('' when none is left)."""
    words = [w.lower() for w in WORD.findall(text)]
    if drop_stop_words:
        words = [w for w in words if w not in STOP_WORDS and len(w) > 1]
    if max_terms is not None:
        words = words[:max_terms]
    return " ".join(_SPECIAL.sub(r"\\\1", w) for w in words)
