"""The filter bar of the report pages (the Measure section): subset, source model, detector, type, unknowns.

Every choice is kept in the page address (``?subset=…&detector=…``), so a filtered dashboard is a link
that can be shared or put in a presentation. The address is read when the page opens and written from
the filters shown on every run (see :mod:`components.page_address`); a filter the page does not draw is
left out of it, and a value of the address no option names is said, beside the filters, and left out.

The source models chosen are also kept in the session, apart from the widget: the models offered differ
from view to view (Tri-HE's runs name the models whose answers they judged, which the items of the other
papers' views do not have), and a widget drops a choice its options lack, so a Tri-HE answering model
chosen was gone once the page showed another paper and came back.
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy import Engine

from analysis.reports.data import UNKNOWN_CHOICES, UNKNOWN_EXCLUDED, ReportFilter, unknown_choice
from components.page_address import (
    all_from_address,
    back_or_forward,
    keep,
    keep_many,
    keep_one,
    left_out,
    many_choices,
    notice,
    one_choice,
)
from components.store_cache import cached
from db.repositories.datasets import DatasetInfo
from db.repositories.items import facets
from db.repositories.label_sets import list_label_sets
from db.repositories.report_inputs import answering_models as answering_models_of
from db.repositories.report_inputs import gold_types_by_kind
from render.literal_text import literal

MODEL_WIDGET = "model"
_MODELS = "spanlight_source_models"  # the source models last chosen (not a widget key: it outlives views)
# What one option of each filter is, by its name in the address: the words of a notice about a value of
# the address no option names (see components.page_address.unknown_values).
CALLED = {
    "subset": "subset",
    MODEL_WIDGET: "source model",
    "detector": "detector",
    "type": "hallucination type",
}
UNKNOWN_CALLED = "way to count 'unknown' sentences"


def filter_options(
    engine: Engine, dataset: DatasetInfo, *, answering_models: bool = False
) -> dict[str, list[str]]:
    """The values each filter offers on ``dataset``, by the filter's name in the address (see
    :func:`report_filter` for ``answering_models``)."""
    options = cached(facets, engine, dataset.id)
    models = list(options.source_models)
    if answering_models:
        named = cached(answering_models_of, engine, dataset.id).values()
        models += sorted(set(named) - set(models))
    types_by_kind = cached(gold_types_by_kind, engine, dataset.id)
    return {
        "subset": list(options.subsets),
        MODEL_WIDGET: models,
        "detector": [v.name for v in cached(list_label_sets, engine, dataset.id, "detector")],
        "type": sorted({t for types in types_by_kind.values() for t in types}),
    }


def report_filter(
    engine: Engine,
    dataset: DatasetInfo,
    *,
    detectors: bool = True,
    types: bool = True,
    unknown: bool = False,
    answering_models: bool = False,
    type_kind: str | None = None,
) -> ReportFilter:
    """Draw the filters that apply to the page and return the choice. ``answering_models``: the source
    models offered include the models whose answers a run judged (Tri-HE's runs name them; its items,
    the benchmark's questions, do not). ``type_kind``: the kind of gold label the page scores ("spans",
    "sentences" or "claims"); the types offered are every kind's, so a type chosen that no label of
    this kind has is pointed out (it leaves out every hallucination, and the scores fall to nothing)."""
    offered = filter_options(engine, dataset, answering_models=answering_models)
    subsets, models, names, kinds = (offered[name] for name in CALLED)
    shown = [True, True, detectors and bool(names), types and bool(kinds)]
    columns = iter(st.columns(sum(shown) + int(unknown)))
    many_choices("subset", subsets, called=CALLED["subset"])
    chosen_subsets = next(columns).multiselect("Subset", subsets, key="subset", placeholder="all subsets")
    keep_many("subset", chosen_subsets)
    _restore_models(models)
    chosen_models = next(columns).multiselect(
        "Source model",
        models,
        key=MODEL_WIDGET,
        placeholder="all models",
        on_change=_models_changed,
        args=(models,),
    )
    keep_many(MODEL_WIDGET, chosen_models)
    chosen_detectors: list[str] = []
    if shown[2]:
        many_choices("detector", names, called=CALLED["detector"])
        chosen_detectors = next(columns).multiselect(
            "Detector", names, key="detector", placeholder="all detectors"
        )
    keep_many("detector", chosen_detectors if shown[2] else None)
    chosen_types: list[str] = []
    if shown[3]:
        many_choices("type", kinds, called=CALLED["type"])
        chosen_types = next(columns).multiselect(
            "Hallucination type",
            kinds,
            key="type",
            placeholder="all types",
            help="Hallucinations of the other types are left out of the evaluation; clean items stay.",
        )
    keep_many("type", chosen_types if shown[3] else None)
    if chosen_types and type_kind is not None:
        own = cached(gold_types_by_kind, engine, dataset.id).get(type_kind, [])
        if not set(chosen_types) & set(own):
            st.info(
                literal(
                    f"No gold {type_kind[:-1]} label has the hallucination type chosen "
                    f"({', '.join(chosen_types)}), so every hallucination is left out here. "
                    + (
                        f"The {type_kind}' types: {', '.join(own)}."
                        if own
                        else f"The {type_kind} have no types."
                    )
                )
            )
    chosen_unknown = UNKNOWN_CHOICES[UNKNOWN_EXCLUDED]
    if unknown:
        one_choice(
            "unknown",
            list(UNKNOWN_CHOICES.values()),
            chosen_unknown,
            called=UNKNOWN_CALLED,
        )
        chosen_unknown = (
            next(columns).segmented_control(
                "'Unknown' sentences",
                list(UNKNOWN_CHOICES.values()),
                required=True,
                key="unknown",
                help="AlignBench leaves sentences whose correctness cannot be judged out (its default); they can "
                "also count as correct. A table below shows both.",
            )
            or UNKNOWN_CHOICES[UNKNOWN_EXCLUDED]
        )
        keep_one("unknown", chosen_unknown, UNKNOWN_CHOICES[UNKNOWN_EXCLUDED])
    else:
        keep("unknown", None)
    return ReportFilter(
        subsets=tuple(chosen_subsets),
        source_models=tuple(chosen_models),
        detectors=tuple(chosen_detectors),
        types=tuple(chosen_types),
        unknown=unknown_choice(chosen_unknown),
    )


def _restore_models(offered: list[str]) -> None:
    """Set the source-model widget to the models last chosen that this view offers, before it is drawn:
    the ``?model=`` the page opened with (those offered) replaces the models remembered."""
    asked = all_from_address(MODEL_WIDGET)
    if asked is None and back_or_forward():  # an address stepped back to, without this filter
        asked = []
    if asked is not None:
        st.session_state[_MODELS] = [m for m in dict.fromkeys(asked) if m in offered]
    remembered = st.session_state.get(_MODELS)
    if not isinstance(remembered, list):  # the first view of the session, without a link's models
        remembered = st.session_state[_MODELS] = []
    shown = st.session_state[MODEL_WIDGET] = [m for m in remembered if m in offered]
    notice(MODEL_WIDGET, shown, left_out(CALLED[MODEL_WIDGET], asked or [], offered))


def _models_changed(offered: list[str]) -> None:
    """Remember the models now chosen, with those chosen before that this view did not offer."""
    remembered = st.session_state.get(_MODELS)
    others = [m for m in remembered if m not in offered] if isinstance(remembered, list) else []
    st.session_state[_MODELS] = [*st.session_state[MODEL_WIDGET], *others]
