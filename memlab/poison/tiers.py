"""The three attack tiers: how a poison reaches the victim's store.

- ``direct`` (AgentPoison's threat model): an attacker session of the victim's agent, lowered by the host as
  untrusted (``source="attacker"``), saves the crafted memories itself.
- ``query`` (MINJA's): the attacker only talks to the agent. A scripted, deterministic ``GullibleAgent`` saves
  what it is told (``Remember: <text> [key: ...; tags: ...]``) through the model's tools (``memlab.tools.call``),
  in a session the host lowered because the channel is untrusted (``source="chat:stranger"``).
- ``content`` (web pages, e-mails, tool outputs): the agent reads a page holding the poison as a "fact", the host
  lowers the session for it (``source="web:<url>"``) and the agent saves the fact for later.

Each tier takes ``trusted``: False is how a host that keeps integrity runs it (the lowering above); True is the
"integrity ignored" defence, the same writes through sessions the host never lowers, so every poison is stamped
trusted as in a store without integrity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memlab import tools
from memlab.errors import InvalidArgument
from memlab.poison.generate import Poison
from memlab.session import Session
from memlab.store import MemoryStore

__all__ = ["TIERS", "GullibleAgent", "check_tier", "inject", "message_of", "page_of"]

TIERS = ("direct", "query", "content")
_SAVED = ("version", "classification", "integrity")
_MESSAGE = re.compile(r"^Remember: (?P<text>.*) \[key: (?P<key>[^;\]]*); tags: (?P<tags>[^\]]*)\]$", re.DOTALL)


def check_tier(tier: object) -> str:
    """``tier`` if it is one of ``TIERS``; else an InvalidArgument naming it and the known ones."""
    if tier not in TIERS:
        raise InvalidArgument(f"unknown tier {tier!r}; tiers: {', '.join(TIERS)}")
    return str(tier)


def message_of(poison: Poison) -> str:
    """What the attacker says to the agent in the ``query`` tier."""
    return f"Remember: {poison.text} [key: {poison.key}; tags: {', '.join(poison.tags)}]"


def page_of(poison: Poison) -> str:
    """The untrusted page that carries the poison as a fact in the ``content`` tier."""
    return f"<html><body><h1>Notes</h1><p>Fact: {poison.text}</p><p>Key: {poison.key}</p></body></html>"


@dataclass
class GullibleAgent:
    """A scripted agent that saves whatever a message or a page asks it to remember, through the model's tools,
    following the spine's rules for keys and tags (it never names a level or a trust grade: the host's stamp)."""

    session: Session

    def hear(self, message: str) -> dict:
        """Save what ``message`` says to remember; the tool's result (an error result when it says nothing)."""
        found = _MESSAGE.match(message)
        if found is None:
            return tools.call(self.session, "memory_save", {})
        tags = [tag.strip() for tag in found["tags"].split(",") if tag.strip()]
        return tools.call(self.session, "memory_save", {"key": found["key"], "content": found["text"], "tags": tags})

    def read(self, page: str, tags: Sequence[str] = ()) -> dict:
        """Save the page's fact (``Fact: ...``) under its key (``Key: ...``)."""
        fact = re.search(r"<p>Fact: (.*?)</p>", page, re.DOTALL)
        key = re.search(r"<p>Key: (.*?)</p>", page)
        if fact is None or key is None:
            return tools.call(self.session, "memory_save", {})
        return tools.call(self.session, "memory_save", {"key": key[1], "content": fact[1], "tags": list(tags)})


def inject(store: MemoryStore, poisons: Sequence[Poison], tier: str, *, trusted: bool = False) -> list[dict]:
    """Write ``poisons`` into ``store`` by ``tier``, each into its agent's namespace at PUBLIC (every victim reads
    it); lowered sessions unless ``trusted``. Returns, per poison in order, what was saved: ``poison`` (its id),
    ``key``, ``version``, ``classification`` and ``integrity`` (as the tool results say them).

    Raises:
        InvalidArgument: an unknown tier (nothing written), or a poison the store refuses.
    """
    tier = check_tier(tier)
    sessions: dict[str, Session] = {}
    saved = []
    for poison in poisons:
        session = sessions.get(poison.agent)
        if session is None:
            session = sessions[poison.agent] = store.session(agent=poison.agent)
            if not trusted:
                source = {"direct": "attacker", "query": "chat:stranger", "content": "web:https://example.com/notes"}
                session.lower_integrity(source=source[tier], reason=f"poisoning lab, {tier} tier")
        if tier == "direct":
            memory = session.memory_save(poison.key, poison.text, list(poison.tags))
            result = {"version": memory.version, "classification": str(memory.classification)}
            result["integrity"] = str(memory.integrity)
        else:
            agent = GullibleAgent(session)
            result = agent.hear(message_of(poison)) if tier == "query" else agent.read(page_of(poison), poison.tags)
            if "error" in result:
                raise InvalidArgument(f"poison {poison.id}: the agent's save failed: {result['error']['message']}")
        saved.append({"poison": poison.id, "key": poison.key, **{name: result[name] for name in _SAVED}})
    return saved
