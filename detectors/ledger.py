"""What a run spent: calls, retries, tokens and their cost under the user's price table, and how many
answers came back cut at the token limit.

An endpoint that reports no ``usage`` leaves a call's tokens unknown, not 0: such calls are counted
apart (``calls_without_usage``), and the cost is then known only in part (:func:`cost_text` says so).

Only answers that came over the network cost tokens; answers replayed from the response cache are
counted apart, at no cost. Prices are per 1,000 tokens, input and output apart, in whatever currency
the user set them in (the command line's ``--price-in`` / ``--price-out``, or the
``SPANLIGHT_PRICE_IN`` / ``SPANLIGHT_PRICE_OUT`` settings); with none set the cost is 0.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

# How many of a run's stored outputs the endpoint cut at its token limit (the outputs' own mark, counted
# by the store for report footers; the ledger's ``truncated_answers`` counts the answers as they came).
CUT_OUTPUTS = "cut_outputs"


@dataclass(frozen=True)
class Prices:
    input_per_1k: float = 0.0
    output_per_1k: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens / 1000 * self.input_per_1k + completion_tokens / 1000 * self.output_per_1k


class Ledger:
    """Counters of one run, safe to update from the workers and read from a page at the same time."""

    def __init__(self, prices: Prices | None = None) -> None:
        self.prices = prices or Prices()
        self._lock = threading.Lock()
        self.calls = 0
        self.cached_calls = 0
        self.retries = 0
        self.failed_calls = 0
        self.truncated_answers = 0
        self.calls_without_usage = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def answered(self, prompt_tokens: int | None, completion_tokens: int | None, *, cached: bool) -> None:
        """One answer; a count None: the endpoint did not report it."""
        with self._lock:
            if cached:
                self.cached_calls += 1
                return
            self.calls += 1
            if prompt_tokens is None or completion_tokens is None:
                self.calls_without_usage += 1
            self.prompt_tokens += prompt_tokens or 0
            self.completion_tokens += completion_tokens or 0

    def retried(self) -> None:
        with self._lock:
            self.retries += 1

    def failed(self) -> None:
        with self._lock:
            self.failed_calls += 1

    def cut(self) -> None:
        """An answer (new or from the cache) was cut at the token limit (``finish_reason: length``)."""
        with self._lock:
            self.truncated_answers += 1

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float:
        return self.prices.cost(self.prompt_tokens, self.completion_tokens)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "calls": self.calls,
                "cached_calls": self.cached_calls,
                "retries": self.retries,
                "failed_calls": self.failed_calls,
                "truncated_answers": self.truncated_answers,
                "calls_without_usage": self.calls_without_usage,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "cost": round(self.cost, 6),
                "price_in_per_1k": self.prices.input_per_1k,
                "price_out_per_1k": self.prices.output_per_1k,
            }


def add_ledgers(total: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """The totals of a label set over its runs: counts and cost add up, the latest prices are kept."""
    summed = {
        k: total.get(k, 0) + run.get(k, 0)
        for k in (
            "calls",
            "cached_calls",
            "retries",
            "failed_calls",
            "truncated_answers",
            "calls_without_usage",
        )
    }
    summed |= {k: total.get(k, 0) + run.get(k, 0) for k in ("prompt_tokens", "completion_tokens")}
    summed["cost"] = round(float(total.get("cost", 0.0)) + float(run.get("cost", 0.0)), 6)
    summed["price_in_per_1k"] = run.get("price_in_per_1k", total.get("price_in_per_1k", 0.0))
    summed["price_out_per_1k"] = run.get("price_out_per_1k", total.get("price_out_per_1k", 0.0))
    return summed


def cost_text(ledger: dict[str, Any]) -> str:
    """The ledger's cost as shown: ``0.0123``, or what is unknown of it when some calls reported no
    usage (a confident 0.0000 for an endpoint that reports none would be wrong)."""
    cost = f"{float(ledger.get('cost', 0.0)):.4f}"
    unknown = int(ledger.get("calls_without_usage", 0))
    if not unknown:
        return cost
    calls = int(ledger.get("calls", 0))
    why = f"usage not reported for {unknown} of {calls} call(s)"
    return f"unknown ({why})" if unknown >= calls else f"{cost} + unknown ({why})"


# What the response cache knows of a run's calls: every answer it received, with its tokens.
_PAID = ("calls", "calls_without_usage", "prompt_tokens", "completion_tokens", "truncated_answers")


def recovered(recorded: dict[str, Any], spent: dict[str, Any] | None) -> dict[str, Any]:
    """The ledger of a run that was killed, from what it recorded in the store and what its answers in
    the response cache (``spent``, see :meth:`detectors.cache.ResponseCache.spent`) say it paid.

    A run records its ledger with each batch it writes, so a killed run's record lacks the answers that
    came after its last batch; the next run replays those from the cache for free, so without them the
    label set's total would never count them. Each count is the larger of the two (the cache holds every
    answer that came; the record also holds what the cache cannot: retries, failed and cached calls);
    the cost is that of the tokens at the run's own prices."""
    if not spent:
        return recorded
    ledger = dict(recorded) | {k: max(int(recorded.get(k, 0)), int(spent.get(k, 0))) for k in _PAID}
    prices = Prices(float(ledger.get("price_in_per_1k", 0.0)), float(ledger.get("price_out_per_1k", 0.0)))
    ledger["cost"] = round(prices.cost(ledger["prompt_tokens"], ledger["completion_tokens"]), 6)
    return ledger
