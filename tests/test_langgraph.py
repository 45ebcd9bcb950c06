"""LangGraph's store over memlab (``memlab.integrations.langgraph.MemlabStore``): the same items as LangGraph's own
``InMemoryStore`` for the same operations, nothing above the taint, one audited call per operation, bad input
refused with nothing written, and LangMem's memory tools in a LangGraph graph driven by a scripted chat model."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, PutOp, SearchItem, SearchOp
from langgraph.store.memory import InMemoryStore
from langmem import create_manage_memory_tool, create_search_memory_tool

from memlab import Denied, InvalidArgument, Level, MemoryStore, Session
from memlab.arguments import MAX_AGENT_CHARS, MAX_CONTENT_CHARS, MAX_QUERY_CHARS
from memlab.integrations import langgraph as integration
from memlab.integrations.langgraph import MemlabStore
from memlab.labels import Label
from tests.backends import BACKENDS, open_store
from tests.test_layers import _modules, imports

NAMESPACES = [("a",), ("a", "b"), ("b",), ("a", "b", "c"), ("users", "ann")]
KEYS = ["k1", "k2", "k3"]
WORDS = ["lisbon", "atlas", "beta", "march"]
HR, LEGAL, BOTH = "CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal"
TAINTS = [*Level, "INTERNAL:hr", HR, BOTH]


class Reference(InMemoryStore):
    """LangGraph's ``InMemoryStore``, listing only the namespaces that hold an item, as LangGraph's database stores
    do (``InMemoryStore`` also lists a namespace once read or emptied: its dict of namespaces never forgets one)."""

    def _handle_list_namespaces(self, op):
        for namespace in [namespace for namespace, items in self._data.items() if not items]:
            del self._data[namespace]
        return super()._handle_list_namespaces(op)


def observed(result):
    """What an operation's result says, timestamps and scores aside: items as (namespace, key, value)."""
    if isinstance(result, Item):
        return (result.namespace, result.key, result.value)
    if isinstance(result, list) and result and isinstance(result[0], Item):
        return sorted((observed(item) for item in result), key=repr)  # ranking aside
    return result


values = st.fixed_dictionaries(
    {"text": st.sampled_from(WORDS), "n": st.integers(0, 4)},
    optional={"meta": st.fixed_dictionaries({"kind": st.sampled_from(["note", "fact"])})},
)
operator_filters = st.builds(lambda op, n: {"n": {op: n}}, st.sampled_from(integration.OPERATORS), st.integers(0, 4))
filters = st.one_of(
    st.none(),
    operator_filters,
    st.builds(lambda n: {"n": n}, st.integers(0, 4)),
    st.builds(lambda w: {"text": w}, st.sampled_from(WORDS)),
    operator_filters,
    st.just({"meta": {"kind": "note"}}),
)
prefixes = st.sampled_from([(), ("a",), ("a", "b"), ("b",), ("users",)])
conditions = st.one_of(st.none(), st.sampled_from([("a",), ("b",), ("*",), ("a", "*"), ("c",), ("ann",)]))
puts = st.tuples(st.just("put"), st.sampled_from(NAMESPACES), st.sampled_from(KEYS), values)
operations = st.one_of(
    puts,
    st.tuples(st.just("delete"), st.sampled_from(NAMESPACES), st.sampled_from(KEYS)),
    st.tuples(st.just("put_none"), st.sampled_from(NAMESPACES), st.sampled_from(KEYS)),
    st.tuples(st.just("get"), st.sampled_from(NAMESPACES), st.sampled_from(KEYS)),
    st.tuples(st.just("search"), prefixes, filters),
    st.tuples(st.just("list"), conditions, conditions, st.one_of(st.none(), st.integers(1, 2)), st.integers(0, 2)),
)
# A few puts first, so the operations after them meet a store with something in it.
sequences = st.builds(
    lambda first, then: first + then, st.lists(puts, min_size=3, max_size=8), st.lists(operations, max_size=20)
)


def apply(graph_store, operation):
    name, *args = operation
    if name == "put":
        return graph_store.put(*args)
    if name == "delete":
        return graph_store.delete(*args)
    if name == "put_none":
        return graph_store.put(*args, None)
    if name == "get":
        return graph_store.get(*args)
    if name == "search":
        prefix, where = args
        return graph_store.search(prefix, filter=where, limit=100)
    prefix, suffix, max_depth, offset = args
    return graph_store.list_namespaces(prefix=prefix, suffix=suffix, max_depth=max_depth, limit=3, offset=offset)


