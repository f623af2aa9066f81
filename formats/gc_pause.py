"""Reading a large file with Python's cyclic garbage collector paused."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def without_gc_pauses(function: Callable[P, R]) -> Callable[P, R]:
    """Run a bulk read or import with Python's cyclic garbage collector paused.

    Reading 100 K rows allocates millions of small containers, and every allocation burst triggered a
    collection walking all live objects: the AlignBench reader spent three quarters of its time there.
    Reference counting still frees everything at once; cycles are collected when the call ends.
    """

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return run
