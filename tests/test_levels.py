import pytest

from memlab import InvalidArgument, Level, can_flow_to


def test_levels_are_ordered():
    assert Level.PUBLIC < Level.INTERNAL < Level.CONFIDENTIAL < Level.RESTRICTED


@pytest.mark.parametrize("source", list(Level))
@pytest.mark.parametrize("target", list(Level))
def test_can_flow_to_is_upward_only(source, target):
    assert can_flow_to(source, target) == (source.value <= target.value)


@pytest.mark.parametrize("text", ["confidential", "CONFIDENTIAL", "Confidential", " confidential "])
def test_parse_accepts_any_case(text):
    assert Level.parse(text) is Level.CONFIDENTIAL


@pytest.mark.parametrize("bad", ["secret", "", "PUBLIC!", 2, None, "0"])
def test_parse_rejects_anything_else_naming_the_levels(bad):
    with pytest.raises(InvalidArgument, match="PUBLIC, INTERNAL, CONFIDENTIAL, RESTRICTED"):
        Level.parse(bad)


def test_str_is_the_name():
    assert str(Level.INTERNAL) == "INTERNAL"
