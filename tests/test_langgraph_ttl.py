"""LangGraph's TTL over memlab (``memlab.integrations.langgraph_ttl``, ``MemlabStore(ttl=...)``): expired items leave
every view by the store's clock, a read refreshes where asked (never by writing down), a lower session cannot make a
higher item expire, and the sweep is the auditor's purge."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from langgraph.store.base import PutOp

from memlab import InvalidArgument, MemoryStore
from memlab.integrations.langgraph import MemlabStore
from memlab.integrations.langgraph_ttl import SWEEP_REASON, check_config, expired, minutes_of, ttl_tag

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Clock:
    """The store's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(clock):
    return MemoryStore(clock=clock)


def seen(graph_store):
    """What a graph observes: get, search (with and without a query) and the namespaces listed."""
    return (
        graph_store.get(("a",), "k", refresh_ttl=False) is not None,
        [item.key for item in graph_store.search(("a",), refresh_ttl=False)],
        [item.key for item in graph_store.search(("a",), query="lisbon", refresh_ttl=False)],
        graph_store.list_namespaces(),
    )


def test_an_expired_item_leaves_get_search_and_the_namespaces_listed_at_once(store, clock):
    # Guards: each of _get's, _found's (query and listing) and _list_namespaces' expiry checks.
    graph_store = MemlabStore(store, taint="INTERNAL")
    graph_store.put(("a",), "k", {"text": "lisbon"}, ttl=5)
    clock.advance(4.9)
    assert seen(graph_store) == (True, ["k"], ["k"], [("a",)])
    clock.advance(0.1)
    assert seen(graph_store) == (False, [], [], [])


def test_the_default_ttl_applies_to_a_put_that_names_none_and_ttl_none_keeps_the_item(store, clock):
    graph_store = MemlabStore(store, taint="INTERNAL", ttl={"default_ttl": 1, "refresh_on_read": False})
    graph_store.put(("a",), "k", {"text": "lisbon"})
    graph_store.put(("a",), "kept", {"text": "lisbon"}, ttl=None)
    clock.advance(1)
    assert graph_store.get(("a",), "k") is None and graph_store.get(("a",), "kept") is not None


def test_a_put_without_a_ttl_replaces_one_with_a_ttl(store, clock):
    graph_store = MemlabStore(store, taint="INTERNAL")
    graph_store.put(("a",), "k", {"text": "lisbon"}, ttl=1)
    graph_store.put(("a",), "k", {"text": "porto"})
    clock.advance(10)
    assert graph_store.get(("a",), "k").value == {"text": "porto"}


def test_a_read_refreshes_the_ttl_where_asked_and_not_otherwise(store, clock):
    # Guards: _get's and _search's refresh, and refresh_on_read=False honoured.
    refreshing = MemlabStore(store, taint="INTERNAL", ttl={"refresh_on_read": True})
    for key, city in (("got", "lisbon"), ("searched", "porto"), ("unread", "faro")):
        refreshing.put(("a",), key, {"text": city}, ttl=5)
    clock.advance(4)
    assert refreshing.get(("a",), "got") is not None
    assert [item.key for item in refreshing.search(("a",), query="porto")] == ["searched"]
    refreshing.get(("a",), "unread", refresh_ttl=False)
    clock.advance(4)  # 8 minutes after the put, 4 after the reads
    plain = MemlabStore(store, taint="INTERNAL", ttl={"refresh_on_read": False})
    assert [item.key for item in plain.search(("a",))] == ["got", "searched"]


