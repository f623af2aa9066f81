"""Spanlight entry point: the navigation between the user's tasks.

Served by ``server.py`` (``make run``), or alone by ``streamlit run app.py``. Pages live in ``app_pages/`` and each begins with the
shared setup (``components.page_setup.setup_page``) itself, because Streamlit may serve a page URL
before this file has run; this file therefore only routes. The pages, and the rights each needs in team
mode, are listed in ``page_table.py``; ``components/navigation.py`` builds the menu from it.
"""

from __future__ import annotations

from components.dead_ends import missing_page
from components.navigation import build_navigation, remember_origin
from components.page_address import begin_run
from components.page_setup import menu_actor

page = build_navigation(menu_actor(), missing_page)
begin_run(page.url_path)
remember_origin(page)
page.run()
