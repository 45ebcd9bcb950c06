"""Compartments in sessions and in the SQLite stores: sessions at labels, saves classified at them, reads gated by
the lattice of levels and categories, the shadowing rules, the audit and verify, and bad input at every door."""

from __future__ import annotations

import json
import sqlite3

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from memlab import InvalidArgument, Level, MemoryStore, NotFound, TaintError
from memlab.cli import main
from memlab.labels import Ambiguous, Label
from memlab.policy import Policy
from memlab.storage import SqliteStorage
from memlab.storage.capabilities import BACKENDS
from memlab.tools import call
from tests.reference_model import AMBIGUOUS, ReferenceStore, Version

HR, LEGAL, BOTH = "CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal"


class Refuse(Policy):
    name = "refuse-test"
    shadowing = "refuse"


def _file_snapshot(store: MemoryStore) -> tuple:
    """Everything a store holds that a refused call must leave as it was: audit, versions, sessions, taints."""
    return (
        store.audit().to_dict("records"),
        store.versions().to_dict("records"),
        store.sessions().to_dict("records"),
        store.taint_events().to_dict("records"),
    )


# -- sessions at a label -------------------------------------------------------------------------------


def test_a_session_at_a_label_has_it_as_its_taint_and_a_plain_session_keeps_a_level():
    store = MemoryStore()
    hr = store.session(taint=HR)
    assert hr.taint == Label.parse(HR) and hr.label == Label.parse(HR)
    assert store.session(taint=Label.parse("internal:Legal")).taint == Label.parse("INTERNAL:legal")
    plain = store.session(taint="CONFIDENTIAL")
    assert plain.taint == Level.CONFIDENTIAL and type(plain.taint) is Label  # one type: a label equal to its level
    assert plain.label == Label(Level.CONFIDENTIAL)
    # A label without categories is its level, written as a label too.
    assert store.session(taint=Label(Level.INTERNAL)).taint == Level.INTERNAL
    assert store.sessions()["initial_taint"].tolist() == [HR, "INTERNAL:legal", "CONFIDENTIAL", "INTERNAL"]


def test_a_save_is_classified_at_the_sessions_label_and_read_only_where_it_flows():
    store = MemoryStore()
    saved = store.session(taint=HR).memory_save("salary", "hr says 100")
    assert (saved.classification, saved.level, saved.categories) == (Label.parse(HR), Level.CONFIDENTIAL, {"hr"})
    assert saved.ref() == "salary@CONFIDENTIAL:hr/v1"
    readers = {taint: store.session(taint=taint).memory_get("salary") for taint in [HR, BOTH, "RESTRICTED:hr"]}
    assert all(memory == saved for memory in readers.values())
    # Neither a higher level without the category, nor the other compartment, nor a lower level reads it.
    for taint in ["RESTRICTED", LEGAL, "INTERNAL:hr", "PUBLIC"]:
        session = store.session(taint=taint)
        assert session.memory_get("salary") is None
        assert session.memory_list() == [] and session.memory_search("hr salary") == []


def test_a_labelled_session_reads_plain_versions_below_it_and_shadows_them():
    store = MemoryStore()
    store.session().memory_save("office", "public office")
    hr = store.session(taint=HR)
    assert hr.memory_get("office").content == "public office"
    hr.memory_save("office", "hr office")
    assert hr.memory_get("office").content == "hr office"
    assert [hit.memory.ref() for hit in hr.memory_search("office")] == ["office@CONFIDENTIAL:hr/v1"]
    # The plain views are untouched by the labelled version.
    assert store.session(taint="RESTRICTED").memory_get("office").content == "public office"
    assert [m.ref() for m in store.session(taint=LEGAL).memory_list()] == ["office@PUBLIC/v1"]


