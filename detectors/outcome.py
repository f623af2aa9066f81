"""What a run did, in words: one wording for the Run detector page and the command line.

A refused run called nothing and wrote nothing, and says why. A run that ended early (cancelled,
stopped at the budget, stopped by the endpoint or by another run) kept what arrived: the items written,
and every other answer in the response cache, so running it again under the same name asks only for
the items left. Both said less, or other things: a refused run read "Not run" under a run shown as
started, and a cancelled one only "incomplete".
"""

from __future__ import annotations

from detectors.runner import RunResult


def refused_text(reason: str) -> str:
    """A run refused before its first call."""
    return f"Not started, nothing was called or written: {reason}."


def busy_text(
    name: str,
    dataset: str,
    run_id: str,
    started: str,
    by: str,
    *,
    heard_s_ago: int | None = None,
    free_from: str | None = None,
) -> str:
    """Why a second run of a label set being run is refused: the run that has it, how long ago it was
    last heard from, and from when its label set is free should its process have stopped."""
    heard = f", last heard from {heard_s_ago} s ago" if heard_s_ago is not None else ""
    free = f"; if its process has stopped, the label set is free again from {free_from}" if free_from else ""
    return (
        f"the detector {name!r} is already being run on {dataset!r} (run {run_id}, started {started} by "
        f"{by!r}{heard}); a second run at the same time would pay for every call again. Wait for it to "
        f"end or cancel it{free}"
    )


def result_text(result: RunResult) -> str:
    """How the run ended, what it wrote and what is left."""
    written = f"{result.saved} of {result.in_scope} items written ({result.already_done} already held)"
    left = f"{result.left} item(s) left, which running it again under the same name asks for (nothing else)"
    kept = f"what arrived is kept: {written}, any other answer in the response cache; {left}"
    if result.status == "cancelled":
        return f"cancelled; {kept}."
    if result.status == "budget":
        return f"stopped at the token budget; {kept}."
    if result.status == "stopped":
        return f"stopped: {result.stop_reason}; {kept}."
    if result.complete:
        return f"{written}; finished; label set complete."
    again = "to try the failed items again" if result.failed else "to resume"
    return f"{written}; finished; label set incomplete (run again under the same name {again})."
