"""memlab.integrations.langgraph_names: a LangGraph namespace is used only when memlab keeps it as the agent name
given, a key only when memlab keeps it as given (NFC refused rather than merged), and a prefix may be a list."""

from __future__ import annotations

import unicodedata

import pytest
from langgraph.store.base import InvalidNamespaceError

from memlab import InvalidArgument
from memlab.arguments import MAX_AGENT_CHARS
from memlab.integrations.langgraph_names import check_key, check_namespace, path


@pytest.mark.parametrize(
    "namespace, message",
    [
        (("users", "alice\n"), "is not a memlab agent: agent name 'alice\\\\n' must not start or end with whitespace"),
        (("users", "al\nice"), "U\\+000A"),
        (("users", "alice "), "must not start or end with whitespace"),
        (("users ", "alice"), "must not start or end with whitespace"),
        (("users", "al\u200bice"), "U\\+200B"),
        (("users", "al\x07ice"), "U\\+0007"),
        (("users", "x" * MAX_AGENT_CHARS), f"the limit is {MAX_AGENT_CHARS}"),
        (("cafe\u0301",), "is not in Unicode NFC: memlab keeps 'cafe\u0301' as 'caf\u00e9'"),
        (("users", "a/b"), "must not hold a slash"),
        ((), "must not be empty"),
        (["users"], "must be a tuple"),
    ],
)
def test_a_namespace_memlab_would_not_keep_as_given_is_langgraphs_invalid_namespace_error(namespace, message):
    # Guards: check_namespace checking labels only (memlab's agent rules then refuse it at the call, with
    # InvalidArgument, after the batch's earlier ops ran), and the NFC comparison (a decomposed name then merged).
    with pytest.raises(InvalidNamespaceError, match=message):
        check_namespace(namespace)


def test_a_namespace_in_nfc_is_accepted():
    check_namespace(("caf\u00e9", "users"))
    check_namespace(("x" * (MAX_AGENT_CHARS // 2 - 1), "y" * (MAX_AGENT_CHARS // 2)))


@pytest.mark.parametrize(
    "key, message",
    [
        ("cafe\u0301", "the key 'cafe\u0301' is not in Unicode NFC"),
        (" padded ", "must not start or end with whitespace"),
        ("a\u202eb", "U\\+202E"),
        (3, "must be a string"),
    ],
)
def test_a_key_memlab_would_not_keep_as_given_is_refused(key, message):
    with pytest.raises(InvalidArgument, match=message):
        check_key(key)
    check_key(unicodedata.normalize("NFC", "cafe\u0301"))


@pytest.mark.parametrize("given", [["users", "ann"], ("users", "ann")])
def test_a_prefix_may_be_a_list_as_langgraph_takes_it(given):
    # Guards: path() without the list case (search(["users"]) then InvalidNamespaceError "must be a tuple").
    assert path(given, "namespace prefix") == ("users", "ann")
    with pytest.raises(InvalidNamespaceError, match="must not hold a period"):
        path(["users", "a.b"], "namespace prefix")
