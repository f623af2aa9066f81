"""Write the synthetic files the import benchmarks read: AlignBench sentence rows (CSV) and canonical JSONL.

The AlignBench file has about six sentences per caption, as the released benchmark does (100 K sentences
in 16.6 K captions); the canonical file has four sentences, two gold spans and four gold sentence labels
per item, optional fields left out (120 K items make a file of about 95 MB). Both are written line by line, so a million rows need no more
memory than a thousand. Run ``python bench/make_import_files.py alignbench OUT.csv --rows N`` or
``python bench/make_import_files.py canonical OUT.jsonl --items N``.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from formats.alignbench import COLUMNS as ALIGNBENCH_COLUMNS  # noqa: E402  (the real file's header)

MODELS = ("gpt-4o", "llava-1.6", "cogvlm", "qwen2", "sharegpt4v", "llama-4", "sd-3", "gpt-gen")
WORDS = [
    "a",
    "the",
    "red",
    "blue",
    "small",
    "large",
    "dog",
    "cat",
    "man",
    "woman",
    "table",
    "chair",
    "street",
    "tree",
    "sky",
    "car",
    "sign",
    "on",
    "near",
    "under",
    "standing",
    "sitting",
    "wooden",
    "metal",
    "bright",
    "dark",
    "old",
    "young",
    "building",
    "window",
]
ERRORS = ("Object", "Attribute", "Number", "Text", "Relation", "Location", "Direction", "Illusion", "Other")
SENTENCES_PER_CAPTION = 6


def _sentence(rng: random.Random, shortest: int = 6, longest: int = 16) -> list[str]:
    return [rng.choice(WORDS) for _ in range(rng.randint(shortest, longest))]


def write_alignbench(path: Path, n_rows: int, seed: int = 7) -> None:
    """``n_rows`` AlignBench rows, six sentences per caption (the last caption may hold fewer)."""
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(ALIGNBENCH_COLUMNS)
        for row in range(n_rows):
            caption, index = divmod(row, SENTENCES_PER_CAPTION)
            model = MODELS[caption % len(MODELS)]
            image = f"img_{caption // len(MODELS):07d}.jpg"
            words = _sentence(rng)
            label = rng.choices(("correct", "incorrect", "unknown"), (70, 25, 5))[0]
            wrong = label == "incorrect"
            writer.writerow(
                (
                    model,
                    "coco" if caption % 2 else "cc12m",
                    image,
                    f"cluster-{caption % 50}",
                    index,
                    " ".join(words).capitalize() + ".",
                    label,
                    rng.choice(ERRORS) if wrong else "",
                    json.dumps([words[2]]) if wrong else "",
                    round(rng.random(), 3),
                    round(rng.random(), 3),
                    rng.randint(0, 3),
                    rng.randint(0, 3),
                    rng.randint(0, 3),
                    f"https://example.org/{image}",
                )
            )


def write_canonical(path: Path, n_items: int, seed: int = 11) -> None:
    """A canonical JSONL file: one gold label set with 2 spans and 4 sentence labels on each item."""
    rng = random.Random(seed)
    encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
    dumps = encoder.encode
    with path.open("w", encoding="utf-8") as out:
        dataset = {
            "record": "dataset",
            "format_version": 1,
            "name": "bench",
            "source_format": "canonical",
            "taxonomy": list(ERRORS),
            "label_kinds": ["span", "sentence"],
            "description": "synthetic",
            "is_synthetic": True,
            "image_root": None,
        }
        out.write(dumps(dataset) + "\n")
        annotations = []
        for k in range(n_items):
            sentences, pieces, at = [], [], 0
            for _ in range(4):
                text = " ".join(_sentence(rng, 2, 5)).capitalize() + "."
                pieces.append(text)
                sentences.append({"start": at, "end": at + len(text)})
                at += len(text) + 1
            response = " ".join(pieces)
            ext = f"item-{k:07d}"
            item = {
                "record": "item",
                "external_id": ext,
                "response": response,
                "subset": f"subset-{k % 7}",
                "source_model": MODELS[k % len(MODELS)],
                "image_ref": f"img_{k:07d}.jpg",
                "meta": {"source": "synthetic", "n": k},
                "sentences": sentences,
            }
            out.write(dumps(item) + "\n")
            spans = []
            for s in (0, 2):
                start = sentences[s]["start"]
                spans.append({"start": start, "end": start + 3, "type": rng.choice(ERRORS)})
            labels = [
                {
                    "index": s,
                    "label": "incorrect" if s in (0, 2) else "correct",
                    "meta": {"agreement_ratio": round(rng.random(), 3)},
                }
                for s in range(4)
            ]
            annotations.append((ext, spans, labels))
        out.write(
            dumps(
                {
                    "record": "label_set",
                    "kind": "gold",
                    "name": "gold",
                    "annotator": None,
                    "detector_version": None,
                    "prompt_strategy": None,
                    "meta": {},
                }
            )
            + "\n"
        )
        key = {"kind": "gold", "name": "gold"}
        for ext, spans, labels in annotations:
            line = {
                "record": "annotations",
                "label_set": key,
                "item": ext,
                "spans": spans,
                "sentence_labels": labels,
            }
            out.write(dumps(line) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("alignbench", "canonical"))
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=100_000, help="AlignBench sentence rows")
    parser.add_argument("--items", type=int, default=120_000, help="canonical items")
    args = parser.parse_args(argv)
    if args.kind == "alignbench":
        write_alignbench(args.out, args.rows)
    else:
        write_canonical(args.out, args.items)
    return 0


if __name__ == "__main__":
    sys.exit(main())
