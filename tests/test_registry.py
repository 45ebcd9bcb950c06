"""One registry for every named thing: policies, analyzers, tools, checks, rows and collections refuse an unknown
name with the same message, listing the known ones."""

import pytest

from memlab import InvalidArgument, check, policies, tooldefs
from memlab.check.checks import CHECKS
from memlab.eval.collections import CollectionError
from memlab.eval.configurations import CONFIGURATIONS, rows_of
from memlab.eval.named import COLLECTIONS, load_collection
from memlab.policy import Policy
from memlab.registry import Registry
from memlab.search import analyzers

KINDS = [
    ("policy", "policies", policies.get, policies.names),
    ("analyzer", "analyzers", analyzers.get, analyzers.names),
    ("tool", "tools", tooldefs.get, lambda: [tool.name for tool in tooldefs.model_tools()]),
    ("check", "checks", CHECKS.get, CHECKS.names),
    ("row", "rows", CONFIGURATIONS.get, CONFIGURATIONS.names),
    ("collection", "collections", COLLECTIONS.get, COLLECTIONS.names),
]


@pytest.mark.parametrize("kind, plural, get, names", KINDS, ids=[kind for kind, *_ in KINDS])
def test_every_kind_refuses_an_unknown_name_in_the_same_words(kind, plural, get, names):
    # Guards: a kind kept as a plain dict (a KeyError) or with a message of its own ("the checks are ...").
    with pytest.raises(InvalidArgument) as refused:
        get("nope")
    assert str(refused.value) == f"unknown {kind} 'nope'; known {plural}: {', '.join(names())}"
    assert len(names()) >= 3


def test_a_registry_takes_an_item_once_gives_it_back_and_lets_it_go():
    # Guards: unregister leaving the name behind, or register overwriting a name already taken.
    registry: Registry[Policy] = Registry("policy", Policy, plural="policies")
    strict = registry.register(Policy())
    with pytest.raises(InvalidArgument, match="a policy named 'strict' is already registered"):
        registry.register(Policy())
    assert registry.get("strict") is strict and "strict" in registry and list(registry) == ["strict"]
    assert registry.unregister("strict") is strict and "strict" not in registry and len(registry) == 0
    with pytest.raises(InvalidArgument, match="unknown policy 'strict'; known policies: $"):
        registry.unregister("strict")


def test_a_kind_without_a_default_needs_a_name_and_an_odd_name_is_refused_not_raised():
    # Guards: resolve(None) on a kind with no default looking up the name None (a KeyError-like crash).
    with pytest.raises(InvalidArgument, match="a check is needed; known checks: noninterference, write_down"):
        CHECKS.resolve(None)
    assert [] not in CHECKS
    with pytest.raises(InvalidArgument, match=r"unknown check \[\]; known checks"):
        CHECKS.get([])


def test_an_unknown_row_names_the_rows_and_the_analyzers_it_could_have_been():
    # Guards: rows_of reporting an unknown row as an unknown analyzer only (the named rows left unsaid).
    with pytest.raises(InvalidArgument) as refused:
        rows_of(["porter+bost"], None)
    message = str(refused.value)
    assert message.startswith("unknown row 'porter+bost'; known rows: porter, porter+boost, porter+context")
    assert message.endswith(f"; or an analyzer: {', '.join(analyzers.names())}")


def test_an_unknown_check_is_refused_before_any_check_runs(monkeypatch):
    # Guards: run_all validating each check only when it comes to it (the first checks run, then the error).
    ran = []
    monkeypatch.setattr(CHECKS.get("shadowing"), "run", lambda *args, **kwargs: ran.append(args))
    with pytest.raises(InvalidArgument, match="unknown check 'leaks'; known checks: noninterference"):
        check.run_all("strict", checks=["shadowing", "leaks"])
    assert ran == []


def test_an_unknown_collection_that_is_no_folder_says_both(tmp_path):
    # Guards: load_collection treating any name it does not ship as a folder (a missing-file error instead).
    with pytest.raises(CollectionError) as refused:
        load_collection(str(tmp_path / "nope"))
    assert str(refused.value) == (
        f"unknown collection {str(tmp_path / 'nope')!r}; known collections: locomo, locomo-topical, locomo-turns, "
        "preferences; nor is it a folder (a TREC-style collection)"
    )