@pytest.mark.parametrize(
    "config, read_item_kept",
    [({"default_ttl": 5}, True), ({"default_ttl": 5, "refresh_on_read": False}, False)],
    ids=["refresh-on-read-omitted", "refresh-on-read-false"],
)
def test_a_puts_own_ttl_beats_the_default_and_a_read_refreshes_unless_the_config_says_not(
    store, clock, config, read_item_kept
):
    # Guards: a put's ttl=None kept as "never expires" (not confused with no ttl given, which takes the default), and
    # refresh_on_read defaulting to True as LangGraph's TTLConfig documents and PostgresStore does (LangGraph's
    # SqliteStore refreshes only when the config says refresh_on_read=True).
    graph_store = MemlabStore(store, taint="INTERNAL", ttl=config)
    graph_store.put(("a",), "short", {"text": "lisbon"}, ttl=1)
    graph_store.put(("a",), "default", {"text": "porto"})
    graph_store.put(("a",), "forever", {"text": "faro"}, ttl=None)
    clock.advance(2)
    assert [graph_store.get(("a",), key) is not None for key in ("short", "default", "forever")] == [False, True, True]
    clock.advance(4)  # 6 minutes after the puts, 4 after the read
    kept = ["default", "forever"] if read_item_kept else ["forever"]
    assert [item.key for item in graph_store.search(("a",), refresh_ttl=False)] == kept
    graph_store.sweep_ttl()
    assert [item.key for item in graph_store.search(("a",))] == kept


def test_a_store_whose_ttl_says_no_refresh_on_read_lets_a_read_item_expire(store, clock):
    graph_store = MemlabStore(store, taint="INTERNAL", ttl={"default_ttl": 5, "refresh_on_read": False})
    graph_store.put(("a",), "k", {"text": "lisbon"})
    clock.advance(4)
    assert graph_store.get(("a",), "k") is not None and graph_store.search(("a",), query="lisbon")
    clock.advance(1)
    assert graph_store.get(("a",), "k") is None and store.history("k", agent="a")["version"].tolist() == [1]


def test_a_refresh_saves_the_same_value_and_ttl_again_at_the_stores_own_label(store, clock):
    graph_store = MemlabStore(store, taint="INTERNAL")
    graph_store.put(("a",), "k", {"text": "lisbon"}, ttl=5)
    clock.advance(1)
    graph_store.get(("a",), "k")
    history = store.history("k", agent="a")
    assert history["version"].tolist() == [1, 2] and history["content"].nunique() == 1
    assert all(ttl_tag(5) in tags for tags in history["tags"])


def test_a_higher_store_reading_a_lower_item_never_refreshes_it_by_writing_down(store, clock):
    # Guards: _refresh's label check (a CONFIDENTIAL read would otherwise copy the item up and keep it alive there).
    MemlabStore(store, taint="PUBLIC").put(("a",), "k", {"text": "lisbon"}, ttl=5)
    high = MemlabStore(store, taint="CONFIDENTIAL", ttl={"refresh_on_read": True})
    clock.advance(4)
    assert high.get(("a",), "k") is not None and high.search(("a",), query="lisbon")
    assert store.history("k", agent="a")["classification"].tolist() == ["PUBLIC"]
    clock.advance(1)
    assert high.get(("a",), "k") is None


def test_a_lower_session_cannot_make_a_higher_item_expire(store, clock):
    # A PUBLIC writer's own expiry, even under the same key and by another door, is its version's alone.
    MemlabStore(store, taint="CONFIDENTIAL").put(("a",), "k", {"text": "secret plan"})
    MemlabStore(store, taint="PUBLIC").put(("a",), "k", {"text": "decoy"}, ttl=0.001)
    store.session("PUBLIC", "a").memory_save("k", '{"text": "decoy"}', tags=[ttl_tag(0.001)])
    clock.advance(1)
    high = MemlabStore(store, taint="CONFIDENTIAL")
    assert high.get(("a",), "k").value == {"text": "secret plan"}
    assert [item.key for item in high.search(("a",))] == ["k"]
    high.sweep_ttl()
    assert high.get(("a",), "k").value == {"text": "secret plan"}


