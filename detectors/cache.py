"""The response cache: every answer received, appended to a JSON-lines file the moment it arrives.

A run writes its results to the store in batches; the answers in between live here, each line flushed
and synced to disk before the call counts as done. So a crash (or a cancel) loses at most the calls
still in flight, and the next run — a resume, or a new label set with the same endpoint, model and
prompts — replays those answers without asking again (and without paying for them again).

A line is ``{"key": …, "text": …, "prompt_tokens": …, "completion_tokens": …, "finish_reason": …, "run": …}``;
token counts the endpoint did not report are ``null``. ``run`` names the run that asked and paid for the
answer: a run killed between two of its batches has recorded in the store only what it spent up to its
last batch, and the lines it left here are what it spent after (:meth:`ResponseCache.spent`).
The key is the sha256 of what decides the answer: the endpoint, the model, the strategy's prompt hash,
the dataset and item, the call's unit and sample number, the temperature and the token limit, and a
hash of the call's text. A line cut off by a crash is skipped when the file is read back. Nothing of the
API key is ever written.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from detectors.ledger import Ledger


@dataclass(frozen=True)
class CachedAnswer:
    text: str
    prompt_tokens: int | None  # None: not reported by the endpoint
    completion_tokens: int | None
    finish_reason: str | None


def cache_key(**parts: Any) -> str:
    """sha256 over the parts (by name, in a fixed order)."""
    canonical = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers by key, read once from ``path`` and appended to it (thread-safe); ``path`` None keeps
    nothing (every call is made)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._answers: dict[str, CachedAnswer] = {}
        self._spent: dict[str, Ledger] = {}  # run id -> the answers it received, as read and put
        self._lock = threading.Lock()
        self._file = None
        self.skipped_lines = 0
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        torn = False
        if path.exists():
            self._load(path)
            with path.open("rb") as raw:
                torn = (
                    raw.seek(0, os.SEEK_END) > 0 and raw.seek(-1, os.SEEK_END) >= 0 and raw.read(1) != b"\n"
                )
        self._file = path.open("a", encoding="utf-8")
        if torn:  # end the torn line, so the next answer starts a line of its own
            self._file.write("\n")

    def _load(self, path: Path) -> None:
        with path.open("r", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                try:
                    entry = json.loads(line)
                    answer = CachedAnswer(
                        str(entry["text"]),
                        _count(entry.get("prompt_tokens")),
                        _count(entry.get("completion_tokens")),
                        entry.get("finish_reason"),
                    )
                    run = entry.get("run")
                except (ValueError, KeyError, TypeError, AttributeError):
                    self.skipped_lines += 1  # a line torn by a crash, or not ours
                    continue
                self._answers[entry["key"]] = answer
                if isinstance(run, str):
                    self._paid(run, answer)

    def _paid(self, run: str, answer: CachedAnswer) -> None:
        spent = self._spent.setdefault(run, Ledger())
        spent.answered(answer.prompt_tokens, answer.completion_tokens, cached=False)
        if answer.finish_reason == "length":
            spent.cut()

    def spent(self, run: str) -> dict[str, Any] | None:
        """What the answers ``run`` received cost it (a :meth:`Ledger.snapshot` without prices), as far
        as this file holds them; None when it holds none."""
        with self._lock:
            spent = self._spent.get(run)
            return spent.snapshot() if spent is not None else None

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, key: str) -> CachedAnswer | None:
        return self._answers.get(key)

    def put(self, key: str, answer: CachedAnswer, *, run: str | None = None) -> None:
        """Keep ``answer``, received and paid for by ``run``, and make it durable before returning (flush,
        then fsync).

        Written as ASCII JSON: a reply may hold broken Unicode (a lone surrogate, which JSON carries as
        ``\\ud800``), and the line must be written and read back as it came, so that the import can refuse
        the reply by name; written raw, it could not be encoded and the whole run failed."""
        line = json.dumps(
            {
                "key": key,
                "text": answer.text,
                "prompt_tokens": answer.prompt_tokens,
                "completion_tokens": answer.completion_tokens,
                "finish_reason": answer.finish_reason,
            }
            | ({"run": run} if run is not None else {})
        )
        with self._lock:
            self._answers[key] = answer
            if run is not None:
                self._paid(run, answer)
            if self._file is None:
                return
            self._file.write(line + "\n")
            self._file.flush()
            descriptor = self._file.fileno()
        # Outside the lock: threads' syncs of the same file overlap, so one disk flush serves several.
        os.fsync(descriptor)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _count(value: Any) -> int | None:
    """A line's token count: None when the endpoint reported none (``null``)."""
    return None if value is None else int(value)
