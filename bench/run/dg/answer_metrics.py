"""Answer scores for `python -m bench answers`: exact match and token F1 after SQuAD-style normalisation.

Normalisation (as the SQuAD and MuSiQue evaluations define it): lower case, punctuation removed, the
articles "a", "an", "the" removed, whitespace collapsed; each score also tries punctuation read as a word break
and keeps the better (MuSiQue's golds are tokenised: "Boeing B - 29" against an answer's "Boeing B-29"). A
prediction is scored against every accepted answer (the gold answer and its aliases) and keeps its best
score. ``in_context`` asks, without any model, whether the normalised gold answer occurs as whole words in the
normalised context.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_PUNCT_SPACE = str.maketrans(string.punctuation, " " * len(string.punctuation))


def normalize(text: str) -> str:
    text = text.casefold().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _forms(text: str) -> tuple[str, str]:
    """Punctuation removed, and read as a word break: MuSiQue's golds are tokenised ("Boeing B - 29"), answers
    are not ("Boeing B-29"), and either reading may be the one they share."""
    return normalize(text), _spaced(text)


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    return float(any(p == g for gold in golds for p, g in zip(_forms(prediction), _forms(gold), strict=True)))


def _f1(prediction: str, gold: str) -> float:
    return max(_f1_of(p, g) for p, g in zip(_forms(prediction), _forms(gold), strict=True))


def _f1_of(pred_norm: str, gold_norm: str) -> float:
    pred, ref = pred_norm.split(), gold_norm.split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    return max((_f1(prediction, g) for g in golds), default=0.0)


def _spaced(text: str) -> str:
    """``normalize`` with punctuation turned into spaces, not removed: a table row ``2|CORRAN FOUNDRY|A foundry``
    keeps its words apart (removal would read "2corran foundrya")."""
    return normalize(text.translate(_PUNCT_SPACE))


def in_context(golds: Sequence[str], context: str) -> float:
    """1.0 when any accepted answer's words occur, in order and whole, in the context: its punctuation removed
    ("O'Brien" -> "obrien") or read as a word break (table cells)."""
    forms = tuple(f" {form} " for form in _forms(context))
    wanted = {w for g in golds for w in _forms(g) if w}
    return float(any(f" {w} " in form for w in wanted for form in forms))


def mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