def test_the_sweep_purges_expired_items_at_every_label_as_the_auditor(store, clock):
    # Guards: sweep's expiry test (nothing unexpired purged) and its audit (tool purge, by ttl-sweep, the reason).
    MemlabStore(store, taint="PUBLIC").put(("a",), "old", {"text": "lisbon"}, ttl=1)
    MemlabStore(store, taint="CONFIDENTIAL").put(("b", "c"), "old", {"text": "porto"}, ttl=1)
    MemlabStore(store, taint="PUBLIC").put(("a",), "young", {"text": "faro"}, ttl=60)
    MemlabStore(store, taint="PUBLIC").put(("a",), "forever", {"text": "braga"})
    clock.advance(2)
    public = MemlabStore(store, taint="PUBLIC")
    assert public.sweep_ttl() == 2
    purges = store.audit().query("tool == 'purge'")
    assert sorted(zip(purges["agent"], purges["key"], strict=True)) == [("a", "old"), ("b/c", "old")]
    assert set(purges["session_id"]) == {"ttl-sweep"} and set(purges["message"]) == {SWEEP_REASON}
    assert store.history("old", agent="a")["content"].tolist() != ['{"text": "lisbon"}']  # erased
    assert sorted(item.key for item in public.search(("a",))) == ["forever", "young"]
    assert public.sweep_ttl() == 0  # purged once


def test_the_sweeper_thread_sweeps_until_stopped(store, clock):
    graph_store = MemlabStore(store, taint="PUBLIC", ttl={"sweep_interval_minutes": 1})
    graph_store.put(("a",), "k", {"text": "lisbon"}, ttl=1)
    clock.advance(2)
    done = graph_store.start_ttl_sweeper(0.0005)  # every 30 ms
    deadline = time.monotonic() + 10
    while "purge" not in store.audit()["tool"].tolist() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert graph_store.stop_ttl_sweeper(timeout=5) and done.result(timeout=5) is None
    assert "purge" in store.audit()["tool"].tolist()


def test_expired_items_in_a_searchs_first_ranks_send_it_deeper(store, clock):
    graph_store = MemlabStore(store, taint="PUBLIC")
    for n in range(3):
        graph_store.put(("a",), f"short-{n}", {"text": "lisbon lisbon lisbon"}, ttl=1)
    graph_store.put(("a",), "kept", {"text": "lisbon and more words here"})
    clock.advance(2)
    assert [item.key for item in graph_store.search(("a",), query="lisbon", limit=1)] == ["kept"]


@pytest.mark.parametrize(
    "ttl, message",
    [
        ({"default_minutes": 5}, "unknown keys \\['default_minutes'\\]"),
        ({"default_ttl": -1}, "number of minutes above 0"),
        ({"default_ttl": float("nan")}, "number of minutes above 0"),
        ({"default_ttl": "5"}, "number of minutes above 0"),
        ({"refresh_on_read": "yes"}, "True or False"),
        ({"sweep_interval_minutes": 0}, "sweep_interval_minutes'\\] must be None or a number of minutes above 0"),
        (5, "must be a dict"),
    ],
)
def test_a_bad_ttl_config_is_refused_when_the_store_is_made(ttl, message):
    with pytest.raises(InvalidArgument, match=message):
        MemlabStore(MemoryStore(), taint="PUBLIC", ttl=ttl)


@pytest.mark.parametrize("minutes", [0, -1, float("inf"), float("nan"), True, "5"])
def test_a_bad_ttl_on_a_put_refuses_its_whole_batch_and_writes_nothing(store, minutes):
    # Guards: check_minutes in _prepare (a non-positive TTL would save an item already expired).
    graph_store = MemlabStore(store, taint="PUBLIC")
    with pytest.raises(InvalidArgument, match="ttl must be None or a number of minutes"):
        graph_store.batch([PutOp(("a",), "k1", {"text": "x"}), PutOp(("a",), "k2", {"text": "x"}, ttl=minutes)])
    assert store.agents() == [] and store.audit().empty


def test_the_ttl_tag_reads_back_and_nonsense_says_nothing():
    assert minutes_of([ttl_tag(0.5), ttl_tag(30)]) == 0.5
    assert minutes_of(["ttl-minutes:soon", "ttl-minutes:-5", "ttl-minutes:nan", "notes"]) is None
    assert check_config(None) is None


def test_a_version_expires_at_its_saved_at_plus_its_minutes(store, clock):
    memory = store.session("PUBLIC", "a").memory_save("k", "text", tags=[ttl_tag(2)])
    assert not expired(memory, START + timedelta(minutes=1.99))
    assert expired(memory, START + timedelta(minutes=2))
