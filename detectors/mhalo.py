"""MHALO's detectors (appendix D, Tables 11-14 and 16): the response copied back with each hallucinated
span tagged, or the spans given as word indices in JSON.

Five strategies, their wording kept from the appendix: Vanilla (zero-shot), 2-shot (two worked
examples), Criteria (the twelve hallucination types of Table 1 in the prompt), Analyze-then-Judge (an
``<Analysis>`` before the ``<Tagged_Text>``) and the JSON word-index format. One call per item, with
the image. The item's prompt and response follow the instruction as in the appendix's example input.

Answers are read by the file formats' own readers: tagged text by :func:`formats.mhalo_outputs.read_output`
(the IF flag: the tags parse and the text holds the response's words, whitespace aside) and word
indices by :func:`formats.word_index.place_words`; an answer that breaks the format is kept, with no
spans.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from detectors.base import Call, Outputs, RunItem, Strategy, fill
from formats.fields import RecordError
from formats.mhalo_outputs import DEFAULT_TAG, read_output
from formats.records import Annotations, RawOutputRecord, SpanRecord
from formats.word_index import place_words

SYSTEM = (
    "You are a hallucination detector for multimodal large language models. "
    "Your task is to tag hallucinations in the model's response."
)
SYSTEM_SHORT = "You are a hallucination detector for multimodal large language models."

INPUT = """Input:

prompt given to the model: {prompt}

model's response: {response}"""

FORMAT_REQUIREMENTS = """IMPORTANT OUTPUT FORMAT REQUIREMENTS:

1. Start with EXACTLY this line: "Here is the response with hallucinated content tagged:"
2. Then use <Tagged_Text> tags to wrap the tagged response
3. Inside <Tagged_Text> tags:
  - Output the original response with ONLY <hallucination> tags added
  - DO NOT modify or change any words in the original response
  - ONLY add <hallucination> tags around hallucinated content
  - If there are no hallucinations, output the original text exactly as is
4. End with </Tagged_Text>
5. DO NOT add any other text, analysis, or explanation
6. ANY OTHER FORMAT WILL BE REJECTED"""

NOTICEMENTS = """NOTICEMENTS

INCORRECT Outputs (DO NOT DO THESE):

- Any text before "Here is the response with hallucinated content tagged:"
- Any text between the header and <Tagged_Text>
- Any text after </Tagged_Text>
- Any explanatory text or analysis
- Any modification to the original text
- Any additional formatting or tags besides <hallucination>"""

EXAMPLE_ONE = """Example Input:

prompt given to the model: describe the image

model's response: The bright red sports car is parked near a lake.

Correct Output Format:

Here is the response with hallucinated content tagged:

<Tagged_Text>

The <hallucination>bright red</hallucination> sports car is <hallucination>parked near a lake</hallucination>.

</Tagged_Text>"""

VANILLA = f"""INSTRUCTION

{FORMAT_REQUIREMENTS}

EXAMPLE

{EXAMPLE_ONE}

{NOTICEMENTS}

{INPUT}"""

TWO_SHOT = f"""INSTRUCTION

Here is the prompt given to the model:

{{prompt}}

Here is the model's response:

{{response}}

Please analyze the image and add <hallucination> tags to any hallucinated content in the model's response. Remember to tag each hallucinated content separately!

{FORMAT_REQUIREMENTS}

EXAMPLES

Example Input 1:

prompt given to the model: describe the image

model's response: The bright red sports car is parked near a lake.

Example Output 1:

Here is the response with hallucinated content tagged:

<Tagged_Text>

The <hallucination>bright red</hallucination> sports car is <hallucination>parked near a lake</hallucination>.

</Tagged_Text>

Example Input 2:

prompt given to the model: what is the person wearing?

model's response: The woman is wearing a blue dress with white flowers and holding a black umbrella.

Example Output 2:

Here is the response with hallucinated content tagged:

<Tagged_Text>

The <hallucination>woman</hallucination> is wearing a <hallucination>blue dress with white flowers</hallucination> and <hallucination>holding a black umbrella</hallucination>.

</Tagged_Text>

{NOTICEMENTS}"""

HALLUCINATION_TYPES = """DEFINITION OF 12 HALLUCINATION TYPES

When identifying hallucinations, refer to these types:

1. **Object**: Incorrect identification of objects in visual content.
2. **OCR**: Failure in text recognition processes within images.
3. **Numerical Attribute**: Misinterpretation of numerical values in visual elements.
4. **Color Attribute**: Errors in identifying the color.
5. **Shape Attribute**: Misrecognition of object shapes.
6. **Spatial Attribute**: Errors in recognizing the position, orientation, or distance of the object.
7. **Numerical Relations**: Misinterpreting the numerical relationship between objects (e.g., misreading proportions or quantities).
8. **Spatial Relations**: Misunderstanding the spatial, orientation, or distance relationships between objects.
9. **Logical Errors**: Errors in reasoning, such as incorrect causal relationships or conflicts in inference steps.
10. **Calculation Errors**: Errors in mathematical operations (e.g., addition, subtraction, equation solving).
11. **Knowledge Errors**: Applies incorrect domain knowledge or makes unrealistic inferences (e.g., violating common sense or physical laws).
12. **Query Misunderstanding**: Provides incorrect or irrelevant answers due to misunderstanding the query."""

CRITERIA = f"""INSTRUCTION

{FORMAT_REQUIREMENTS}

{HALLUCINATION_TYPES}

EXAMPLE

{EXAMPLE_ONE}

{NOTICEMENTS}

{INPUT}"""

