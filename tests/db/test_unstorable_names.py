"""Names, passwords and e-mails no store can hold (a NUL, broken Unicode) are answered as what they are,
names of nobody, on both stores: the command line and the login page pass what was typed straight to
these functions, and before, PostgreSQL refused a NUL mid-query and broken Unicode could not be sent
to either store or hashed."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from db.access import OPERATOR
from db.repositories import accounts
from db.repositories.annotators import InvalidName, find_annotator, validate_name

PASSWORD = "a long enough password"


@pytest.mark.parametrize(
    ("name", "password"),
    [
        ("ali\x00ce", PASSWORD),
        ("ali\ud800ce", PASSWORD),
        ("alice", "a long\x00password"),
        ("alice", "\udfff" * 14),
    ],
)
def test_logging_in_with_such_text_is_a_wrong_name_or_password(
    engine: Engine, name: str, password: str
) -> None:
    accounts.add_user(engine, "alice", "annotator", PASSWORD, actor=OPERATOR, email="alice@example.org")
    with pytest.raises(accounts.LoginRefused, match="Wrong name or password"):
        accounts.authenticate(engine, name, password)
    assert accounts.authenticate(engine, "alice", PASSWORD).name == "alice"


@pytest.mark.parametrize("text", ["bo\x00b", "bo\ud800b"])
def test_lookups_find_nobody_and_a_new_name_is_refused(engine: Engine, text: str) -> None:
    assert find_annotator(engine, text) is None
    assert accounts.user_for_email(engine, text) is None
    with pytest.raises(accounts.AccountError, match="There is no user"):
        accounts.set_role(engine, text, "admin", actor=OPERATOR)
    with pytest.raises(InvalidName, match="control or invisible"):
        validate_name(engine, text)
