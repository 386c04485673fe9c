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
