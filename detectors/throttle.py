"""Throttling is the endpoint's, not one call's: after a 429 every call of the run holds back.

A 429 (too many requests) answered one call, but the other threads went on sending theirs, each
backing off on its own only once it too was told, so a throttled endpoint was hammered by every thread
in turn. A :class:`Throttle` is shared by a client's threads: a 429 pauses every call for the retry
policy's wait (or the server's ``Retry-After``, if longer); while the endpoint throttles, calls go out
one at a time, each wait longer than the last; the first answer that is not a 429 lifts it. Calls sent
before the pause began that come back 429 too extend nothing: the endpoint was told once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# (429s in a row, the server's Retry-After) -> seconds to wait: RetryPolicy.delay.
Delay = Callable[[int, float | None], float]


class Halted(Exception):
    """The call was cancelled while it waited for its turn."""


class Throttle:
    def __init__(self, delay: Delay, cancel: threading.Event) -> None:
        self._delay = delay
        self._cancel = cancel
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()
        self._streak = 0  # pauses in a row, each begun by a 429
        self._since = 0.0  # when the current pause began
        self._until = 0.0  # no call goes out before this time (monotonic)

    def _throttled(self) -> bool:
        with self._lock:
            return self._streak > 0

    @contextmanager
    def turn(self) -> Iterator[float]:
        """Wait until the call may go out (Halted when cancelled meanwhile); gives the time it went."""
        holding = False
        try:
            while self._throttled() and not holding:
                if self._cancel.is_set():
                    raise Halted()
                holding = self._one_at_a_time.acquire(timeout=0.05)
            while True:
                with self._lock:
                    left = self._until - time.monotonic()
                if left <= 0:
                    break
                if self._cancel.wait(left):
                    raise Halted()
            yield time.monotonic()
        finally:
            if holding:
                self._one_at_a_time.release()

    def too_many(self, sent_at: float, retry_after: float | None) -> float:
        """A call sent at ``sent_at`` was answered 429: pause every call; the seconds left to wait."""
        with self._lock:
            now = time.monotonic()
            if self._streak == 0 or sent_at >= self._since:
                self._streak += 1
                self._since = now
                self._until = now + self._delay(self._streak, retry_after)
            return max(0.0, self._until - now)

    def answered(self) -> None:
        """The endpoint answered something other than 429: calls go out freely again."""
        with self._lock:
            self._streak = 0
