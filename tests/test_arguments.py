"""Bad input: the Python API raises InvalidArgument, the tool layer answers with an error result, nothing is written."""

import pytest

from memlab import InvalidArgument, tools
from memlab.arguments import MAX_RESULTS_CAP
from memlab.tooldefs import TOOLS, bind

BAD_CALLS = [
    ("memory_save", {"content": "x"}, "needs 'key'"),
    ("memory_save", {"key": "k"}, "needs 'content'"),
    ("memory_save", {"key": "", "content": "x"}, "key must not be empty"),
    ("memory_save", {"key": "   ", "content": "x"}, "key must not be empty"),
    ("memory_save", {"key": "k", "content": ""}, "content must not be empty"),
    # Guards: arguments._text taking any non-empty text (`if not value`) or only ASCII whitespace as empty (each
    # seen failing).
    ("memory_save", {"key": "k", "content": " \t\n "}, "content must not be empty"),
    ("memory_save", {"key": "k", "content": "\u3000\u00a0\u2028"}, "content must not be empty"),
    ("memory_save", {"key": 7, "content": "x"}, "key must be a string, not int"),
    ("memory_save", {"key": "k", "content": ["x"]}, "content must be a string, not list"),
    ("memory_save", {"key": " k", "content": "x"}, "must not start or end with whitespace"),
    ("memory_save", {"key": "a\nb", "content": "x"}, "control characters"),
    ("memory_save", {"key": "k" * 257, "content": "x"}, "the limit is 256"),
    ("memory_save", {"key": "k", "content": "x", "tags": "personal"}, "tags must be a list of strings, not str"),
    ("memory_save", {"key": "k", "content": "x", "tags": [1]}, "each tag must be a string, not int"),
    ("memory_save", {"key": "k", "content": "x", "tags": [""]}, "each tag must not be empty"),
    ("memory_save", {"key": "k", "content": "x", "tags": {"a": 1}}, "tags must be a list of strings, not dict"),
    ("memory_save", {"key": "k", "content": "x", "colour": "red"}, "takes no argument 'colour'"),
    ("memory_get", {}, "needs 'key'"),
    ("memory_get", {"key": None}, "needs 'key'"),
    ("memory_get", {"key": ["k"]}, "key must be a string, not list"),
    ("memory_search", {}, "needs 'query'"),
    ("memory_search", {"query": 3}, "query must be a string, not int"),
    ("memory_search", {"query": "x", "max_results": 0}, "positive integer"),
    ("memory_search", {"query": "x", "max_results": -3}, "positive integer"),
    ("memory_search", {"query": "x", "max_results": "5"}, "positive integer"),
    ("memory_search", {"query": "x", "max_results": 2.5}, "positive integer"),
    ("memory_search", {"query": "x", "max_results": True}, "positive integer"),
    ("memory_list", {"tag": 3}, "tag must be a string, not int"),
    ("memory_list", {"tag": ""}, "tag must not be empty"),
    ("memory_delete", {"key": ""}, "key must not be empty"),
    ("memory_forget", {"key": "k"}, "unknown tool 'memory_forget'"),
]


@pytest.mark.parametrize("tool, arguments, message", BAD_CALLS)
def test_tool_layer_answers_bad_input_with_an_error_result(store, tool, arguments, message):
    session = store.session()
    result = tools.call(session, tool, arguments)
    assert set(result) == {"error"}
    assert result["error"]["code"] == "invalid_argument"
    assert message in result["error"]["message"]
    assert session.memory_list() == []
    assert store.audit().iloc[-2]["outcome"] == "invalid_argument"  # the bad call, before memory_list


def _expressible_in_python(case) -> bool:
    """Calls whose arguments fit the method's signature (Python itself rejects unknown or missing names)."""
    tool, arguments, _ = case
    if tool not in TOOLS or not TOOLS.get(tool).for_model:
        return False
    parameters = TOOLS.get(tool).parameters
    required = {parameter.name for parameter in parameters if parameter.required}
    return set(arguments) <= {parameter.name for parameter in parameters} and required <= set(arguments)


@pytest.mark.parametrize("tool, arguments, message", [c for c in BAD_CALLS if _expressible_in_python(c)])
def test_python_api_raises_invalid_argument(store, tool, arguments, message):
    session = store.session()
    with pytest.raises(InvalidArgument) as raised:
        getattr(session, tool)(**arguments)
    assert message in str(raised.value)
    assert session.memory_list() == []


@pytest.mark.parametrize("arguments", [None, [], "key=k", 3])
def test_arguments_that_are_not_an_object(store, arguments):
    result = tools.call(store.session(), "memory_get", arguments)
    if arguments is None:  # no arguments at all: the key is missing
        assert "needs 'key'" in result["error"]["message"]
    else:
        assert result["error"]["code"] == "invalid_argument"


def test_python_api_rejects_the_same_bad_values(store):
    session = store.session()
    for call in (
        lambda: session.memory_save("", "x"),
        lambda: session.memory_save("k", "x", tags="personal"),
        lambda: session.memory_search("x", max_results=0),
        lambda: session.memory_list(tag=""),
        lambda: session.memory_get(None),
    ):
        with pytest.raises(InvalidArgument):
            call()
    assert store.audit()["outcome"].tolist() == ["invalid_argument"] * 5


def test_max_results_defaults_to_ten_and_is_capped():
    assert bind("memory_search", {"query": "x"})["max_results"] == 10
    assert bind("memory_search", {"query": "x", "max_results": 10_000})["max_results"] == MAX_RESULTS_CAP
    assert bind("memory_search", {"query": "x", "max_results": 5.0})["max_results"] == 5


def test_tags_are_deduplicated_in_order():
    assert bind("memory_save", {"key": "k", "content": "c", "tags": ["b", "a", "b"]})["tags"] == ("b", "a")