@settings(max_examples=150)
@given(sequences, st.sampled_from(TAINTS))
def test_the_same_operations_give_the_same_items_as_langgraphs_in_memory_store(sequence, taint):
    # Guards: max_depth truncating one label too deep; a search dropping its filter; a delete of a missing item
    # raising NotFound.
    reference = Reference()
    with MemoryStore() as store:
        graph_store = MemlabStore(store, taint=taint)
        for operation in sequence:
            assert observed(apply(graph_store, operation)) == observed(apply(reference, operation)), operation


@pytest.mark.parametrize("operator", integration.OPERATORS)
@pytest.mark.parametrize("operand", [1, 2.5, 7])
def test_each_filter_operator_selects_what_langgraphs_selects(operator, operand):
    # Guards: "$gt" as float.__ge__ (and every other operator's boundary).
    reference = Reference()
    with MemoryStore() as store:
        graph_store = MemlabStore(store, taint="PUBLIC")
        for n, value in enumerate([0, 1, 2, 2.5, 3, 7, -1]):
            for each in (reference, graph_store):
                each.put(("a",), f"k{n}", {"n": value, "text": "x"})
        where = {"n": {operator: operand}}
        assert observed(graph_store.search(("a",), filter=where)) == observed(reference.search(("a",), filter=where))


@pytest.mark.parametrize("low, high", [("PUBLIC", "CONFIDENTIAL"), (HR, LEGAL), (HR, "RESTRICTED")])
@settings(max_examples=150)
@given(
    st.builds(
        lambda levels, sequence: list(zip(levels, sequence, strict=False)),
        st.lists(st.booleans(), min_size=30, max_size=30),
        sequences,
    )
)
def test_a_low_store_observes_the_same_whatever_a_store_it_cannot_read_does_on_the_same_store(low, high, sequence):
    # Noninterference: the observations of a store at ``low`` with the operations of one at ``high`` (which does not
    # flow to it: above it, or in another compartment) interleaved are those without them; an hr store learns
    # nothing of a legal store's writes.
    # Guards: list_namespaces listing every agent under the prefix, not only those with a memory it can see; and
    # MemlabStore acting at a label's level only (``self._taint = label.level``: hr then reads legal's puts), seen
    # failing on the hr/legal case only.
    with MemoryStore() as shared, MemoryStore() as alone:
        observer, other = MemlabStore(shared, taint=low), MemlabStore(shared, taint=high)
        observer_alone = MemlabStore(alone, taint=low)
        for high_step, operation in sequence:
            if high_step:
                apply(other, operation)
            else:
                assert observed(apply(observer, operation)) == observed(apply(observer_alone, operation)), operation


