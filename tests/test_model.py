"""The store against the reference model: random sessions, agents, levels and tool calls (Hypothesis)."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from memlab import Level, NotFound, TaintError
from tests.backends import HOSTILE_AGENTS, open_store
from tests.reference_model import ReferenceStore, Version

AGENTS = HOSTILE_AGENTS
KEYS = ["user-name", "user_name", "project-deadline", "a%", "deadline"]
WORDS = ["alice", "running", "runs", "deadline", "march", "python", "coffee", "public", "secret", "project"]
TAGS = ["personal", "work", "preference"]
levels = st.sampled_from(list(Level))


def as_tuple(memory) -> tuple:
    return (memory.key, memory.content, tuple(memory.tags), memory.classification, memory.version, memory.saved_by)


def model_tuple(version: Version) -> tuple:
    return (version.key, version.content, version.tags, version.classification, version.version, version.saved_by)


class StoreMatchesModel(RuleBasedStateMachine):
    sessions = Bundle("sessions")
    backend = "memory"

    def __init__(self) -> None:
        super().__init__()
        self._opened = open_store(self.backend)
        self.store = self._opened.__enter__()
        self.model = ReferenceStore()
        self.taints: dict[str, Level] = {}
        self.live: dict[str, object] = {}
        self.count = 0

    def teardown(self) -> None:
        self._opened.__exit__(None, None, None)

    @rule(target=sessions, agent=st.sampled_from(AGENTS), taint=levels)
    def start_session(self, agent, taint):
        self.count += 1
        session = self.store.session(taint, agent, session_id=f"s{self.count}")
        self.taints[session.id] = taint
        self.live[session.id] = session
        return session

    @rule(session=sessions, level=levels)
    def escalate(self, session, level):
        if level < self.taints[session.id]:
            try:
                session.escalate(level)
            except TaintError:
                return
            raise AssertionError("lowering the taint must fail")
        assert session.escalate(level, reason="test") == level
        self.taints[session.id] = level

    @rule(
        session=sessions,
        key=st.sampled_from(KEYS),
        words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        tags=st.lists(st.sampled_from(TAGS), max_size=3),
    )
    def save(self, session, key, words, tags):
        content = " ".join(words)
        saved = session.memory_save(key, content, tags=tags)
        expected = self.model.save(
            session.agent, self.taints[session.id], key, content, tuple(dict.fromkeys(tags)), session.id
        )
        assert as_tuple(saved) == model_tuple(expected)

    @rule(session=sessions, key=st.sampled_from(KEYS))
    def get(self, session, key):
        got = session.memory_get(key)
        expected = self.model.effective(session.agent, self.taints[session.id], key)
        assert (got and as_tuple(got)) == (expected and model_tuple(expected))

    @rule(session=sessions, key=st.sampled_from(KEYS))
    def delete(self, session, key):
        expected = self.model.delete(session.agent, self.taints[session.id], key)
        try:
            deleted = session.memory_delete(key)
        except NotFound:
            assert expected is None
            return
        assert expected is not None and as_tuple(deleted) == model_tuple(expected)

    @rule(session=sessions, tag=st.none() | st.sampled_from(TAGS))
    def list(self, session, tag):
        listed = [as_tuple(m) for m in session.memory_list(tag)]
        assert listed == [model_tuple(v) for v in self.model.list(session.agent, self.taints[session.id], tag)]

    @rule(session=sessions, words=st.lists(st.sampled_from(WORDS + ["what", "is", "my"]), min_size=1, max_size=3))
    def search(self, session, words):
        query = " ".join(words)
        taint = self.taints[session.id]
        hits = session.memory_search(query, max_results=100)
        assert {hit.memory.key for hit in hits} == self.model.matching_keys(session.agent, taint, query)
        for hit in hits:
            assert as_tuple(hit.memory) == model_tuple(self.model.effective(session.agent, taint, hit.memory.key))
        scores = [hit.score for hit in hits]
        assert scores == sorted(scores, reverse=True)

    @invariant()
    def taints_are_live(self):
        # Every session reports the taint the model expects: nothing lowers or raises it behind our back.
        for session_id, session in self.live.items():
            assert session.taint == self.taints[session_id]

    @rule(session=sessions, keys=st.lists(st.sampled_from(KEYS), min_size=1, max_size=4), words=st.sampled_from(WORDS))
    def save_many(self, session, keys, words):
        # A batch is the same as saving one by one: same versions, same views afterwards.
        saved = session.memory_save_many([{"key": key, "content": f"{words} {key}"} for key in keys])
        expected = [
            self.model.save(session.agent, self.taints[session.id], key, f"{words} {key}", (), session.id)
            for key in keys
        ]
        assert [as_tuple(memory) for memory in saved] == [model_tuple(version) for version in expected]


# Files cost more per example than memory, and a database more: the others get fewer, as long, runs.
EXAMPLES = {"memory": 300, "file": 60, "folder": 100, "postgres": 40}


def _test_case(backend: str):
    machine = type(f"StoreMatchesModel_{backend}", (StoreMatchesModel,), {"backend": backend})
    case = machine.TestCase
    case.settings = settings(max_examples=EXAMPLES[backend], stateful_step_count=50)
    return case


TestStoreMatchesModelInMemory = _test_case("memory")
TestStoreMatchesModelInOneFile = _test_case("file")
TestStoreMatchesModelInAgentFolder = _test_case("folder")
TestStoreMatchesModelInPostgres = _test_case("postgres")
