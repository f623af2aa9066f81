"""One chat-completions call to an OpenAI-compatible endpoint, with bounded retries.

``POST {base_url}/chat/completions`` over the standard library's ``http.client``, one kept-alive
connection per worker thread (a new connection per call costs more than the call on a local server).
A call is retried on 429, 408, 409, 425 and 5xx answers, on connection errors (refused, reset, closed
early), on timeouts and on a body that is cut short or is not the JSON a completion is, waiting between
attempts with exponential backoff and jitter — or as long as the server's ``Retry-After`` asks, up to a
cap — and never more than :attr:`RetryPolicy.attempts` times in all. A 429 holds back every thread of
the client, not only the call it answered (:mod:`detectors.throttle`). The timeout bounds each attempt
as a whole, however slowly its answer comes, and an answer over :data:`MAX_ANSWER_BYTES` fails the
call. Other 4xx answers (a bad request, a wrong key) are not retried: trying again would only fail
again. A failed call says whether the endpoint itself refused or could not be reached
(:attr:`CallFailed.kind`), so a run can stop rather than ask again for every item.

The API key is sent only in the ``Authorization`` header. It is never part of a message: errors and log
lines name the endpoint without credentials or query (:func:`redacted_endpoint`) and have the key
masked wherever a server echoed it back.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

from detectors.throttle import Halted, Throttle

log = logging.getLogger("spanlight.detectors")

RETRY_STATUSES = frozenset({408, 409, 425, 429})
# Refusals of the endpoint itself, not of one request: a wrong or revoked key, no credit, no access, no
# such path or model. Every other call would be refused alike.
REFUSED_STATUSES = frozenset({401, 402, 403, 404})
# The largest answer read: an endpoint that ignores max_tokens must not fill the memory (a 20 MB answer
# took a gigabyte, and froze the browser showing it). Far above any completion a detector asks for.
MAX_ANSWER_BYTES = 8 * 2**20
_CHUNK_BYTES = 64 * 1024


class _TooLarge(Exception):
    """The answer's body went past :data:`MAX_ANSWER_BYTES`."""


class _Unreachable(Exception):
    """No connection to the endpoint could be opened (its cause says why)."""


class Cancelled(Exception):
    """The run was cancelled while this call waited to try again, or between reads of its answer."""


class CallFailed(Exception):
    """The call did not get an answer; ``reason`` says why (never with the key in it), ``kind`` whether
    another call would fare any better: ``refused`` (the endpoint refused the key, the account or the
    path: :data:`REFUSED_STATUSES`), ``unreachable`` (no connection could be made), ``throttled`` (429
    to the last attempt), ``rejected`` (the endpoint answered that this request is wrong, a 400 such as
    "maximum context length exceeded": about this item, and another call may well be answered), else
    ``call`` (no answer to the last attempt: 5xx, timeouts, broken answers)."""

    def __init__(self, reason: str, attempts: int, kind: str = "call") -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts
        self.kind = kind


class EndpointError(ValueError):
    """The base URL cannot be used (not http/https, no host)."""


