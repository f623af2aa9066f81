"""A short run of the concurrency benchmark: many writer processes, nothing lost, no raw errors."""

from __future__ import annotations

import pytest

from bench.bench_concurrency import run_store
from tests.conftest import PG_URL


@pytest.mark.slow
@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_many_writers_lose_nothing_and_the_log_matches_the_store(
    store: str, request: pytest.FixtureRequest
) -> None:
    if store == "postgres":
        request.getfixturevalue("pg_schema_url")  # skips (or fails in CI) when PostgreSQL is down
    results = run_store(store, processes=6, seconds=1.5, pg_url=PG_URL)
    assert {r.mode for r in results} == {"own", "own+versions", "shared", "shared+versions"}
    for run in results:
        assert run.confirmed > 0, run.line()
        assert (run.present, run.lost, run.raw_errors, run.log_mismatches) == (run.confirmed, 0, 0, 0), (
            run.line()
        )
    shared = next(r for r in results if r.mode == "shared+versions")
    assert sum(w.refused for w in shared.workers) > 0  # writers racing on one row were refused, not lost
