"""A small stored dataset for live detector runs, and the scripted server answers that go with it.

Ten items ``item-0`` … ``item-9``, each ``Item k: the red cube sits on a blue mat.`` with a real PNG
image; items 8 and 9 were written by ``gpt-4o`` (the others by ``captioner-a``), for the judge-bias
note. :func:`mhalo_script` answers MHALO's tagged-text prompts with one behaviour per item: a clean
answer, broken tags, and every passing failure a real endpoint shows once before answering.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from PIL import Image
from sqlalchemy import Engine

from db.access import OPERATOR
from db.exporter import export_bundle
from db.importer import import_bundle
from formats.records import Annotations, Bundle, ClaimRecord, DatasetRecord, ItemRecord, TripletRecord
from tests.detectors.chat_server import NOT_JSON, RESET, TRUNCATED, Reply, answer, status

DATASET = "live"
N_ITEMS = 10
ITEM = re.compile(r"Item (\d+): the red cube")
HEADER = "Here is the response with hallucinated content tagged:\n"


def response(k: int) -> str:
    return f"Item {k}: the red cube sits on a blue mat."


def make_dataset(engine: Engine, image_root: Path, *, missing_image: int | None = None) -> None:
    image_root.mkdir(parents=True, exist_ok=True)
    for k in range(N_ITEMS):
        if k != missing_image:
            Image.new("RGB", (8, 8), (200, 20 * k, 20)).save(image_root / f"{k}.png")
    items = [
        ItemRecord(
            external_id=f"item-{k}",
            response=response(k),
            prompt="Describe the image.",
            source_model="gpt-4o" if k >= 8 else "captioner-a",
            image_ref=f"{k}.png",
        )
        for k in range(N_ITEMS)
    ]
    bundle = Bundle(DatasetRecord(DATASET, "canonical", image_root=str(image_root)), items=items)
    import_bundle(engine, bundle, source="fixture", actor=OPERATOR)


def item_number(text: str) -> int:
    found = ITEM.search(text)
    assert found, "the call does not carry an item's response"
    return int(found.group(1))


def tagged(k: int, *words: str) -> str:
    text = response(k)
    for word in words:
        text = text.replace(word, f"<hallucination>{word}</hallucination>")
    return f"{HEADER}<Tagged_Text>\n{text}\n</Tagged_Text>"


# Item -> what the server does on the first attempt (then it answers well), and the spans it tags.
FIRST_ATTEMPT: dict[int, Reply | None] = {
    0: None,
    1: None,
    2: status(429, retry_after="1"),
    3: status(500),  # twice: see mhalo_script
    4: TRUNCATED,
    5: RESET,
    6: answer("too late", delay_s=2.5),
    7: None,
    8: NOT_JSON,
    9: None,
}
SPANS = {k: ["red cube"] for k in range(N_ITEMS)} | {1: [], 7: [], 9: ["red cube", "blue mat"]}
REQUESTS = {0: 1, 1: 1, 2: 2, 3: 3, 4: 2, 5: 2, 6: 2, 7: 1, 8: 2, 9: 1}


def mhalo_script(text: str, attempt: int) -> Reply:
    k = item_number(text)
    first = FIRST_ATTEMPT[k]
    if first is not None and (attempt == 1 or (k == 3 and attempt == 2)):
        return first
    if k == 1:
        return answer(
            f"{HEADER}<Tagged_Text>Item 1: the <hallucination>red cube sits on a blue mat.</Tagged_Text>"
        )
    return answer(tagged(k, *SPANS[k]), prompt_tokens=100, completion_tokens=20)


def json_index_script(text: str, attempt: int) -> Reply:
    k = item_number(text)
    hallucinations = [{"start": 3, "end": 5, "text": "red cube"}] if k % 2 == 0 else []
    if k == 3:  # word indices that do not hold the text they name
        hallucinations = [{"start": 1, "end": 3, "text": "red cube"}]
    return answer("Here is the hallucination analysis:\n" + json.dumps({"hallucinations": hallucinations}))


def stored(engine: Engine, detector: str) -> dict[str, Annotations]:
    """The detector's stored outputs by item, read back through the exporter."""
    bundle = export_bundle(engine, DATASET, [f"detector:{detector}"], actor=OPERATOR)
    (label_set,) = bundle.label_sets
    return {a.item: a for a in label_set.annotations}


def span_words(outputs: dict[str, Annotations]) -> dict[int, list[str]]:
    return {
        int(ext.split("-")[1]): [response(int(ext.split("-")[1]))[s.start : s.end] for s in a.spans]
        for ext, a in outputs.items()
    }


RICH = "rich"


def make_rich_dataset(engine: Engine) -> None:
    """Three items with two sentences each; ``scene-0`` and ``scene-1`` with a scene graph and claims."""
    items = []
    for k in range(3):
        items.append(
            ItemRecord(
                external_id=f"scene-{k}",
                response=f"Scene {k}: a man rides a horse. Horse {k} stands on sand.",
                claims=[ClaimRecord(f"Scene {k} shows a man riding."), ClaimRecord("The horse is on sand.")]
                if k < 2
                else [],
                reference_triplets=[
                    TripletRecord("man", "riding", "horse"),
                    TripletRecord("horse", "on", "sand"),
                ]
                if k < 2
                else [],
                meta={"all_object": ["man", "horse", "sand"]},
            )
        )
    import_bundle(
        engine, Bundle(DatasetRecord(RICH, "canonical"), items=items), source="fixture", actor=OPERATOR
    )


def stored_in(engine: Engine, dataset: str, detector: str) -> dict[str, Annotations]:
    (label_set,) = export_bundle(engine, dataset, [f"detector:{detector}"], actor=OPERATOR).label_sets
    return {a.item: a for a in label_set.annotations}
