"""memlab.storage.postgres.connection: what a PostgreSQL store refuses before it connects, a label checked
before it goes into a claim, and a connection that fails naming the server without its password."""

from __future__ import annotations

import pytest

from memlab.errors import InvalidArgument, SchemaError
from memlab.labels import Label
from memlab.levels import Level
from memlab.storage.postgres.connection import Connection, label_of
from memlab.viewrules import ViewRules

# Nothing listens here: a refusal made before connecting never reaches it.
NOWHERE = "postgresql://owner:s3cret@127.0.0.1:1/memories"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rules": ViewRules(global_statistics=True)}, "lattice visibility with per-document ranking only"),
        ({"rules": ViewRules(shadowing="newest-overall")}, "shadows by newest or refuse"),
        ({"analyzer": "trigram"}, "not 'trigram'"),
        ({"schema": "Memlab"}, "not a plain lower-case PostgreSQL identifier"),
        ({"session_role": "x;drop"}, "not a plain lower-case PostgreSQL identifier"),
        ({"rank_function": "bm25"}, "ts_rank, ts_rank-length, ts_rank_cd"),
        ({"purge_timeout": 0}, "purge_timeout is a finite number"),
        ({"purge_timeout": True}, "purge_timeout is a finite number"),
        ({"purge_timeout": float("inf")}, "purge_timeout is a finite number"),
    ],
)
def test_what_postgresql_cannot_serve_is_refused_before_connecting(options, message):
    # Guards: connection.Connection checking the schema name after connecting (an injected name reaching SQL).
    with pytest.raises(InvalidArgument, match=message):
        Connection(NOWHERE, **options)


def test_a_failed_connection_names_the_server_without_its_password():
    with pytest.raises(SchemaError) as refused:
        Connection(NOWHERE)
    assert "postgresql://owner:***@127.0.0.1:1/memories" in str(refused.value)
    assert "s3cret" not in str(refused.value)


@pytest.mark.parametrize(
    ("value", "label"),
    [
        (Level.INTERNAL, "INTERNAL"),
        ("confidential:legal,hr", "CONFIDENTIAL:hr,legal"),
        (Label.parse("PUBLIC:x"), "PUBLIC:x"),
    ],
)
def test_label_of_accepts_a_checked_label(value, label):
    assert label_of(value) == Label.parse(label)


@pytest.mark.parametrize(
    "value",
    [Label(Level.INTERNAL, frozenset({"HR"})), Label(1, frozenset()), Label(Level.PUBLIC, {"a"}), 2, None, "SECRET"],
)
def test_label_of_refuses_a_label_not_made_by_label_of(value):
    with pytest.raises(InvalidArgument):
        label_of(value)
