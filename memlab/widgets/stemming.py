"""The stemming lab: what each analyzer makes of words, and what it finds on a collection, side by side.

``analyze_table`` shows the index terms (stems) each analyzer produces for a text, or the search terms of a
query; ``top_results`` asks each analyzer's store the same question on one agent's memories of a collection.
Stores are built once per (collection, analyzer, agent) and cached: one LoCoMo conversation loads in well
under a second per analyzer.

Examples:
    >>> analyze_table("Running runners ran", ["none", "snowball"])["snowball"].tolist()
    ['run', 'runner', 'ran']
"""

from __future__ import annotations

import html
from collections import OrderedDict
from collections.abc import Sequence

import ipywidgets as widgets
import pandas as pd

from memlab.errors import InvalidArgument, MemlabError
from memlab.eval.collections import Collection
from memlab.eval.stemstats import words_of
from memlab.search import analyzers as registry
from memlab.search.query import query_terms
from memlab.session import Session
from memlab.store import MemoryStore
from memlab.widgets.render import Panel, alert, highlight, html_table

__all__ = ["DEFAULT_ANALYZERS", "analyze_table", "indexed_session", "top_results", "results_html", "StemmingLab"]

DEFAULT_ANALYZERS = ("none", "porter", "trigram", "snowball", "lancaster", "simplemma")
_CACHED = 32  # stores kept; the oldest is closed beyond that
_INDEXES: OrderedDict[tuple[int, str, str], tuple[Collection, MemoryStore, Session]] = OrderedDict()


def _terms(analyzer: registry.Analyzer, words: list[str]) -> list[str]:
    """Each word's index terms (space-separated when several, as trigrams are)."""
    made = analyzer.word_terms(words)
    return [made[word] for word in words]


def analyze_table(text: str, analyzers: Sequence[str] = DEFAULT_ANALYZERS, *, query: bool = False) -> pd.DataFrame:
    """One row per distinct word of ``text``, one column per analyzer: the term(s) it indexes or searches.

    Args:
        text: the text (or query).
        analyzers: registry names.
        query: treat ``text`` as a search query: stopwords are dropped as ``memory_search`` drops them.
    Raises:
        InvalidArgument: an unknown analyzer.

    Examples:
        >>> analyze_table("What is my name?", ["porter"], query=True).index.tolist()
        ['name']
    """
    words = query_terms(text) if query else list(dict.fromkeys(words_of(text)))
    frame = pd.DataFrame(index=pd.Index(words, name="word", dtype=object))
    for name in analyzers:
        frame[name] = _terms(registry.get(name), words) if words else []
    return frame


def _agent(collection: Collection, agent: str | None) -> str:
    agents = list(dict.fromkeys(document.agent for document in collection.documents))
    if agent is None and agents:
        return agents[0]
    if agent not in agents:
        raise InvalidArgument(f"collection {collection.name!r} has no documents for agent {agent!r}; it has {agents}")
    return agent


def indexed_session(collection: Collection, analyzer: str, agent: str | None = None) -> Session:
    """A session on an in-memory store holding ``agent``'s documents of ``collection``, indexed by ``analyzer``.

    Built on first use and cached per (collection, analyzer, agent); ``agent`` defaults to the first one.

    Examples:
        >>> indexed_session(load_trec("tests/fixtures/trec-tiny"), "snowball").agent
        'main'
    """
    agent = _agent(collection, agent)
    cache_key = (id(collection), registry.get(analyzer).name, agent)
    if cache_key in _INDEXES:
        _INDEXES.move_to_end(cache_key)
        return _INDEXES[cache_key][2]
    store = MemoryStore(analyzer=analyzer)
    session = store.session(agent=agent, session_id="stemming-lab")
    for document in collection.documents:
        if document.agent == agent:
            session.memory_save(document.key, document.text, tags=list(document.tags))
    _INDEXES[cache_key] = (collection, store, session)  # the collection is kept, so its id stays its own
    while len(_INDEXES) > _CACHED:
        _INDEXES.popitem(last=False)[1][1].close()
    return session


def _relevant_keys(collection: Collection, query: str, agent: str) -> set[str] | None:
    """Keys judged relevant when ``query`` is one of the agent's collection queries (by text), else None."""
    ids = [q.id for q in collection.queries if q.agent == agent and q.text.strip() == query.strip()]
    if not ids:
        return None
    relevant = {doc_id for query_id in ids for doc_id in collection.qrels.get(query_id, {})}
    return {document.key for document in collection.documents if document.agent == agent and document.id in relevant}


def top_results(
    collection: Collection,
    query: str,
    analyzers: Sequence[str] = DEFAULT_ANALYZERS,
    *,
    agent: str | None = None,
    k: int = 5,
) -> dict[str, pd.DataFrame]:
    """Each analyzer's top ``k`` results for ``query`` on ``agent``'s memories of ``collection``.

    Returns:
        Analyzer name -> a frame with ``rank``, ``key``, ``score``, ``snippet`` (matched words ``**marked**``),
        ``highlighted`` (the snippet as HTML, matches in ``<mark>``) and ``relevant`` (True/False by the
        collection's judgments when ``query`` is one of its queries for the agent, else None).

    Examples:
        >>> top_results(load_trec("tests/fixtures/trec-tiny"), "runs", ["porter"], k=1)["porter"].key[0]
        'run-shoes'
    """
    agent = _agent(collection, agent)
    relevant = _relevant_keys(collection, query, agent)
    results = {}
    for name in analyzers:
        hits = indexed_session(collection, name, agent).memory_search(query, max_results=k)
        rows = [
            {
                "rank": rank,
                "key": hit.memory.key,
                "score": round(hit.score, 3),
                "snippet": hit.snippet,
                "highlighted": highlight(hit.snippet),
                "relevant": None if relevant is None else hit.memory.key in relevant,
            }
            for rank, hit in enumerate(hits, start=1)
        ]
        results[name] = pd.DataFrame(rows, columns=["rank", "key", "score", "snippet", "highlighted", "relevant"])
    return results


