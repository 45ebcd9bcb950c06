"""The LoCoMo loader: each sample's observations as one agent's memories, its questions as queries."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection, CollectionError, Document, Query, checked_key

__all__ = [
    "load_locomo",
    "LOCOMO_PATH",
    "LOCOMO_CATEGORIES",
    "LOCOMO_CATEGORY_NAMES",
    "LOCOMO_AROUND",
    "category_label",
]

LOCOMO_PATH = Path("data") / "locomo10.json"
LOCOMO_CATEGORIES = (1, 2, 3, 4)
LOCOMO_AROUND = 2
LOCOMO_CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""The kind of question each number of the file's ``category`` field stands for. The paper introduces the kinds
in another order (single-hop, multi-hop, temporal, open-domain, adversarial); these follow the authors'
evaluation code (task_eval/evaluation.py scores 1 as multi-hop and 5 as adversarial; gpt_utils.py asks the
questions of 2 for a date) and the questions themselves: most of category 2 begin "When", category 3 asks what
someone would likely do (world knowledge), 4 is the largest (one piece of evidence), 5 has no answer."""

# LoCoMo's dialog ids look like "D1:3", but some are not clean. In questions' evidence: "D8:6; D9:17" and
# "D9:1 D4:4 D4:6" (several ids in one string; four questions), "D:11:26" (a stray colon), "D30:05" (a leading
# zero) and a bare "D". In observations: ten cite a list of ids and five cite several in one string
# ("D26:14, D26:34, D26:42"). So each string is split on ';', ',' and whitespace, each piece is read as
# D<session>:<turn> with the stray colon allowed and the numbers normalised ("D30:05" then matches an
# observation; no observation cites D11:26), and a piece that is no dialog id (the bare "D") is dropped.
_DIA_SEPARATORS = re.compile(r"[;,\s]+")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)_observation")
DIALOG_SESSION = re.compile(r"session_(\d+)")


def load_locomo(
    path: str | Path = LOCOMO_PATH, *, categories: Iterable[int] = LOCOMO_CATEGORIES, around: int = LOCOMO_AROUND
) -> Collection:
    """Load LoCoMo: each sample's observations as one agent's memories, its questions as queries.

    A document is one observation, keyed ``"{speaker}/session-{N}/{i}"`` (speaker lower-cased, spaces as '-';
    ``i`` counts from 1 in that speaker's list for session N), with id ``"{sample_id}/{key}"`` and tags
    ``(speaker, "session-N")``. Its context is what a host saving it would know: ``source`` is the dialog
    turn(s) it cites and the ``around`` turns either side of each (``"Speaker: text"`` per turn, with an
    image's caption), ``occurred_at`` the session's date and time.

    A query is a question of the chosen categories that cites at least one dialog id as evidence, with id
    ``"{sample_id}/q{index in the sample's qa list}"``. An observation is relevant (1) to a question when it cites a
    dialog id of the question's evidence. The bundled file gives 2,541 documents and 1,536 queries of categories
    1-4, of which 224 cite only dialog turns that no observation cites: they stay in ``queries`` with no qrels
    entry, so measures count them as failures rather than dropping them.

    Args:
        path: The LoCoMo JSON file; by default ``data/locomo10.json`` relative to the working directory.
        categories: The question categories to keep (1-5; 5 is adversarial, meant to be unanswerable).
        around: How many dialog turns either side of a cited turn go into its ``source``.

    Returns:
        The collection, named ``"locomo"``.

    Raises:
        CollectionError: the file is missing, is not JSON, or is not laid out like LoCoMo.
        InvalidArgument: a category outside 1-5.

    Examples:
        >>> load_locomo().summary()["queries_per_category"]
        {'1': 282, '2': 321, '3': 92, '4': 841}
    """
    wanted = wanted_categories(categories)
    documents: list[Document] = []
    queries: list[Query] = []
    qrels: dict[str, dict[str, int]] = {}
    for sample in read_locomo(Path(path)):
        agent = sample["sample_id"]
        citing: dict[str, list[str]] = {}  # dialog id -> ids of the observations citing it
        dialog = _Dialog(sample.get("conversation", {}), around)
        for document, dia_ids in _observations(agent, sample["observation"], dialog):
            documents.append(document)
            for dia_id in dia_ids:
                citing.setdefault(dia_id, []).append(document.id)
        for index, item in enumerate(sample["qa"]):
            evidence = parse_dia_ids(item.get("evidence", []))
            if item["category"] not in wanted or not evidence:
                continue
            query = Query(f"{agent}/q{index}", agent, item["question"], str(item["category"]))
            queries.append(query)
            relevant = {doc_id: 1 for dia_id in sorted(evidence) for doc_id in citing.get(dia_id, [])}
            if relevant:
                qrels[query.id] = relevant
    return Collection("locomo", documents, queries, qrels)


