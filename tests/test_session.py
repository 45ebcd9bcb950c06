"""Sessions: live taint, the effective view, shadowing, writes and deletes (docs/semantics.md, "The rules")."""

import pytest

from memlab import InvalidArgument, Level, NotFound, TaintError

pytestmark = pytest.mark.contract


def test_session_defaults(store):
    session = store.session()
    assert (session.agent, session.taint) == ("main", Level.PUBLIC)
    assert len(session.id) == 12


def test_escalate_raises_the_taint_and_records_an_event(store):
    session = store.session(session_id="chat")
    assert session.escalate("confidential", reason="read payroll") == Level.CONFIDENTIAL
    assert session.taint == Level.CONFIDENTIAL
    events = store.taint_events()
    assert events[["session_id", "from_level", "to_level", "reason"]].values.tolist() == [
        ["chat", "PUBLIC", "CONFIDENTIAL", "read payroll"]
    ]


def test_escalate_to_the_same_level_is_a_no_op(store):
    session = store.session(Level.INTERNAL)
    session.escalate(Level.INTERNAL)
    assert store.taint_events().empty


def test_taint_can_never_go_down(store):
    session = store.session(Level.CONFIDENTIAL)
    with pytest.raises(TaintError, match="cannot lower"):
        session.escalate(Level.PUBLIC)
    assert session.taint == Level.CONFIDENTIAL
    assert store.taint_events().empty


def test_session_ids_are_unique_and_sessions_recorded(store):
    store.session(Level.INTERNAL, "agent-x", session_id="a")
    with pytest.raises(InvalidArgument, match="already taken"):
        store.session(session_id="a")
    assert store.sessions()[["id", "agent", "initial_taint"]].values.tolist() == [["a", "agent-x", "INTERNAL"]]


@pytest.mark.parametrize("agent", ["", "  ", None, 3])
def test_agent_must_be_a_name(store, agent):
    with pytest.raises(InvalidArgument, match="agent"):
        store.session(agent=agent)


def test_a_save_is_classified_at_the_session_taint(store):
    memory = store.session(Level.INTERNAL).memory_save("user-name", "Alice", tags=["personal"])
    assert (memory.classification, memory.version, memory.tags) == (Level.INTERNAL, 1, ("personal",))


def test_escalate_then_save_uses_the_live_taint(store):
    """The reference implementation froze the taint at start-up; memlab must not."""
    session = store.session(Level.PUBLIC)
    session.escalate(Level.CONFIDENTIAL)
    assert session.memory_save("salary", "90k").classification == Level.CONFIDENTIAL
    assert store.session(Level.PUBLIC).memory_get("salary") is None


def test_saves_add_versions_and_never_overwrite(store):
    session = store.session()
    session.memory_save("k", "one")
    session.memory_save("k", "two")
    assert session.memory_get("k").content == "two"
    assert session.memory_get("k").version == 2
    assert store.history("k")["content"].tolist() == ["one", "two"]


def test_reads_are_gated_by_taint(store):
    store.session(Level.CONFIDENTIAL).memory_save("salary", "90k")
    public, confidential = store.session(Level.PUBLIC), store.session(Level.CONFIDENTIAL)
    restricted = store.session(Level.RESTRICTED)
    assert public.memory_get("salary") is None
    assert public.memory_list() == []
    assert confidential.memory_get("salary").content == "90k"
    assert restricted.memory_get("salary").content == "90k"


def test_shadowing_shows_each_session_its_highest_visible_version(store):
    """The seed's example: user-name at PUBLIC and at INTERNAL."""
    store.session(Level.PUBLIC).memory_save("user-name", "Sam")
    store.session(Level.INTERNAL).memory_save("user-name", "Samantha Rivera")
    assert store.session(Level.PUBLIC).memory_get("user-name").content == "Sam"
    assert store.session(Level.INTERNAL).memory_get("user-name").content == "Samantha Rivera"
    assert store.session(Level.RESTRICTED).memory_get("user-name").content == "Samantha Rivera"
    assert [m.content for m in store.session(Level.INTERNAL).memory_list()] == ["Samantha Rivera"]


