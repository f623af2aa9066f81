"""Tri-HE's triplet judge (appendix E, Figures 6 and 8): extract the answer's triplets, then judge each.

Two stages, as in the paper. First the answer is turned into ``("subject", "predicate", "object")``
triplets with the knowledge-graph extraction prompt (Figure 6, with its two worked examples). Then each
triplet is judged against the image's scene graph and object list with the GPT-4 judge prompt (Figure
8): "yes" when the reference supports or implies it, else "no" and which part is not supported. The
paper's judge reads text only ("the text-only GPT-4 judge better aligns with the human preference than
GPT-4V"), so no image is sent. Figure 8 does not fix how the answer ends; the closing lines asked for
here are the ones the Tri-HE scripts read, ``My answer is "no". The error is related to "object1".``,
read by :func:`formats.trihe_judgments.verdict_of`.

The raw output kept per item is the Tri-HE judgments file's own shape (``triplets``, ``judgements``),
so an export writes the run back as ``<model>_triplets`` / ``<model>_triplets_judgements``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from detectors.base import Call, Outputs, RunItem, Strategy, fill
from formats.fields import RecordError
from formats.records import Annotations, RawOutputRecord, TripletRecord
from formats.trihe import parse_triplet
from formats.trihe_judgments import verdict_of

EXTRACT = """Given a description of the image, please extract a KG from the text and represent the KG with triples formatted with ("subject", "predicate", "object") with readability, each triplet in a line. If 'and' or 'or' exists in the input sentence, split the objects into multiple triplets. Please do not extract from uninformative sentences.

Here are some in-context examples:

### Input:
Optimus (or Tesla Bot) is a robotic humanoid under development by Tesla, Inc. It was announced at the company's Artificial Intelligence (AI) Day event on August 19, 2021. It is planned to measure 5 ft 8 in (173 cm) tall and weigh 125 lb (57 kg). It is hard to answer whether Tesla is good to invest without more information.

### KG:
("Optimus", "is", "robotic humanoid")
("Optimus", "under development by", "Tesla, Inc.")
("Optimus", "also known as", "Tesla Bot")
("Tesla, Inc.", "announced", "Optimus")
("Announcement of Optimus", "occured at", "Artificial Intelligence (AI) Day event")
("Artificial Intelligence (AI) Day event", "held on", "August 19, 2021")
("Artificial Intelligence (AI) Day event", "organized by", "Tesla, Inc.")
("Optimus", "planned to measure", "5 ft 8 in (173 cm) tall")
("Optimus", "planned to measure", "weigh 125 lb (57 kg).")
<Done>

### Input:
The image doesn't provide information about the popularity of the song. The song "Here Comes the Boom" was originally released by American rock band Nelly in 2002 for the soundtrack of the film "The Longest Yard."

### KG:
("The song 'Here Comes the Boom'", "originally released by", "American rock band Nelly")
("The song 'Here Comes the Boom'", "released in", "2002")
("The song 'Here Comes the Boom'", "featured in", "soundtrack of the film 'The Longest Yard'")
("American rock band Nelly", "released", "The song 'Here Comes the Boom'")
("The Longest Yard", "had soundtrack featuring", "The song 'Here Comes the Boom'")
<Done>

Now generate the KG for the provided input text:

### Input:
{input_text}

### KG:"""

JUDGE = """Given a list of reference triplets ("object1", "relation", "object2") extracted from the scene graph of an image, along with a list of objects observed in this image, your task is:

Task 1. Determine if a claim triplet ("object1", "relation", "object2") is directly supported by any single triplet in the reference, or can be logically inferred from multiple reference triplets and the list of objects. Follow these steps when finishing the task:

1. Answer "yes" if the claim appears in the reference.

2. Answer "yes" if the claim can be logically inferred from one or more triplets in the reference. Consider:

a. General Inferences: Assess common associations or implications.
b. Conditional Phrases: Note phrases like "could be", "might", "suggests", which allow broader inferences.
c. Equivalence of Objects: In your judgment, treat objects of the same kind as equal. For example, "woman", "man" should be considered under the general category of "person".
d. Support from Object List: If the claim is not directly supported or inferable from the triplets, assess whether the list of objects provides additional evidence to support or infer the claim.

3. Answer "no" if the claim neither directly matches any triplet in the reference nor can be reasonably inferred from the triplets and the object list.

Task 2: Error categorization.

If your answer to the previous task is "no", determine whether the not supported/inferred part in the claim is "object1" or "object2" or "relation".

End your reply with the line: My answer is "yes". or My answer is "no". After a "no", add the line: The error is related to "object1". (or "object2", or "relation").

Reference:
{reference}

List of Objects:
{objects}

Claim:
{claim}"""