def test_a_namespace_whose_memories_are_all_above_the_taint_is_neither_listed_nor_searched():
    # Guards: list_namespaces listing every agent under the prefix, not only those with a memory it can see.
    store = MemoryStore()
    MemlabStore(store, taint="CONFIDENTIAL").put(("users", "carol"), "salary", {"text": "carol earns 90k"})
    MemlabStore(store, taint="PUBLIC").put(("users", "ann"), "city", {"text": "Lisbon"})
    public = MemlabStore(store, taint="PUBLIC")
    assert public.list_namespaces() == [("users", "ann")]
    assert public.list_namespaces(prefix=("users",), max_depth=1) == [("users",)]
    assert public.list_namespaces(suffix=("carol",)) == []
    assert public.search(("users",), query="carol earns") == []
    assert [item.key for item in public.search(("users",))] == ["city"]
    assert public.get(("users", "carol"), "salary") is None
    assert MemlabStore(store, taint="CONFIDENTIAL").list_namespaces() == [("users", "ann"), ("users", "carol")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_every_backend_the_items_are_langgraphs_and_public_sees_nothing_confidential(backend):
    sequence = [
        ("put", ("users", "ann"), "k1", {"text": "lisbon", "n": 1}),
        ("put", ("users", "ann", "work"), "k2", {"text": "atlas", "n": 2}),
        ("put", ("users", "ann"), "k1", {"text": "march", "n": 3}),
        ("put_none", ("users", "ann", "work"), "k2"),
        ("put", ("b",), "k3", {"text": "beta", "n": 4, "meta": {"kind": "note"}}),
        ("get", ("users", "ann"), "k1"),
        ("search", ("users",), {"n": {"$gte": 3}}),
        ("search", (), {"meta": {"kind": "note"}}),
        ("list", None, None, 1, 0),
        ("list", ("users",), None, None, 0),
    ]
    reference = Reference()
    with open_store(backend) as store:
        internal = MemlabStore(store, taint="INTERNAL")
        MemlabStore(store, taint="CONFIDENTIAL").put(("users", "carol"), "k1", {"text": "lisbon", "n": 5})
        for operation in sequence:
            assert observed(apply(internal, operation)) == observed(apply(reference, operation)), operation
        assert observed(internal.search(("users",), query="lisbon")) == []  # ann's k1 now says march
        public = MemlabStore(store, taint="PUBLIC")
        assert public.list_namespaces() == [] and public.search(()) == [] and public.get(("users", "ann"), "k1") is None


def test_a_higher_put_shadows_a_lower_one_and_its_delete_reveals_it_again():
    store = MemoryStore()
    public, confidential = MemlabStore(store, taint="PUBLIC"), MemlabStore(store, taint="CONFIDENTIAL")
    public.put(("sam",), "plan", {"text": "beta in March"})
    confidential.put(("sam",), "plan", {"text": "beta slips to May"})
    assert confidential.get(("sam",), "plan").value == {"text": "beta slips to May"}
    assert public.get(("sam",), "plan").value == {"text": "beta in March"}
    confidential.delete(("sam",), "plan")  # deletes at exactly its taint: the PUBLIC version shows again
    assert confidential.get(("sam",), "plan").value == {"text": "beta in March"}
    confidential.delete(("sam",), "plan")  # nothing at CONFIDENTIAL: a no-op, as in LangGraph
    assert public.get(("sam",), "plan").value == {"text": "beta in March"}


def test_a_store_at_a_label_puts_there_and_reads_only_what_flows_to_it():
    store = MemoryStore()
    hr, legal = MemlabStore(store, taint=HR), MemlabStore(store, taint=Label.parse(LEGAL))
    hr.put(("team",), "review", {"text": "atlas review"})
    legal.put(("firm",), "case", {"text": "atlas lawsuit"})
    MemlabStore(store, taint="PUBLIC").put(("team",), "lunch", {"text": "atlas lunch"})
    assert hr.taint == Label.parse(HR) and repr(hr) == "MemlabStore(taint=CONFIDENTIAL:hr)"
    assert store.versions("team").set_index("key")["classification"].to_dict() == {"lunch": "PUBLIC", "review": HR}
    assert legal.get(("team",), "review") is None and hr.get(("firm",), "case") is None
    assert hr.list_namespaces() == [("team",)] and legal.list_namespaces() == [("firm",), ("team",)]
    assert [item.key for item in legal.search(("team",), query="atlas")] == ["lunch"]
    both = MemlabStore(store, taint=BOTH)
    assert both.list_namespaces() == [("firm",), ("team",)]
    assert sorted(item.key for item in both.search((), query="atlas")) == ["case", "lunch", "review"]
    assert MemlabStore(store, taint="RESTRICTED").list_namespaces() == [("team",)]  # a level reads no category
    assert set(store.audit()["taint"]) == {HR, LEGAL, "PUBLIC", BOTH, "RESTRICTED"}


@pytest.mark.parametrize(
    "taint, message",
    [
        ("CONFIDENTIAL:", "no categories"),
        ("SECRET:hr", "unknown level"),
        ("CONFIDENTIAL:h\x00r", "not a name"),
        ("CONFIDENTIAL:" + ",".join(f"c{n}" for n in range(17)), "at most 16"),
        (3, "a label is a string"),
    ],
)
def test_a_malformed_label_is_refused_when_the_store_is_made_and_nothing_is_written(taint, message):
    store = MemoryStore()
    with pytest.raises(InvalidArgument, match=message):
        MemlabStore(store, taint=taint)
    assert store.audit().empty and store.sessions().empty


def test_a_label_the_stores_policy_cannot_keep_is_refused_when_the_store_is_made():
    store = MemoryStore(policy="global-stats")
    with pytest.raises(InvalidArgument, match="compartments not supported under policy 'global-stats'"):
        MemlabStore(store, taint=HR)
    assert store.audit().empty and store.sessions().empty
    assert MemlabStore(store, taint="CONFIDENTIAL").taint == Level.CONFIDENTIAL


def test_the_taint_is_the_hosts_and_a_classification_in_a_value_is_data():
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="CONFIDENTIAL")
    graph_store.put(("sam",), "pay", {"text": "salary 90k", "classification": "PUBLIC", "taint": "PUBLIC"})
    assert graph_store.get(("sam",), "pay").value["classification"] == "PUBLIC"  # kept as it was put
    assert store.versions("sam")["classification"].tolist() == ["CONFIDENTIAL"]
    assert MemlabStore(store, taint="PUBLIC").search(("sam",), filter={"classification": "PUBLIC"}) == []
    assert MemlabStore(store, taint="PUBLIC").get(("CONFIDENTIAL",), "pay") is None  # a namespace is only a name
    with pytest.raises(AttributeError):
        graph_store.taint = Level.PUBLIC
    assert graph_store.taint == Level.CONFIDENTIAL
    assert set(store.audit()["taint"]) == {"CONFIDENTIAL", "PUBLIC"}


