"""Run detector: send a dataset's items to any OpenAI-compatible endpoint with one of the papers' prompts.

The answers become a detector label set, written in batches as they arrive, so Compare and Metrics show
the run growing. A run belongs to the server, not to this tab (:mod:`components.run_registry`): it goes
on when the page is left or reloaded, and this page shows every run's progress (rate, time left), its
token and cost ledger and a cancel button. Running again under the same name resumes: items already
answered are skipped and answers already received come from the response cache. A run refused before
its first call says so in the form, not as a run started; one still at its checks when the page stops
waiting for them is said to be starting (it may yet be refused); one that ended early says why, and how
many items it left for the next.

The API key is never typed here: the form names an environment variable of the server, read when the
run starts and handed to the run alone; it is never stored, logged or shown. Starting runs manages data.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import pandas as pd
import streamlit as st

from components.dataset_picker import pick_dataset
from components.page_setup import setup_page
from components.run_registry import run_registry
from db.detector_runs import default_prices, run_live
from detectors.background import LiveRun
from detectors.client import RetryPolicy, base_url_problem, key_variable_problem, redacted_endpoint
from detectors.ledger import Prices, cost_text
from detectors.outcome import refused_text, result_text
from detectors.runner import Progress, RunRefused, RunResult, RunSpec
from detectors.strategies import STRATEGIES
from formats.problems import quoted
from render.literal_text import literal

ctx = setup_page("Run detector")
ctx.require("manage_data")
st.title("Run a detector")
st.caption(
    "Each item goes to a chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio …) with one of the "
    "papers' prompts; its answer is kept as raw output and parsed as the paper's file format would be."
)
dataset = pick_dataset(ctx.engine)
registry = run_registry()

try:
    prices = default_prices()
except ValueError as bad:
    st.warning(literal(f"{bad}; prices start at 0."))
    prices = Prices()

if dataset is not None:
    with st.form("run_detector_form"):
        left, right = st.columns(2)
        detector = left.text_input("Detector name (its label set)", key="run_detector_name")
        strategy = right.selectbox(
            "Strategy",
            list(STRATEGIES),
            format_func=lambda name: STRATEGIES[name].title,
            key="run_detector_strategy",
        )
        base_url = left.text_input(
            "Endpoint base URL", placeholder="http://127.0.0.1:8000/v1", key="run_detector_base_url"
        )
        model = right.text_input("Model", key="run_detector_model")
        key_variable = left.text_input(
            "API key environment variable (optional)",
            key="run_detector_key_env",
            help="The name of an environment variable of the server holding the key; the key itself is never "
            "typed, stored or shown. Leave empty for an endpoint without a key.",
        )
        items = right.text_input("Only these item ids (comma-separated, optional)", key="run_detector_items")
        numbers = st.columns(4)
        concurrency = numbers[0].number_input("Calls at once", 1, 256, 4, key="run_detector_concurrency")
        samples = numbers[1].number_input(
            "Samples (self-ensemble)",
            1,
            20,
            1,
            key="run_detector_samples",
            help="Answers per call, combined.",
        )
        temperature = numbers[2].number_input(
            "Temperature", 0.0, 2.0, 0.0, 0.1, key="run_detector_temperature"
        )
        max_tokens = numbers[3].number_input(
            "Max tokens per answer", 1, 200_000, 1024, key="run_detector_max_tokens"
        )
        limit = numbers[0].number_input("Limit (items, 0: all)", 0, None, 0, key="run_detector_limit")
        budget = numbers[1].number_input("Token budget (0: none)", 0, None, 0, key="run_detector_budget")
        price_in = numbers[2].number_input(
            "Price / 1K input tokens",
            0.0,
            None,
            prices.input_per_1k,
            format="%.4f",
            key="run_detector_price_in",
        )
        price_out = numbers[3].number_input(
            "Price / 1K output tokens",
            0.0,
            None,
            prices.output_per_1k,
            format="%.4f",
            key="run_detector_price_out",
        )
        timeout = numbers[0].number_input("Timeout (s)", 1.0, 600.0, 60.0, key="run_detector_timeout")
        text_only = numbers[1].checkbox("Text only (send no images)", key="run_detector_text_only")
        start = st.form_submit_button("Start run", type="primary", icon=":material/play_arrow:")

    if start:
        problems = [p for p in [base_url_problem(base_url)] if p]
        key_name, api_key = key_variable.strip(), None
        if (named := key_variable_problem(key_name)) is not None:  # never the field's value: a key?
            problems.append(named)
        elif key_name:
            api_key = os.environ.get(key_name)
            if not api_key:
                problems.append(f"the server has no environment variable {quoted(key_name)} set")
        spec = RunSpec(
            dataset=dataset.name,
            detector=detector.strip(),
            strategy=strategy,
            base_url=base_url.strip(),
            model=model.strip(),
            temperature=float(temperature),
            max_tokens=int(max_tokens),
            samples=int(samples),
            concurrency=int(concurrency),
            limit=int(limit) or None,
            items=tuple(i.strip() for i in items.split(",") if i.strip()),
            budget_tokens=int(budget) or None,
            prices=Prices(float(price_in), float(price_out)),
            images=not text_only,
            timeout_s=float(timeout),
            retry=RetryPolicy(),
        )
        problems += spec.problems()
        if problems:
            st.error(literal(refused_text("; ".join(problems))))
        else:
            engine, actor = ctx.engine, ctx.actor

            def work(run_id: str, cancel: threading.Event, progress: Callable[[Progress], None]) -> RunResult:
                return run_live(
                    engine, spec, actor, api_key=api_key, cancel=cancel, progress=progress, run_id=run_id
                )

            try:
                live = registry.start(spec, ctx.actor.name, work)
            except RunRefused as refused:
                st.error(literal(refused_text(str(refused))))
            else:
                kind, notice = live.start_notice()
                {"started": st.success, "starting": st.info, "failed": st.error}[kind](literal(notice))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _progress_text(progress: Progress, running: bool) -> str:
    """The line over a run's progress bar. Items that got no answer count toward the bar, so the line
    says how many they are (an endpoint timing out read as a run nearly done); a run that has ended has
    nothing left to wait for, so it shows no time left (a cancelled one said "about 49 s left")."""
    line = f"{progress.finished} of {progress.total} items"
    if progress.failed:
        line += f" ({progress.failed} without an answer)"
    line += f" · {progress.rate:.2f} items/s"
    return f"{line} · about {_duration(progress.eta_s)} left" if running else line


def _show(run: LiveRun) -> None:
    spec = run.spec
    with st.container(border=True):
        st.markdown(
            f"**{literal(spec.detector)}** on {literal(spec.dataset)} · {literal(spec.model)} at "
            f"{literal(redacted_endpoint(spec.base_url))} · {literal(STRATEGIES[spec.strategy].title)} · "
            f"**{run.state}**"
        )
        st.caption(literal(f"Run {run.id}, started {run.started_at} by {run.started_by}"))
        progress = run.progress
        if progress is not None:
            share = progress.finished / progress.total if progress.total else 1.0
            st.progress(min(share, 1.0), text=_progress_text(progress, run.running))
            ledger = progress.ledger
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "calls": ledger["calls"],
                            "from cache": ledger["cached_calls"],
                            "retries": ledger["retries"],
                            "failed calls": ledger["failed_calls"],
                            "cut at max tokens": ledger["truncated_answers"],
                            "tokens in": ledger["prompt_tokens"],
                            "tokens out": ledger["completion_tokens"],
                            "cost": cost_text(ledger),
                        }
                    ]
                ),
                hide_index=True,
                width="stretch",
            )
        if run.running:
            st.button(
                "Cancel",
                key=f"run_detector_cancel_{run.id}",
                icon=":material/stop:",
                on_click=registry.cancel,
                args=(run.id,),
                disabled=run.cancel.is_set(),
            )
        if run.error is not None:
            st.error(
                literal(
                    refused_text(run.error)
                    if run.refused
                    else f"The run broke off: {run.error}. What arrived before is kept; starting it again "
                    "under the same name resumes."
                )
            )
        result = run.result
        if result is not None:
            said = result_text(result)
            said = f"{said[:1].upper()}{said[1:]} Prompt #{result.prompt_hash}."
            if result.status == "finished":
                st.caption(literal(said))
            else:  # ended early: why, and what is left, must not be missed
                st.warning(literal(said))
            if result.judge_bias:
                st.warning(literal(f"Judge bias: {result.judge_bias}."))
            if result.not_judged:
                st.caption(
                    literal(
                        f"{len(result.not_judged)} items not judged: {next(iter(result.not_judged.values()))}."
                    )
                )
            if result.truncated:
                st.warning(
                    literal(
                        f"{result.ledger['truncated_answers']} answer(s) were cut at the token limit (finish "
                        f"reason 'length'), in {len(result.truncated)} item(s): a cut answer may read as no "
                        "hallucination. Raise “Max tokens per answer” and run under a new name."
                    )
                )
                st.dataframe(
                    pd.DataFrame(
                        {
                            "item": list(result.truncated),
                            "answers cut at max tokens": [", ".join(u) for u in result.truncated.values()],
                        }
                    ),
                    hide_index=True,
                    width="stretch",
                )
            if result.failed:
                st.dataframe(
                    pd.DataFrame(
                        {"item": list(result.failed), "why it has no output": list(result.failed.values())}
                    ),
                    hide_index=True,
                    width="stretch",
                )
        link = {"dataset": spec.dataset, "detectors": spec.detector}
        if spec.items:
            link["item"] = spec.items[0]
        st.page_link(
            "app_pages/compare.py", label="Open in Compare", icon=":material/compare:", query_params=link
        )


@st.fragment(run_every=1.0 if any(run.running for run in registry.runs()) else None)
def runs_panel() -> None:
    runs = registry.runs()
    if not runs:
        st.caption("No run started on this server yet.")
    for run in runs:
        _show(run)


st.subheader("Runs on this server", anchor=False)
runs_panel()