def test_a_low_write_under_a_high_key_succeeds_silently(store):
    store.session(Level.CONFIDENTIAL).memory_save("plan", "acquire Initech")
    low = store.session(Level.PUBLIC).memory_save("plan", "team offsite")
    assert (low.classification, low.version) == (Level.PUBLIC, 1)
    assert store.session(Level.CONFIDENTIAL).memory_get("plan").content == "acquire Initech"


def test_tag_filter_applies_after_shadowing(store):
    """A lower version must not surface because the higher one lacks the tag (a reference mistake)."""
    store.session(Level.PUBLIC).memory_save("user-name", "Sam", tags=["personal"])
    store.session(Level.INTERNAL).memory_save("user-name", "Samantha", tags=["work"])
    internal = store.session(Level.INTERNAL)
    assert internal.memory_list(tag="personal") == []
    assert [m.content for m in internal.memory_list(tag="work")] == ["Samantha"]
    assert [m.content for m in store.session().memory_list(tag="personal")] == ["Sam"]


def test_list_is_ordered_by_key(store):
    session = store.session()
    for key in ["b", "a", "c"]:
        session.memory_save(key, key)
    assert [m.key for m in session.memory_list()] == ["a", "b", "c"]


def test_delete_is_soft_and_exactly_at_the_taint(store):
    store.session(Level.PUBLIC).memory_save("user-name", "Sam")
    store.session(Level.INTERNAL).memory_save("user-name", "Samantha")
    internal = store.session(Level.INTERNAL, session_id="deleter")
    deleted = internal.memory_delete("user-name")
    assert (deleted.content, deleted.classification) == ("Samantha", Level.INTERNAL)
    assert internal.memory_get("user-name").content == "Sam"  # the lower version is effective again
    history = store.history("user-name")
    assert history["deleted_by"].tolist()[1] == "deleter"
    assert history["content"].tolist() == ["Sam", "Samantha"]


def test_delete_of_a_key_only_at_other_levels_is_not_found(store):
    store.session(Level.PUBLIC).memory_save("low", "x")
    store.session(Level.CONFIDENTIAL).memory_save("high", "y")
    internal = store.session(Level.INTERNAL)
    for key in ["low", "high", "never-saved"]:
        with pytest.raises(NotFound, match=f"no memory with key '{key}' at this session's level"):
            internal.memory_delete(key)
    assert store.session(Level.PUBLIC).memory_get("low").content == "x"


def test_delete_removes_the_key_at_that_level_and_a_later_save_starts_anew(store):
    session = store.session()
    session.memory_save("k", "one")
    session.memory_save("k", "two")
    session.memory_delete("k")
    assert session.memory_get("k") is None  # older versions at the same level do not come back
    with pytest.raises(NotFound):
        session.memory_delete("k")
    again = session.memory_save("k", "three")
    assert (again.version, session.memory_get("k").content) == (3, "three")


def test_agents_are_isolated_exactly(store):
    """No case folding, no LIKE wildcards: every character of the agent name counts."""
    names = ["main", "Main", "ma_n", "m%", "mainé", "main x"]
    for name in names:
        store.session(agent=name).memory_save("whoami", name)
    for name in names:
        session = store.session(agent=name)
        assert [m.content for m in session.memory_list()] == [name]
        assert [h.memory.content for h in session.memory_search("whoami")] == [name]
    with pytest.raises(InvalidArgument, match="whitespace"):
        store.session(agent="main ")  # a look-alike of "main" is refused, not a namespace of its own


def test_memory_is_frozen_and_hashable(store):
    memory = store.session().memory_save("k", "v", tags=["t"])
    with pytest.raises(AttributeError):
        memory.content = "changed"
    assert {memory: 1}[memory] == 1
    assert memory.ref() == "k@PUBLIC/v1"
