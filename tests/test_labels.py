"""Labels: ``Label`` (a level, categories and an integrity grade) is a lattice, parses strictly, embeds the four
levels, and shadowing picks among maxima."""

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from memlab import InvalidArgument, Level, MemoryStore, can_flow_to
from memlab.labels import MAX_CATEGORIES, Ambiguous, Integrity, Label
from memlab.viewrules import maximal, newest, refuse

labels = st.builds(
    Label,
    st.sampled_from(list(Level)),
    st.frozensets(st.sampled_from(["hr", "legal", "ops"])),
    st.sampled_from(list(Integrity)),
)


@given(labels)
def test_flow_is_reflexive(a):
    assert a.can_flow_to(a)


@given(labels, labels)
def test_flow_is_antisymmetric(a, b):
    if a.can_flow_to(b) and b.can_flow_to(a):
        assert a == b


@given(labels, labels, labels)
def test_flow_is_transitive(a, b, c):
    if a.can_flow_to(b) and b.can_flow_to(c):
        assert a.can_flow_to(c)


@pytest.mark.parametrize(
    "bound, under",
    [("join", Label.can_flow_to), ("meet", lambda a, b: b.can_flow_to(a))],
    ids=["join-is-the-least-upper-bound", "meet-is-the-greatest-lower-bound"],
)
@given(labels, labels, labels)
def test_join_and_meet_are_the_least_upper_and_the_greatest_lower_bound(bound, under, a, b, c):
    """``a.join(b)`` is above both and under every label above both; ``meet`` the same with the order reversed.

    Guards: join taking the lower level, or only the shared categories; meet taking every category: each seen
    failing."""
    found = getattr(a, bound)(b)
    assert under(a, found) and under(b, found)
    if under(a, c) and under(b, c):
        assert under(found, c)


@pytest.mark.parametrize("source", list(Level))
@pytest.mark.parametrize("target", list(Level))
def test_labels_without_categories_order_exactly_as_levels(source, target):
    assert Label(source).can_flow_to(Label(target)) == can_flow_to(source, target)
    assert Label(source).join(Label(target)) == Label(max(source, target))


def test_categories_make_labels_incomparable():
    hr, legal = Label.parse("CONFIDENTIAL:hr"), Label.parse("CONFIDENTIAL:legal")
    assert not hr.can_flow_to(legal) and not legal.can_flow_to(hr)
    # A higher level does not reach a compartment it lacks.
    assert not hr.can_flow_to(Label.parse("RESTRICTED:legal"))
    assert hr.can_flow_to(Label.parse("RESTRICTED:hr,legal"))


@given(labels)
def test_a_label_parses_back_from_its_text(label):
    assert Label.parse(str(label)) == label


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("confidential", Label(Level.CONFIDENTIAL)),
        ("Confidential:HR", Label(Level.CONFIDENTIAL, frozenset({"hr"}))),
        (" internal : legal , hr ", Label(Level.INTERNAL, frozenset({"hr", "legal"}))),
        (Level.PUBLIC, Label(Level.PUBLIC)),
    ],
)
def test_parse_accepts_levels_in_any_case_and_categories_in_any_order(text, expected):
    assert Label.parse(text) == expected


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("CONFIDENTIAL:", "no categories"),
        ("CONFIDENTIAL: ", "no categories"),
        ("SECRET:hr", "unknown level"),
        (":hr", "unknown level"),
        ("CONFIDENTIAL:hr,,legal", "empty"),
        ("CONFIDENTIAL:hr\x00", "not a name"),
        ("CONFIDENTIAL:h\nr", "not a name"),
        ("CONFIDENTIAL:1hr", "not a name"),
        ("CONFIDENTIAL:hr:legal", "not a name"),
        ("CONFIDENTIAL:" + "a" * 33, "over 32 characters"),
        ("CONFIDENTIAL:hr,HR", "named twice"),
        ("CONFIDENTIAL:" + ",".join(f"c{i}" for i in range(MAX_CATEGORIES + 1)), "at most 16 categories"),
        (3, "a label is a string"),
        (None, "a label is a string"),
    ],
)
def test_a_malformed_label_is_refused_saying_what_is_wrong(bad, says):
    with pytest.raises(InvalidArgument, match=says):
        Label.parse(bad)


def test_the_limit_of_categories_is_allowed():
    names = [f"c{i}" for i in range(MAX_CATEGORIES)]
    assert len(Label.of("PUBLIC", names).categories) == MAX_CATEGORIES


def test_a_join_over_the_limit_of_categories_is_refused():
    a = Label.of("PUBLIC", [f"a{i}" for i in range(MAX_CATEGORIES)])
    with pytest.raises(InvalidArgument, match="at most 16 categories"):
        a.join(Label.of("PUBLIC", ["b"]))


def test_categories_must_be_a_list_not_a_string():
    with pytest.raises(InvalidArgument, match="list of names"):
        Label.of("PUBLIC", "hr")


PUBLIC, HR, LEGAL, BOTH = (
    Label.parse(text) for text in ("PUBLIC", "INTERNAL:hr", "INTERNAL:legal", "CONFIDENTIAL:hr,legal")
)


def test_under_the_total_order_there_is_one_maximal_version():
    live = {Label(Level.PUBLIC): 1, Label(Level.INTERNAL): 2, Label(Level.CONFIDENTIAL): 3}
    assert maximal(live, Label(Level.INTERNAL)) == {Label(Level.INTERNAL): 2}


