"""mem0's API as properties over random sequences (memlab.integrations.mem0): at one label it behaves as a small
model of mem0's semantics; a PUBLIC ``Memory`` observes the same whatever a CONFIDENTIAL one does on the same store;
a ``Memory`` whose floor is TRUSTED observes the same whatever an untrusted one does."""

from __future__ import annotations

import random

import pytest

from memlab import MemoryStore
from memlab.integrations.mem0 import Memory, MemoryNotFound
from memlab.integrations.mem0_filters import matches
from tests.backends import BACKENDS, open_store

WORDS = ("tennis", "lisbon", "coffee", "budget", "atlas", "dentist")
SCOPES = ({"user_id": "alice"}, {"user_id": "bob"}, {"user_id": "alice", "agent_id": "bot"}, {"agent_id": "bot"})
FILTERS = (
    {},
    {"category": "work"},
    {"priority": {"gte": 3}},
    {"OR": [{"category": "home"}, {"priority": {"lt": 2}}]},
    {"NOT": [{"category": "work"}]},
    {"category": {"in": ["work", "home"]}, "priority": {"ne": 4}},
    {"category": "*"},
)


def _text(rng):
    return " ".join(rng.sample(WORDS, 2))


def _metadata(rng):
    fields = {"category": rng.choice(["work", "home"]), "priority": rng.randrange(6)}
    return {name: value for name, value in fields.items() if rng.random() < 0.7}


class Model:
    """mem0's semantics, as its docs state them: ids, scope, metadata merged by update, deletes."""

    def __init__(self):
        self.memories: dict[str, dict] = {}

    def add(self, memory_id, text, scope, metadata):
        self.memories[memory_id] = {"memory": text, "scope": dict(scope), "metadata": dict(metadata)}

    def update(self, memory_id, text, metadata):
        if memory_id not in self.memories:
            return False
        entry = self.memories[memory_id]
        entry["memory"] = entry["memory"] if text is None else text
        entry["metadata"] = {**entry["metadata"], **(metadata or {})}
        return True

    def delete(self, memory_id):
        return self.memories.pop(memory_id, None) is not None

    def selected(self, scope, where):
        return [
            (memory_id, entry["memory"], entry["metadata"] or None)
            for memory_id, entry in self.memories.items()
            if all(entry["scope"].get(name) == value for name, value in scope.items())
            and matches({**entry["metadata"], **entry["scope"]}, where)
        ]


@pytest.mark.parametrize("seed", range(6))
def test_random_calls_at_one_label_give_what_a_model_of_mem0_gives(seed):
    with MemoryStore() as store:
        _run_against_the_model(Memory(store, taint="INTERNAL"), random.Random(seed), steps=60)


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_every_backend_the_calls_give_what_the_model_gives_and_public_sees_nothing(backend):
    with open_store(backend) as store:
        _run_against_the_model(Memory(store, taint="INTERNAL"), random.Random(7), steps=25)
        public = Memory(store, taint="PUBLIC")
        assert all(public.get_all(**scope) == {"results": []} for scope in SCOPES)
        assert public.search("tennis lisbon coffee", user_id="alice") == {"results": []}
        assert store.verify().ok


def _run_against_the_model(m, rng, *, steps):
    model = Model()
    for _ in range(steps):
        ids = list(model.memories)
        action = rng.choice(["add", "add", "update", "delete", "delete_all", "read"])
        if action == "add":
            scope, metadata, text = rng.choice(SCOPES), _metadata(rng), _text(rng)
            (row,) = m.add(text, **scope, metadata=metadata, infer=False)["results"]
            model.add(row["id"], text, scope, metadata)
        elif action == "update":
            memory_id = rng.choice([*ids, "never-added"])
            text = rng.choice([None, _text(rng)])
            metadata = rng.choice([None, _metadata(rng)]) if text else _metadata(rng)
            try:
                m.update(memory_id, text=text, metadata=metadata)
                assert model.update(memory_id, text, metadata)
            except MemoryNotFound:
                assert not model.update(memory_id, text, metadata)
        elif action == "delete" and ids:
            memory_id = rng.choice(ids)
            m.delete(memory_id)
            assert model.delete(memory_id)
        elif action == "delete_all":
            scope = rng.choice(SCOPES)
            m.delete_all(**scope)
            for memory_id, _, _ in model.selected(scope, {}):
                model.delete(memory_id)
        scope, where = rng.choice(SCOPES), rng.choice(FILTERS)
        listed = m.get_all(filters={**scope, **where}, top_k=1000)["results"]
        assert [(r["id"], r["memory"], r["metadata"]) for r in listed] == model.selected(scope, where)
        query = rng.choice(WORDS)
        found = {r["id"] for r in m.search(query, filters={**scope, **where}, top_k=1000)["results"]}
        assert found == {i for i, text, _ in model.selected(scope, where) if query in text}
        for memory_id in ids[:3]:
            got = m.get(memory_id)
            entry = model.memories.get(memory_id)
            assert (got and (got["memory"], got["metadata"])) == (
                entry and (entry["memory"], entry["metadata"] or None)
            )


