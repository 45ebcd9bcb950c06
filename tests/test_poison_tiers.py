"""The three attack tiers write the poison into the victim's namespace, stamped by the host, never by the attacker."""

import pytest

from memlab import InvalidArgument, MemoryStore
from memlab.poison import TIERS, GullibleAgent, generate, inject
from memlab.poison.tiers import message_of, page_of
from tests.poison_toy import toy

SOURCES = {"direct": "attacker", "query": "chat:stranger", "content": "web:https://example.com/notes"}


@pytest.mark.parametrize("tier", TIERS)
def test_each_tier_saves_the_poison_untrusted_naming_its_source(tier):
    store = MemoryStore()
    poisons = generate(toy(), 1, seed=0)
    saved = inject(store, poisons, tier)
    assert [(row["key"], row["classification"], row["integrity"]) for row in saved] == [
        (poison.key, "PUBLIC@untrusted", "untrusted") for poison in poisons
    ]
    versions = store.versions("ann")
    assert set(versions["content"]) == {poisons[0].text}
    reader = store.session(agent="ann")  # a victim that reads every grade
    match = reader.memory_get(poisons[0].key)
    assert match.content == poisons[0].text and match.distrust == (SOURCES[tier],)


@pytest.mark.parametrize("tier", TIERS)
def test_integrity_ignored_writes_the_same_poison_trusted(tier):
    saved = inject(MemoryStore(), generate(toy(), 1, seed=0), tier, trusted=True)
    assert {(row["classification"], row["integrity"]) for row in saved} == {("PUBLIC", "trusted")}


def test_the_gullible_agent_saves_what_it_is_told_through_the_tools_and_cannot_choose_trust():
    store = MemoryStore()
    session = store.session(agent="ann")
    session.lower_integrity(source="chat:stranger")
    agent = GullibleAgent(session)
    poison = generate(toy(), 1, seed=0)[0]
    assert agent.hear(message_of(poison))["integrity"] == "untrusted"
    assert agent.read(page_of(poison), ["notes"])["integrity"] == "untrusted"
    # a message that says nothing to remember gets the tool's error, and nothing is saved for it
    assert agent.hear("hello")["error"]["code"] == "invalid_argument"
    assert len(store.versions("ann")) == 2


def test_an_unknown_tier_is_refused_naming_it_and_nothing_is_written():
    store = MemoryStore()
    with pytest.raises(InvalidArgument, match="unknown tier 'email'; tiers: direct, query, content"):
        inject(store, generate(toy(), 1, seed=0), "email")
    assert store.versions("ann").empty and store.sessions().empty