def test_each_operation_is_one_audited_call_of_the_namespaces_agent():
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="INTERNAL")
    graph_store.put(("users", "ann"), "city", {"text": "Lisbon"})
    graph_store.get(("users", "ann"), "city")
    graph_store.search(("users", "ann"), query="Lisbon")
    graph_store.search(("users", "ann"))
    graph_store.delete(("users", "ann"), "city")
    graph_store.put(("users", "ann"), "city", None)  # nothing left at INTERNAL: audited as not found
    graph_store.list_namespaces()
    audit = store.audit()
    assert audit["tool"].tolist() == [
        "memory_save",
        "memory_get",
        "memory_search",
        "memory_list",
        "memory_delete",
        "memory_delete",
        "memory_list",
    ]
    assert set(audit["agent"]) == {"users/ann"} and set(audit["taint"]) == {"INTERNAL"}
    assert audit["outcome"].tolist()[-2] == "not_found"
    assert audit["session_id"].nunique() == 1  # one session per agent, made once


def test_a_search_or_listing_reads_each_agent_under_the_prefix_with_its_own_call():
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    for name in ("ann", "bob"):
        graph_store.put(("users", name), "city", {"text": "Lisbon"})
    graph_store.put(("teams",), "city", {"text": "Lisbon"})
    before = len(store.audit())
    assert [item.namespace for item in graph_store.search(("users",), query="Lisbon")] in (
        [("users", "ann"), ("users", "bob")],
        [("users", "bob"), ("users", "ann")],
    )
    assert store.audit()["agent"].tolist()[before:] == ["users/ann", "users/bob"]


def test_items_carry_the_versions_time_and_a_search_with_a_query_its_ranking():
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    graph_store.put(("sam",), "ship", {"text": "The Atlas beta ships on 14 March", "n": 3})
    graph_store.put(("sam",), "city", {"text": "Sam lives in Lisbon", "n": 1})
    item = graph_store.get(("sam",), "ship")
    saved_at = store.versions("sam").set_index("key").loc["ship", "saved_at"]
    assert item.created_at == item.updated_at and item.updated_at.isoformat() == saved_at
    (hit,) = graph_store.search(("sam",), query="when does the atlas beta ship?")
    assert isinstance(hit, SearchItem) and hit.key == "ship" and hit.score > 0
    assert graph_store.search(("sam",), query="lisbon", filter={"n": {"$gte": 2}}) == []
    assert [item.key for item in graph_store.search(("sam",), filter={"n": {"$lt": 2}})] == ["city"]
    assert [item.key for item in graph_store.search(("sam",), limit=1, offset=1)] == ["ship"]  # by key


def test_a_memory_saved_as_text_by_another_door_reads_as_its_content():
    store = MemoryStore()
    store.session("PUBLIC", "sam").memory_save("city", "Sam lives in Lisbon")
    store.session("PUBLIC", "sam").memory_save("list", "[1, 2]")  # JSON, but not an object: still text
    graph_store = MemlabStore(store, taint="PUBLIC")
    assert graph_store.get(("sam",), "city").value == {"content": "Sam lives in Lisbon"}
    assert graph_store.get(("sam",), "list").value == {"content": "[1, 2]"}
    assert graph_store.list_namespaces() == [("sam",)]


def test_a_put_is_memory_content_the_other_doors_can_search():
    store = MemoryStore()
    MemlabStore(store, taint="PUBLIC").put(("sam",), "ship", {"text": "Atlas ships in March", "é": "Lisboa"})
    (memory,) = store.session("PUBLIC", "sam").memory_list()
    assert json.loads(memory.content) == {"text": "Atlas ships in March", "é": "Lisboa"} and "Lisboa" in memory.content
    assert [hit.memory.key for hit in store.session("PUBLIC", "sam").memory_search("lisboa")] == ["ship"]


