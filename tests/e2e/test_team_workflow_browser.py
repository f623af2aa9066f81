"""A team at work in team mode, each person in their own browser: the whole proof, end to end.

The admin logs in and, on the Team page, creates two annotators and gives both every item of the
sentences task (k = 2). Each annotator labels the same sentence in their own browser context, one
"incorrect", the other "correct", and neither sees the other's labels, the other's name or gold. A
reviewer finds the item on the Adjudicate page, accepts the first annotator's labels and promotes them
to gold; the Metrics page's AlignBench table then reads differently. A viewer opens presenter mode,
has no labeling page in the menu and is refused at a labeling page's address. No page any of them
opened ever held a password, a password hash, a login token or a token's hash.

The store is made the documented way (`cli.py init`, then `cli.py user add` for the admin, reviewer
and viewer); everything after that goes through the pages. Screenshots: ``test-artifacts/e2e/team-*.png``.
"""

from __future__ import annotations

import csv
import hashlib
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect
from sqlalchemy import select

from components.login import COOKIE
from db import models as m
from db.engine import make_engine, read_session
from db.repositories.annotations import item_annotations
from db.repositories.datasets import get_dataset
from db.repositories.items import get_item, item_at
from db.repositories.label_sets import gold_label_set
from tests.e2e.app_server import ROOT, RunningApp, prepare_store, running_app
from tests.e2e.browser import WAIT_MS, AppTab

DEMO = "Spanlight demo (synthetic)"
VIEWPORT = {"width": 1400, "height": 1000}
TEAM = {"SPANLIGHT_MODE": "team"}
# Accounts made on the command line: name → (role, password).
CLI_USERS = {
    "ada-admin": ("admin", "ada long admin password 41"),
    "rex-reviewer": ("reviewer", "rex long reviewer password 42"),
    "vic-viewer": ("viewer", "vic long viewer password 43"),
}
# The annotators the admin creates on the Team page (names no page shows unless about them).
KIWI, KIWI_PASSWORD = "kiwi-labeler", "kiwi long first password 44"
PLUM, PLUM_PASSWORD = "plum-labeler", "plum long first password 45"


@pytest.fixture(scope="module")
def team_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    """A fresh demo store with an admin, a reviewer and a viewer, served in team mode."""
    data_dir = tmp_path_factory.mktemp("e2e-team-workflow")
    database_url = prepare_store(data_dir)
    for name, (role, password) in CLI_USERS.items():
        subprocess.run(
            [sys.executable, "cli.py", "user", "add", name, "--role", role, "--db", database_url],
            cwd=ROOT,
            input=password + "\n",
            text=True,
            check=True,
            timeout=600,
        )
    with running_app(data_dir, database_url, env=TEAM) as running:
        yield running


@dataclass
class User:
    """One person in their own browser context, and the HTML of every page they were shown."""

    name: str
    role: str
    password: str
    tab: AppTab
    app: RunningApp
    seen: list[str] = field(default_factory=list)

    @property
    def page(self) -> Page:
        return self.tab.page

    @property
    def token(self) -> str:
        cookie = next(c for c in self.page.context.cookies() if c["name"] == COOKIE)
        return cookie["value"]

    def snap(self) -> str:
        """Keep the page's HTML as it is now, for the secrets check at the end; return it."""
        self.tab.idle()
        html = self.page.content()
        self.seen.append(html)
        return html

    def open(self, path: str, **query: str) -> None:
        self.tab.goto(f"{self.app.url}/{path}?{urlencode({'dataset': DEMO, **query})}")
        self.snap()

    def shoot(self, path: Path) -> None:
        self.tab.screenshot(path, VIEWPORT["width"], VIEWPORT["height"])


def new_context(browser: Browser) -> BrowserContext:
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    context.set_default_timeout(WAIT_MS)
    context.set_default_navigation_timeout(WAIT_MS)
    return context


def log_in(
    browser: Browser, app: RunningApp, name: str, role: str, password: str, shot: Path | None = None
) -> User:
    """Open the app in a new browser context (no cookie shared with anyone) and log in by the form
    (``shot``: a screenshot of the filled form)."""
    user = User(name, role, password, AppTab(new_context(browser).new_page()), app)
    page = user.page
    user.tab.goto(app.url)
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    user.snap()
    page.get_by_role("textbox", name="Name", exact=True).fill(name)
    page.get_by_role("textbox", name="Password", exact=True).fill(password)
    if shot is not None:
        page.screenshot(path=str(shot))
    page.get_by_role("button", name="Log in", exact=True).click()
    expect(page.get_by_text(f"Signed in as {name} ({role})")).to_be_visible()
    page.wait_for_function(f"() => document.cookie.includes('{COOKIE}=')")
    user.snap()
    return user