def test_versions_are_numbered_per_label_and_a_delete_takes_exactly_the_sessions_label():
    store = MemoryStore()
    hr, legal = store.session(taint=HR), store.session(taint=LEGAL)
    assert [hr.memory_save("k", text).version for text in ["one", "two"]] == [1, 2]
    assert legal.memory_save("k", "legal").version == 1
    with pytest.raises(NotFound):
        store.session(taint=BOTH).memory_delete("k")  # no version at exactly hr,legal
    assert hr.memory_delete("k").ref() == "k@CONFIDENTIAL:hr/v2"
    assert hr.memory_get("k") is None
    assert store.session(taint=BOTH).memory_get("k").ref() == "k@CONFIDENTIAL:legal/v1"


def test_newest_shows_the_last_saved_of_several_maximal_versions():
    store = MemoryStore()
    store.session(taint=LEGAL).memory_save("k", "legal apple")
    store.session(taint=HR).memory_save("k", "hr apple")
    both = store.session(taint=BOTH)
    assert both.memory_get("k").ref() == "k@CONFIDENTIAL:hr/v1"
    assert [m.ref() for m in both.memory_list()] == ["k@CONFIDENTIAL:hr/v1"]
    assert [hit.memory.ref() for hit in both.memory_search("apple")] == ["k@CONFIDENTIAL:hr/v1"]
    store.session(taint=LEGAL).memory_save("k", "legal pear")
    assert both.memory_get("k").content == "legal pear"
    # A version above both is the one maximal version.
    store.session(taint="RESTRICTED:hr,legal").memory_save("k", "top")
    assert store.session(taint="RESTRICTED:hr,legal").memory_get("k").content == "top"
    assert both.memory_get("k").content == "legal pear"


def test_refuse_fails_a_get_as_ambiguous_naming_the_labels_and_leaves_the_key_out_of_lists_and_searches():
    store = MemoryStore(policy=Refuse())
    store.session(taint=LEGAL).memory_save("k", "legal apple")
    store.session(taint=HR).memory_save("k", "hr apple")
    store.session(taint=BOTH).memory_save("other", "apple pie")
    both = store.session(taint=BOTH)
    with pytest.raises(Ambiguous, match=r"CONFIDENTIAL:hr, CONFIDENTIAL:legal"):
        both.memory_get("k")
    assert call(both, "memory_get", {"key": "k"})["error"]["code"] == "ambiguous"
    assert [m.key for m in both.memory_list()] == ["other"]
    assert [hit.memory.key for hit in both.memory_search("apple")] == ["other"]
    rows = store.audit().query("tool == 'memory_get' and session_id == @both.id")
    assert rows["outcome"].tolist() == ["ambiguous", "ambiguous"]
    # Each compartment alone still sees its own version; one above both ends the ambiguity.
    assert store.session(taint=HR).memory_get("k").content == "hr apple"
    store.session(taint=BOTH).memory_save("k", "both")
    assert both.memory_get("k").content == "both"
    assert store.verify().ok


@pytest.mark.parametrize("ranking", ["dense_only", "hybrid"])
def test_dense_and_hybrid_search_at_a_label_rank_only_its_view(ranking):
    from memlab import Ranking
    from tests.backends import WordsEmbedder

    store = MemoryStore(embedder=WordsEmbedder(), ranking=getattr(Ranking, ranking)())
    store.session().memory_save("k", "apple public")
    store.session(taint=HR).memory_save("k", "apple hr")
    store.session(taint=LEGAL).memory_save("j", "apple legal")
    found = {
        taint: [hit.memory.ref() for hit in store.session(taint=taint).memory_search("apple")] for taint in (HR, LEGAL)
    }
    assert found[HR] == ["k@CONFIDENTIAL:hr/v1"] and set(found[LEGAL]) == {"j@CONFIDENTIAL:legal/v1", "k@PUBLIC/v1"}


def test_the_tool_layer_reports_the_label_as_the_classification():
    store = MemoryStore()
    hr = store.session(taint=HR)
    assert call(hr, "memory_save", {"key": "k", "content": "v"})["classification"] == HR
    assert call(hr, "memory_get", {"key": "k"})["classification"] == HR
    assert call(hr, "memory_list", {})["memories"][0]["classification"] == HR
    assert call(hr, "memory_delete", {"key": "k"})["classification"] == HR


