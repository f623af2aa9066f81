"""A real chat-completions server on 127.0.0.1 for the detector tests, answering from a script.

It speaks HTTP/1.1 with keep-alive, as an OpenAI-compatible server does, and records every request
(headers, JSON body, arrival time). A script is a function of the request's user text and how many
times that same text was asked before (1 for the first) returning a :class:`Reply`: a completion (cut
at max tokens, if its finish reason says so; without usage counts, if wanted), an HTTP error (with ``Retry-After`` if wanted), an answer
after a delay (past the client's timeout), a body cut short, a body that is not JSON, or a connection
reset with no answer at all.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    kind: str = "answer"  # answer / status / truncated / not-json / reset
    text: str = ""
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    prompt_tokens: int = 100
    completion_tokens: int = 20
    finish_reason: str = "stop"
    usage: bool = True  # False: the completion carries no ``usage`` counts, as some servers send it


def answer(
    text: str,
    *,
    delay_s: float = 0.0,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    finish_reason: str = "stop",
    usage: bool = True,
) -> Reply:
    return Reply(
        "answer",
        text,
        delay_s=delay_s,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        finish_reason=finish_reason,
        usage=usage,
    )


def status(code: int, retry_after: str | None = None, message: str = "scripted failure") -> Reply:
    headers = (("Retry-After", retry_after),) if retry_after is not None else ()
    return Reply("status", json.dumps({"error": {"message": message}}), status=code, headers=headers)


TRUNCATED = Reply("truncated", "Here is the response with hallucinated content tagged: <Tagged_Text>")
NOT_JSON = Reply("not-json", '{"choices": [{"message": {"content": "cut')
RESET = Reply("reset")

Script = Callable[[str, int], Reply]


@dataclass
class Seen:
    """One request as the server received it."""

    at: float
    peer: tuple[str, int]
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def user_text(self) -> str:
        return user_text(self.body)

    @property
    def has_image(self) -> bool:
        content = self.body["messages"][-1]["content"]
        return isinstance(content, list) and any(p.get("type") == "image_url" for p in content)


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if p.get("type") == "text")


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # many clients connecting at once (the default 5 drops connections)
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (a timeout) makes the handler's late write fail: expected, kept quiet."""
        return None


@dataclass
class ChatServer:
    script: Script
    requests: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._asked: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without TCP_NODELAY the second waits for the
            # client's delayed ACK (40 ms), which a real server does not make its clients wait.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                headers = {k.lower(): v for k, v in self.headers.items()}
                seen = Seen(time.monotonic(), self.client_address[:2], self.path, headers, body)
                text = seen.user_text
                with server._lock:
                    server.requests.append(seen)
                    server._asked[text] = server._asked.get(text, 0) + 1
                    attempt = server._asked[text]
                server._reply(self, server.script(text, attempt), body)

        self._http = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()

    def count(self, needle: str = "") -> int:
        with self._lock:
            return sum(1 for r in self.requests if needle in r.user_text)

    def forget(self) -> None:
        with self._lock:
            self.requests.clear()

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, reply: Reply, body: dict[str, Any]) -> None:
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.kind == "reset":
            handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            handler.connection.close()
            handler.close_connection = True
            return
        if reply.kind == "answer":
            document = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.text},
                        "finish_reason": reply.finish_reason,
                    }
                ],
                "usage": {
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                },
            }
            if not reply.usage:
                del document["usage"]
            data, code = json.dumps(document).encode(), 200
        else:
            data, code = reply.text.encode(), reply.status
        try:
            handler.send_response(code)
            handler.send_header("Content-Type", "application/json")
            for name, value in reply.headers:
                handler.send_header(name, value)
            if reply.kind == "truncated":
                handler.send_header("Content-Length", str(len(data) + 500))
                handler.end_headers()
                handler.wfile.write(data)
                handler.wfile.flush()
                handler.close_connection = True
                handler.connection.shutdown(socket.SHUT_RDWR)
                return
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except OSError:  # the client gave up (timed out) before the answer came
            handler.close_connection = True
