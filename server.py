"""Spanlight's server: the pages (``app.py``) and the one route a page cannot serve itself, the download of
a prepared export streamed from disk (:mod:`db.prepared_exports`), so a large file is never held in
memory.

Run with ``make run`` (``streamlit run server.py``). ``streamlit run app.py`` serves the same pages
without the route; the Export page then offers its file as an ordinary download button.
"""

from __future__ import annotations

import streamlit as st
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from db import prepared_exports


def download(request: Request) -> Response:
    """The prepared file of the ticket in the path, streamed in chunks; 404 when expired or unknown."""
    prepared_exports.sweep_exports()
    path = prepared_exports.prepared_file(request.path_params["ticket"])
    if path is None:
        return PlainTextResponse(
            "This download has expired or does not exist. Prepare the file again on the Export page.",
            status_code=404,
        )
    return FileResponse(path, filename=path.name, media_type="application/octet-stream")


def _route_path() -> str:
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{prepared_exports.ROUTE}" if base else prepared_exports.ROUTE


_path = _route_path()
prepared_exports.serve_downloads_at(_path)
prepared_exports.sweep_exports()  # what expired while the server was down
app = st.App("app.py", routes=[Route(f"{_path}/{{ticket}}", download)])