def test_a_model_cannot_pick_a_label_through_an_argument():
    store = MemoryStore()
    session = store.session(taint=HR)
    result = call(session, "memory_save", {"key": "k", "content": "v", "label": BOTH, "Label": "PUBLIC"})
    assert result["classification"] == HR
    assert store.audit()["notes"].tolist()[-1] == [
        "stripped argument 'label': the classification is always the session's taint",
        "stripped argument 'Label': the classification is always the session's taint",
    ]


# -- escalation ------------------------------------------------------------------------------------------


def test_escalation_goes_up_the_lattice_and_is_recorded_as_labels():
    store = MemoryStore()
    session = store.session(taint="INTERNAL")
    assert session.escalate(HR, reason="hr case") == Label.parse(HR)
    assert session.escalate(BOTH) == Label.parse(BOTH)
    assert session.escalate(BOTH) == Label.parse(BOTH)  # already there: no event
    events = store.taint_events()[["from_level", "to_level"]].values.tolist()
    assert events == [["INTERNAL", HR], [HR, BOTH]]
    session.memory_save("k", "v")
    assert store.audit()["taint"].tolist() == [BOTH]
    assert store.verify().ok


@pytest.mark.parametrize(
    ("start", "target", "message"),
    [
        (HR, LEGAL, "incomparable"),  # across compartments: neither flows to the other
        (BOTH, HR, "cannot lower"),  # dropping a category
        (HR, "RESTRICTED", "incomparable"),  # a higher level without the category
        (HR, "INTERNAL:hr", "cannot lower"),
    ],
)
def test_escalation_below_or_across_is_refused_naming_both_and_writes_nothing(start, target, message):
    store = MemoryStore()
    session = store.session(taint=start)
    session.memory_save("k", "v")
    before = _file_snapshot(store)
    with pytest.raises(TaintError, match=message) as refused:
        session.escalate(target)
    assert str(Label.parse(start)) in str(refused.value) and str(Label.parse(target)) in str(refused.value)
    assert session.taint == Label.parse(start)
    assert _file_snapshot(store) == before


def test_frozen_taint_saves_at_the_initial_label_after_an_escalation():
    store = MemoryStore(policy="frozen-taint")
    session = store.session(taint=HR)
    session.escalate(BOTH)
    assert session.memory_save("k", "v").label == Label.parse(HR)


# -- audit, chain, verify ---------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["file", "folder"])
def test_verify_passes_on_categorised_versions_and_they_survive_a_reopen(tmp_path, layout):
    path = tmp_path / "store"
    with MemoryStore(path, layout=layout) as store:
        store.session(taint=HR).memory_save("k", "hr apple", tags=["t"])
        store.session(taint=LEGAL).memory_save("k", "legal apple")
        store.session(taint=BOTH).memory_search("apple")
        store.session(taint=LEGAL).memory_delete("k")
        store.purge("main", "k", HR, reason="test")
        assert store.verify().ok, store.verify()
    with MemoryStore(path) as store:
        assert store.verify().ok
        both = store.session(taint=BOTH)
        assert both.memory_get("k") is None
        store.session(taint=HR).memory_save("k", "hr again")
        assert [hit.memory.ref() for hit in both.memory_search("again")] == ["k@CONFIDENTIAL:hr/v2"]
        assert store.history("k")["classification"].tolist() == [HR, HR, LEGAL]


@pytest.mark.parametrize(
    "tampering",
    [
        "UPDATE memories SET classification = 'CONFIDENTIAL:legal' WHERE classification = 'CONFIDENTIAL:hr'",
        "UPDATE memories SET classification = 2 WHERE classification = 'CONFIDENTIAL:hr'",
        "UPDATE memories SET classification = 'CONFIDENTIAL:hr,legal' WHERE classification = 'CONFIDENTIAL:hr'",
        "UPDATE effective SET memory_id = 0 WHERE taint = 'CONFIDENTIAL:hr,legal'",
        "DELETE FROM label_views",
    ],
)
def test_verify_detects_a_versions_label_or_a_label_view_edited_under_sql(tmp_path, tampering):
    path = tmp_path / "store.db"
    with MemoryStore(path) as store:
        store.session(taint=HR).memory_save("k", "hr apple")
        store.session(taint=BOTH).memory_get("k")
    conn = sqlite3.connect(path)
    for trigger in ("memories_frozen",):  # an attacker with the file drops the trigger first
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute(tampering)
    conn.commit()
    from memlab.storage.schema import TRIGGERS

    conn.execute(f"CREATE TRIGGER memories_frozen {TRIGGERS['memories_frozen']}")
    conn.commit()
    conn.close()
    from memlab.storage import verify_path

    assert not verify_path(path).ok


