"""A bulk batch is validated as single saves are: the same verdicts, the same messages, hooks a record at a time."""

import pytest

from memlab import InvalidArgument, arguments
from memlab.arguments import MAX_KEY_CHARS, MAX_TAG_CHARS

# Plain printable ASCII is decided by one compiled pattern; these names sit on that pattern's edges.
NAMES = [
    ("k", None),
    ("!", None),
    ("~", None),
    ("a b", None),
    ("k" * MAX_KEY_CHARS, None),
    ("k" * (MAX_KEY_CHARS + 1), f"key is {MAX_KEY_CHARS + 1} characters long; the limit is {MAX_KEY_CHARS}"),
    ("", "key must not be empty"),
    ("   ", "key must not be empty"),
    (" k", "key ' k' must not start or end with whitespace"),
    ("k ", "key 'k ' must not start or end with whitespace"),
    ("a\tb", "key 'a\\tb' must not contain U+0009 (unnamed) at character 1"),
    ("a\x7fb", "key 'a\\x7fb' must not contain U+007F (unnamed) at character 1"),
    ("a\x1fb", "key 'a\\x1fb' must not contain U+001F (unnamed) at character 1"),
    ("cafe\u0301", None),
    (b"k", "key must be a string, not bytes"),
]


@pytest.mark.parametrize("value, error", NAMES)
def test_a_key_at_the_edge_of_plain_ascii_is_judged_by_the_rules_of_names(value, error):
    # Guards: the shortcut's pattern allowing a space at either end, or one character past the limit.
    if error is None:
        assert arguments.key(value) == ("caf\u00e9" if value == "cafe\u0301" else value)
    else:
        with pytest.raises(InvalidArgument) as raised:
            arguments.key(value)
        assert error in str(raised.value)


def test_a_tag_one_past_its_limit_is_refused_as_before():
    # Guards: tags sharing the key's longer limit in the shortcut.
    assert arguments.tags(["t" * MAX_TAG_CHARS]) == ("t" * MAX_TAG_CHARS,)
    with pytest.raises(InvalidArgument, match=f"each tag is {MAX_TAG_CHARS + 1} characters long; the limit is 64"):
        arguments.tags(["t" * (MAX_TAG_CHARS + 1)])


def test_a_bad_record_in_a_batch_is_named_and_nothing_of_its_batch_is_written(store):
    session = store.session()
    seen = []

    def note_key(call):
        seen.append(call.arguments.get("key"))
        return call

    store.hooks.append(note_key)
    records = [{"key": "one", "content": "a"}, {"key": "two", "content": "b", "tags": ["x"]}]
    records += [{"key": "k" * (MAX_KEY_CHARS + 1), "content": "c"}, {"key": "four", "content": "d"}]
    with pytest.raises(InvalidArgument) as raised:
        session.memory_save_many(records)
    assert str(raised.value) == (
        f"record 3: key is {MAX_KEY_CHARS + 1} characters long; the limit is {MAX_KEY_CHARS} "
        "(0 records saved before it)"
    )
    assert raised.value.record == 3
    # Guards: running the hooks over the whole batch before validating it (record 4 would reach a hook).
    assert seen == ["one", "two", "k" * (MAX_KEY_CHARS + 1)]
    assert session.memory_list() == []


def test_an_unknown_argument_in_a_record_is_refused_with_the_single_save_message(store):
    # Guards: Tool.bind skipping its check of the given names against the parameters (`if False:`).
    session = store.session()
    with pytest.raises(InvalidArgument) as raised:
        session.memory_save_many([{"key": "k", "content": "a"}, {"key": "k", "content": "b", "colour": "red"}])
    assert str(raised.value) == (
        "record 2: memory_save takes no argument 'colour'; it takes key, content, tags, source, occurred_at "
        "(0 records saved before it)"
    )
    assert session.memory_list() == []


def test_a_batch_of_plain_records_is_saved_as_single_saves_would_be(store):
    session = store.session()
    saved = session.memory_save_many(
        [{"key": "k", "content": "a", "tags": ["t", "t", "u"]}, {"key": "j", "content": "b"}]
    )
    assert [(m.key, m.tags, m.version) for m in saved] == [("k", ("t", "u"), 1), ("j", (), 1)]


@pytest.mark.parametrize(
    "tags, error",
    [
        (["a\x00b"], "each tag 'a\\x00b' must not contain U+0000 (unnamed) at character 1"),
        (["a", "b\x00"], "each tag 'b\\x00' must not contain U+0000 (unnamed) at character 1"),
        (["a", 7], "each tag must be a string, not int"),
        (["a", b"b"], "each tag must be a string, not bytes"),
        (["a", " b"], "each tag ' b' must not start or end with whitespace"),
        ([], None),
        (["a", "b", "a"], None),
    ],
)
def test_a_list_of_tags_is_judged_tag_by_tag_whatever_it_holds(tags, error):
    # Plain tags are matched joined by NUL: a tag holding a NUL must not pass as two plain tags.
    # Guards: the tags' shortcut not checking that its separators are exactly the ones it put there.
    if error is None:
        assert arguments.tags(tags) == tuple(dict.fromkeys(tags))
    else:
        with pytest.raises(InvalidArgument) as raised:
            arguments.tags(tags)
        assert error in str(raised.value)
