"""The store against the reference model: random sessions, agents, levels, integrity and tool calls (Hypothesis).

On a backend that keeps integrity, sessions start trusted or untrusted, with a floor that accepts every grade or
only trusted versions; the host lowers them at random, and a read that returns an untrusted version lowers them
too, in the model as in the store."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from memlab import Level, NotFound, TaintError
from memlab.labels import Integrity, Label
from tests.backends import HOSTILE_AGENTS, has, open_store
from tests.reference_model import ReferenceStore, Version, trusted

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
        self.taints: dict[str, Label] = {}  # the session's taint: level and integrity
        self.floors: dict[str, Integrity] = {}
        self.live: dict[str, object] = {}
        self.count = 0
        self.integrity = has(self.backend, "integrity")

    def reader(self, session) -> Label:
        taint = self.taints[session.id]
        return Label(taint.level, taint.categories, self.floors[session.id])

    def returned(self, session, versions) -> None:
        """A read returned ``versions``: an untrusted one lowers the session, in the model as in the store."""
        if any(not trusted(version) for version in versions if isinstance(version, Version)):
            taint = self.taints[session.id]
            self.taints[session.id] = Label(taint.level, taint.categories, Integrity.UNTRUSTED)

    def teardown(self) -> None:
        self._opened.__exit__(None, None, None)

    @rule(
        target=sessions,
        agent=st.sampled_from(AGENTS),
        taint=levels,
        untrusted=st.booleans(),
        trusted_floor=st.booleans(),
    )
    def start_session(self, agent, taint, untrusted, trusted_floor):
        self.count += 1
        untrusted, trusted_floor = untrusted and self.integrity, trusted_floor and self.integrity
        integrity = Integrity.UNTRUSTED if untrusted else Integrity.TRUSTED
        floor = Integrity.TRUSTED if trusted_floor else Integrity.UNTRUSTED
        session = self.store.session(taint, agent, session_id=f"s{self.count}", integrity=integrity, floor=floor)
        self.taints[session.id] = Label(taint, frozenset(), integrity)
        self.floors[session.id] = floor
        self.live[session.id] = session
        return session

    @rule(session=sessions)
    def lower(self, session):
        if not self.integrity:
            return
        assert session.lower_integrity(source="web:page", reason="test") == Integrity.UNTRUSTED
        taint = self.taints[session.id]
        self.taints[session.id] = Label(taint.level, taint.categories, Integrity.UNTRUSTED)

    @rule(session=sessions, level=levels)
    def escalate(self, session, level):
        current = self.taints[session.id]
        if level < current.level:
            try:
                session.escalate(level)
            except TaintError:
                return
            raise AssertionError("lowering the taint must fail")
        expected = Label(level, frozenset(), current.integrity)  # escalating keeps the integrity
        assert session.escalate(level, reason="test") == expected
        self.taints[session.id] = expected

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
        expected = self.model.effective(session.agent, self.reader(session), key)
        assert (got and as_tuple(got)) == (expected and model_tuple(expected))
        self.returned(session, [expected])

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
        expected = self.model.list(session.agent, self.reader(session), tag)
        assert listed == [model_tuple(v) for v in expected]
        self.returned(session, expected)

    @rule(session=sessions, words=st.lists(st.sampled_from(WORDS + ["what", "is", "my"]), min_size=1, max_size=3))
    def search(self, session, words):
        query = " ".join(words)
        reader = self.reader(session)
        hits = session.memory_search(query, max_results=100)
        assert {hit.memory.key for hit in hits} == self.model.matching_keys(session.agent, reader, query)
        expected = [self.model.effective(session.agent, reader, hit.memory.key) for hit in hits]
        for hit, version in zip(hits, expected, strict=True):
            assert as_tuple(hit.memory) == model_tuple(version)
        scores = [hit.score for hit in hits]
        assert scores == sorted(scores, reverse=True)
        self.returned(session, expected)

    @invariant()
    def taints_are_live(self):
        # Every session reports the taint (and integrity) the model expects: nothing moves it behind our back.
        for session_id, session in self.live.items():
            assert session.taint == self.taints[session_id]
            assert session.floor == self.floors[session_id]

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