def choose(tab: AppTab, widget: Locator, option: str) -> None:
    """Pick ``option`` in a Streamlit selectbox or multiselect (type it, click it) and wait for the run
    the change causes."""
    typed = widget.locator("input")
    if typed.input_value() == option:  # a selectbox already showing it: choosing it again runs nothing
        return
    typed.click()
    typed.fill(option)
    tab.after_run(tab.page.get_by_role("option", name=option, exact=True).click)


def menu(page: Page) -> Locator:
    return page.locator('[data-testid="stSidebarNav"]')


def table3_csv(user: User) -> tuple[str, dict[tuple[str, str], float]]:
    """The Metrics page's AlignBench Table 3 as its CSV download offers it: the file name and the
    AUROC of each (detector, captioning model) cell (the provenance lines, starting "#", left out)."""
    user.open("metrics", view="AlignBench")
    expect(user.page.get_by_text("Table 3", exact=False).first).to_be_visible()
    with user.page.expect_download(timeout=WAIT_MS) as download:
        user.page.locator(".st-key-metrics-alignbench-table3-csv button").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    assert rows and "detector" in rows[0], text
    cells = {(r["detector"], c): float(v) for r in rows for c, v in r.items() if c != "detector" and v}
    return download.value.suggested_filename, cells


def disputed_sentence(database_url: str) -> tuple[str, int, int]:
    """An item whose first sentence gold calls correct: (external id, item id, sentence index 0)."""
    engine = make_engine(database_url)
    dataset = get_dataset(engine, DEMO)
    assert dataset is not None
    gold = gold_label_set(engine, dataset.id)
    assert gold is not None
    for position in range(50):
        external = item_at(engine, dataset.id, position)
        if external is None:
            break
        item = get_item(engine, dataset.id, external)
        assert item is not None
        labels = item_annotations(engine, item.id, [gold.id])[gold.id].sentence_labels
        if item.sentences and 0 in labels and labels[0].label == "correct":
            engine.dispose()
            return external, item.id, 0
    raise AssertionError("no demo item has a first sentence gold calls correct")


def secrets_of(database_url: str, users: list[User], passwords: list[str]) -> list[str]:
    """Everything no page may ever hold: passwords, their stored hashes, login tokens and their hashes."""
    with read_session(make_engine(database_url)) as session:
        hashes = [h for h in session.scalars(select(m.Annotator.password_hash)) if h]
    assert len(hashes) >= len(passwords) and all(h.startswith("$argon2id$") for h in hashes)
    tokens = [u.token for u in users]
    return [*passwords, *hashes, *tokens, *(hashlib.sha256(t.encode()).hexdigest() for t in tokens)]


def naming(html: str, name: str) -> str | None:
    """Where the page names ``name`` as a word (not inside a generated class or hash), or None."""
    found = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", html)
    return None if found is None else html[max(0, found.start() - 80) : found.end() + 80]


def label_first_sentence(user: User, item: str, key: str, badge: str) -> None:
    user.open("sentences", item=item)
    row = user.page.locator(".st-key-sentence_row_0")
    expect(row).to_contain_text("▶ Sentence 1 · —")
    user.tab.press(key)
    expect(row).to_contain_text(f"Sentence 1 · {badge}")
    user.snap()


def assert_blind(user: User, item: str, others: list[str]) -> None:
    """The annotator's sentence and item pages show neither gold nor anyone else's labels or name."""
    page = user.page
    user.open("sentences", item=item)
    expect(page.get_by_text(f"as {user.name}", exact=False).first).to_be_visible()
    expect(page.get_by_text("Show gold labels")).to_have_count(0)
    html = user.snap()
    assert "gold:" not in html
    for other in others:
        assert naming(html, other) is None, f"{user.name}'s labeling page: {naming(html, other)}"

    user.open("item", item=item)
    spans_of = page.locator(".st-key-item_label_set")
    spans_of.get_by_role("combobox").click()
    options = page.get_by_role("option")
    expect(options.first).to_be_visible()
    offered = options.all_inner_texts()
    html = user.snap()
    page.keyboard.press("Escape")
    assert not any("gold" in o.lower() for o in offered), offered
    for other in others:
        assert not any(other in o for o in offered), offered
        assert naming(html, other) is None, f"{user.name}'s item page: {naming(html, other)}"


