"""LangGraph's items as memlab reads them back (``memlab.integrations.langgraph_items``): the value a memory's content
holds, the version's time, classification and integrity beside LangGraph's fields."""

from __future__ import annotations

from datetime import datetime

from langgraph.store.base import Item, SearchItem

from memlab import MemoryStore
from memlab.integrations.langgraph_items import MemlabItem, MemlabSearchItem, item, search_item, value_of


def test_a_memory_reads_as_langgraphs_item_with_its_classification_and_integrity():
    session = MemoryStore().session("CONFIDENTIAL:hr@untrusted", "users/ann")
    memory = session.memory_save("city", '{"text": "Lisbon"}')
    got = item(("users", "ann"), memory)
    assert isinstance(got, Item) and isinstance(got, MemlabItem)
    assert got.value == {"text": "Lisbon"} and got.created_at == got.updated_at == datetime.fromisoformat(
        memory.saved_at
    )
    assert got.dict()["classification"] == "CONFIDENTIAL:hr@untrusted" and got.dict()["integrity"] == "untrusted"
    hit = search_item(("users", "ann"), memory, score=0.5)
    assert isinstance(hit, SearchItem) and isinstance(hit, MemlabSearchItem) and hit.score == 0.5
    assert hit.integrity is got.integrity


def test_content_that_is_not_a_json_object_reads_as_its_text():
    assert value_of("plain words") == {"content": "plain words"}
    assert value_of("[1, 2]") == {"content": "[1, 2]"} and value_of('{"a": 1}') == {"a": 1}