# -- bad input, at every door -------------------------------------------------------------------------------

BAD_LABELS = ["CONFIDENTIAL:", "SECRET:hr", "CONFIDENTIAL:h\x00r", "CONFIDENTIAL:" + "a" * 33, "CONFIDENTIAL:hr,hr"]
BAD_LABELS += ["CONFIDENTIAL:" + ",".join(f"c{n}" for n in range(17)), "CONFIDENTIAL:1hr"]


@pytest.mark.parametrize("bad", BAD_LABELS)
def test_a_malformed_label_is_refused_by_session_and_escalate_and_writes_nothing(bad):
    store = MemoryStore()
    session = store.session(taint="PUBLIC")
    before = _file_snapshot(store)
    with pytest.raises(InvalidArgument):
        store.session(taint=bad)
    with pytest.raises(InvalidArgument):
        session.escalate(bad)
    assert session.taint == Level.PUBLIC and _file_snapshot(store) == before


@pytest.mark.parametrize("bad", ["CONFIDENTIAL:", "SECRET:hr", "CONFIDENTIAL:hr,hr"])
def test_the_cli_refuses_a_malformed_taint_label_and_writes_nothing(tmp_path, capsys, bad):
    records = tmp_path / "in.jsonl"
    records.write_text(json.dumps({"key": "k", "content": "v"}) + "\n")
    store = tmp_path / "store.db"
    assert main(["import", str(records), "--db", str(store), "--taint", bad]) == 2
    assert "memlab import:" in capsys.readouterr().err and not store.exists()


@pytest.mark.parametrize("bad", ["CONFIDENTIAL:", "SECRET:hr", "CONFIDENTIAL:hr,,legal"])
def test_serve_refuses_a_malformed_taint_label_from_the_flag_or_the_environment(tmp_path, capsys, monkeypatch, bad):
    store = tmp_path / "memories"
    assert main(["serve", "--db", str(store), "--taint", bad]) == 2
    assert "memlab serve:" in capsys.readouterr().err
    monkeypatch.setenv("MEMLAB_TAINT", bad)
    assert main(["serve", "--db", str(store)]) == 2
    assert f"(MEMLAB_TAINT={bad!r})" in capsys.readouterr().err
    assert not store.exists()


def test_the_cli_imports_at_a_label(tmp_path):
    records = tmp_path / "in.jsonl"
    records.write_text(json.dumps({"key": "k", "content": "hr apple"}) + "\n")
    store = tmp_path / "store.db"
    assert main(["import", str(records), "--db", str(store), "--taint", HR]) == 0
    with MemoryStore(store) as opened:
        assert opened.session(taint=BOTH).memory_get("k").label == Label.parse(HR)
        assert opened.session(taint="RESTRICTED").memory_get("k") is None


def test_an_mcp_server_at_a_label_saves_there_and_the_host_escalates_only_up_the_lattice(tmp_path):
    from mcp import MCPError, types

    from memlab.mcp_server import escalate
    from tests.mcp_client import call as mcp_call
    from tests.mcp_client import connect, run

    db, log = tmp_path / "memories", tmp_path / "server.log"

    async def scenario():
        async with connect(db, HR, log=log) as client:
            error, saved, _ = await mcp_call(client, "memory_save", {"key": "k", "content": "v", "label": "PUBLIC"})
            assert not error and saved["classification"] == HR
            for bad, message in [
                (LEGAL, "incomparable"),
                ("CONFIDENTIAL", "cannot lower"),
                ("CONFIDENTIAL:", "no cat"),
            ]:
                with pytest.raises(MCPError, match=message) as refused:
                    await escalate(client, bad)
                assert refused.value.code == types.INVALID_PARAMS
            assert await escalate(client, BOTH, reason="both cases") == Label.parse(BOTH)
            error, saved, _ = await mcp_call(client, "memory_save", {"key": "k", "content": "w"})
            assert not error and saved["classification"] == BOTH

    run(scenario, log)
    with MemoryStore(db) as store:
        assert store.taint_events()[["from_level", "to_level"]].values.tolist() == [[HR, BOTH]]
        assert store.audit()["taint"].tolist() == [HR, BOTH] and store.verify().ok


