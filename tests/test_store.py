"""memlab.store: MemoryStore's own behaviour: sessions, listeners, copies, the auditor's views, purge's arguments.

What every backend must do with the semantics is the contract suite's (tests/test_session.py and the others).
"""

from __future__ import annotations

import pytest

from memlab import InvalidArgument, MemoryStore, Ranking
from memlab.labels import Label
from memlab.store import Snapshot, utc_text
from tests.conftest import FIXED_TIME, fixed_clock


def test_a_session_is_recorded_and_a_duplicate_id_refused():
    store = MemoryStore(clock=fixed_clock)
    session = store.session("internal", "bob", session_id="first")
    assert (session.id, session.agent, session.taint) == ("first", "bob", Label.parse("INTERNAL"))
    assert store.sessions().to_dict("records") == [
        {"id": "first", "agent": "bob", "initial_taint": "INTERNAL", "created_at": utc_text(FIXED_TIME)}
    ]
    with pytest.raises(InvalidArgument):
        store.session("PUBLIC", "bob", session_id="first")
    assert len(store.session().id) == 12


def test_listeners_hear_every_change_and_a_broken_one_only_warns():
    store = MemoryStore()
    heard = []
    store.listeners.append(lambda: heard.append("change"))
    store.listeners.append(lambda: 1 / 0)
    with pytest.warns(RuntimeWarning, match="ZeroDivisionError"):
        session = store.session()
    with pytest.warns(RuntimeWarning):
        session.memory_save("k", "v")
    assert heard == ["change", "change"]
    store.listeners.clear()
    assert session.memory_get("k").content == "v"  # the change stands


def test_a_fork_is_independent_of_its_template():
    store = MemoryStore(policy="global-stats", clock=fixed_clock)
    store.session().memory_save("shared", "before the fork")
    twin = store.fork()
    twin.session().memory_save("shared", "only in the twin")
    assert store.session().memory_get("shared").content == "before the fork"
    assert twin.policy is store.policy and twin.clock is fixed_clock


def test_restore_takes_only_a_snapshot():
    store = MemoryStore()
    image = store.snapshot()
    assert isinstance(image, Snapshot)
    store.session().memory_save("later", "x")
    store.restore(image)
    assert store.agents() == []
    with pytest.raises(InvalidArgument, match="not dict"):
        store.restore({})


def test_a_folder_store_cannot_be_copied(tmp_path):
    with MemoryStore(tmp_path / "folder") as store, pytest.raises(InvalidArgument, match="in-memory or single-file"):
        store.fork()


def test_the_ranking_must_be_a_ranking():
    store = MemoryStore()
    store.ranking = Ranking(tag_boost=2.0)
    assert store.ranking.tag_boost == 2.0
    with pytest.raises(InvalidArgument, match="Ranking"):
        store.ranking = {"tag_boost": 2.0}


def test_the_auditors_views():
    store = MemoryStore(clock=fixed_clock)
    public, internal = store.session("PUBLIC", session_id="p"), store.session("INTERNAL", session_id="i")
    public.memory_save("name", "Sam")
    internal.memory_save("name", "Samantha")
    public.memory_delete("name")
    assert store.view("PUBLIC").empty
    assert store.view("RESTRICTED")[["key", "content", "classification"]].values.tolist() == [
        ["name", "Samantha", "INTERNAL"]
    ]
    history = store.history("name")
    assert history[["classification", "content"]].values.tolist() == [["PUBLIC", "Sam"], ["INTERNAL", "Samantha"]]
    assert history["deleted_by"].iloc[0] == "p" and history["deleted_at"].isna().tolist() == [False, True]
    assert store.versions().equals(history)
    audit = store.audit()
    assert "digest" not in audit.columns  # the chain's, not the auditor's
    assert audit["tool"].tolist() == ["memory_save", "memory_save", "memory_delete"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"reason": ""}, "needs a reason"),
        ({"reason": "   "}, "needs a reason"),
        ({"reason": "ticket 1", "level": "SECRET"}, "unknown level"),
    ],
)
def test_a_purge_needs_a_reason_and_a_real_level(arguments, message):
    store = MemoryStore()
    store.session().memory_save("k", "v")
    with pytest.raises(InvalidArgument, match=message):
        store.purge("main", "k", **arguments)
    assert store.session().memory_get("k").content == "v"


def test_a_purge_is_audited_with_who_and_why():
    store = MemoryStore()
    store.session().memory_save("k", "v")
    assert store.purge("main", "k", reason="ticket 1", by="dpo") == ["k@PUBLIC/v1"]
    row = store.audit().iloc[-1]
    assert (row["tool"], row["session_id"], row["message"], row["taint"]) == ("purge", "dpo", "ticket 1", "RESTRICTED")


def test_compartments_are_refused_under_a_policy_whose_views_are_not_per_label():
    with pytest.raises(InvalidArgument, match="global-stats"):
        MemoryStore(policy="global-stats").session("CONFIDENTIAL:hr")
    assert MemoryStore().session("CONFIDENTIAL:hr").taint == Label.parse("CONFIDENTIAL:hr")


def test_a_throwaway_store_takes_only_a_postgresql_url():
    with MemoryStore.throwaway() as scratch:
        scratch.session().memory_save("k", "v")
        assert scratch.agents() == ["main"]
    with pytest.raises(InvalidArgument), MemoryStore.throwaway("sqlite:///x.db"):
        pass