def _observe(m, ids):
    """What a ``Memory`` sees, ids written as their order of creation (each store makes its own uuids)."""
    name = {memory_id: n for n, memory_id in enumerate(ids)}

    def rows(results):
        return [
            (name.get(r["id"]), r["memory"], r["metadata"], r.get("score"), r["classification"], r["integrity"])
            for r in results
        ]

    seen = [rows(m.get_all(filters={**scope}, top_k=1000)["results"]) for scope in SCOPES]
    seen += [rows(m.search(word, filters={"user_id": "alice"}, top_k=1000)["results"]) for word in WORDS]
    for memory_id in ids:
        got = m.get(memory_id)
        seen.append(got and rows([got]))
        seen.append([(h["event"], h["old_memory"], h["new_memory"], h["classification"]) for h in m.history(memory_id)])
    return seen


def _two_worlds(seed, low_options, high_options):
    """Run the same low calls on two stores, the other Memory's random calls only on the first; what the low one
    observes after each step in each."""
    observations = []
    for busy in (True, False):
        rng, other = random.Random(seed), random.Random(seed + 1000)
        with MemoryStore() as store:
            low, high = Memory(store, **low_options), Memory(store, **high_options)
            ids, seen = [], []
            for _ in range(25):
                if rng.random() < 0.5 or not ids:
                    ids.append(
                        low.add(_text(rng), **rng.choice(SCOPES), metadata=_metadata(rng), infer=False)["results"][0][
                            "id"
                        ]
                    )
                else:
                    low.update(rng.choice(ids), text=_text(rng), metadata=_metadata(rng))
                if busy:
                    _meddle(high, ids, other)
                seen.append(_observe(low, ids))
            observations.append(seen)
    return observations


def _meddle(high, ids, rng):
    """One random call of the other ``Memory``: adds, updates of the low one's ids, deletes, ``delete_all``, reset."""
    action = rng.choice(["add", "update", "update", "delete", "delete_all", "reset", "read"])
    memory_id = rng.choice(ids)
    try:
        if action == "add":
            high.add(_text(rng), **rng.choice(SCOPES), metadata=_metadata(rng), infer=False)
        elif action == "update":
            high.update(memory_id, text=_text(rng), metadata={"category": "secret"})
        elif action == "delete":
            high.delete(memory_id)
        elif action == "delete_all":
            high.delete_all(**rng.choice(SCOPES))
        elif action == "reset":
            high.reset()
        else:
            high.search(rng.choice(WORDS), user_id="alice")
            high.history(memory_id)
    except MemoryNotFound:
        pass


@pytest.mark.parametrize("seed", range(4))
def test_a_public_memory_observes_the_same_whatever_a_confidential_one_does_at_random(seed):
    busy, quiet = _two_worlds(seed, {"taint": "PUBLIC"}, {"taint": "CONFIDENTIAL"})
    assert busy == quiet


@pytest.mark.parametrize("seed", range(4))
def test_a_floor_trusted_memory_observes_the_same_whatever_an_untrusted_one_does(seed):
    busy, quiet = _two_worlds(seed, {"taint": "INTERNAL", "floor": "trusted"}, {"taint": "INTERNAL@untrusted"})
    assert busy == quiet