def test_the_async_operations_are_the_same_calls():
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")

    async def run():
        await graph_store.aput(("sam",), "city", {"text": "Lisbon"})
        item = await graph_store.aget(("sam",), "city")
        found = await graph_store.asearch(("sam",), query="lisbon")
        await graph_store.adelete(("sam",), "city")
        return item, found, await graph_store.alist_namespaces()

    item, found, namespaces = asyncio.run(run())
    assert item.value == {"text": "Lisbon"} and [hit.key for hit in found] == ["city"] and namespaces == []
    tools = ["memory_save", "memory_get", "memory_search", "memory_delete", "memory_list"]
    assert store.audit()["tool"].tolist() == tools


def test_the_sync_operations_work_inside_a_running_event_loop():
    # An async node calling the sync API gets its answer, as from InMemoryStore or SqliteStore: MemlabStore is bound
    # to no event loop, so it has no deadlock to guard against (LangGraph's AsyncBatchedBaseStore stores, whose sync
    # calls wait on their own loop, raise asyncio.InvalidStateError instead).
    graph_store = MemlabStore(MemoryStore(), taint="PUBLIC")

    async def node():
        graph_store.put(("sam",), "city", {"text": "Lisbon"})
        graph_store.batch([PutOp(("sam",), "trip", {"text": "Oslo"})])
        item = graph_store.get(("sam",), "city")
        found = graph_store.search(("sam",), query="oslo")
        namespaces = graph_store.list_namespaces(prefix=("sam",))
        graph_store.delete(("sam",), "city")
        return item.value, [hit.key for hit in found], namespaces, graph_store.get(("sam",), "city")

    assert asyncio.run(node()) == ({"text": "Lisbon"}, ["trip"], [("sam",)], None)


# -- bad input: a clear error, and nothing written ---------------------------------------------------------


def _nothing_written(store):
    assert store.versions("a").empty and store.storage.agents() in ([], ["a"])


@pytest.mark.parametrize(
    "namespace, message",
    [
        (("a", ""), "(?i)empty"),
        (("a/b",), "must not hold a slash"),
        (("a", "b.c"), "(?i)period"),
        (("a", 3), "(?i)must be a string|must be strings"),
        ((), "(?i)must not be empty|cannot be empty"),
        (["a"], "must be a tuple"),
    ],
)
@pytest.mark.parametrize("action", ["put", "get", "delete", "batch"])
def test_a_bad_namespace_is_refused_before_anything_runs(namespace, message, action):
    # BaseStore's methods check labels with LangGraph's words; ops straight to batch are checked by MemlabStore.
    # Guards: dropping the "/" check (("a/b",) would write as agent a/b, which ("a", "b") also names).
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    with pytest.raises(InvalidNamespaceError, match=message):
        if action == "put":
            graph_store.put(namespace, "k", {"text": "x"})
        elif action == "get":
            graph_store.get(namespace, "k")
        elif action == "delete":
            graph_store.delete(namespace, "k")
        else:  # straight to batch, past BaseStore's own checks; the good put before it does not run either
            graph_store.batch([PutOp(("a",), "k", {"text": "x"}), PutOp(namespace, "k", {"text": "x"})])
    assert store.storage.agents() == [] and store.audit().empty


@pytest.mark.parametrize("prefix", [("a", ""), ("a/b",), ("a.b",)])
def test_a_bad_prefix_or_suffix_is_refused(prefix):
    graph_store = MemlabStore(MemoryStore(), taint="PUBLIC")
    with pytest.raises(InvalidNamespaceError):
        graph_store.search(prefix)
    with pytest.raises(InvalidNamespaceError):
        graph_store.list_namespaces(prefix=prefix)
    with pytest.raises(InvalidNamespaceError):
        graph_store.list_namespaces(suffix=prefix)


@pytest.mark.parametrize(
    "value, message",
    [
        ({"when": object()}, "is not JSON"),
        ({"tags": {"a", "b"}}, "is not JSON"),
        ({"n": float("nan")}, "is not JSON"),
        (["not", "a", "dict"], "must be a dict"),
        ("text", "must be a dict"),
    ],
)
def test_a_value_that_is_not_a_json_object_is_refused_and_nothing_written(value, message):
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    with pytest.raises(InvalidArgument, match=message):
        graph_store.put(("a",), "k", value)
    assert store.storage.agents() == [] and store.audit().empty


def test_a_value_over_the_content_limit_is_refused_before_anything_runs():
    # Guards: _put_content leaving the length to memory_save (then a batch's earlier puts are written first).
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    with pytest.raises(
        InvalidArgument, match=f"the value of 'k' in \\('a',\\) as JSON: .* the limit is {MAX_CONTENT_CHARS}"
    ):
        graph_store.put(("a",), "k", {"text": "x" * MAX_CONTENT_CHARS})
    assert store.storage.agents() == [] and store.audit().empty