EXTRACTION = "extraction"
_LINE = re.compile(r"^\s*\((.*)\)\s*[.,;]?\s*$")


def extracted_triplets(answer: str) -> tuple[list[tuple[str, str, str]], list[str]]:
    """The triplets of an extraction answer (one ``("s", "p", "o")`` per line, up to ``<Done>``) and
    the lines that looked like triplets but are not three parts."""
    triplets, bad = [], []
    for line in answer.split("<Done>", 1)[0].splitlines():
        found = _LINE.match(line)
        if not found:
            continue
        try:
            parts = json.loads(f"[{found.group(1)}]")
        except json.JSONDecodeError:
            parts = f"({found.group(1)})"  # unquoted parts: read as the scene graph's own strings
        parsed = parse_triplet(parts)
        if parsed is None:
            bad.append(line.strip())
        else:
            triplets.append(parsed)
    return triplets, bad


def _quoted(triplet: Sequence[str]) -> str:
    return "(" + ", ".join(json.dumps(part, ensure_ascii=False) for part in triplet) + ")"


def _judge_unit(k: int) -> str:
    return f"triplet {k}"


class TripletJudge(Strategy):
    name = "trihe-triplets"
    title = "Tri-HE · extract the answer's triplets, judge each against the scene graph"
    paper = "Tri-HE"
    produces = "triplet judgments"
    stages = 2
    uses_image = False

    def templates(self) -> Sequence[str]:
        return (EXTRACT, JUDGE)

    def unsuitable(self, item: RunItem) -> str | None:
        return None if item.reference_triplets else "the item has no reference scene graph to judge against"

    def calls(self, item: RunItem, stage: int, outputs: Outputs) -> list[Call]:
        if stage == 0:
            return [Call(EXTRACTION, fill(EXTRACT, input_text=item.response), image=False, sampled=False)]
        triplets, _ = extracted_triplets(outputs[EXTRACTION])
        reference = "\n".join(_quoted(t) for t in item.reference_triplets)
        objects = ", ".join(item.objects) or "none"
        return [
            Call(
                _judge_unit(k),
                fill(JUDGE, reference=reference, objects=objects, claim=_quoted(triplet)),
                image=False,
            )
            for k, triplet in enumerate(triplets)
        ]

    def parse(self, item: RunItem, outputs: Outputs) -> Annotations:
        extraction = outputs[EXTRACTION]
        triplets, bad = extracted_triplets(extraction)
        judgements = [outputs[_judge_unit(k)] for k in range(len(triplets))]
        raw_text = json.dumps(
            {
                "answer": None,
                "triplets": [list(t) for t in triplets],
                "judgements": judgements,
                "error_parts": None,
                "extraction": extraction,
            },
            ensure_ascii=False,
        )
        try:
            if bad:
                raise RecordError("triplets", f"{bad[0]!r} is not (subject, relation, object)")
            if not triplets and item.response.strip():
                raise RecordError("triplets", "the extraction answer holds no triplet")
            records = []
            for k, triplet in enumerate(triplets):
                try:
                    verdict, wrong = verdict_of(judgements[k])
                except RecordError as error:
                    raise RecordError(f"judgements[{k}]", error.reason) from None
                if verdict is None:  # verdict_of reads an empty or "null" reply as no judgment
                    raise RecordError(f"judgements[{k}]", "the reply gives no yes/no verdict")
                records.append(TripletRecord(*triplet, verdict=verdict, wrong_part=wrong))
        except RecordError as error:
            reason = f"{error.field}: {error.reason}"
            return Annotations(
                item.external_id, raw_output=RawOutputRecord(raw_text, False, parse_error=reason)
            )
        return Annotations(item.external_id, triplets=records, raw_output=RawOutputRecord(raw_text, True))


STRATEGIES: tuple[Strategy, ...] = (TripletJudge(),)