def test_incomparable_versions_are_both_maximal_and_the_rules_differ():
    live = {PUBLIC: 1, HR: 2, LEGAL: 3}
    both = maximal(live, BOTH)
    assert both == {HR: 2, LEGAL: 3}
    assert newest(both, order=lambda version: version) == 3
    with pytest.raises(Ambiguous, match="INTERNAL:hr, INTERNAL:legal"):
        refuse(both, order=lambda version: version)
    # A session in one compartment sees only its own version: no rule is needed there.
    assert maximal(live, Label.parse("CONFIDENTIAL:hr")) == {HR: 2}


@given(st.dictionaries(labels, st.integers(0, 99), max_size=6), labels)
def test_maximal_versions_are_readable_and_none_is_below_another_readable_one(live, taint):
    # Guards: maximal() keeping versions above the taint (reads up), or dropping a maximal one.
    found = maximal(live, taint)
    readable = {label for label in live if label.can_flow_to(taint)}
    assert set(found) <= readable
    for label in readable:
        above = [other for other in readable if other != label and label.can_flow_to(other)]
        assert (label in found) == (not above)


@given(st.dictionaries(labels, st.integers(0, 99), max_size=6), labels, labels)
def test_what_a_session_may_choose_from_depends_only_on_what_it_may_read(live, taint, high):
    # Noninterference for the rules: adding a version the session may not read changes nothing it may pick.
    assume(not high.can_flow_to(taint))
    assert maximal({**live, high: 100}, taint) == maximal({k: v for k, v in live.items() if k != high}, taint)


# -- integrity: the label's third component ----------------------------------------------------------------


@pytest.mark.parametrize(
    "source, target, flows",
    [
        ("PUBLIC", "PUBLIC@untrusted", True),  # trusted data may enter an untrusted context
        ("PUBLIC@untrusted", "PUBLIC", False),  # never the reverse
        ("PUBLIC@untrusted", "CONFIDENTIAL:hr@untrusted", True),
        ("INTERNAL", "PUBLIC@untrusted", False),  # the level still bounds the flow
        ("CONFIDENTIAL:hr", "CONFIDENTIAL@untrusted", False),  # and the categories
    ],
)
def test_integrity_flows_down_only(source, target, flows):
    """Guards: can_flow_to ignoring integrity, or comparing it the wrong way round (``<=``): each seen failing."""
    assert Label.parse(source).can_flow_to(Label.parse(target)) is flows
    assert (Label.parse(source) <= Label.parse(target)) is flows


@pytest.mark.parametrize(
    "text, written",
    [
        ("internal@untrusted", "INTERNAL@untrusted"),
        ("CONFIDENTIAL:Legal, hr@UNTRUSTED", "CONFIDENTIAL:hr,legal@untrusted"),
        ("PUBLIC@trusted", "PUBLIC"),
        (" restricted : ops @ untrusted ", "RESTRICTED:ops@untrusted"),
    ],
)
def test_an_integrity_grade_is_written_after_an_at_and_trusted_is_the_default(text, written):
    assert str(Label.parse(text)) == written
    assert Label.parse(written) == Label.parse(text)


@pytest.mark.parametrize(
    "bad, says",
    [("INTERNAL@", "'@' but no integrity"), ("INTERNAL@sure", "unknown integrity 'sure'"), ("@untrusted", "level")],
)
def test_a_malformed_integrity_is_refused_saying_what_is_wrong(bad, says):
    with pytest.raises(InvalidArgument, match=says):
        Label.parse(bad)


def test_only_a_trusted_label_without_categories_is_its_level():
    """Guards: __eq__ or __hash__ leaving integrity out (an untrusted label would then be its Level): seen failing."""
    assert Label.parse("INTERNAL") == Level.INTERNAL and hash(Label.parse("INTERNAL")) == hash(Level.INTERNAL)
    assert Label.parse("INTERNAL@untrusted") != Level.INTERNAL
    assert Label.parse("INTERNAL@untrusted") != Label.parse("INTERNAL")
    assert len({Label.parse("INTERNAL"), Label.parse("INTERNAL@untrusted"), Level.INTERNAL}) == 2


def test_join_takes_the_lower_integrity_and_meet_the_higher():
    trusted, untrusted = Label.parse("INTERNAL:hr"), Label.parse("PUBLIC@untrusted")
    assert str(trusted.join(untrusted)) == "INTERNAL:hr@untrusted"
    assert str(trusted.meet(untrusted)) == "PUBLIC"


@pytest.mark.parametrize(
    "open_with",
    [
        lambda store: store.session(taint="INTERNAL@untrusted"),
        lambda store: store.session().lower_integrity(source="web:page"),
        lambda store: __import__("memlab.integrations.langgraph", fromlist=["MemlabStore"]).MemlabStore(
            store, taint="CONFIDENTIAL:hr@untrusted"
        ),
    ],
    ids=["a session", "a lowering", "a LangGraph store"],
)
def test_a_store_refuses_an_untrusted_label_it_cannot_keep_and_writes_nothing(open_with, monkeypatch):
    """A backend that does not declare integrity (``capabilities``) refuses a label that is not trusted at every
    door that takes a taint, clearly, before anything is written (a lowering's session, opened first, is its only
    row); tests/backends.py's probe checks PostgreSQL's refusal for real (tests/test_contract.py).

    Guards: MemoryStore.check_label without its integrity refusal (the session then opens): seen failing."""
    store = MemoryStore()
    without = store.storage.capabilities - {"integrity"}
    monkeypatch.setattr(type(store.storage), "capabilities", property(lambda storage: without))
    with pytest.raises(InvalidArgument, match="integrity not supported by this store's backend"):
        open_with(store)
    assert store.taint_events().empty and store.audit().empty
