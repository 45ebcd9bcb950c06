"""Compartments on PostgreSQL (issue 25), at the storage level: ``PostgresStorage`` called with labels as the
sessions will call it, and the session role's own SQL against the policies that gate on level and categories.

The contract (docs/semantics.md, "Compartments in sessions and stores"): a save is at exactly the session's
label, numbered per agent, key and label; a version at L is readable at T when L flows to T; a key's view is
its maximal readable live versions, the policy's shadowing rule choosing among several; the audit records
labels. The attacks are those of tests/test_postgres.py and tests/test_postgres_gate.py, with categories.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlab.errors import InvalidArgument
from memlab.labels import Ambiguous, Label
from memlab.levels import Level
from memlab.records import AuditEvent, Memory, NewVersion, TaintEvent
from memlab.storage import PostgresStorage
from memlab.storage.postgres import claim
from memlab.viewrules import ViewRules

REFUSED = psycopg.errors.InsufficientPrivilege
AT = "2026-12-01T09:00:00+00:00"  # one time for every call: the save order, not the clock, decides "newest"
_sessions = itertools.count(1)


class At:
    """One session of ``agent`` at ``taint``, calling the storage as a session does: each call with its audit."""

    def __init__(self, storage: PostgresStorage, taint: str, agent: str = "main") -> None:
        self.storage, self.label, self.agent = storage, Label.parse(taint), agent
        self.id = f"{agent}@{self.label}#{next(_sessions)}"
        storage.add_session(self.id, agent, self.label, AT)

    def _event(self, tool: str, *, key=None, query=None, found=()) -> AuditEvent:
        records = tuple(memory.ref() for memory in found)
        outcome = "ok" if found or tool in ("memory_list", "memory_search") else "not_found"
        return AuditEvent(AT, self.id, self.agent, self.label, tool, outcome, key, query, records)

    def save(self, key: str, content: str, tags: tuple[str, ...] = ()) -> Memory:
        (saved,) = self.storage.save_many(
            self.agent,
            self.label,
            [NewVersion(key, content, tags, AT)],
            saved_by=self.id,
            audit=lambda memory: self._event("memory_save", key=memory.key, found=[memory]),
        )
        return saved

    def get(self, key: str) -> Memory | None:
        return self.storage.effective(
            self.agent,
            self.label,
            key,
            audit=lambda memory: self._event("memory_get", key=key, found=[memory] * bool(memory)),
        )

    def list(self, tag: str | None = None) -> list[Memory]:
        return self.storage.effective_view(
            self.agent, self.label, tag=tag, audit=lambda view: self._event("memory_list", found=view)
        )

    def search(self, query: str, limit: int = 10) -> list[tuple[str, str, float]]:
        hits = self.storage.search(
            self.agent,
            self.label,
            query,
            limit,
            audit=lambda found: self._event("memory_search", query=query, found=[hit.memory for hit in found]),
        )
        return [(hit.memory.ref(), hit.memory.content, hit.score) for hit in hits]

    def delete(self, key: str) -> Memory | None:
        return self.storage.delete(
            self.agent,
            key,
            self.label,
            deleted_at=AT,
            deleted_by=self.id,
            audit=lambda memory: self._event("memory_delete", key=key, found=[memory] * bool(memory)),
        )


@contextmanager
def _opened(url: str, shadowing: str = "newest") -> Iterator[PostgresStorage]:
    opened = PostgresStorage(url, rules=dataclasses.replace(ViewRules.lattice(), shadowing=shadowing))
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def storage(pg_url):
    with _opened(pg_url) as opened:
        yield opened


@pytest.fixture
def refusing(pg_url):
    """A store whose policy refuses to choose among several maximal versions."""
    with _opened(pg_url, "refuse") as opened:
        yield opened


def _owner(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True, options="-c search_path=memlab")


def _refs(memories) -> list[str]:
    return [memory.ref() for memory in memories]


# -- saves, numbers, deletes ---------------------------------------------------------------------------------


def test_a_save_is_at_exactly_the_sessions_label_and_numbered_per_label(storage):
    hr, legal = At(storage, "CONFIDENTIAL:hr"), At(storage, "CONFIDENTIAL:legal")
    assert hr.save("plan", "hr's first").ref() == "plan@CONFIDENTIAL:hr/v1"
    assert hr.save("plan", "hr's second").ref() == "plan@CONFIDENTIAL:hr/v2"
    saved = legal.save("plan", "legal's")
    assert (saved.ref(), saved.label, saved.categories) == ("plan@CONFIDENTIAL:legal/v1", legal.label, {"legal"})
    assert At(storage, "CONFIDENTIAL").save("plan", "plain").ref() == "plan@CONFIDENTIAL/v1"
    history = [(row["classification"], row["version"]) for row in storage.history_rows("main", "plan")]
    assert history == [("CONFIDENTIAL", 1), ("CONFIDENTIAL:hr", 1), ("CONFIDENTIAL:hr", 2), ("CONFIDENTIAL:legal", 1)]


def test_a_delete_removes_the_live_version_at_exactly_the_sessions_label(storage):
    hr, legal, both = (At(storage, label) for label in ("INTERNAL:hr", "INTERNAL:legal", "INTERNAL:hr,legal"))
    hr.save("plan", "hr's")
    legal.save("plan", "legal's")
    assert both.delete("plan") is None, "no version at exactly INTERNAL:hr,legal"
    assert hr.delete("plan").ref() == "plan@INTERNAL:hr/v1"
    assert hr.get("plan") is None
    assert both.get("plan").ref() == "plan@INTERNAL:legal/v1"


# -- reads: what flows, the maximal versions, shadowing --------------------------------------------------------


def _compartments(storage) -> None:
    """Key ``plan`` at PUBLIC, CONFIDENTIAL:hr, CONFIDENTIAL:legal, CONFIDENTIAL:hr,legal and RESTRICTED, saved in
    that order; key ``memo`` at PUBLIC and INTERNAL:hr."""
    for label in ("PUBLIC", "CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal", "RESTRICTED"):
        At(storage, label).save("plan", f"the {label} coffee plan")
    At(storage, "PUBLIC").save("memo", "a public coffee memo")
    At(storage, "INTERNAL:hr").save("memo", "an hr coffee memo")


@pytest.mark.parametrize(
    ("taint", "plan", "memo"),
    [
        ("PUBLIC", "plan@PUBLIC/v1", "memo@PUBLIC/v1"),
        ("CONFIDENTIAL", "plan@PUBLIC/v1", "memo@PUBLIC/v1"),
        ("INTERNAL:hr", "plan@PUBLIC/v1", "memo@INTERNAL:hr/v1"),
        ("CONFIDENTIAL:hr", "plan@CONFIDENTIAL:hr/v1", "memo@INTERNAL:hr/v1"),
        ("CONFIDENTIAL:legal", "plan@CONFIDENTIAL:legal/v1", "memo@PUBLIC/v1"),
        ("CONFIDENTIAL:hr,legal", "plan@CONFIDENTIAL:hr,legal/v1", "memo@INTERNAL:hr/v1"),
        ("RESTRICTED", "plan@RESTRICTED/v1", "memo@PUBLIC/v1"),
        ("RESTRICTED:hr", "plan@RESTRICTED/v1", "memo@INTERNAL:hr/v1"),
    ],
)
def test_a_key_reads_as_its_highest_version_the_label_may_read(storage, taint, plan, memo):
    """Get, list and search agree: each holds the one maximal version (here never several)."""
    _compartments(storage)
    at = At(storage, taint)
    assert (at.get("plan").ref(), at.get("memo").ref()) == (plan, memo)
    assert _refs(at.list()) == [memo, plan]
    assert sorted(ref for ref, _, _ in at.search("coffee")) == [memo, plan]


def test_newest_chooses_the_maximal_version_saved_last(storage):
    """At CONFIDENTIAL:hr,legal a key saved at CONFIDENTIAL:hr and at CONFIDENTIAL:legal has two maximal versions;
    ``newest`` (the default) gives the one saved last, in save order, whatever the clock says (one time here)."""
    # Guards: _chosen returning versions[0] instead of the rule's choice (get and list)
    # Guards: the search's rival "saved after it" flipped to "before" (rank(h) < rank(m): the older one surfaces)
    # Guards: the rival's "NOT EXISTS" version above it made "EXISTS" (a shadowed rival counts as maximal)
    hr, legal, both = (
        At(storage, label) for label in ("CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal")
    )
    hr.save("plan", "hr coffee")
    legal.save("plan", "legal coffee")
    At(storage, "PUBLIC").save("plan", "public coffee")  # below both: never maximal
    assert both.get("plan").ref() == "plan@CONFIDENTIAL:legal/v1"
    assert _refs(both.list()) == ["plan@CONFIDENTIAL:legal/v1"]
    assert [ref for ref, _, _ in both.search("coffee")] == ["plan@CONFIDENTIAL:legal/v1"]
    hr.save("plan", "hr coffee again")
    assert both.get("plan").ref() == "plan@CONFIDENTIAL:hr/v2"
    assert _refs(both.list()) == ["plan@CONFIDENTIAL:hr/v2"]
    assert [ref for ref, _, _ in both.search("coffee")] == ["plan@CONFIDENTIAL:hr/v2"]


def test_a_search_matches_the_chosen_version_not_an_older_maximal_one(storage):
    """Shadowing before the match: the key's view is the newest maximal version; an older one that matches
    must not surface (nor a tag the chosen version lacks)."""
    # Guards: effective_view keeping the chosen version without "tag in memory.tags" (the filter after shadowing)
    hr, legal, both = (At(storage, label) for label in ("INTERNAL:hr", "INTERNAL:legal", "INTERNAL:hr,legal"))
    hr.save("plan", "about coffee", ("drinks",))
    legal.save("plan", "about tea")
    assert both.search("coffee") == []
    assert both.list(tag="drinks") == []
    assert [ref for ref, _, _ in hr.search("coffee")] == ["plan@INTERNAL:hr/v1"]
    assert _refs(hr.list(tag="drinks")) == ["plan@INTERNAL:hr/v1"]


def test_refuse_raises_ambiguous_on_a_get_and_leaves_the_key_out_of_lists_and_searches(pg_url, refusing):
    # Guards: views.search_sql choosing as newest does under refuse (the contested key surfaces in searches)
    hr, legal, both = (
        At(refusing, label) for label in ("CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal")
    )
    hr.save("plan", "hr coffee")
    legal.save("plan", "legal coffee")
    hr.save("memo", "hr coffee memo")
    audited = len(list(refusing.audit_rows()))
    with pytest.raises(Ambiguous, match="CONFIDENTIAL:hr, CONFIDENTIAL:legal"):
        both.get("plan")
    assert len(list(refusing.audit_rows())) == audited, "the failed get wrote nothing (the caller audits it)"
    assert _refs(both.list()) == ["memo@CONFIDENTIAL:hr/v1"]
    assert [ref for ref, _, _ in both.search("coffee")] == ["memo@CONFIDENTIAL:hr/v1"]
    At(refusing, "CONFIDENTIAL:hr,legal").save("plan", "above both")
    assert both.get("plan").ref() == "plan@CONFIDENTIAL:hr,legal/v1", "one version above both: no ambiguity"
    assert hr.get("plan").ref() == "plan@CONFIDENTIAL:hr/v1"


def test_ts_rank_scores_do_not_move_with_versions_the_label_cannot_read(storage):
    """ts_rank reads only the document and the query; RLS (with categories) keeps every other row out."""
    hr = At(storage, "CONFIDENTIAL:hr")
    hr.save("plan", "coffee at nine")
    before = hr.search("coffee nine")
    legal = At(storage, "CONFIDENTIAL:legal")
    for n in range(20):
        legal.save(f"legal-{n}", "coffee coffee nine nine coffee")
    At(storage, "CONFIDENTIAL:hr,legal").save("plan", "coffee coffee coffee")
    assert hr.search("coffee nine") == before


# -- the audit and the chain --------------------------------------------------------------------------------


def test_the_audit_sessions_and_taint_events_record_labels_and_verify_passes(storage):
    hr = At(storage, "CONFIDENTIAL:hr")
    hr.save("plan", "hr coffee")
    hr.get("plan")
    storage.add_taint_event("main", TaintEvent(hr.id, AT, hr.label, Label.parse("RESTRICTED:hr,legal"), "needed"))
    top = Label.parse("RESTRICTED:hr,legal")
    storage.append_audit(AuditEvent(AT, hr.id, "main", top, "memory_list"))
    At(storage, "PUBLIC").save("plan", "plain")
    rows = [(row["taint"], row["tool"], row["records"]) for row in storage.audit_rows("main")]
    assert rows[:3] == [
        ("CONFIDENTIAL:hr", "memory_save", ["plan@CONFIDENTIAL:hr/v1"]),
        ("CONFIDENTIAL:hr", "memory_get", ["plan@CONFIDENTIAL:hr/v1"]),
        ("RESTRICTED:hr,legal", "memory_list", []),
    ]
    assert rows[3][:2] == ("PUBLIC", "memory_save")
    assert [row["initial_taint"] for row in storage.session_rows()] == ["CONFIDENTIAL:hr", "PUBLIC"]
    assert [(row["from_level"], row["to_level"]) for row in storage.taint_event_rows()] == [
        ("CONFIDENTIAL:hr", "RESTRICTED:hr,legal")
    ]
    # Guards: seal.check_versions making refs without the categories (key@CONFIDENTIAL/v1: no audited save)
    verification = storage.verify()
    assert verification.ok, verification.problems
    assert verification.versions == 2


def test_a_purge_erases_every_label_of_a_key_and_verify_still_passes(storage):
    for label in ("PUBLIC", "CONFIDENTIAL:hr", "CONFIDENTIAL:legal"):
        At(storage, label).save("plan", f"the {label} secret")
    At(storage, "CONFIDENTIAL:hr").save("memo", "kept")
    event = AuditEvent(AT, "auditor", "main", max(Level), "purge", key="plan", message="ticket 1")
    purged = storage.purge(
        "main",
        "plan",
        None,
        purged_at=AT,
        purged_by="auditor",
        audit=lambda versions: dataclasses.replace(event, records=tuple(v.ref() for v in versions)),
    )
    assert _refs(purged) == ["plan@PUBLIC/v1", "plan@CONFIDENTIAL:hr/v1", "plan@CONFIDENTIAL:legal/v1"]
    assert At(storage, "CONFIDENTIAL:hr,legal").get("plan") is None
    assert At(storage, "CONFIDENTIAL:hr").get("memo").content == "kept"
    verification = storage.verify()
    assert verification.ok, verification.problems


@pytest.mark.parametrize(
    "tampering",
    [
        "UPDATE memories SET categories = '{legal}' WHERE key = 'plan'",
        "UPDATE memories SET categories = '{}' WHERE key = 'plan'",
        "UPDATE audit SET taint = 'CONFIDENTIAL:legal' WHERE tool = 'memory_get'",
        "UPDATE sessions SET taint = 'CONFIDENTIAL:hr,legal'",
    ],
)
def test_verify_finds_a_label_edited_by_the_owner(storage, pg_url, tampering):
    hr = At(storage, "CONFIDENTIAL:hr")
    hr.save("plan", "hr coffee")
    hr.get("plan")
    assert storage.verify().ok
    with _owner(pg_url) as owner:
        owner.execute(tampering)
    assert not storage.verify().ok


def test_an_escalation_across_incomparable_labels_does_not_verify(storage, pg_url):
    """A taint event that does not climb the lattice (hr to legal) is a problem verify names."""
    hr = At(storage, "CONFIDENTIAL:hr")
    hr.save("plan", "hr coffee")
    storage.add_taint_event("main", TaintEvent(hr.id, AT, hr.label, Label.parse("CONFIDENTIAL:hr,legal"), "up"))
    assert storage.verify().ok
    with _owner(pg_url) as owner:
        owner.execute("UPDATE taint_events SET to_level = 'CONFIDENTIAL:legal'")
    assert any("does not climb" in problem for problem in storage.verify().problems)


# -- bad input ------------------------------------------------------------------------------------------------

MALFORMED = {
    "a colon and nothing": "CONFIDENTIAL:",
    "an unknown level": "SECRET:hr",
    "a control character": "CONFIDENTIAL:h\x07r",
    "a category too long": "CONFIDENTIAL:" + "h" * 33,
    "too many categories": "CONFIDENTIAL:" + ",".join(f"c{n}" for n in range(17)),
    # Made without Label.of: a '|' would change what the claim names, so the backend checks again.
    "a Label made by hand with a '|'": Label(Level.CONFIDENTIAL, frozenset({"hr|main"})),
    "a Label made by hand with capitals": Label(Level.CONFIDENTIAL, frozenset({"HR"})),
    "not a label at all": 2,
}


def _written(url: str) -> tuple:
    with _owner(url) as owner:
        return tuple(
            owner.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("memories", "audit", "chain_heads", "sessions", "taint_events")
        )


@pytest.mark.parametrize("label", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_label_is_refused_before_anything_is_written(storage, pg_url, label):
    # Guards: connection.label_of taking a Label made by hand as it is (no "checked != value" refusal)
    hr = At(storage, "CONFIDENTIAL:hr")
    hr.save("plan", "hr coffee")
    before = _written(pg_url)
    new = [NewVersion("plan", "forged", (), AT)]
    calls = {
        "save": lambda: storage.save_many("main", label, new, saved_by="x", audit=lambda m: hr._event("memory_save")),
        "delete": lambda: storage.delete("main", "plan", label, deleted_at=AT, deleted_by="x", audit=hr._event),
        "get": lambda: storage.effective("main", label, "plan", audit=lambda m: hr._event("memory_get")),
        "list": lambda: storage.effective_view("main", label, audit=lambda v: hr._event("memory_list")),
        "search": lambda: storage.search("main", label, "coffee", 5, audit=lambda h: hr._event("memory_search")),
        "session": lambda: storage.add_session("s-bad", "main", label, AT),
        "taint event": lambda: storage.add_taint_event("main", TaintEvent(hr.id, AT, hr.label, label, "up")),
        "audit": lambda: storage.append_audit(dataclasses.replace(hr._event("memory_list"), taint=label)),
    }
    for name, call in calls.items():
        with pytest.raises(InvalidArgument):
            call()
        assert _written(pg_url) == before, name


# -- the session role's own SQL ------------------------------------------------------------------------------


def _claim_sql(url: str, taint: str, agent: str = "main") -> psycopg.Connection:
    """A connection as the session role in a transaction that claims ``agent`` at ``taint`` as memlab does."""
    conn = psycopg.connect(url.replace("postgres@", "memlab_session@"), options="-c search_path=memlab")
    txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
    with _owner(url) as owner:
        (key,) = owner.execute("SELECT key FROM claim_key").fetchone()
    conn.execute("SELECT set_config('memlab.claim', %s, true)", (claim(bytes(key), agent, Label.parse(taint), txid),))
    return conn


HAND_WRITTEN = {
    "every row": "SELECT key, classification, categories FROM memories",
    "the other compartments by name": "SELECT key, classification, categories FROM memories "
    "WHERE 'legal' = ANY(categories) OR categories && '{legal}' UNION ALL "
    "SELECT key, classification, categories FROM memories WHERE categories = '{hr}'",
    "a self-join": "SELECT h.key, h.classification, h.categories FROM memories l JOIN memories h ON h.key = l.key",
    "the search SQL without its filters": "SELECT m.key, m.classification, m.categories FROM memories m, "
    "to_tsquery('english', 'coffee | plan') q WHERE m.document @@ q",
    "the index function": "SELECT match_key, match_level, match_categories "
    "FROM matches(to_tsquery('english', 'coffee'))",
    "the save order function": "SELECT order_key, order_level, order_categories FROM save_order(ARRAY['plan', 'memo'])",
    "a count by label": "SELECT 'n', classification, categories FROM memories GROUP BY classification, categories",
}


@pytest.mark.parametrize("query", list(HAND_WRITTEN))
def test_a_session_at_confidential_hr_reads_no_legal_row_even_with_its_own_sql(storage, pg_url, query):
    """Neither CONFIDENTIAL:legal nor CONFIDENTIAL:hr,legal nor anything above CONFIDENTIAL, whatever it asks."""
    # Guards: memories_read without "AND categories <@ claimed_categories()" (every compartment readable)
    _compartments(storage)
    with _claim_sql(pg_url, "CONFIDENTIAL:hr") as conn:
        seen = {(level, tuple(categories)) for _, level, categories in conn.execute(HAND_WRITTEN[query]).fetchall()}
    assert seen <= {(0, ()), (1, ("hr",)), (2, ("hr",))}
    assert seen, "it reads what it may"


def test_a_public_session_without_categories_reads_only_plain_public_rows(storage, pg_url):
    _compartments(storage)
    At(storage, "PUBLIC:hr").save("memo", "public but hr")
    with _claim_sql(pg_url, "PUBLIC") as conn:
        seen = conn.execute("SELECT key, classification, categories FROM memories ORDER BY key").fetchall()
    assert seen == [("memo", 0, []), ("plan", 0, [])]


@pytest.mark.parametrize("label", ["CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal", "CONFIDENTIAL", "INTERNAL:hr"])
def test_a_session_cannot_insert_or_mark_a_version_at_another_label(storage, pg_url, label):
    """A write is at exactly the session's label: not beside it, not above it, not below it (not even its level
    without its categories)."""
    # Guards: memories_write with "categories <@" instead of "categories =" (writes below its label pass)
    _compartments(storage)
    target = Label.parse(label)
    row = (int(target.level), sorted(target.categories))
    with _claim_sql(pg_url, "CONFIDENTIAL:hr") as conn, pytest.raises(REFUSED):
        conn.execute(
            "INSERT INTO memories (agent, key, content, tags, classification, categories, version, saved_at, "
            "saved_by, commitment, current) VALUES ('main', 'forged', 'x', '[]', %s, %s::text[], 1, 'now', 'x', "
            "'x', true)",
            row,
        )
    with _claim_sql(pg_url, "CONFIDENTIAL:hr") as conn:
        marked = conn.execute(
            "UPDATE memories SET current = false WHERE classification = %s AND categories = %s::text[]", row
        ).rowcount
        assert marked == 0
    with _claim_sql(pg_url, "CONFIDENTIAL:hr") as conn, pytest.raises(REFUSED):
        conn.execute(
            "UPDATE memories SET categories = %s::text[] WHERE categories = '{hr}' AND classification = 2",
            (row[1],),
        )


def test_a_session_writes_its_own_label_and_moves_only_its_own_chain(storage, pg_url):
    _compartments(storage)
    with _claim_sql(pg_url, "CONFIDENTIAL:hr") as conn:
        conn.execute(
            "INSERT INTO memories (agent, key, content, tags, classification, categories, version, saved_at, "
            "saved_by, commitment, current) VALUES ('main', 'own', 'x', '[]', 2, '{hr}', 1, 'now', 'x', 'x', true)"
        )
        heads = conn.execute("SELECT taint, categories FROM chain_heads").fetchall()
        assert heads == [(2, ["hr"])]
        moved = conn.execute("UPDATE chain_heads SET seq = seq WHERE agent = 'main'").rowcount
        assert moved == 1
        for table, label in (("audit", "CONFIDENTIAL:legal"), ("sessions", "CONFIDENTIAL")):
            with pytest.raises(REFUSED), conn.transaction():  # a savepoint, so the transaction goes on
                columns = "(agent, taint, seq, at, session_id, tool, outcome, records, notes, hash)"
                if table == "audit":
                    conn.execute(
                        f"INSERT INTO audit {columns} VALUES ('main', %s, 99, 'now', 's', 't', 'ok', '[]', '[]', 'h')",
                        (label,),
                    )
                else:
                    conn.execute("INSERT INTO sessions VALUES ('forged', 'main', %s, 'now')", (label,))
        conn.execute("INSERT INTO sessions VALUES ('mine', 'main', 'CONFIDENTIAL:hr', 'now')")


CLAIM_EDITS = {
    "a category added": lambda made: made.replace("|2:hr|", "|2:hr,legal|"),
    "the category swapped": lambda made: made.replace("|2:hr|", "|2:legal|"),
    "the categories dropped": lambda made: made.replace("|2:hr|", "|2|"),
    "an empty category list": lambda made: made.replace("|2:hr|", "|2:|"),
}


@pytest.mark.parametrize("edit", list(CLAIM_EDITS))
def test_a_session_cannot_change_its_claims_categories(storage, pg_url, edit):
    """The mac covers the categories: a claim with other categories (or none) admits nothing at all."""
    # Guards: the mac taken over agent|level|txid only, in claim() and in claimed() (the categories unsigned)
    _compartments(storage)
    conn = psycopg.connect(pg_url.replace("postgres@", "memlab_session@"), options="-c search_path=memlab")
    with conn:
        txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
        with _owner(pg_url) as owner:
            (key,) = owner.execute("SELECT key FROM claim_key").fetchone()
        made = claim(bytes(key), "main", Label.parse("CONFIDENTIAL:hr"), txid)
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (made,))
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 4, "the true claim admits its rows"
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (CLAIM_EDITS[edit](made),))
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
        assert conn.execute("SELECT claimed_categories(), claimed_label()").fetchone() == (None, None)


def test_an_agent_name_with_bars_and_colons_claims_exactly_itself(storage, pg_url):
    """The claim's label follows the agent's last '|', so an agent named like a claim still claims only itself."""
    At(storage, "CONFIDENTIAL:hr", agent="main").save("plan", "main's")
    odd = At(storage, "PUBLIC", agent="main|2:hr")
    odd.save("plan", "odd's")
    assert odd.get("plan").content == "odd's"
    with _claim_sql(pg_url, "PUBLIC", agent="main|2:hr") as conn:
        assert conn.execute("SELECT agent, claimed_label() FROM memories").fetchall() == [("main|2:hr", "PUBLIC")]


# -- noninterference at the storage level ----------------------------------------------------------------------

LABELS = ["PUBLIC", "INTERNAL:hr", "INTERNAL:legal", "CONFIDENTIAL", "CONFIDENTIAL:hr", "CONFIDENTIAL:hr,legal"]
OPERATION = st.tuples(
    st.sampled_from(LABELS),
    st.sampled_from(["save", "delete"]),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["x", "y"]),
)
_worlds = iter(range(10**6))


def _observe(storage: PostgresStorage, agent: str, taint: str) -> tuple:
    at = At(storage, taint, agent=agent)
    strip = lambda memory: None if memory is None else (memory.ref(), memory.content, memory.tags)  # noqa: E731
    gets = []
    for key in ("a", "b"):
        try:
            gets.append(strip(at.get(key)))
        except Ambiguous as error:
            gets.append(str(error))
    return (tuple(gets), tuple(map(strip, at.list())), tuple(at.search("x y")), tuple(at.search("y")))


@pytest.mark.parametrize("shadowing", ["newest", "refuse"])
def test_versions_a_label_cannot_read_change_nothing_it_observes(pg_url, shadowing):
    """Two worlds (two agents of one store) that differ only in operations at labels that do not flow to T give
    T the same gets, lists, searches and scores; under both shadowing rules."""
    # Guards: memories_read and the store's _LIVE both without their categories condition (found in 25 examples)
    with _opened(pg_url, shadowing) as storage:

        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(st.sampled_from(LABELS), st.lists(OPERATION, max_size=6), st.lists(OPERATION, max_size=6))
        def check(taint, shared, hidden):
            world = next(_worlds)
            observer = Label.parse(taint)
            hidden = [operation for operation in hidden if not Label.parse(operation[0]).can_flow_to(observer)]
            seen = []
            for agent, operations in ((f"w{world}-one", shared), (f"w{world}-two", _interleave(shared, hidden))):
                for label, what, key, content in operations:
                    at = At(storage, label, agent=agent)
                    at.save(key, content) if what == "save" else at.delete(key)
                seen.append(_observe(storage, agent, taint))
            assert seen[0] == seen[1]

        check()


def _interleave(shared: list, hidden: list) -> list:
    """``hidden`` spread among ``shared``: one after each shared operation, the rest at the end."""
    merged = []
    for n, operation in enumerate(shared):
        merged.append(operation)
        if n < len(hidden):
            merged.append(hidden[n])
    return merged + hidden[len(shared) :]


# -- a store made before compartments ---------------------------------------------------------------------------


def test_a_schema_4_store_gains_categories_in_place_and_behaves_as_before(pg_url):
    """A store made before compartments (schema 4: no categories on versions or chains) opens, verifies, reads and
    writes as it did, and its gate now gates on categories too."""
    with _opened(pg_url) as storage:
        for level in ("PUBLIC", "CONFIDENTIAL"):
            At(storage, level).save("plan", f"the {level} coffee plan")
    with _owner(pg_url) as owner, owner.transaction():
        for statement in (
            "DROP POLICY memories_read ON memories",
            "DROP POLICY memories_write ON memories",
            "DROP POLICY memories_mark ON memories",
            "DROP POLICY chain_heads_read ON chain_heads",
            "DROP POLICY chain_heads_move ON chain_heads",
            "DROP FUNCTION save_order(text[])",
            "DROP FUNCTION claimed_categories()",
            "ALTER TABLE memories DROP COLUMN categories",
            "ALTER TABLE memories ADD UNIQUE (agent, key, classification, version)",
            "ALTER TABLE chain_heads DROP COLUMN categories",
            "ALTER TABLE chain_heads ADD PRIMARY KEY (agent, taint)",
            "CREATE POLICY memories_read ON memories FOR SELECT TO memlab_session USING (agent = "
            "(SELECT claimed_agent()) AND classification <= (SELECT claimed_taint()))",
            "UPDATE memlab_meta SET value = '4' WHERE name = 'schema_version'",
        ):
            owner.execute(statement)
    with _opened(pg_url) as storage:
        assert storage.verify().ok, storage.verify().problems
        public, confidential = At(storage, "PUBLIC"), At(storage, "CONFIDENTIAL")
        assert confidential.get("plan").ref() == "plan@CONFIDENTIAL/v1"
        assert [ref for ref, _, _ in public.search("coffee")] == ["plan@PUBLIC/v1"]
        assert confidential.save("plan", "again").ref() == "plan@CONFIDENTIAL/v2"
        At(storage, "CONFIDENTIAL:hr").save("plan", "hr's")
        assert At(storage, "CONFIDENTIAL:hr").get("plan").ref() == "plan@CONFIDENTIAL:hr/v1"
        assert storage.verify().ok
    with _owner(pg_url) as owner:
        assert owner.execute("SELECT value FROM memlab_meta WHERE name = 'schema_version'").fetchone() == ("7",)
    with _claim_sql(pg_url, "CONFIDENTIAL") as conn:
        assert conn.execute("SELECT categories FROM memories WHERE classification = 2").fetchall() == [([],), ([],)]


def test_the_postgres_backend_refuses_a_shadowing_rule_it_cannot_serve(pg_url):
    with pytest.raises(InvalidArgument, match="newest or refuse"):
        PostgresStorage(pg_url, rules=dataclasses.replace(ViewRules.lattice(), shadowing="newest-overall"))
