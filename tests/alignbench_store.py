"""Small AlignBench datasets for report and figure tests: captions of a few sentences with their gold
labels, and sentence-score runs over them, imported through the real readers."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlalchemy import Engine

from db.access import OPERATOR
from db.repositories.datasets import get_dataset
from db.transfer import import_file, import_predictions

HEADER = "model,image_source,image_name,image_type,sentence_index,caption,annotation,error_type,error_words\n"

Sentence = tuple[int, int]  # (caption k, sentence i): caption "k.jpg" of captioner m1


def alignbench_dataset(
    engine: Engine,
    name: str,
    captions: int,
    sentences: int,
    label: Callable[[Sentence], str],
    runs: Mapping[str, Callable[[Sentence], float | None]],
) -> int:
    """Dataset ``name`` of ``captions`` captions of ``sentences`` sentences, sentence ``(k, i)`` labelled
    ``label((k, i))``; each run scores sentence ``(k, i)`` with its function, or leaves it out (None).
    The dataset's id."""
    every = [(k, i) for k in range(captions) for i in range(sentences)]
    rows = "".join(f"m1,coco,{k}.jpg,photo,{i},Sentence {i} of {k}.,{label((k, i))},,\n" for k, i in every)
    done = import_file(
        engine, (HEADER + rows).encode(), actor=OPERATOR, source=f"{name}.csv", format_name="alignbench"
    )
    assert done.ok, [str(p) for p in done.problems]
    for detector, score in runs.items():
        scored = [(k, i, s) for k, i in every if (s := score((k, i))) is not None]
        lines = "model,image_name,sentence_index,score\n" + "".join(
            f"m1,{k}.jpg,{i},{s:g}\n" for k, i, s in scored
        )
        ran = import_predictions(
            engine, lines.encode(), actor=OPERATOR, source=f"{detector}.csv", dataset=name, detector=detector
        )
        assert ran.ok, [str(p) for p in ran.problems]
    dataset = get_dataset(engine, name)
    assert dataset is not None
    return dataset.id
