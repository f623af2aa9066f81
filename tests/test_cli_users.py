"""`python cli.py user …`: team-mode accounts on the command line, run as whole processes.

The password comes from a pipe or from a prompt on the terminal (typed twice), never from an argument.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select as sql_select

from db import models as m
from db.access import OPERATOR
from db.engine import make_engine, read_session
from db.repositories.accounts import LoginRefused, add_user, authenticate
from tests.terminal import on_terminal

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "a good long password"
WAIT = 120  # seconds: only how long a broken test hangs


def _cli(url: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "cli.py", "user", *args, "--db", url],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def _logs_in(url: str, name: str, password: str) -> bool:
    try:
        authenticate(make_engine(url), name, password)
    except LoginRefused:
        return False
    return True


def test_add_list_and_change_accounts(db_url: str) -> None:
    done = _cli(
        db_url, "add", "Ada Admin", "--role", "admin", "--email", "ada@example.org", stdin=PASSWORD + "\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Added 'Ada Admin' as admin."
    assert PASSWORD not in done.stdout + done.stderr
    with read_session(make_engine(db_url)) as session:
        stored = session.scalar(sql_select(m.Annotator.password_hash).where(m.Annotator.name == "Ada Admin"))
    assert stored is not None and stored.startswith("$argon2id$") and PASSWORD not in stored
    assert _logs_in(db_url, "Ada Admin", PASSWORD)

    assert _cli(db_url, "add", "bo", "--role", "annotator", "--json", stdin=PASSWORD).returncode == 0
    listed = json.loads(_cli(db_url, "list", "--json").stdout)["users"]
    assert [(u["name"], u["role"], u["email"], u["disabled"], u["has_password"]) for u in listed] == [
        ("Ada Admin", "admin", "ada@example.org", False, True),
        ("bo", "annotator", None, False, True),
    ]
    assert "password_hash" not in json.dumps(listed) and "argon2" not in json.dumps(listed)
    assert _cli(db_url, "list").stdout.splitlines() == [
        "Ada Admin  admin  <ada@example.org>",
        "bo  annotator",
    ]

    changed = json.loads(_cli(db_url, "set-role", "bo", "reviewer", "--json").stdout)
    assert changed["ok"] and changed["user"]["role"] == "reviewer"
    assert _cli(db_url, "disable", "bo").stdout.strip() == "'bo' is disabled."
    assert not _logs_in(db_url, "bo", PASSWORD)
    assert _cli(db_url, "enable", "bo").returncode == 0
    assert _logs_in(db_url, "bo", PASSWORD)
    assert _cli(db_url, "password", "bo", stdin="another long password\n").returncode == 0
    assert not _logs_in(db_url, "bo", PASSWORD) and _logs_in(db_url, "bo", "another long password")


@pytest.mark.parametrize(
    ("args", "stdin", "reason"),
    [
        (("add", "cy", "--role", "viewer"), "short\n", "A password needs at least 8 characters."),
        (("add", "cy", "--role", "viewer"), "", "A password needs at least 8 characters."),
        (("add", "gold", "--role", "viewer"), PASSWORD, "reserved for the adjudicated labels"),
        (("add", "taken", "--role", "viewer"), PASSWORD, "The user 'taken' exists already."),
        (("set-role", "nobody", "admin"), "", "There is no user 'nobody'."),
        (("disable", "nobody"), "", "There is no user 'nobody'."),
        (("password", "nobody"), PASSWORD, "There is no user 'nobody'."),
    ],
)
def test_refusals_exit_1_with_the_reason(
    sqlite_url: str, args: tuple[str, ...], stdin: str, reason: str
) -> None:
    add_user(make_engine(sqlite_url), "taken", "viewer", PASSWORD, actor=OPERATOR)
    done = _cli(sqlite_url, *args, stdin=stdin)
    assert done.returncode == 1 and reason in done.stderr and done.stdout == ""


def test_a_refusal_in_json(sqlite_url: str) -> None:
    add_user(make_engine(sqlite_url), "taken", "viewer", PASSWORD, actor=OPERATOR)
    done = _cli(sqlite_url, "add", "taken", "--role", "admin", "--json", stdin=PASSWORD)
    assert done.returncode == 1
    assert json.loads(done.stdout) == {"ok": False, "error": "The user 'taken' exists already."}


@pytest.mark.parametrize(
    "args",
    [
        ("add", "cy", "--role", "king"),
        ("add", "cy"),
        ("add", "cy", "--role", "viewer", "--password", PASSWORD),  # a password is never an argument
        ("set-role", "cy", "emperor"),
        ("enable",),
        (),
    ],
)
def test_usage_errors_exit_2(sqlite_url: str, args: tuple[str, ...]) -> None:
    done = _cli(sqlite_url, *args, stdin=PASSWORD)
    assert done.returncode == 2, done
    assert "usage:" in done.stderr
    assert PASSWORD not in done.stdout
    with read_session(make_engine(sqlite_url)) as session:
        assert session.scalar(sql_select(m.Annotator.id)) is None


def _on_terminal(url: str, *args: str, typed: list[str]) -> tuple[int, str]:
    """Run the command on a pseudo-terminal; type each of ``typed`` once its prompt has appeared."""
    pending = list(typed)

    def answer(seen: bytes) -> bytes | None:
        # A prompt appears once per password; answer the newest one not yet answered.
        if pending and seen.count(b"Password") > len(typed) - len(pending):
            return pending.pop(0).encode() + b"\n"
        return None

    return on_terminal(
        [sys.executable, "cli.py", "user", *args, "--db", url], cwd=ROOT, answer=answer, wait=WAIT
    )


def test_on_a_terminal_the_password_is_asked_twice_without_echo(sqlite_url: str) -> None:
    code, screen = _on_terminal(sqlite_url, "add", "dee", "--role", "reviewer", typed=[PASSWORD, PASSWORD])
    assert code == 0, screen
    assert "Password: " in screen and "Password again: " in screen
    assert PASSWORD not in screen  # not echoed
    assert "Added 'dee' as reviewer." in screen
    assert _logs_in(sqlite_url, "dee", PASSWORD)


def test_on_a_terminal_two_different_passwords_change_nothing(sqlite_url: str) -> None:
    code, screen = _on_terminal(
        sqlite_url, "add", "dee", "--role", "reviewer", typed=[PASSWORD, PASSWORD + "x"]
    )
    assert code == 1, screen
    assert "the two passwords differ; nothing changed" in screen
    with read_session(make_engine(sqlite_url)) as session:
        assert session.scalar(sql_select(m.Annotator.id)) is None
