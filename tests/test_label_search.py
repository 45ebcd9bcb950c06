"""One search path for levels and labels: a search at a categorised label ranks its view's own index through the
same choice of index, ranking and second gate as a search at a level, lexical, dense and hybrid alike."""

from __future__ import annotations

import sqlite3

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from memlab import IntegrityError, MemoryStore, Ranking, tools
from memlab.labels import Label, reader
from memlab.storage.fts_tables import indexed_columns
from memlab.storage.label_codes import view_table
from tests.backends import WordsEmbedder

HR, LEGAL, BOTH = "CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal"
TAINTS = ["PUBLIC", "INTERNAL", "CONFIDENTIAL", "INTERNAL:hr", HR, LEGAL, BOTH, "RESTRICTED:hr,legal"]
WORDS = ["apple", "pear", "plum"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    saves=st.lists(
        st.tuples(st.sampled_from(TAINTS), st.sampled_from(["a", "b", "c"]), st.sampled_from(WORDS)), max_size=12
    ),
    word=st.sampled_from(WORDS),
)
def test_a_search_at_any_level_or_label_finds_exactly_the_matching_versions_of_its_view(saves, word):
    """A search at every taint, level or label, returns exactly the versions of its effective view whose content
    holds the word (each key once, the version the view shows), whatever was saved at which label before.

    Guards: ``LexicalSearch._indexes`` answering a categorised label with the index of its level
    (``fts_table(agent_id, taint.level)`` and its level's view: the search then finds none of the label's own
    versions, or shows its level's), seen failing."""
    store = MemoryStore()
    for taint, key, content in saves:
        store.session(taint=taint).memory_save(key, f"{content} from {key}")
    for taint in TAINTS:
        session = store.session(taint=taint)
        expected = sorted(memory.ref() for memory in session.memory_list() if word in memory.content)
        found = [hit.memory.ref() for hit in session.memory_search(word, max_results=50)]
        assert sorted(found) == expected, taint
        assert len({ref.split("@")[0] for ref in found}) == len(found)


def _tampered(store: MemoryStore) -> str:
    """Put the legal version's rowid into the index of the hr view, as an attacker with the file could; the name
    of that index."""
    storage = store.storage
    agent_id = storage.conn.execute("SELECT id FROM agents WHERE name = 'main'").fetchone()[0]
    table = view_table(agent_id, reader(Label.parse(HR)))  # the view of a session reading every grade
    columns = ", ".join(indexed_columns(storage.analyzer))
    storage.conn.execute(
        f'INSERT INTO "{table}" (rowid, {columns}) SELECT id, {columns} FROM memories WHERE classification = ?',
        (LEGAL,),
    )
    return table


@pytest.mark.parametrize("ranking", [Ranking(), Ranking.hybrid()], ids=["lexical", "hybrid"])
def test_a_label_views_index_made_to_read_across_fails_the_search_closed(ranking):
    """An hr session's search through an index holding a legal version (written under SQL) fails closed, names the
    index and shows nothing of the legal memory, through the tool layer as an error; lexical and hybrid alike.

    Guards: ``LexicalSearch._indexes`` giving a categorised label its level's view (``int(taint.level)``: the
    search then fails inside, not as the second gate's refusal), and SqliteStorage.search without its
    ``check_in_view`` (the legal hit is then shown): both seen failing."""
    store = MemoryStore(embedder=WordsEmbedder(), ranking=ranking)
    store.session(taint=HR).memory_save("review", "apple review of the hr team")
    hr = store.session(taint=HR)
    assert [hit.memory.key for hit in hr.memory_search("apple")] == ["review"]  # the hr view's index is made
    store.session(taint=LEGAL).memory_save("case", "apple lawsuit settled in secret")
    table = _tampered(store)
    with pytest.raises(IntegrityError, match=f"{table}.*memlab verify"):
        hr.memory_search("apple")
    result = tools.call(hr, "memory_search", {"query": "apple"})
    assert result["error"]["code"] == "integrity_error" and "lawsuit" not in str(result)
    assert store.audit()["outcome"].tolist()[-2:] == ["integrity_error", "integrity_error"]


def test_dense_search_at_a_label_never_ranks_another_compartments_vectors():
    """Dense search at hr ranks the hr view's vectors only: a legal memory nearest to the query (every word shared)
    is not returned, while it is at the label above both.

    Guards: SqliteStorage.search giving ``VectorSearch.dense`` the label's level (``int(Label.parse(taint).level)``)
    as the view: the CONFIDENTIAL view then holds nothing of hr and the search finds nothing; seen failing."""
    store = MemoryStore(embedder=WordsEmbedder(), ranking=Ranking.dense_only())
    store.session(taint=HR).memory_save("review", "apple pear review")
    store.session(taint=LEGAL).memory_save("case", "apple pear plum")
    hr, both = store.session(taint=HR), store.session(taint=BOTH)
    assert [hit.memory.key for hit in hr.memory_search("apple pear plum")] == ["review"]
    assert [hit.memory.key for hit in both.memory_search("apple pear plum")][0] == "case"


def test_a_search_at_a_label_an_agent_never_used_finds_nothing_and_writes_only_its_audit(tmp_path):
    """A search at a label by an agent with no memories answers nothing and makes no view (nothing of the label is
    written but the call's audit row)."""
    path = tmp_path / "store.db"
    with MemoryStore(path) as store:
        assert store.session(taint=HR, agent="nobody").memory_search("apple") == []
        assert store.audit()["outcome"].tolist() == ["ok"]
    tables = [row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert not any(name.startswith("fts_") for name in tables) and "label_views" not in tables
