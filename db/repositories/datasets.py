"""Datasets: the list on the home page, one dataset's settings, and removal.

Changing or removing a dataset needs the ``manage_data`` right of the acting user (:mod:`db.access`),
checked inside the writing transaction.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Engine, delete, distinct, func, select
from sqlalchemy.orm import Session

from db import models as m
from db.access import Actor, require_in
from db.column_lengths import refuse_too_long
from db.engine import read_session, write_session
from db.import_folder import image_root_path
from db.value_check import refuse_unstorable_text


@dataclass(frozen=True)
class DatasetInfo:
    """A dataset's identity and settings: what a page working on it needs, cheap to read."""

    id: int
    name: str
    source_format: str
    description: str
    is_synthetic: bool
    image_root: str | None
    taxonomy: tuple[str, ...]
    label_kinds: tuple[str, ...]

    @classmethod
    def of(cls, dataset: m.Dataset) -> DatasetInfo:
        return cls(
            id=dataset.id,
            name=dataset.name,
            source_format=dataset.source_format,
            description=dataset.description,
            is_synthetic=dataset.is_synthetic,
            image_root=dataset.image_root,
            taxonomy=tuple(dataset.taxonomy),
            label_kinds=tuple(dataset.label_kinds),
        )


@dataclass(frozen=True)
class DatasetSummary(DatasetInfo):
    """Settings and counts. The counts scan the dataset's items and labels: for overviews only."""

    n_items: int
    n_gold_items: int  # items the gold label set covers: labelled, or marked clean (no hallucination)
    n_done_items: int  # items some annotator marked done, on some task (team work: assignments.assigned_work)
    n_detectors: int
    n_annotators: int


def _summary(session: Session, dataset: m.Dataset) -> DatasetSummary:
    n_items = session.scalar(select(func.count()).where(m.Item.dataset_id == dataset.id)) or 0
    gold_ids = select(m.LabelSet.id).where(m.LabelSet.dataset_id == dataset.id, m.LabelSet.kind == "gold")
    gold_items: set[int] = set()
    for model in (m.Span, m.SentenceLabel, m.ClaimLabel, m.TripletJudgment):
        gold_items.update(
            session.scalars(select(model.item_id).where(model.label_set_id.in_(gold_ids)).distinct())
        )
    # Items gold covers without a label: a clean response (the importer marks them done).
    gold_items.update(
        session.scalars(
            select(m.ItemStatus.item_id)
            .where(m.ItemStatus.label_set_id.in_(gold_ids), m.ItemStatus.status == "done")
            .distinct()
        )
    )
    done = session.scalar(
        select(func.count(distinct(m.ItemStatus.item_id)))
        .join(m.LabelSet, m.LabelSet.id == m.ItemStatus.label_set_id)
        .where(
            m.LabelSet.dataset_id == dataset.id,
            m.LabelSet.kind == "human",  # people's progress, not what a gold file or a detector run covers
            m.ItemStatus.status == "done",
        )
    )
    kinds = dict(
        session.execute(
            select(m.LabelSet.kind, func.count())
            .where(m.LabelSet.dataset_id == dataset.id)
            .group_by(m.LabelSet.kind)
        ).all()
    )
    return DatasetSummary(
        **vars(DatasetInfo.of(dataset)),
        n_items=n_items,
        n_gold_items=len(gold_items),
        n_done_items=done or 0,
        n_detectors=kinds.get("detector", 0),
        n_annotators=kinds.get("human", 0),
    )


def list_datasets(engine: Engine) -> list[DatasetSummary]:
    with read_session(engine) as session:
        datasets = session.scalars(select(m.Dataset).order_by(m.Dataset.name)).all()
        return [_summary(session, d) for d in datasets]


def list_dataset_infos(engine: Engine) -> list[DatasetInfo]:
    """Every dataset's settings, by name, without the counts (one small query at any dataset size)."""
    with read_session(engine) as session:
        return [DatasetInfo.of(d) for d in session.scalars(select(m.Dataset).order_by(m.Dataset.name))]


def get_dataset(engine: Engine, name: str) -> DatasetSummary | None:
    with read_session(engine) as session:
        dataset = session.scalar(select(m.Dataset).where(m.Dataset.name == name))
        return None if dataset is None else _summary(session, dataset)


def dataset_names(engine: Engine) -> list[str]:
    with read_session(engine) as session:
        return list(session.scalars(select(m.Dataset.name).order_by(m.Dataset.name)))


def set_image_root(
    engine: Engine, dataset_id: int, image_root: str | None, *, actor: Actor, confine: bool = True
) -> None:
    """Point a dataset at the folder its relative image references are resolved against (ValueError,
    with a message, for a folder no store can hold).

    The pages then serve images from that folder, so it must lie where a page may read files
    (:func:`~db.import_folder.image_root_path`; ImportPathRefused says why not), and is stored resolved.
    Only the command line, whose operator holds the server anyway, sets ``confine`` False (through
    an import naming its image folder)."""
    refuse_unstorable_text(image_root, "folder")
    if image_root and confine:
        image_root = str(image_root_path(image_root))
    refuse_too_long(image_root, m.Dataset.image_root, "folder")
    with write_session(engine) as session:
        require_in(session, actor, "manage_data")
        dataset = session.get_one(m.Dataset, dataset_id)
        before = dataset.image_root
        dataset.image_root = image_root or None
        session.add(
            m.EditLog(
                annotator_id=actor.id,
                action="update",
                entity="datasets",
                entity_id=dataset_id,
                before={"image_root": before},
                after={"image_root": dataset.image_root},
            )
        )