def _marked_terms(frame: pd.DataFrame, searched: pd.DataFrame) -> str:
    """The text's terms as HTML, a term in ``<mark>`` where the query searches for it with that analyzer."""

    def cells(column: str):
        wanted = {term for cell in searched.get(column, []) for term in cell.split()}
        return lambda cell: " ".join(
            f"<mark>{html.escape(term)}</mark>" if term in wanted else html.escape(term) for term in cell.split()
        )

    return html_table(frame.reset_index(), cells={name: cells(name) for name in frame.columns}, empty="no words")


def results_html(results: dict[str, pd.DataFrame]) -> str:
    """``top_results`` side by side: one small table per analyzer, matches highlighted, relevant ones ticked."""
    columns = []
    for name, frame in results.items():
        shown = frame[["rank", "key", "highlighted", "score"]].rename(columns={"highlighted": "snippet"})
        if frame["relevant"].notna().any():
            shown.insert(2, "rel", frame["relevant"].map({True: "✔", False: ""}))
        table = html_table(shown, cells={"snippet": str}, empty="no result")
        title = f"<b>{html.escape(name)}</b> <small>{html.escape(registry.get(name).description)}</small>"
        columns.append(f'<div style="flex:1 1 320px;min-width:280px;margin:4px">{title}{table}</div>')
    return f'<div style="display:flex;flex-wrap:wrap">{"".join(columns)}</div>'


class StemmingLab(Panel):
    """A query box and a text box: terms per analyzer, and each analyzer's top results on a collection.

    Args:
        collection: e.g. ``memlab.eval.load_locomo()``; each agent (LoCoMo conversation) is indexed on its own.
        analyzers: analyzers picked at first (any registered one can be picked).
        agent: the agent (conversation) shown first.

    Attributes:
        agent: the agent (conversation) whose memories are searched.
        question: the agent's collection queries; picking one fills the query.
        query: the query searched.
        text: a text whose terms each analyzer shows.
        analyzers: the analyzers compared.
        k: how many results each analyzer shows.
        run_button: runs the comparison.
        terms: the terms each analyzer makes of the text (HTML).
        results: each analyzer's top results, matched words highlighted (HTML).

    Examples:
        >>> lab = StemmingLab(load_trec("tests/fixtures/trec-tiny"), analyzers=["none", "porter"])
        >>> lab.query.value = "runs"; lab.run_button.click()
        >>> "run-shoes" in lab.results.value
        True
    """

    def __init__(
        self, collection: Collection, analyzers: Sequence[str] = DEFAULT_ANALYZERS, agent: str | None = None
    ) -> None:
        self.collection = collection
        agents = list(dict.fromkeys(document.agent for document in collection.documents))
        self.agent = widgets.Dropdown(options=agents, value=_agent(collection, agent), description="agent")
        self.question = widgets.Dropdown(description="question", layout=widgets.Layout(width="600px"))
        self.query = widgets.Text(description="query", layout=widgets.Layout(width="600px"))
        self.text = widgets.Textarea(description="text", layout=widgets.Layout(width="600px", height="60px"))
        self.analyzers = widgets.SelectMultiple(
            options=registry.names(), value=tuple(analyzers), description="analyzers", rows=6
        )
        self.k = widgets.IntSlider(value=5, min=1, max=20, description="top k")
        self.run_button = widgets.Button(description="run", button_style="primary")
        self.run_button.on_click(lambda _: self.run())
        self.terms, self.results = widgets.HTML(), widgets.HTML()
        self.agent.observe(lambda _: self._agent_changed(), names="value")
        self.question.observe(lambda change: self._question_picked(change["new"]), names="value")
        inputs = widgets.VBox([self.agent, self.question, self.query, self.text, self.k, self.run_button])
        self.widget = widgets.VBox([widgets.HBox([inputs, self.analyzers]), self.terms, self.results])
        self._agent_changed()

    def _agent_changed(self) -> None:
        queries = [q for q in self.collection.queries if q.agent == self.agent.value]
        self.question.options = [("(type your own)", "")] + [(q.text[:90], q.text) for q in queries]
        self.question.value = ""
        first = next(d for d in self.collection.documents if d.agent == self.agent.value)
        self.text.value = first.text

    def _question_picked(self, text: str) -> None:
        if text:
            self.query.value = text

    def run(self) -> None:
        """Analyze the query and the text, and search the collection with every picked analyzer."""
        names = list(self.analyzers.value)
        searched = analyze_table(self.query.value, names, query=True)
        self.terms.value = (
            "<b>query terms</b>"
            + html_table(searched.reset_index(), empty="no search words")
            + "<b>text terms</b> (marked where the query matches)"
            + _marked_terms(analyze_table(self.text.value, names), searched)
        )
        try:
            found = top_results(self.collection, self.query.value, names, agent=self.agent.value, k=self.k.value)
            self.results.value = results_html(found)
        except MemlabError as error:
            self.results.value = alert(str(error))
