"""Judge bias: a detector judging text written by its own model family (AlignBench section 4.2, Fig. 8).

AlignBench found detectors markedly worse on their own captions — GPT-4o scores its own wrong sentences
higher than another model's — so a number measured where detector and captioner share a family is
flagged wherever it is shown. A family is the leading name of a model, without the provider's path,
version or size: ``gpt-4o-mini`` and ``openai/gpt-4.1`` are ``gpt``, ``Qwen2.5-VL-32B`` is ``qwen``,
``meta-llama/Llama-4-Scout`` is ``llama`` (and ``llava`` stays ``llava``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_LEADING = re.compile(r"[a-z]+")
# Names of one family that do not start alike.
_ALIASES = {"chatgpt": "gpt", "o": "gpt"}  # OpenAI's o1 / o3 / o4-mini

NOTE = (
    "detector and the items' source model are of one family: AlignBench (Fig. 8) found detectors "
    "much worse on their own outputs"
)


def model_family(name: str | None) -> str | None:
    """The family of a model name, or None when it names none."""
    if not name:
        return None
    found = _LEADING.search(name.strip().lower().rsplit("/", 1)[-1])
    if found is None:
        return None
    return _ALIASES.get(found.group(0), found.group(0))


def self_judged(detector_model: str | None, source_models: Mapping[str | None, int]) -> int:
    """How many items (counted per source model) were written by the detector's own family."""
    family = model_family(detector_model)
    if family is None:
        return 0
    return sum(n for source, n in source_models.items() if model_family(source) == family)


def same_family_models(detector_model: str | None, source_models: Iterable[str | None]) -> list[str]:
    """The source models that share the detector's family, in order, each once."""
    family = model_family(detector_model)
    found = [s for s in dict.fromkeys(source_models) if s and family and model_family(s) == family]
    return found
