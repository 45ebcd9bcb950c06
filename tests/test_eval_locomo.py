"""memlab.eval.locomo: reading LoCoMo — its messy dialog ids, session dates, observations with their context,
questions and judgments — from a small file written here. The bundled file's counts are its doctests'."""

from __future__ import annotations

import json

import pytest

from memlab.errors import InvalidArgument
from memlab.eval.collections import CollectionError
from memlab.eval.locomo import category_label, load_locomo, parse_dia_ids, session_date, wanted_categories


@pytest.mark.parametrize(
    ("value", "ids"),
    [
        ("D1:3", {"D1:3"}),
        ("D8:6; D9:17", {"D8:6", "D9:17"}),
        ("D9:1 D4:4 D4:6", {"D9:1", "D4:4", "D4:6"}),
        ("D:11:26", {"D11:26"}),
        ("D30:05", {"D30:5"}),
        ("D", set()),
        (["D26:14, D26:34", "D1:1"], {"D26:14", "D26:34", "D1:1"}),
    ],
)
def test_parse_dia_ids_reads_locomos_messy_evidence(value, ids):
    assert parse_dia_ids(value) == ids


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00"),
        ("12:05 am on 1 January, 2024", "2024-01-01T00:05:00"),
        ("yesterday", None),
        (None, None),
    ],
)
def test_session_date(text, iso):
    assert session_date(text) == iso


def test_categories():
    assert category_label("5") == "5 adversarial"
    assert wanted_categories([1, 1, 4]) == {1, 4}
    for wrong in ([], [0], [6]):
        with pytest.raises(InvalidArgument, match="some of 1, 2, 3, 4, 5"):
            wanted_categories(wrong)


SAMPLE = {
    "sample_id": "conv-1",
    "conversation": {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hi Mel!"},
            {"speaker": "Mel", "dia_id": "D1:2", "text": "I ran a marathon.", "blip_caption": "a medal"},
            {"speaker": "Caroline", "dia_id": "D1:3", "text": "Well done."},
            {"speaker": "Mel", "dia_id": "D1:4", "text": "Thanks."},
        ],
    },
    "observation": {"session_1_observation": {"Mel Smith": [["Mel ran a marathon.", "D1:2"]]}},
    "qa": [
        {"question": "What did Mel run?", "evidence": ["D1:2"], "category": 4},
        {"question": "Who said hi?", "evidence": ["D1:1"], "category": 1},
        {"question": "Unanswerable?", "evidence": ["D1:2"], "category": 5},
        {"question": "No evidence?", "evidence": [], "category": 4},
    ],
}


@pytest.fixture
def locomo(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]))
    return path


def test_an_observation_becomes_a_memory_with_its_context(locomo):
    # Guards: locomo._Dialog.source dropping the turns around the cited one (the context then one turn only).
    (document,) = load_locomo(locomo, around=1).documents
    assert (document.id, document.agent, document.key) == (
        "conv-1/mel-smith/session-1/1",
        "conv-1",
        "mel-smith/session-1/1",
    )
    assert document.tags == ("mel-smith", "session-1")
    assert document.source == "Mel: I ran a marathon. [image: a medal] Caroline: Hi Mel! Caroline: Well done."
    assert document.occurred_at == "2023-05-08T13:56:00"


def test_questions_with_evidence_in_the_chosen_categories_are_the_queries(locomo):
    collection = load_locomo(locomo)
    assert [(query.id, query.category) for query in collection.queries] == [("conv-1/q0", "4"), ("conv-1/q1", "1")]
    assert collection.qrels == {"conv-1/q0": {"conv-1/mel-smith/session-1/1": 1}}  # q1's turn no observation cites
    assert [query.id for query in load_locomo(locomo, categories=[5]).queries] == ["conv-1/q2"]


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no LoCoMo file"), ("{not json", "is not a LoCoMo file"), ('[{"sample_id": "x"}]', "expected a list")],
)
def test_a_missing_or_malformed_file_is_refused(tmp_path, content, message):
    path = tmp_path / "locomo.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CollectionError, match=message):
        load_locomo(path)
