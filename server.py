"""Spanlight's server: the pages (``app.py``) and the one route a page cannot serve itself, the download of
a prepared export streamed from disk (:mod:`db.prepared_exports`), so a large file is never held in
memory; and the answer to two addresses the pages never get to see (:class:`PageAddresses`).

Run with ``make run`` (``streamlit run server.py``). ``streamlit run app.py`` serves the same pages
without the route; the Export page then offers its file as an ordinary download button.
"""

from __future__ import annotations

import html
from functools import cache
from urllib.parse import quote

import streamlit as st
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from db import prepared_exports
from db.access import Forbidden
from db.engine import make_engine
from page_table import pages

# One engine for the downloads, on the store the pages use (the configured one).
_store = cache(make_engine)


def download(request: Request) -> Response:
    """The prepared file of the ticket in the path, streamed in chunks; 404 when expired or unknown,
    403 when the account that prepared it may no longer export."""
    prepared_exports.sweep_exports()
    try:
        path = prepared_exports.download_file(_store(), request.path_params["ticket"])
    except prepared_exports.ExportGone as gone:
        return PlainTextResponse(str(gone), status_code=404)
    except Forbidden as refused:
        return PlainTextResponse(str(refused), status_code=403)
    return FileResponse(path, filename=path.name, media_type="application/octet-stream")


# First segments of the nested addresses Streamlit itself serves (its API, assets, media, components and
# static files) and this server's downloads: never answered as a page.
_SERVED_NESTED = frozenset(
    {"_stcore", "static", "media", "component", "app", prepared_exports.ROUTE.split("/")[1]}
)


class PageAddresses:
    """Two page addresses the app cannot answer itself, answered before Streamlit sees them.

    - **A nested address** (``/a/b``, ``/metrics/old``): Streamlit answers every unknown path with its
      page, whose scripts are linked relative to the address, so under ``/a/`` they were asked for at
      ``/a/static/…``, got the page again, and the browser showed a blank page for good. Such an
      address now gets a 404 page that says there is no page there (the address as its characters) and
      links to the start page, and to the page its first segment names, if it names one.
    - **The default page's own name** (``/home``): Streamlit serves that page at the root only, and at
      its name ran it under a "Page not found" dialog. It now redirects to the root, query kept.

    Only a GET or HEAD that Streamlit would answer with its page (200, HTML) is replaced, so nothing it
    serves otherwise changes."""

    def __init__(self, app: ASGIApp, base: str) -> None:
        self.app = app
        self.base = f"/{base}" if base else ""
        self.default = next(spec.url_name() for spec in pages() if spec.default)
        self.page_names = {spec.url_name() for spec in pages()} - {self.default}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        segments = self._segments(scope)
        if segments is None:
            await self.app(scope, receive, send)
            return
        if segments == [self.default]:
            query = scope.get("query_string", b"").decode("latin-1")
            root = f"{self.base}/" + (f"?{query}" if query else "")
            await RedirectResponse(root, status_code=308)(scope, receive, send)
            return
        if len(segments) < 2 or segments[0] in _SERVED_NESTED:
            await self.app(scope, receive, send)
            return
        replaced = False

        async def answer(message: Message) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and _is_the_app_page(message):
                replaced = True
                await self._not_found(segments)(scope, receive, send)
            elif not replaced:
                await send(message)

        await self.app(scope, receive, answer)

    def _segments(self, scope: Scope) -> list[str] | None:
        """The address's segments below the base path; None for what is no page request."""
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            return None
        path: str = scope["path"]
        if self.base and not path.startswith(f"{self.base}/"):
            return None
        return [s for s in path[len(self.base) :].split("/") if s] or None

    def _not_found(self, segments: list[str]) -> Response:
        address = "/" + "/".join(segments)
        start = f"{self.base}/"
        links = [f'<a href="{html.escape(start)}">the Datasets page</a>']
        if segments[0] in self.page_names:
            title = next(spec.title for spec in pages() if spec.url_name() == segments[0])
            target = f"{self.base}/{quote(segments[0])}"
            links.insert(0, f'<a href="{html.escape(target)}">{html.escape(title)}</a>')
        body = (
            "<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width, initial-scale=1">'
            "<title>Page not found · Spanlight</title>"
            "<style>body{font-family:sans-serif;max-width:40em;margin:4em auto;padding:0 1em;line-height:1.5}"
            "code{background:#eee;padding:0 .2em;word-break:break-all}</style></head><body>"
            "<h1>Page not found</h1>"
            f"<p>There is no page at <code>{html.escape(address)}</code>: the address may be mistyped, "
            "or a bookmark of a page that has since moved.</p>"
            f"<p>Go on to {' or '.join(links)}.</p></body></html>"
        )
        return HTMLResponse(
            body,
            status_code=404,
            headers={"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"},
        )


def _is_the_app_page(start: Message) -> bool:
    headers: dict[bytes, bytes] = dict(start.get("headers", []))
    return bool(start["status"] == 200 and headers.get(b"content-type", b"").startswith(b"text/html"))


def _base_path() -> str:
    return str(st.get_option("server.baseUrlPath") or "").strip("/")


_path = f"/{_base_path()}{prepared_exports.ROUTE}" if _base_path() else prepared_exports.ROUTE
prepared_exports.serve_downloads_at(_path)
prepared_exports.sweep_exports()  # what expired while the server was down
app = st.App(
    "app.py",
    routes=[Route(f"{_path}/{{ticket}}", download)],
    middleware=[Middleware(PageAddresses, base=_base_path())],
)
