"""LoCoMo as dialog turns: a collection whose documents are short chat messages, where fusion is at risk.

On a collection of real multi-day chats whose documents are turns (issue 22's collection A, which memlab may not
ship), MiniLM alone was weak and reciprocal rank fusion fell below the lexical default. ``load_locomo_turns``
makes the same shape from the bundled LoCoMo (under its licence, ``data/locomo10.LICENSE.txt``), derived when it
is loaded: each conversation is an agent, each dialog turn one memory (keyed by its dialog id, ``D1:3``; its text,
with an image's caption as ``[image: ...]``; tagged with its speaker; ``occurred_at`` its session's date), and
each question of categories 1-4 a query whose relevant documents are the turns its ``evidence`` names.

Examples:
    >>> turns = load_locomo_turns()
    >>> turns.name, turns.documents[2].key, turns.documents[2].tags, turns.documents[2].occurred_at
    ('locomo-turns', 'D1:3', ('caroline',), '2023-05-08T13:56:00')
    >>> summary = turns.summary()
    >>> summary["documents"], summary["queries"], summary["judged_queries"]
    (5882, 1536, 1536)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from memlab.eval.collections import Collection, Document, Query, checked_key
from memlab.eval.locomo import (
    DIALOG_SESSION,
    LOCOMO_CATEGORIES,
    LOCOMO_PATH,
    parse_dia_ids,
    read_locomo,
    session_date,
    wanted_categories,
)

__all__ = ["load_locomo_turns"]


def load_locomo_turns(path: str | Path = LOCOMO_PATH, *, categories: Iterable[int] = LOCOMO_CATEGORIES) -> Collection:
    """LoCoMo's dialog turns as memories and its questions as queries, judged by their evidence (above).

    A document's id is ``"{sample_id}/{dia_id}"``; a query's is ``"{sample_id}/q{index in the qa list}"``, as in
    ``load_locomo``, so the two collections' per-query results line up. A question citing no turn of its
    conversation stays in ``queries`` with no qrels entry (a failure, not dropped).

    Raises:
        CollectionError: the file is missing, is not JSON, or is not laid out like LoCoMo.
        InvalidArgument: a category outside 1-5.
    """
    wanted = wanted_categories(categories)
    documents: list[Document] = []
    queries: list[Query] = []
    qrels: dict[str, dict[str, int]] = {}
    for sample in read_locomo(Path(path)):
        agent = sample["sample_id"]
        turns = {document.key: document for document in _turns(agent, sample.get("conversation", {}))}
        documents.extend(turns.values())
        for index, item in enumerate(sample["qa"]):
            evidence = parse_dia_ids(item.get("evidence", []))
            if item["category"] not in wanted or not evidence:
                continue
            query = Query(f"{agent}/q{index}", agent, item["question"], str(item["category"]))
            queries.append(query)
            relevant = {turns[dia_id].id: 1 for dia_id in sorted(evidence) if dia_id in turns}
            if relevant:
                qrels[query.id] = relevant
    return Collection("locomo-turns", documents, queries, qrels)


def _turns(agent: str, conversation: dict) -> list[Document]:
    found = []
    for name, value in conversation.items():
        session = DIALOG_SESSION.fullmatch(name)
        if session is None or not isinstance(value, list):
            continue
        when = session_date(conversation.get(f"{name}_date_time"))
        for turn in value:
            caption = f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
            speaker = str(turn.get("speaker", "?")).strip().lower().replace(" ", "-")
            for dia_id in sorted(parse_dia_ids(turn.get("dia_id", ""))):
                key = checked_key(dia_id, f"sample {agent}")
                found.append(
                    Document(f"{agent}/{key}", agent, key, f"{turn.get('text', '')}{caption}", (speaker,), None, when)
                )
    return found