def test_a_key_memlab_refuses_is_refused_and_nothing_written():
    store = MemoryStore()
    with pytest.raises(InvalidArgument, match="key"):
        MemlabStore(store, taint="PUBLIC").put(("a",), " padded ", {"text": "x"})
    assert store.versions("a").empty


@pytest.mark.parametrize(
    "where, message",
    [
        ({"n": {"$in": [1, 2]}}, "unknown operator '\\$in'"),
        ({"meta": {"kind": {"$regex": "n.*"}}}, "filter.meta.kind uses unknown operator"),
        ({"n": {"$gt": "3"}}, "compares numbers"),
        (["n", 3], "must be a dict"),
    ],
)
def test_an_unknown_filter_operator_is_refused_before_anything_is_read(where, message):
    # Guards: matching an unknown operator as never true (the graph would read "no such memory" for a typo).
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    graph_store.put(("a",), "k", {"n": 3, "meta": {"kind": "note"}})
    with pytest.raises(InvalidArgument, match=message):
        graph_store.search(("a",), filter=where)
    assert store.audit()["tool"].tolist() == ["memory_save"]


GOOD_PUTS = [PutOp(("users", "ann"), "k1", {"text": "x"}), PutOp(("users", "bob"), "k2", {"text": "y"})]


@pytest.mark.parametrize(
    "bad, error, message",
    [
        (PutOp(("users", "alice\n"), "k", {"text": "x"}), InvalidNamespaceError, "whitespace"),
        (PutOp(("users", "al\u200bice"), "k", {"text": "x"}), InvalidNamespaceError, "U\\+200B"),
        (PutOp(("users", "x" * MAX_AGENT_CHARS), "k", {"text": "x"}), InvalidNamespaceError, "the limit is"),
        (PutOp(("cafe\u0301",), "k", {"text": "x"}), InvalidNamespaceError, "not in Unicode NFC"),
        (GetOp(("users", " ann"), "k"), InvalidNamespaceError, "whitespace"),
        (PutOp(("users",), "cafe\u0301", {"text": "x"}), InvalidArgument, "not in Unicode NFC"),
        (PutOp(("users",), "k\x00", None), InvalidArgument, "U\\+0000"),
        (PutOp(("users",), "k", {"text": "x" * MAX_CONTENT_CHARS}), InvalidArgument, "the limit is"),
        (SearchOp(("users",), {"n": {"$in": [1]}}), InvalidArgument, "unknown operator"),
        (SearchOp(("users",), query="x" * (MAX_QUERY_CHARS + 1)), InvalidArgument, "query is"),
        (PutOp(("users",), "k", {"text": "x"}, ttl=-1), InvalidArgument, "ttl must be None or a number"),
        (PutOp(("users",), "k", {"text": "x"}, index="text"), InvalidArgument, "index must be a non-empty list"),
    ],
)
def test_a_batch_whose_later_op_is_bad_is_refused_whole_with_langgraphs_error_and_writes_nothing(bad, error, message):
    # Guards: _prepare checking labels only (memlab's own rules then refused the bad op at its call, InvalidArgument,
    # after the two puts before it were written), each of its key, value and query checks.
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    with pytest.raises(error, match=message):
        graph_store.batch([*GOOD_PUTS, bad])
    assert store.storage.agents() == [] and store.audit().empty