class _NoCompartments(SqliteStorage):
    capabilities = BACKENDS["memory"] - {"compartments"}  # what a backend without them declares


@pytest.mark.parametrize("policy", ["shadow-after-match", "global-stats"])
def test_a_policy_whose_views_are_not_per_label_refuses_a_label_clearly(policy):
    store = MemoryStore(policy=policy)
    session = store.session()
    before = _file_snapshot(store)
    with pytest.raises(InvalidArgument, match=f"compartments not supported under policy '{policy}'"):
        store.session(taint=HR)
    with pytest.raises(InvalidArgument, match="compartments not supported"):
        session.escalate(HR)
    assert _file_snapshot(store) == before
    assert store.session(taint="CONFIDENTIAL").taint == Level.CONFIDENTIAL  # the levels as ever


def test_a_backend_without_compartments_refuses_a_label_clearly():
    store = MemoryStore(storage=_NoCompartments())
    with pytest.raises(InvalidArgument, match=r"compartments not supported by this store's backend \(_NoCompartments"):
        store.session(taint=HR)
    assert store.sessions().empty


# -- the reference model and noninterference, over labels ------------------------------------------------

LABELS = ["PUBLIC", "INTERNAL", "CONFIDENTIAL", "INTERNAL:hr", HR, LEGAL, BOTH, "RESTRICTED:legal"]
KEYS = ["k1", "k2"]
WORDS = ["apple", "berry", "cherry"]


def _tuple(memory) -> tuple:
    return (memory.key, memory.content, memory.label, memory.version, memory.saved_by)


def _model_tuple(version: Version) -> tuple:
    return (version.key, version.content, Label.parse(version.classification), version.version, version.saved_by)


class StoreMatchesModelOverLabels(RuleBasedStateMachine):
    """Random sessions at labels, escalations and the five tools: the store agrees with the reference model.

    Guards: IndexUpkeep.refresh leaving the label views alone (``labels = {}``): a view registered before a save
    keeps its old winner."""

    sessions = Bundle("sessions")
    policy: Policy | str = "strict"
    layout: str | None = None

    def __init__(self) -> None:
        super().__init__()
        self.store = MemoryStore(policy=self.policy)
        self.model = ReferenceStore(shadowing=self.store.policy.shadowing)
        self.taints: dict[str, Label] = {}
        self.count = 0

    def teardown(self) -> None:
        self.store.close()

    def _taint(self, session) -> Label | Level:
        label = self.taints[session.id]
        return label if label.categories else label.level

    @rule(target=sessions, taint=st.sampled_from(LABELS))
    def start(self, taint):
        self.count += 1
        session = self.store.session(taint=taint, session_id=f"s{self.count}")
        self.taints[session.id] = Label.parse(taint)
        return session

    @rule(session=sessions, label=st.sampled_from(LABELS))
    def escalate(self, session, label):
        current, target = self.taints[session.id], Label.parse(label)
        if not current.can_flow_to(target):
            with pytest.raises(TaintError):
                session.escalate(label)
            return
        session.escalate(label)
        self.taints[session.id] = target

    @rule(session=sessions, key=st.sampled_from(KEYS), word=st.sampled_from(WORDS))
    def save(self, session, key, word):
        saved = session.memory_save(key, word)
        assert _tuple(saved) == _model_tuple(self.model.save("main", self._taint(session), key, word, (), session.id))

    @rule(session=sessions, key=st.sampled_from(KEYS))
    def delete(self, session, key):
        expected = self.model.delete("main", self._taint(session), key)
        if expected is None:
            with pytest.raises(NotFound):
                session.memory_delete(key)
        else:
            assert _tuple(session.memory_delete(key)) == _model_tuple(expected)

    @rule(session=sessions, key=st.sampled_from(KEYS))
    def get(self, session, key):
        expected = self.model.effective("main", self._taint(session), key)
        if expected == AMBIGUOUS:
            with pytest.raises(Ambiguous):
                session.memory_get(key)
            return
        got = session.memory_get(key)
        assert (None if got is None else _tuple(got)) == (None if expected is None else _model_tuple(expected))

    @rule(session=sessions)
    def list_and_search(self, session):
        expected = [_model_tuple(v) for v in self.model.view("main", self._taint(session))]
        assert [_tuple(m) for m in session.memory_list()] == expected
        for word in WORDS:
            found = {hit.memory.key for hit in session.memory_search(word)}
            assert found == self.model.matching_keys("main", self._taint(session), word)

    @invariant()
    def verifies(self):
        if self.count % 4 == 0:
            assert self.store.verify().ok