def set_taxonomy(engine: Engine, dataset_id: int, taxonomy: list[str], *, actor: Actor) -> None:
    """Replace the hallucination types annotators choose from (a custom list is allowed; ValueError,
    with a message, for a type no store can hold)."""
    refuse_unstorable_text(taxonomy, "list of types")
    cleaned = list(dict.fromkeys(t.strip() for t in taxonomy if t.strip()))
    for type_ in cleaned:  # each is a span's type once chosen
        shown = type_ if len(type_) <= 40 else f"{type_[:40]}…"
        refuse_too_long(type_, m.Span.type, f"type {shown!r}")
    with write_session(engine) as session:
        require_in(session, actor, "manage_data")
        dataset = session.get_one(m.Dataset, dataset_id)
        before = list(dataset.taxonomy)
        dataset.taxonomy = cleaned
        session.add(
            m.EditLog(
                annotator_id=actor.id,
                action="update",
                entity="datasets",
                entity_id=dataset_id,
                before={"taxonomy": before},
                after={"taxonomy": cleaned},
            )
        )


def delete_dataset(engine: Engine, name: str, *, actor: Actor) -> bool:
    """Remove a dataset and everything hanging off it; False when there was none."""
    with write_session(engine) as session:
        require_in(session, actor, "manage_data")
        dataset = session.scalar(select(m.Dataset).where(m.Dataset.name == name))
        if dataset is None:
            return False
        session.add(
            m.EditLog(
                annotator_id=actor.id,
                action="delete",
                entity="datasets",
                entity_id=dataset.id,
                before={"name": name},
            )
        )
        # The database cascades to items and annotations; loading them into the ORM first would not scale.
        session.execute(delete(m.Dataset).where(m.Dataset.id == dataset.id))
        return True


@dataclass(frozen=True)
class DatasetSettings:
    """How a team works on a dataset. ``blind``: annotators see only their own labels (never gold,
    detectors or colleagues'); ``allow_preannotation``: an annotator may start from a detector's spans;
    ``char_precision``: a span may start or end inside a word (for OCR-type errors, marked with Alt held)
    — otherwise every saved span is snapped to whole words, as MHALO scores whitespace tokens."""

    blind: bool = True
    allow_preannotation: bool = False
    char_precision: bool = False


def _settings_of(stored: dict[str, Any] | None) -> DatasetSettings:
    stored = stored or {}
    default = DatasetSettings()
    return DatasetSettings(
        blind=bool(stored.get("blind", default.blind)),
        allow_preannotation=bool(stored.get("allow_preannotation", default.allow_preannotation)),
        char_precision=bool(stored.get("char_precision", default.char_precision)),
    )


def settings_in(session: Session, dataset_id: int) -> DatasetSettings:
    """:func:`dataset_settings` inside a transaction that is already open (a write checking them)."""
    return _settings_of(session.scalar(select(m.Dataset.settings).where(m.Dataset.id == dataset_id)))


def dataset_settings(engine: Engine, dataset_id: int) -> DatasetSettings:
    """The dataset's team settings: the defaults for what was never set, and for a dataset that is gone
    (another session may have deleted it while a page still shows it; blind is the safe answer)."""
    with read_session(engine) as session:
        return settings_in(session, dataset_id)


def set_dataset_settings(
    engine: Engine,
    dataset_id: int,
    *,
    blind: bool | None = None,
    allow_preannotation: bool | None = None,
    char_precision: bool | None = None,
    actor: Actor,
) -> DatasetSettings:
    """Change the settings given (None keeps one as it is), logged; returns the settings now in force."""
    with write_session(engine) as session:
        require_in(session, actor, "manage_data")
        dataset = session.get_one(m.Dataset, dataset_id)
        before = _settings_of(dataset.settings)
        after = DatasetSettings(
            blind=before.blind if blind is None else blind,
            allow_preannotation=(
                before.allow_preannotation if allow_preannotation is None else allow_preannotation
            ),
            char_precision=before.char_precision if char_precision is None else char_precision,
        )
        if after == before:
            return after
        # A new dict, so the JSON column is seen as changed; other keys stored there are kept.
        dataset.settings = {**(dataset.settings or {}), **asdict(after)}
        session.add(
            m.EditLog(
                annotator_id=actor.id,
                action="update",
                entity="datasets",
                entity_id=dataset_id,
                before={"settings": asdict(before)},
                after={"settings": asdict(after)},
            )
        )
        return after


def import_mappings(engine: Engine) -> dict[str, dict[str, Any]]:
    """Dataset name -> the field mapping it was imported with, for the datasets that have one (a mapped
    import keeps it in ``Dataset.settings["import_mapping"]``, so the same file shape imports alike)."""
    with read_session(engine) as session:
        rows = session.execute(select(m.Dataset.name, m.Dataset.settings).order_by(m.Dataset.name))
        return {
            name: settings["import_mapping"]
            for name, settings in rows
            if isinstance(settings, dict) and isinstance(settings.get("import_mapping"), dict)
        }


def import_mapping(engine: Engine, name: str) -> dict[str, Any] | None:
    """The field mapping dataset ``name`` was imported with, or None (no such dataset, or no mapping)."""
    with read_session(engine) as session:
        settings = session.scalar(select(m.Dataset.settings).where(m.Dataset.name == name))
    found = settings.get("import_mapping") if isinstance(settings, dict) else None
    return found if isinstance(found, dict) else None
