"""The chat client against a real local server: answers, bounded retries on what is worth retrying,
Retry-After obeyed, cancel honoured, and the API key in no message or log line."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from detectors.client import (
    CallFailed,
    Cancelled,
    ChatClient,
    RetryPolicy,
    base_url_problem,
    redacted_endpoint,
    retry_after_seconds,
)
from tests.detectors.chat_server import NOT_JSON, RESET, TRUNCATED, ChatServer, answer, status

KEY = "sk-test-4f9a1c7e-SECRET"
FAST = RetryPolicy(attempts=4, base_delay_s=0.01, max_delay_s=0.05)
BODY = {"model": "judge-1", "messages": [{"role": "user", "content": "hello"}], "temperature": 0}


def client(server: ChatServer, **options) -> ChatClient:
    options.setdefault("policy", FAST)
    options.setdefault("timeout_s", 2.0)
    return ChatClient(server.base_url, KEY, **options)


def test_an_answer_comes_back_with_its_usage_and_the_key_only_in_the_header():
    with ChatServer(lambda text, n: answer("fine", prompt_tokens=7, completion_tokens=3)) as server:
        got = client(server).complete(BODY)
    assert (got.text, got.prompt_tokens, got.completion_tokens, got.attempts) == ("fine", 7, 3, 1)
    (seen,) = server.requests
    assert seen.path == "/v1/chat/completions" and seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body == BODY


@pytest.mark.parametrize(
    "first",
    [status(429), status(500), status(503), status(408), TRUNCATED, NOT_JSON, RESET],
    ids=["429", "500", "503", "408", "truncated", "not-json", "reset"],
)
def test_a_passing_failure_is_retried_and_the_answer_kept(first, caplog):
    retries: list[str] = []
    script = lambda text, n: first if n == 1 else answer("second time")  # noqa: E731
    with ChatServer(script) as server, caplog.at_level(logging.WARNING, logger="spanlight.detectors"):
        got = client(server, on_retry=retries.append).complete(BODY)
    assert got.text == "second time" and got.attempts == 2 and len(server.requests) == 2
    assert len(retries) == 1 and "attempt 1 of 4" in caplog.text
    assert KEY not in caplog.text and all(KEY not in r for r in retries)


def test_a_slow_answer_past_the_timeout_is_retried():
    with ChatServer(lambda text, n: answer("late", delay_s=1.0) if n == 1 else answer("on time")) as server:
        got = client(server, timeout_s=0.3).complete(BODY)
    assert got.text == "on time" and got.attempts == 2


def test_retries_are_bounded_and_the_reason_says_why():
    with ChatServer(lambda text, n: status(500)) as server, pytest.raises(CallFailed) as failed:
        client(server).complete(BODY)
    assert failed.value.attempts == 4 and len(server.requests) == 4
    assert failed.value.reason == "HTTP 500: scripted failure (gave up after 4 attempts)"


def test_a_request_the_server_refuses_is_not_retried_and_an_echoed_key_is_masked():
    refusal = status(401, message=f"Incorrect API key provided: {KEY}")
    with ChatServer(lambda text, n: refusal) as server, pytest.raises(CallFailed) as failed:
        client(server).complete(BODY)
    assert len(server.requests) == 1 and failed.value.attempts == 1
    assert failed.value.reason == "HTTP 401: Incorrect API key provided: ***"


def test_retry_after_is_obeyed():
    with ChatServer(lambda text, n: status(429, retry_after="1") if n == 1 else answer("ok")) as server:
        client(server).complete(BODY)
    first, second = server.requests
    assert second.at - first.at >= 0.95


def test_backoff_grows_with_jitter_and_retry_after_is_capped():
    policy = RetryPolicy(attempts=6, base_delay_s=1.0, max_delay_s=4.0, max_retry_after_s=10.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (5, 4.0)]:
        waits = {policy.delay(attempt, None) for _ in range(50)}
        assert all(ceiling / 2 <= w <= ceiling for w in waits) and len(waits) > 1
    assert policy.delay(1, 7.0) == 7.0 and policy.delay(1, 3600.0) == 10.0
    assert retry_after_seconds("2.5") == 2.5 and retry_after_seconds("soon") is None
    assert 0 <= retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") <= 0.0 + 1e-9


def test_cancel_ends_a_wait_between_attempts():
    cancel = threading.Event()
    with ChatServer(lambda text, n: status(503, retry_after="30")) as server:
        chat = client(server, cancel=cancel, policy=RetryPolicy(attempts=3, max_retry_after_s=60))
        threading.Timer(0.2, cancel.set).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            chat.complete(BODY)
    assert time.monotonic() - started < 5 and len(server.requests) == 1


def test_connections_are_kept_alive_between_calls():
    with ChatServer(lambda text, n: answer("again")) as server:
        chat = client(server)
        for _ in range(5):
            chat.complete(BODY)
        chat.close()
    assert len(server.requests) == 5 and len({r.peer for r in server.requests}) == 1


def test_the_base_urls_query_is_sent_but_never_shown():
    with ChatServer(lambda text, n: answer("ok")) as server:
        chat = ChatClient(server.base_url + "/?api-version=2024-06-01", policy=FAST)
        chat.complete(BODY)
    assert server.requests[0].path == "/v1/chat/completions?api-version=2024-06-01"
    assert chat.endpoint == server.base_url and "authorization" not in server.requests[0].headers


def test_endpoints_are_shown_without_credentials_and_checked():
    assert (
        redacted_endpoint("https://user:pw@api.example.com:8443/v1/?key=abc#x")
        == "https://api.example.com:8443/v1"
    )
    assert base_url_problem("ftp://example.com") is not None
    assert base_url_problem("http://127.0.0.1:8000/v1") is None


class _Trickle:
    """A raw HTTP server that sends its headers, then its body one byte at a time, a byte every
    ``gap_s``: each read gets a byte well within the timeout, the whole answer never does."""

    def __init__(self, body: bytes, gap_s: float = 0.05) -> None:
        import socket

        self.body, self.gap_s = body, gap_s
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            connection.recv(65536)
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(self.body)}\r\n\r\n"
            try:
                connection.sendall(head.encode())
                for byte in self.body:
                    if self.stop.wait(self.gap_s):
                        return
                    connection.sendall(bytes([byte]))
            except OSError:  # the client gave up
                return

    def __enter__(self) -> _Trickle:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.listener.close()


def test_the_timeout_bounds_a_whole_answer_however_slowly_it_comes():
    """A server trickling its answer a byte at a time kept the call, and its run, going for good: the
    timeout applied to each read, and each read got a byte in time."""
    with _Trickle(b'{"choices": [{"message": {"content": "' + b"x" * 4000 + b'"}}]}') as server:
        slow = ChatClient(server.base_url, KEY, timeout_s=0.5, policy=RetryPolicy(attempts=1))
        with pytest.raises(CallFailed, match=r"no answer within 0.5 s \(gave up after 1 attempts\)"):
            slow.complete(BODY)


def test_a_cancelled_run_stops_a_call_between_reads():
    cancel = threading.Event()
    with _Trickle(b'{"choices": [{"message": {"content": "' + b"x" * 4000 + b'"}}]}') as server:
        slow = ChatClient(server.base_url, KEY, timeout_s=600, policy=RetryPolicy(attempts=1), cancel=cancel)
        threading.Timer(0.3, cancel.set).start()
        with pytest.raises(Cancelled):
            slow.complete(BODY)


def test_an_answer_larger_than_the_cap_fails_without_a_retry(monkeypatch):
    import detectors.client as chat

    monkeypatch.setattr(chat, "MAX_ANSWER_BYTES", 1000)
    with ChatServer(lambda text, n: answer("A" * 5000)) as server:
        with pytest.raises(CallFailed, match="larger than"):
            client(server).complete(BODY)
        assert len(server.requests) == 1