class StoreMatchesModelOverLabelsRefusing(StoreMatchesModelOverLabels):
    policy = Refuse()


TestStoreMatchesModelOverLabels = StoreMatchesModelOverLabels.TestCase
TestStoreMatchesModelOverLabels.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)
TestStoreMatchesModelOverLabelsRefusing = StoreMatchesModelOverLabelsRefusing.TestCase
TestStoreMatchesModelOverLabelsRefusing.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)


# Operations: (label, op, key, word). An observer at OBSERVER sees the same whatever is done at labels that do not
# flow to it. Guards: ViewRules.can_read_label ignoring categories (a save at CONFIDENTIAL:legal reaches hr's view).
OBSERVERS = [HR, BOTH, "INTERNAL:hr"]
operations = st.lists(
    st.tuples(
        st.sampled_from(LABELS), st.sampled_from(["save", "delete"]), st.sampled_from(KEYS), st.sampled_from(WORDS)
    ),
    max_size=8,
)


def _observe(store: MemoryStore, observer: str) -> tuple:
    session = store.session(taint=observer, session_id=f"observer-{len(store.sessions())}")
    seen = []
    for key in KEYS:
        try:
            memory = session.memory_get(key)
            seen.append(None if memory is None else (memory.content, str(memory.label), memory.version))
        except Ambiguous as error:
            seen.append(("ambiguous", str(error)))
    seen.append([(m.key, m.content) for m in session.memory_list()])
    seen.append([[(h.memory.key, round(h.score, 9), h.snippet) for h in session.memory_search(w)] for w in WORDS])
    return tuple(seen)


def _run(store: MemoryStore, steps) -> None:
    for label, op, key, word in steps:
        session = store.session(taint=label)
        if op == "save":
            session.memory_save(key, f"{word} {key}")
        else:
            try:
                session.memory_delete(key)
            except NotFound:
                pass


@pytest.mark.parametrize("policy", ["strict", Refuse()], ids=["newest", "refuse"])
@settings(max_examples=60, deadline=None)
@given(observer=st.sampled_from(OBSERVERS), low=operations, high=operations, interleave=st.randoms())
def test_nothing_at_a_label_that_does_not_flow_to_the_observer_changes_what_it_sees(
    policy, observer, low, high, interleave
):
    hidden = [step for step in high if not Label.parse(step[0]).can_flow_to(Label.parse(observer))]
    visible = [step for step in low if Label.parse(step[0]).can_flow_to(Label.parse(observer))]
    mixed = list(visible)
    for step in hidden:  # the hidden steps anywhere among the visible ones, order of each kept
        mixed.insert(interleave.randint(0, len(mixed)), step)
    with MemoryStore(policy=policy) as alone, MemoryStore(policy=policy) as together:
        _run(alone, visible)
        _run(together, mixed)
        assert _observe(alone, observer) == _observe(together, observer)