ANALYZE_THEN_JUDGE = f"""INSTRUCTION

Your task is to:
1. Analyze the image and the model's response to an image-related query.
2. First provide your analysis in <Analysis>...</Analysis> tags:
  - Analyze what is actually present in the image
  - Compare it with what the model claims
  - Explain any discrepancies you find
3. Then in <Tagged_Text>...</Tagged_Text> tags:
  - Output the original model's response unchanged with <hallucination> tags
  - Tag hallucinated words/phrases with <hallucination>
  - If no hallucinations, output the original text unchanged

EXAMPLE

Example Input: prompt given to the model: describe the image model's response: The bright red sports car...

Example Output Format:
<Analysis> The image shows a car, but: 1. The car is actually blue, not red 2. It's a regular sedan, not a sports car Therefore, both the color description and car type are hallucinations. </Analysis>

<Tagged_Text> The <hallucination>bright red</hallucination> sports car... </Tagged_Text>

{INPUT}"""

JSON_INDEX = f"""INSTRUCTION

Your task is to identify hallucinations by providing their exact word indices in the text. Please output your results in JSON format.

IMPORTANT OUTPUT FORMAT REQUIREMENTS:

1. Start with EXACTLY this line: "Here is the hallucination analysis:"
2. Then output the hallucinations as a JSON object with the following structure:

{{
  "hallucinations": [ {{
    "start": X,
    "end": Y,
    "text": "hallucinated text"
  }}, ... ] }}

where: X is the starting word index (0-based) Y is the ending word index (exclusive)

hallucinated_text is the exact text from those indices

DO NOT add any other text, analysis, or explanation.

ANY OTHER FORMAT WILL BE REJECTED.

EXAMPLE

Example Input: prompt given to the model: describe the image

model's response: The bright red sports car is parked near a lake.

Correct Output Format: Here is the hallucination analysis: {{
  "hallucinations": [
    {{
      "start": 1,
      "end": 3,
      "text": "bright red"
    }},
    {{
      "start": 6,
      "end": 10,
      "text": "parked near a lake"
    }} ]
}}

NOTICEMENTS

INCORRECT Outputs (DO NOT DO THESE):

Any text before "Here is the hallucination analysis:"

Any text between the header and the JSON output

Any text after the JSON output Any explanatory text or analysis

Any modification to the original text

Any additional formatting or tags besides JSON

{INPUT}"""


class TaggedText(Strategy):
    """A strategy whose answer is the response with ``<hallucination>`` tags (Tables 11-14)."""

    paper = "MHALO"
    produces = "spans"
    system = SYSTEM
    template = VANILLA

    def templates(self) -> Sequence[str]:
        return (self.system, self.template)

    def calls(self, item: RunItem, stage: int, outputs: Outputs) -> list[Call]:
        user = fill(self.template, prompt=item.prompt, response=item.response)
        return [Call("item", user, self.system)]

    def parse(self, item: RunItem, outputs: Outputs) -> Annotations:
        spans, raw = read_output(outputs["item"], item.response, DEFAULT_TAG)
        return Annotations(item.external_id, [SpanRecord(s, e) for s, e in spans], raw_output=raw)


class Vanilla(TaggedText):
    name = "mhalo-vanilla"
    title = "MHALO · Vanilla (zero-shot, tagged text)"


class TwoShot(TaggedText):
    name = "mhalo-2-shot"
    title = "MHALO · 2-shot (two worked examples)"
    template = TWO_SHOT


class Criteria(TaggedText):
    name = "mhalo-criteria"
    title = "MHALO · Criteria (the 12 hallucination types in the prompt)"
    template = CRITERIA


class AnalyzeThenJudge(TaggedText):
    name = "mhalo-analyze-then-judge"
    title = "MHALO · Analyze-then-Judge (<Analysis> then tagged text)"
    system = SYSTEM_SHORT
    template = ANALYZE_THEN_JUDGE


_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)


def json_object_in(answer: str) -> Any:
    """The JSON object an answer holds after its header line (code fences allowed); RecordError when
    there is none."""
    text = _FENCE.sub("", answer)
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end < start:
        raise RecordError("output", "no JSON object in the answer")
    try:
        return json.loads(text[start : end + 1])
    except json.JSONDecodeError as error:
        raise RecordError("output", f"the JSON object does not parse: {error.msg}") from None
    except RecursionError:
        raise RecordError("output", "the JSON object is nested too deeply") from None


class JsonWordIndex(Strategy):
    name = "mhalo-json-index"
    title = "MHALO · JSON word indices (Table 16)"
    paper = "MHALO"
    produces = "spans"

    def templates(self) -> Sequence[str]:
        return (SYSTEM_SHORT, JSON_INDEX)

    def calls(self, item: RunItem, stage: int, outputs: Outputs) -> list[Call]:
        return [Call("item", fill(JSON_INDEX, prompt=item.prompt, response=item.response), SYSTEM_SHORT)]

    def parse(self, item: RunItem, outputs: Outputs) -> Annotations:
        answer = outputs["item"]
        try:
            found = json_object_in(answer)
            if not isinstance(found, dict) or "hallucinations" not in found:
                raise RecordError("hallucinations", "the JSON object has no hallucinations list")
            spans = place_words(found["hallucinations"], item.response)
        except RecordError as error:
            reason = f"{error.field}: {error.reason}"
            return Annotations(
                item.external_id, raw_output=RawOutputRecord(answer, False, parse_error=reason)
            )
        return Annotations(
            item.external_id, [SpanRecord(s, e) for s, e in spans], raw_output=RawOutputRecord(answer, True)
        )


STRATEGIES: tuple[Strategy, ...] = (Vanilla(), TwoShot(), Criteria(), AnalyzeThenJudge(), JsonWordIndex())
