"""memlab.policy: the strict policy's rules, the view rules it gives storage, and the pre-tool-call hooks."""

from __future__ import annotations

import pytest

from memlab.errors import InvalidArgument
from memlab.labels import Label
from memlab.levels import Level
from memlab.policy import DEFAULT_HOOKS, Policy, ToolCall, run_hooks, strip_level_arguments
from memlab.viewrules import ViewRules


@pytest.mark.parametrize(
    ("name", "stripped"),
    [
        ("classification", True),
        ("Classification_Level", True),
        ("security-level", True),
        ("CLEARANCE", True),
        ("taint", True),
        ("label", True),
        ("sensitivity", True),
        ("key", False),
        ("content", False),
        ("labels", False),
        ("tags", False),
    ],
)
def test_strip_level_arguments_removes_classification_like_names_only(name, stripped):
    call = strip_level_arguments(ToolCall("memory_save", {"key": "k", name: "RESTRICTED-secret"}))
    assert (name not in call.arguments) is stripped
    assert len(call.notes) == stripped
    assert all(repr(name) in note and "secret" not in note for note in call.notes)  # the value is never repeated


def test_strip_level_arguments_is_a_default_hook_and_hooks_run_in_order():
    assert strip_level_arguments in DEFAULT_HOOKS

    def first(call: ToolCall) -> ToolCall:
        call.notes.append("first")
        return call

    def second(call: ToolCall) -> ToolCall:
        call.notes.append("second")
        return call

    assert run_hooks([first, second], ToolCall("memory_list", {})).notes == ["first", "second"]


def test_a_hook_that_raises_refuses_the_call_through_the_store(store):
    def refuse_deletes(call: ToolCall) -> ToolCall:
        if call.tool == "memory_delete":
            raise InvalidArgument("deletes are off")
        return call

    store.hooks.append(refuse_deletes)
    session = store.session("PUBLIC", "main")
    session.memory_save("k", "v")
    with pytest.raises(InvalidArgument, match="deletes are off"):
        session.memory_delete("k")
    assert session.memory_get("k").content == "v"


def test_a_tool_calls_taint_is_parsed_into_a_label():
    call = ToolCall("memory_get", {}, taint="confidential:hr")
    assert call.label == Label.parse("CONFIDENTIAL:hr")
    assert ToolCall("memory_get", {}).taint == Level.PUBLIC


@pytest.mark.parametrize("taint", ["PUBLIC", "INTERNAL:hr", "RESTRICTED"])
def test_the_strict_policy_saves_and_deletes_at_the_taint(taint):
    label = Label.parse(taint)
    policy = Policy()
    assert policy.save_level(label, initial_taint=Label.parse("PUBLIC")) == label
    assert policy.delete_level("k", label, visible=lambda key: None) == label


def test_the_strict_policys_view_rules_are_the_lattices():
    assert Policy().view_rules() == ViewRules.lattice()
    assert repr(Policy()) == "<policy strict>"


def test_a_variants_overrides_reach_its_view_rules():
    # Guards: Policy.view_rules building `readable` from can_flow_to instead of the policy's own readable().
    class ReadsOneAbove(Policy):
        name = "reads-one-above"
        global_statistics = True

        def readable(self, classification: Label, taint: Label) -> bool:
            return classification.level <= min(taint.level + 1, Level.RESTRICTED)

    rules = ReadsOneAbove().view_rules()
    assert rules.can_read(Level.INTERNAL, Level.PUBLIC) and not rules.can_read(Level.CONFIDENTIAL, Level.PUBLIC)
    assert not rules.lattice_visibility and rules.global_statistics
