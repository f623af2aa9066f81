"""The app's pages: each one's file, title, icon, address and the rights that open it.

One table for the menu (:mod:`components.navigation`) and for the server (``server.py``), which answers
some addresses before the pages see them and so must know the pages' names without running any.
"""

from __future__ import annotations

from dataclasses import dataclass

from db.access import PERMISSIONS


@dataclass(frozen=True)
class PageSpec:
    path: str  # the page file, relative to app.py
    title: str
    icon: str
    # Any one of these permissions opens the page; none: every role may open it.
    needs: tuple[str, ...] = ()
    url_path: str | None = None
    default: bool = False

    def __post_init__(self) -> None:
        unknown = [p for p in self.needs if p not in PERMISSIONS]
        if unknown:
            raise KeyError(f"{self.path}: unknown permission(s) {unknown}")

    def url_path_or_default(self) -> str:
        """The page's address as ``st.Page`` makes it: its url_path, "" for the default page, else the
        file's name."""
        return "" if self.default else self.url_name()

    def url_name(self) -> str:
        """The name ``st.Page`` registers the page under, the default page too (which it serves at "")."""
        return self.url_path or self.path.rsplit("/", 1)[-1].removesuffix(".py")


SECTIONS: dict[str, tuple[PageSpec, ...]] = {
    "Data": (
        PageSpec("app_pages/home.py", "Datasets", ":material/dataset:", default=True),
        PageSpec("app_pages/browse.py", "Browse items", ":material/table_rows:"),
        PageSpec("app_pages/item.py", "Item", ":material/image:"),
        PageSpec("app_pages/import_data.py", "Import", ":material/upload:", ("manage_data",)),
        PageSpec("app_pages/export_data.py", "Export", ":material/download:", ("export",)),
    ),
    "Annotate": (
        PageSpec("app_pages/spans.py", "Mark spans", ":material/format_ink_highlighter:", ("label",)),
        PageSpec("app_pages/sentences.py", "Label sentences", ":material/format_list_bulleted:", ("label",)),
        PageSpec("app_pages/claims.py", "Judge claims", ":material/fact_check:", ("label",)),
        PageSpec("app_pages/triplets.py", "Judge triplets", ":material/account_tree:", ("label",)),
        PageSpec("app_pages/rate.py", "Rate detector outputs", ":material/star_rate:", ("label",)),
        PageSpec("app_pages/score_responses.py", "Score responses", ":material/grade:", ("label",)),
        PageSpec("app_pages/rating_tasks.py", "Rating tasks", ":material/rule:", ("manage_data",)),
        PageSpec("app_pages/adjudicate.py", "Adjudicate", ":material/gavel:", ("adjudicate",)),
        PageSpec("app_pages/overrides.py", "Overridden labels", ":material/feedback:", ("label",)),
    ),
    "Inspect": (
        PageSpec("app_pages/compare.py", "Compare detectors", ":material/compare:", ("view_reports",)),
        PageSpec("app_pages/failures.py", "Failure cases", ":material/bug_report:", ("view_reports",)),
        PageSpec("app_pages/run_detector.py", "Run detector", ":material/smart_toy:", ("manage_data",)),
    ),
    "Measure": (
        PageSpec(
            "app_pages/paper_metrics.py",
            "Metrics",
            ":material/leaderboard:",
            ("view_reports",),
            url_path="metrics",
        ),
        PageSpec("app_pages/correlation.py", "Correlation", ":material/scatter_plot:", ("view_reports",)),
        PageSpec("app_pages/agreement.py", "Agreement", ":material/group:", ("view_reports",)),
        PageSpec("app_pages/presenter.py", "Presenter mode", ":material/slideshow:", ("view_reports",)),
    ),
    "Team": (PageSpec("app_pages/team.py", "Team", ":material/groups:", ("manage_team", "see_progress")),),
}


def pages() -> list[PageSpec]:
    return [spec for section in SECTIONS.values() for spec in section]


def spec_for(path: str) -> PageSpec:
    return next(spec for spec in pages() if spec.path == path)