@dataclass(frozen=True)
class Answer:
    text: str
    # None when the endpoint did not report it (no ``usage``): not a count of 0.
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    attempts: int


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """The wait after failed attempt number ``attempt`` (from 1): exponential with jitter (half
        fixed, half random, so waits spread out yet grow), or the server's ``Retry-After`` if longer."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        wait: float = ceiling / 2 + random.uniform(0, ceiling / 2)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_retry_after_s))
        return wait


def _split(base_url: str) -> SplitResult:
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointError(
            f"the base URL must be http:// or https:// with a host, got {redacted_endpoint(base_url)!r}"
        )
    return parts


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def key_variable_problem(name: str) -> str | None:
    """Why ``name`` cannot be the name of the environment variable holding the key, or None. Such a
    field filled with the key itself ("sk-proj-…") must not be repeated back on the screen."""
    if not name or _ENV_NAME.fullmatch(name):
        return None
    return (
        "the API key's environment variable is named with letters, digits and underscores only "
        "(a key itself is never typed here: set it in the server's environment)"
    )


def base_url_problem(base_url: str) -> str | None:
    """Why ``base_url`` cannot be called, or None."""
    try:
        _split(base_url)
    except (EndpointError, ValueError) as error:
        return str(error)
    return None


def redacted_endpoint(base_url: str) -> str:
    """The base URL without user, password, query or fragment: safe to show, log and store."""
    parts = urlsplit(base_url.strip())
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def completions_path(parts: SplitResult) -> str:
    """The request path, keeping the base URL's query (Azure's ``?api-version=…``); only the shown and
    stored endpoint drops it (:func:`redacted_endpoint`)."""
    path = parts.path.rstrip("/")
    path = path if path.endswith("/chat/completions") else f"{path}/chat/completions"
    return f"{path}?{parts.query}" if parts.query else path


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds from now: a number of seconds, or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def answer_text(document: Any) -> tuple[str, int | None, int | None, str | None]:
    """``(text, prompt tokens, completion tokens, finish reason)`` of a completion, a count None when
    the endpoint reported none; ValueError when the document is not one."""
    if (
        not isinstance(document, dict)
        or not isinstance(document.get("choices"), list)
        or not document["choices"]
    ):
        raise ValueError("the response holds no choices")
    choice = document["choices"][0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise ValueError("the first choice holds no message")
    content = message.get("content")
    if isinstance(content, list):
        text = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    elif isinstance(content, str):
        text = content
    elif content is None:
        text = ""
    else:
        raise ValueError("the message content is neither text nor parts")
    usage = document.get("usage")
    counts = usage if isinstance(usage, dict) else {}
    finish = choice.get("finish_reason")
    return (
        text,
        _count(counts.get("prompt_tokens")),
        _count(counts.get("completion_tokens")),
        finish if isinstance(finish, str) else None,
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class ChatClient:
    """Calls one endpoint from many threads; see the module docstring for what is retried."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 60.0,
        policy: RetryPolicy | None = None,
        cancel: threading.Event | None = None,
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        self._parts = _split(base_url)
        self._path = completions_path(self._parts)
        self._key = api_key or None
        self.endpoint = redacted_endpoint(base_url)
        self.timeout_s = timeout_s
        self.policy = policy or RetryPolicy()
        self._cancel = cancel or threading.Event()
        self._throttle = Throttle(self.policy.delay, self._cancel)
        self._on_retry = on_retry
        self._local = threading.local()
        self._open: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            kind = (
                http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
            )
            connection = kind(self._parts.hostname or "", self._parts.port, timeout=self.timeout_s)
            self._local.connection = connection
            with self._lock:
                self._open.append(connection)
        return connection

    def _drop_connection(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def close(self) -> None:
        """Close every thread's connection (call when the run is over)."""
        with self._lock:
            for connection in self._open:
                connection.close()
            self._open.clear()

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def _post(self, payload: bytes) -> tuple[int, Mapping[str, str], bytes]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "Spanlight",
        }
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        # The timeout bounds the whole call, not each read: a server trickling its answer a byte at a
        # time kept a call (and its run, even cancelled) going for good.
        deadline = time.monotonic() + self.timeout_s
        connection = self._connection()
        if connection.sock is None:
            try:
                connection.connect()
            except OSError as error:
                raise _Unreachable() from error
        self._left(connection, deadline)  # a kept-alive socket still has the last call's time left
        connection.request("POST", self._path, body=payload, headers=headers)
        self._left(connection, deadline)
        response = connection.getresponse()
        chunks: list[bytes] = []
        size = 0
        while chunk := (self._left(connection, deadline) and response.read1(_CHUNK_BYTES)):
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise _TooLarge()
            chunks.append(chunk)
        if response.length:  # the connection closed before the promised Content-Length
            raise http.client.IncompleteRead(b"".join(chunks), response.length)
        response.read()  # nothing is left: this marks the response read, so the connection takes the next
        return response.status, {k.lower(): v for k, v in response.getheaders()}, b"".join(chunks)

    def _left(self, connection: http.client.HTTPConnection, deadline: float) -> bool:
        """Give the next read of the call only the time left (TimeoutError once none is), and stop
        between reads when the run is cancelled."""
        if self._cancel.is_set():
            raise Cancelled()
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError()
        if connection.sock is not None:
            connection.sock.settimeout(left)
        return True

    def complete(self, body: Mapping[str, Any]) -> Answer:
        """The answer to one chat-completions request body; raises CallFailed or Cancelled."""
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            retry_after: float | None = None
            kind = "call"
            try:
                with self._throttle.turn() as sent_at:
                    status, headers, data = self._post(payload)
            except Halted:
                raise Cancelled() from None
            except Cancelled:
                self._drop_connection()
                raise
            except _TooLarge:
                self._drop_connection()  # asked again, it would answer as much again
                raise CallFailed(
                    f"the answer is larger than {MAX_ANSWER_BYTES // 2**20} MB", attempt
                ) from None
            except _Unreachable as unreachable:
                self._drop_connection()
                problem = f"cannot connect: {_connection_problem(unreachable.__cause__ or unreachable)}"
                kind = "unreachable"
            except TimeoutError:
                self._drop_connection()
                problem = f"no answer within {self.timeout_s:g} s"
            except (OSError, http.client.HTTPException) as error:
                self._drop_connection()
                problem = _connection_problem(error)
            else:
                if status != 429:
                    self._throttle.answered()
                if 200 <= status < 300:
                    try:
                        text, prompt_tokens, completion_tokens, finish = answer_text(json.loads(data))
                    except (ValueError, RecursionError) as error:
                        problem = f"unreadable response ({_short(str(error))})"
                    else:
                        return Answer(text, prompt_tokens, completion_tokens, finish, attempt)
                elif status in RETRY_STATUSES or status >= 500:
                    # The server's own words ("model overloaded") say more than the status alone; a run
                    # that stops after such calls quotes them, as it does a refusal's.
                    said = _server_message(data)
                    problem = f"HTTP {status}: {said}" if said else f"HTTP {status}"
                    retry_after = retry_after_seconds(headers.get("retry-after"))
                    kind = "throttled" if status == 429 else kind
                else:
                    reason = f"HTTP {status}: {self._redact(_server_message(data))}"
                    raise CallFailed(reason, attempt, "refused" if status in REFUSED_STATUSES else "rejected")
            # Throttling holds back every call of the client (the next turn waits), not this one alone.
            pause = self._throttle.too_many(sent_at, retry_after) if kind == "throttled" else None
            if attempt >= self.policy.attempts:
                raise CallFailed(f"{self._redact(problem)} (gave up after {attempt} attempts)", attempt, kind)
            wait = pause if pause is not None else self.policy.delay(attempt, retry_after)
            log.warning(
                "%s: %s on attempt %d of %d; trying again in %.2f s",
                self.endpoint,
                self._redact(problem),
                attempt,
                self.policy.attempts,
                wait,
            )
            if self._on_retry is not None:
                self._on_retry(self._redact(problem))
            if pause is None and self._cancel.wait(wait):
                raise Cancelled()


def _connection_problem(error: BaseException) -> str:
    if isinstance(error, http.client.IncompleteRead):
        return f"the response body was cut short ({len(error.partial)} bytes received)"
    if isinstance(error, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(error, ConnectionResetError):
        return "the connection was reset"
    if isinstance(error, ConnectionRefusedError):
        return "the connection was refused"
    if isinstance(error, http.client.HTTPException):
        return f"malformed HTTP response ({type(error).__name__})"
    return f"connection error ({type(error).__name__}: {_short(str(error))})"


def _server_message(data: bytes) -> str:
    """The error a server gave (``{"error": {"message": …}}``), or the start of its body."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return _short(data.decode("utf-8", "replace"))
    error = document.get("error") if isinstance(document, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return _short(error["message"])
    if isinstance(error, str):
        return _short(error)
    return _short(data.decode("utf-8", "replace"))


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