class _LooksLikeMain(str):
    """A label whose ``==`` says it is any label (and hashes as ``main``): it must not pass as one checked before."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("main")


def test_a_batch_checks_a_namespace_once_but_never_skips_one_whose_label_only_claims_to_be_equal():
    # A batch's puts to one namespace check it once; a label type with its own == must not borrow that check.
    # Guards: check_namespace's memo looked up without its exact-str condition (the put was saved under the
    # namespace of the run it "joined", ("main",), though it named "main\n").
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    with pytest.raises(InvalidNamespaceError, match="whitespace"):
        graph_store.batch(
            [PutOp(("main",), "a", {"text": "x"}), PutOp((_LooksLikeMain("main\n"),), "b", {"text": "y"})]
        )
    assert store.storage.agents() == [] and store.audit().empty
    graph_store.batch([PutOp(("main",), f"k{i}", {"text": "x"}) for i in range(3)])
    assert [item.key for item in graph_store.search(("main",))] == ["k0", "k1", "k2"]


def test_a_value_that_is_a_mapping_but_not_a_dict_is_saved_as_its_dict():
    # Guards: _put_content encoding the value as given (json refuses a mappingproxy: "is not JSON").
    graph_store = MemlabStore(MemoryStore(), taint="PUBLIC")
    graph_store.put(("a",), "k", types.MappingProxyType({"text": "x", "n": 1}))
    assert graph_store.get(("a",), "k").value == {"text": "x", "n": 1}


def test_a_prefix_or_suffix_given_as_a_list_reads_as_the_tuple():
    # Guards: _prepare without path() (a list prefix refused "must be a tuple", as LangGraph's stores never do).
    graph_store = MemlabStore(MemoryStore(), taint="PUBLIC")
    graph_store.put(("users", "ann"), "city", {"text": "Lisbon"})
    graph_store.put(("teams", "ann"), "city", {"text": "Porto"})
    assert [item.namespace for item in graph_store.search(["users"])] == [("users", "ann")]
    assert [item.key for item in graph_store.search(["users", "ann"], query="lisbon")] == ["city"]
    assert graph_store.list_namespaces(prefix=["users"]) == [("users", "ann")]
    assert graph_store.list_namespaces(suffix=["ann"]) == [("teams", "ann"), ("users", "ann")]
    assert graph_store.list_namespaces(prefix=["*", "ann"], max_depth=1) == [("teams",), ("users",)]


def test_a_name_that_nfc_would_change_is_refused_not_merged_and_its_nfc_spelling_reads_back_as_put():
    # Guards: check_key and check_namespace comparing after NFC (a decomposed key then silently overwrote the
    # composed one, and a search returned a key that was never put).
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    graph_store.put(("caf\u00e9",), "caf\u00e9", {"text": "composed"})
    with pytest.raises(InvalidNamespaceError, match="not in Unicode NFC"):
        graph_store.put(("cafe\u0301",), "menu", {"text": "decomposed"})
    with pytest.raises(InvalidArgument, match="not in Unicode NFC"):
        graph_store.put(("caf\u00e9",), "cafe\u0301", {"text": "decomposed"})
    with pytest.raises(InvalidArgument, match="not in Unicode NFC"):
        graph_store.get(("caf\u00e9",), "cafe\u0301")
    assert graph_store.get(("caf\u00e9",), "caf\u00e9").value == {"text": "composed"}
    (hit,) = graph_store.search(("caf\u00e9",), query="composed")
    assert (hit.namespace, hit.key) == (("caf\u00e9",), "caf\u00e9")
    assert store.versions("caf\u00e9")["version"].tolist() == [1]


@pytest.mark.parametrize("limit, offset", [(1, 0), (3, 2), (10, 0), (5, 20)])
def test_a_search_ranks_as_deep_as_offset_and_limit_ask_and_returns_the_same_page(limit, offset):
    # Guards: _search ranking SEARCH_DEPTH hits whatever the page (a limit=10 search cost 1.7x memlab's own).
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    for n in range(40):
        graph_store.put(("a",), f"k{n:02}", {"text": "atlas " * (n % 7 + 1) + "beta " * (n % 3), "n": n})
    deep = graph_store.search(("a",), query="atlas beta", limit=100)
    page = graph_store.search(("a",), query="atlas beta", limit=limit, offset=offset)
    assert [item.key for item in page] == [item.key for item in deep[offset : offset + limit]]
    assert len(store.audit()["records"].iloc[-1]) == min(offset + limit, 40)  # what the search call ranked
    graph_store.search(("a",), query="atlas beta", limit=limit, offset=offset, filter={"n": {"$gte": 0}})
    assert len(store.audit()["records"].iloc[-1]) == 40  # a filter may drop any: every hit up to SEARCH_DEPTH


# -- in a LangGraph graph, with LangMem's memory tools --------------------------------------------------------


def _graph(graph_store, replies):
    """A LangGraph agent loop whose chat model plays ``replies``, with LangMem's tools over ``graph_store``; the
    graph's config names the user (the namespace), the host's store fixes the level."""
    tools = [
        create_manage_memory_tool(namespace=("memories", "{langgraph_user_id}")),
        create_search_memory_tool(namespace=("memories", "{langgraph_user_id}")),
    ]
    model = FakeMessagesListChatModel(responses=replies)
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(store=graph_store)


def _call(name, **args):
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def test_langmems_memory_tools_save_and_search_through_the_store_in_a_graph():
    store = MemoryStore()
    config = {"configurable": {"langgraph_user_id": "sam"}}
    saving = _graph(
        MemlabStore(store, taint="CONFIDENTIAL"),
        [_call("manage_memory", content="The Atlas beta ships on 14 March", action="create"), AIMessage("Saved.")],
    )
    saving.invoke({"messages": [HumanMessage("The Atlas beta ships on 14 March.")]}, config)
    (memory,) = store.session("CONFIDENTIAL", "memories/sam").memory_list()
    assert json.loads(memory.content) == {"content": "The Atlas beta ships on 14 March"}

    def recall(taint):
        graph = _graph(MemlabStore(store, taint=taint), [_call("search_memory", query="atlas beta"), AIMessage("")])
        state = graph.invoke({"messages": [HumanMessage("When does Atlas ship?")]}, config)
        (result,) = [message for message in state["messages"] if isinstance(message, ToolMessage)]
        return json.loads(result.content)

    (found,) = recall("CONFIDENTIAL")
    assert found["namespace"] == ["memories", "sam"] and found["value"]["content"].endswith("14 March")
    assert recall("PUBLIC") == []  # the same graph and user at PUBLIC: nothing
    # The graphs' calls, and the test's own look at the saved memory.
    assert store.audit()["tool"].tolist() == ["memory_save", "memory_list", "memory_search", "memory_search"]


# -- where it sits ---------------------------------------------------------------------------------------------


def test_nothing_in_memlab_imports_an_integration():
    importers = {module for module in _modules() if not module.startswith("memlab.integrations")}
    assert [module for module in sorted(importers) if any("integrations" in name for name in imports(module))] == []


def test_import_memlab_does_not_import_langgraph():
    code = "import sys, memlab; print(sorted({n.split('.')[0] for n in sys.modules} & {'langgraph', 'langchain_core'}))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_the_langgraph_root_is_refused_by_put_and_open_to_a_batch_as_in_langgraphs_stores():
    # LangGraph reserves the root for its own writes, which go past the public put, as its InMemoryStore allows.
    graph_store = MemlabStore(MemoryStore(), taint="PUBLIC")
    with pytest.raises(InvalidNamespaceError, match="langgraph"):
        graph_store.put(("langgraph", "foo"), "bar", {"text": "x"})
    graph_store.batch([PutOp(("langgraph", "foo"), "bar", {"text": "x"})])
    assert graph_store.get(("langgraph", "foo"), "bar").value == {"text": "x"}


def test_consecutive_puts_to_a_namespace_are_one_transaction_with_a_memory_save_row_each(monkeypatch):
    # Guards: MemlabStore.batch's runs (each put its own transaction: 5x LangGraph's SqliteStore in bench_peers), and
    # a run saved before the op after it reads.
    runs = []
    save_many = Session.memory_save_many
    monkeypatch.setattr(
        Session,
        "memory_save_many",
        lambda self, records, **kw: runs.append(len(records)) or save_many(self, records, **kw),
    )
    store = MemoryStore()
    graph_store = MemlabStore(store, taint="PUBLIC")
    results = graph_store.batch(
        [
            *(PutOp(("a",), f"k{n}", {"n": n}) for n in range(3)),
            GetOp(("a",), "k2"),
            PutOp(("a",), "k0", None),
            *(PutOp(("b",), f"k{n}", {"n": n}, ttl=5) for n in range(2)),
            PutOp(("b",), "k9", {"n": 9}),
        ]
    )
    assert results[:3] == [None] * 3 and results[3].value == {"n": 2} and results[4:] == [None] * 4
    assert runs == [3, 3]
    assert store.audit()["tool"].tolist() == ["memory_save"] * 3 + ["memory_get", "memory_delete"] + ["memory_save"] * 3
    assert [tags for tags in store.versions("b")["tags"]] == [["ttl-minutes:5.0"], ["ttl-minutes:5.0"], []]
    assert graph_store.get(("a",), "k0") is None and graph_store.get(("b",), "k1").value == {"n": 1}


def test_a_hooks_denial_refuses_its_run_of_puts_whole_and_the_runs_before_it_stay():
    def no_passwords(call):
        if call.tool == "memory_save" and "password" in call.arguments.get("content", ""):
            raise Denied("passwords are not remembered")
        return call

    store = MemoryStore()
    store.hooks.append(no_passwords)
    graph_store = MemlabStore(store, taint="PUBLIC")
    with pytest.raises(Denied, match="passwords"):
        graph_store.batch(
            [
                PutOp(("a",), "ok", {"text": "fine"}),
                PutOp(("b",), "k1", {"text": "x"}),
                PutOp(("b",), "k2", {"text": "password 1234"}),
            ]
        )
    assert graph_store.get(("a",), "ok") is not None and graph_store.get(("b",), "k1") is None
