"""Every strategy by name: the one list the command line, the page and the runner choose from."""

from __future__ import annotations

from detectors import alignbench, mhalo, mhalubench, trihe
from detectors.base import Strategy

STRATEGIES: dict[str, Strategy] = {
    s.name: s for s in (*mhalo.STRATEGIES, *alignbench.STRATEGIES, *mhalubench.STRATEGIES, *trihe.STRATEGIES)
}


class UnknownStrategy(KeyError):
    def __str__(self) -> str:
        return f"unknown strategy {self.args[0]!r}; choose one of: {', '.join(STRATEGIES)}"


def get_strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise UnknownStrategy(name) from None
