"""The Import page's server-path mode in the browser, as the import tests open it."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.app_server import RunningApp
from tests.e2e.browser import AppTab


def import_folder(app: RunningApp) -> Path:
    """The app's import folder (made if missing), where a test puts the files it imports by path."""
    folder = app.data_dir / "imports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_server_path_mode(tab: AppTab, app: RunningApp) -> None:
    """Open the Import page and switch it to a file on the server, read by path."""
    tab.goto(f"{app.url}/import_data")
    tab.after_run(tab.page.locator(".st-key-import_mode").get_by_text("Path on the server").click)