def test_team_workflow_from_accounts_to_gold_and_metrics(
    team_app: RunningApp, browser: Browser, artifacts: Path
) -> None:
    item, item_id, sentence = disputed_sentence(team_app.database_url)
    people: list[User] = []

    # ---- The admin creates two annotators and gives both every sentences item (k = 2).
    role, password = CLI_USERS["ada-admin"]
    admin = log_in(browser, team_app, "ada-admin", role, password, shot=artifacts / "team-login.png")
    people.append(admin)
    admin.open("team")
    page = admin.page
    for name, secret in ((KIWI, KIWI_PASSWORD), (PLUM, PLUM_PASSWORD)):
        page.get_by_role("textbox", name="Name", exact=True).fill(name)
        page.get_by_role("textbox", name="First password", exact=True).fill(secret)
        admin.tab.after_run(page.get_by_role("button", name="Create user").click)
        expect(page.get_by_text(f"Created the annotator '{name}'.")).to_be_visible()
        admin.snap()
    page.get_by_role("tab", name="Assignments").click()  # tabs switch in the page, without a run
    task = page.locator(".st-key-team_assign_task")
    expect(task).to_be_visible()
    choose(admin.tab, task, "sentences")
    expect(task.get_by_role("combobox")).to_have_value("sentences")
    who = page.locator(".st-key-team_assign_who")
    for name in (KIWI, PLUM):
        choose(admin.tab, who, name)
    page.keyboard.press("Escape")
    expect(who).to_contain_text(KIWI)
    expect(who).to_contain_text(PLUM)
    k = page.locator(".st-key-team_assign_k input")
    k.fill("2")
    admin.tab.after_run(lambda: k.press("Enter"))
    admin.tab.after_run(page.get_by_role("button", name="Assign", exact=True).click)
    done = page.get_by_text(re.compile(r"^sentences: \d+ item\(s\), 2 annotator\(s\) each"))
    expect(done).to_be_visible()
    message = done.inner_text()
    assert f"'{KIWI}'" in message and f"'{PLUM}'" in message
    loads = dict(re.findall(r"'([^']+)': (\d+)", message))
    n_items = int(re.findall(r"^sentences: (\d+) item", message)[0])
    assert f"{2 * n_items} assignment(s) added" in message, message  # every item to both of them
    assert loads == {KIWI: str(n_items), PLUM: str(n_items)}, message
    admin.snap()
    admin.shoot(artifacts / "team-assigned.png")

    # ---- Each annotator, in their own browser, labels the same sentence differently.
    kiwi = log_in(browser, team_app, KIWI, "annotator", KIWI_PASSWORD)
    plum = log_in(browser, team_app, PLUM, "annotator", PLUM_PASSWORD)
    people += [kiwi, plum]
    label_first_sentence(kiwi, item, "2", "✗ Incorrect")
    kiwi.shoot(artifacts / "team-annotator.png")
    # Their home page counts their own items and progress, never gold or colleagues'.
    kiwi.open("")
    expect(
        kiwi.page.get_by_text(f"You: 0 / {n_items} items finished on every task assigned to you")
    ).to_be_visible()
    expect(kiwi.page.get_by_text("Your items")).to_be_visible()
    expect(kiwi.page.get_by_text("gold on", exact=False)).to_have_count(0)
    kiwi.shoot(artifacts / "team-annotator-home.png")
    label_first_sentence(plum, item, "1", "✓ Correct")
    everyone_else = ["ada-admin", "rex-reviewer", "vic-viewer", "alice", "bob"]
    assert_blind(kiwi, item, [PLUM, *everyone_else])
    assert_blind(plum, item, [KIWI, *everyone_else])
    # Labeling is for annotators' own items and pages: no Adjudicate, Metrics or Team in their menu.
    for gone in ("Adjudicate", "Metrics", "Team", "Presenter mode"):
        expect(menu(kiwi.page).get_by_text(gone, exact=True)).to_have_count(0)

    # ---- The reviewer reads the metrics, adjudicates the disputed item and promotes it.
    role, password = CLI_USERS["rex-reviewer"]
    reviewer = log_in(browser, team_app, "rex-reviewer", role, password)
    people.append(reviewer)
    before_name, before = table3_csv(reviewer)
    reviewer.open("adjudicate", task="Sentences")
    page = reviewer.page
    expect(page.get_by_role("heading", name="Items to adjudicate")).to_be_visible()
    choose(reviewer.tab, page.locator(".st-key-adj_item_sentences"), item)
    expect(page.get_by_role("heading", name=f"Item {item}")).to_be_visible()
    votes = page.locator('[data-testid="stDataFrame"]').nth(1)
    expect(votes).to_be_visible()
    accept = page.locator(f".st-key-adj_sentences_{item_id}_accept")
    choose(reviewer.tab, accept, KIWI)
    expect(accept.get_by_role("combobox")).to_have_value(KIWI)
    # The demo's gold came with its import: the page lists what of it goes, and Promote waits for a yes.
    expect(
        page.get_by_text(
            re.compile(rf"^Promoting replaces \d+ gold labels? on 1 item \({item}\) that no promotion wrote")
        )
    ).to_be_visible()
    promote = page.get_by_role("button", name="Promote to gold")
    expect(promote).to_be_disabled()
    reviewer.snap()
    reviewer.shoot(artifacts / "team-adjudicate-imported-gold.png")
    reviewer.tab.after_run(page.get_by_text(re.compile(r"^Replace the (\d+ )?gold labels? listed")).click)
    expect(promote).to_be_enabled()
    reviewer.tab.after_run(promote.click)
    expect(page.get_by_text(f"Promoted sentences of item {item} to gold (accept)")).to_be_visible()
    expect(page.get_by_text(re.compile(r"Promoted to gold \(accept\) by rex-reviewer"))).to_be_visible()
    reviewer.snap()
    reviewer.shoot(artifacts / "team-adjudicated.png")

    # The gold now says what the accepted annotator said.
    engine = make_engine(team_app.database_url)
    dataset = get_dataset(engine, DEMO)
    assert dataset is not None
    gold = gold_label_set(engine, dataset.id)
    assert gold is not None
    assert (
        item_annotations(engine, item_id, [gold.id])[gold.id].sentence_labels[sentence].label == "incorrect"
    )
    engine.dispose()

    # ---- The Metrics page moves to the new gold.
    after_name, after = table3_csv(reviewer)
    assert after_name != before_name  # the file name carries the inputs' digest
    assert after.keys() == before.keys()
    moved = {cell: (before[cell], after[cell]) for cell in before if before[cell] != after[cell]}
    assert moved, "no AUROC of Table 3 changed with the new gold"
    reviewer.shoot(artifacts / "team-metrics-after.png")

    # ---- The viewer: presenter mode and dashboards, no labeling page, refused at one's address.
    role, password = CLI_USERS["vic-viewer"]
    viewer = log_in(browser, team_app, "vic-viewer", role, password)
    people.append(viewer)
    nav = menu(viewer.page)
    expect(nav.get_by_text("Presenter mode", exact=True)).to_be_visible()
    expect(nav.get_by_text("Metrics", exact=True)).to_be_visible()
    for gone in ("Mark spans", "Label sentences", "Judge claims", "Adjudicate", "Team", "Import"):
        expect(nav.get_by_text(gone, exact=True)).to_have_count(0)
    viewer.open("presenter")
    expect(viewer.page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible()
    expect(viewer.page.get_by_text(re.compile(r"^Slide 1 of \d+"))).to_be_visible()
    viewer.snap()
    viewer.page.screenshot(path=str(artifacts / "team-viewer-presenter.png"))
    viewer.open("sentences", item=item)
    expect(viewer.page.get_by_text("The viewer role cannot label items; ask an admin.")).to_be_visible()
    expect(viewer.page.locator(".st-key-sentence_row_0")).to_have_count(0)
    viewer.snap()

    # ---- No page anyone was shown held a secret.
    passwords = [p for _, p in CLI_USERS.values()] + [KIWI_PASSWORD, PLUM_PASSWORD]
    secrets = secrets_of(team_app.database_url, people, passwords)
    for person in people:
        assert person.seen
        for html in person.seen:
            leaked = [s[:12] for s in secrets if s in html]
            assert not leaked, f"a page {person.name} was shown holds {leaked}"
            assert "$argon2id$" not in html
    for person in people:
        person.page.context.close()
