"""The numbers every table is made of: evidence recall, order statistics, process memory."""

from __future__ import annotations

import math
import resource
from collections.abc import Iterable, Sequence


def evidence_recall(context: str, gold_texts: Sequence[str]) -> float:
    """Fraction of the gold text units whose full text appears verbatim in the assembled context.

    A question without gold units scores 1.0 (nothing to find); empty gold texts never count as found.
    """
    if not gold_texts:
        return 1.0
    return sum(1 for t in gold_texts if t and t in context) / len(gold_texts)


def mean(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else float("nan")


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile (numpy's default method), ``p`` in [0, 100]."""
    if not values:
        return float("nan")
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def spread(values: Sequence[float]) -> dict[str, float]:
    """Median of repeated runs with their min and max."""
    return {"median": percentile(values, 50), "min": min(values), "max": max(values), "n": len(values)}


def _status_mb(key: str) -> float | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def peak_rss_mb() -> float:
    """Peak resident set size of this process image, MB.

    ``VmHWM`` rather than ``getrusage``: Linux carries ``ru_maxrss`` over fork + exec, so a child started by
    a big parent would report the parent's size.
    """
    hwm = _status_mb("VmHWM:")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mb() -> float:
    rss = _status_mb("VmRSS:")
    return rss if rss is not None else peak_rss_mb()


# -- statistics over questions (seeded, so a rerun of the report gives the same intervals) -------------------
def bootstrap_ci(values: Sequence[float], *, seed: int = 0, n: int = 2000, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean: resample the questions with replacement ``n`` times."""
    import random

    vals = list(values)
    if not vals:
        return (float("nan"), float("nan"))
    rng = random.Random(seed)
    k = len(vals)
    means = [sum(vals[rng.randrange(k)] for _ in range(k)) / k for _ in range(n)]
    alpha = (1 - level) / 2 * 100
    return (percentile(means, alpha), percentile(means, 100 - alpha))


def mean_ci(values: Sequence[float]) -> str:
    """The mean and its bootstrap interval as a table cell: ``0.734 [0.69–0.78]`` (seed 0, so reproducible)."""
    lo, hi = bootstrap_ci(values, seed=0)
    return f"{mean(values):.3f} [{lo:.2f}–{hi:.2f}]"


def paired(a: Sequence[float], b: Sequence[float], *, seed: int = 0, n: int = 2000) -> dict[str, float | int | bool]:
    """``a`` against ``b`` on the same questions: wins/losses/ties, the mean difference and its bootstrap
    interval; ``significant`` when that 95% interval excludes 0."""
    if len(a) != len(b):
        raise ValueError("paired comparison needs the same questions on both sides")
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    lo, hi = bootstrap_ci(diffs, seed=seed, n=n)
    return {
        "wins": sum(1 for d in diffs if d > 0),
        "losses": sum(1 for d in diffs if d < 0),
        "ties": sum(1 for d in diffs if d == 0),
        "diff": mean(diffs),
        "lo": lo,
        "hi": hi,
        "significant": bool(lo > 0 or hi < 0),
    }


def ranked_recall(ranked_ids: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Share of the gold ids among the first ``k`` ranked ids (HippoRAG's recall@k; 1.0 without gold)."""
    if not gold:
        return 1.0
    top = set(ranked_ids[:k])
    return sum(1 for g in gold if g in top) / len(gold)


def ratio_ci(
    a: Sequence[float], b: Sequence[float], *, seed: int = 0, n: int = 2000, level: float = 0.95
) -> dict[str, float]:
    """mean(a) / mean(b) on the same questions with its paired percentile bootstrap interval (the questions
    resampled together; a resample whose ``b`` mean is 0 is skipped)."""
    import random

    if len(a) != len(b) or not a:
        raise ValueError("a ratio needs the same, non-empty questions on both sides")
    rng = random.Random(seed)
    k = len(a)
    ratios = []
    for _ in range(n):
        idx = [rng.randrange(k) for _ in range(k)]
        den = sum(b[i] for i in idx)
        if den > 0:
            ratios.append(sum(a[i] for i in idx) / den)
    alpha = (1 - level) / 2 * 100
    whole = sum(b)
    return {
        "ratio": sum(a) / whole if whole > 0 else float("nan"),
        "lo": percentile(ratios, alpha) if ratios else float("nan"),
        "hi": percentile(ratios, 100 - alpha) if ratios else float("nan"),
    }


def reciprocal_rank(ranked_ids: Sequence[str], gold: Sequence[str]) -> float:
    """1 / the 1-based place of the first gold id among the ranked ids (0.0 when none is there; 1.0 without
    gold); averaged over questions it is the MRR of the first gold chunk."""
    if not gold:
        return 1.0
    wanted = set(gold)
    for pos, i in enumerate(ranked_ids, start=1):
        if i in wanted:
            return 1.0 / pos
    return 0.0


def folds(n: int, k: int = 5, seed: int = 0) -> list[list[int]]:
    """``k`` disjoint folds of ``range(n)`` after a seeded shuffle (sizes differ by at most one)."""
    import random

    idx = list(range(n))
    random.Random(seed).shuffle(idx)
    return [sorted(idx[i::k]) for i in range(k)]


def cross_validate(scores: dict[str, Sequence[float]], k: int = 5, seed: int = 0) -> dict:
    """Choose a configuration by k-fold cross-validation: per fold, the configuration with the best mean
    score on the other folds (ties: the first listed) is scored on the held-out fold.

    ``scores`` maps configuration name -> per-question score (same question order). Returns the choice and
    held-out score per fold, their mean / min / max, and the held-out score over all questions.
    """
    names = list(scores)
    n = len(scores[names[0]])
    out_folds = []
    held: list[float] = [0.0] * n
    for fold in folds(n, k, seed):
        test = set(fold)
        train = [i for i in range(n) if i not in test]
        best = max(names, key=lambda c: (mean(scores[c][i] for i in train), -names.index(c)))
        for i in fold:
            held[i] = scores[best][i]
        out_folds.append(
            {
                "chosen": best,
                "train": mean(scores[best][i] for i in train),
                "test": mean(scores[best][i] for i in fold),
                "n": len(fold),
            }
        )
    tests = [f["test"] for f in out_folds]
    return {"folds": out_folds, "mean": mean(tests), "min": min(tests), "max": max(tests), "held_out": mean(held)}
