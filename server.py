"""Spanlight's server: the pages (``app.py``) and the one route a page cannot serve itself, the download of
a prepared export streamed from disk (:mod:`db.prepared_exports`), so a large file is never held in
memory.

Run with ``make run`` (``streamlit run server.py``). ``streamlit run app.py`` serves the same pages
without the route; the Export page then offers its file as an ordinary download button.
"""

from __future__ import annotations

from functools import cache

import streamlit as st
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from db import prepared_exports
from db.access import Forbidden
from db.engine import make_engine

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


def _route_path() -> str:
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{prepared_exports.ROUTE}" if base else prepared_exports.ROUTE


_path = _route_path()
prepared_exports.serve_downloads_at(_path)
prepared_exports.sweep_exports()  # what expired while the server was down
app = st.App("app.py", routes=[Route(f"{_path}/{{ticket}}", download)])