def category_label(category: str) -> str:
    """A LoCoMo category as tables show it: its number and its kind.

    Examples:
        >>> category_label("2")
        '2 temporal'
    """
    return f"{category} {LOCOMO_CATEGORY_NAMES[int(category)]}"


def read_locomo(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise CollectionError(
            f"no LoCoMo file at {path}; it is expected at {LOCOMO_PATH} under the project root "
            "(run from there, or pass the path)"
        )
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CollectionError(f"{path} is not a LoCoMo file: {error}") from error
    expected = {"sample_id", "observation", "qa"}
    if not isinstance(samples, list) or not all(isinstance(s, dict) and expected <= s.keys() for s in samples):
        raise CollectionError(f"{path} is not a LoCoMo file: expected a list of samples with {sorted(expected)}")
    return samples


class _Dialog:
    """A LoCoMo conversation's turns in order, and its sessions' dates, for the observations' context."""

    def __init__(self, conversation: dict[str, Any], around: int) -> None:
        self.around = around
        self.turns: dict[str, str] = {}
        self.order: list[str] = []
        self.dates: dict[int, str] = {}
        for name, value in conversation.items():
            session = DIALOG_SESSION.fullmatch(name)
            if session is None or not isinstance(value, list):
                continue
            for turn in value:
                for dia_id in sorted(parse_dia_ids(turn.get("dia_id", ""))):
                    caption = f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
                    self.turns[dia_id] = f"{turn.get('speaker', '?')}: {turn.get('text', '')}{caption}"
                    self.order.append(dia_id)
            when = session_date(conversation.get(f"{name}_date_time"))
            if when is not None:
                self.dates[int(session[1])] = when
        self.position = {dia_id: index for index, dia_id in enumerate(self.order)}

    def source(self, dia_ids: set[str]) -> str | None:
        """The cited turns in dialog order, then the turns around them (each once)."""
        cited = sorted((d for d in dia_ids if d in self.position), key=self.position.__getitem__)
        nearby = [
            self.order[index]
            for dia_id in cited
            for index in range(
                max(0, self.position[dia_id] - self.around),
                min(len(self.order), self.position[dia_id] + self.around + 1),
            )
        ]
        shown = list(dict.fromkeys([*cited, *nearby]))
        return " ".join(self.turns[dia_id] for dia_id in shown) or None


def session_date(text: Any) -> str | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" as ISO 8601; None when absent or unreadable."""
    try:
        return datetime.datetime.strptime(str(text).strip(), "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        return None


def _observations(agent: str, observation: dict[str, Any], dialog: _Dialog) -> Iterator[tuple[Document, set[str]]]:
    for session_name, by_speaker in observation.items():
        session = _SESSION.fullmatch(session_name)
        if session is None:
            raise CollectionError(f"sample {agent}: unexpected observation entry {session_name!r}")
        session_tag = f"session-{int(session[1])}"
        for speaker, observed in by_speaker.items():
            speaker_tag = speaker.strip().lower().replace(" ", "-")
            for number, (text, cited) in enumerate(observed, start=1):
                key = checked_key(f"{speaker_tag}/{session_tag}/{number}", f"sample {agent}")
                cited_ids = parse_dia_ids(cited)
                yield (
                    Document(
                        f"{agent}/{key}",
                        agent,
                        key,
                        text,
                        (speaker_tag, session_tag),
                        dialog.source(cited_ids),
                        dialog.dates.get(int(session[1])),
                    ),
                    cited_ids,
                )


def parse_dia_ids(value: str | list[str]) -> set[str]:
    """The clean dialog ids in one evidence string or a list of them (see the note above ``_DIA_SEPARATORS``)."""
    found = set()
    for text in [value] if isinstance(value, str) else value:
        for piece in _DIA_SEPARATORS.split(text):
            match = _DIA_ID.fullmatch(piece)
            if match:
                found.add(f"D{int(match[1])}:{int(match[2])}")
    return found


def wanted_categories(categories: Iterable[int]) -> set[int]:
    """The LoCoMo question categories asked for, as a set.

    Raises:
        InvalidArgument: none, or one outside 1-5.
    """
    wanted = set(categories)
    if not wanted or not wanted <= {1, 2, 3, 4, 5}:
        raise InvalidArgument(f"categories must be some of 1, 2, 3, 4, 5, not {sorted(wanted, key=str)}")
    return wanted
