"""Shared input checking for the metric functions.

Every public metric converts its inputs through these helpers so that the metric bodies only hold the
formula, and so that every bad input fails with a ``ValueError`` that names the argument.

numpy is imported by the array checks alone: the span and integer checks serve the text parsers
(:mod:`metrics.tagged_text`), which every file reader uses, and a value can only be one of numpy's once
numpy is loaded, so they ask :func:`_loaded_numpy` instead of loading it.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

Span = tuple[int, int]


def _loaded_numpy() -> Any:
    """The numpy module if something has loaded it, else None (then no value is a numpy value)."""
    return sys.modules.get("numpy")


def as_int(value: Any, what: str) -> int:
    """Return ``value`` as a Python int; integral floats are accepted, bools and fractions are not."""
    if type(value) is int:
        return value
    numpy = _loaded_numpy()
    if isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_)):
        raise ValueError(f"{what} must be an integer, got the boolean {value!r}")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        return int(float(value))
    raise ValueError(f"{what} must be an integer, got {value!r}")


def as_span(span: Any, what: str = "span") -> Span:
    """Check one half-open span ``(start, end)`` with ``0 <= start < end``."""
    try:
        start, end = span
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a (start, end) pair, got {span!r}") from None
    start = as_int(start, f"{what} start")
    end = as_int(end, f"{what} end")
    if start < 0:
        raise ValueError(f"{what} {span!r} has a negative start")
    if start >= end:
        raise ValueError(f"{what} {span!r} is empty or reversed: start must be < end")
    return start, end


def as_span_list(spans: Any, what: str = "spans") -> list[Span]:
    """Check a list of spans (any order, duplicates allowed) and return it as a list of int pairs."""
    if spans is None or isinstance(spans, str | bytes):
        raise ValueError(f"{what} must be a list of (start, end) spans, got {spans!r}")
    try:
        items = list(spans)
    except TypeError:
        raise ValueError(f"{what} must be a list of (start, end) spans, got {spans!r}") from None
    checked = []
    for i, span in enumerate(items):
        # Fast path for the common case (a tuple of two ints); anything else gets the full check.
        if type(span) is tuple and len(span) == 2:
            start, end = span
            if type(start) is int and type(end) is int and 0 <= start < end:
                checked.append(span)
                continue
        checked.append(as_span(span, f"{what}[{i}]"))
    return checked


def as_list(values: Any, what: str) -> list[Any]:
    """Materialise a sequence argument (strings are rejected: they are almost always a mistake)."""
    if values is None or isinstance(values, str | bytes):
        raise ValueError(f"{what} must be a sequence, got {values!r}")
    numpy = _loaded_numpy()
    if numpy is not None and isinstance(values, numpy.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{what} must be one-dimensional, got shape {values.shape}")
        return list(values.tolist())
    try:
        return list(values)
    except TypeError:
        raise ValueError(f"{what} must be a sequence, got {values!r}") from None


def check_same_length(**sequences: Sequence[Any]) -> int:
    """Check that all named sequences have the same length and return it."""
    lengths = {name: len(seq) for name, seq in sequences.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name}={n}" for name, n in lengths.items())
        raise ValueError(f"inputs must have the same length, got {detail}")
    return next(iter(lengths.values()))


def as_1d_float_array(values: Any, what: str, *, allow_inf: bool = True) -> np.ndarray:
    """Return a 1-D float64 array without NaN (and without infinities unless allowed)."""
    import numpy as np

    if isinstance(values, str | bytes):
        raise ValueError(f"{what} must be a sequence of numbers, got a string")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a sequence of numbers") from None
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{what} contains NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{what} contains an infinite value")
    return arr


def as_binary_labels(labels: Any, what: str = "labels") -> np.ndarray:
    """Return 0/1 labels as an int8 array; booleans and 0.0/1.0 floats are accepted."""
    import numpy as np

    if isinstance(labels, str | bytes):
        raise ValueError(f"{what} must be a sequence of 0/1 labels, got a string")
    try:
        arr = np.asarray(labels)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a sequence of 0/1 labels") from None
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        return arr.astype(np.int8)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{what} must contain only 0 and 1, got dtype {arr.dtype}")
    is_zero = arr == 0
    if not (is_zero | (arr == 1)).all():
        bad = arr[~(is_zero | (arr == 1))][0]
        raise ValueError(f"{what} must contain only 0 and 1, found {bad!r}")
    binary: np.ndarray = (~is_zero).astype(np.int8)
    return binary


def as_probabilities(probs: Any, what: str = "probs") -> np.ndarray:
    """Return probabilities as a float64 array, checking they lie in [0, 1]."""
    arr = as_1d_float_array(probs, what)
    if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(f"{what} must lie in [0, 1]")
    return arr


def check_threshold(threshold: Any, what: str = "threshold") -> float:
    """An IoU threshold is a float in [0, 1] (IoU itself never leaves that range)."""
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise ValueError(f"{what} must be a number in [0, 1], got {threshold!r}")
    value = float(threshold)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{what} must lie in [0, 1], got {threshold!r}")
    return value


def check_positive_int(value: Any, what: str) -> int:
    """Check a count argument such as ``n_bins`` or ``n_resamples``."""
    number = as_int(value, what)
    if number < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return number


def check_confidence(confidence: Any) -> float:
    """A confidence level is a float strictly between 0 and 1."""
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    value = float(confidence)
    if not 0.0 < value < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return value


def check_no_missing(values: Iterable[Any], what: str) -> None:
    """Reject ``None`` labels where a measure has no notion of a missing rating."""
    for value in values:
        if value is None:
            raise ValueError(f"{what} contains None; this measure needs every rating present")
