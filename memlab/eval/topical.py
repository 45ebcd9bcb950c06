"""LoCoMo re-tagged with topics: a collection whose tags are topical words the questions use, not names.

The tag boost was tuned where tags are names (LoCoMo's speakers); on collections whose tags are topical words
that also occur in the questions it hurt (issue 22). ``retag_topical`` makes such a collection from the bundled
LoCoMo, so the rule deciding when the boost fires is measured on data memlab ships (under LoCoMo's licence,
``data/locomo10.LICENSE.txt``): each observation keeps its key, text, context and ``session-N`` tag, and in
place of its speaker's name it is tagged with at most ``per_memory`` words of its own text that the most of
its conversation's questions use, leaving out its speakers' names and the words of a question's frame
(those in over a tenth of the conversation's questions: "about", "after", "last"). Queries and judgments are
LoCoMo's.

Examples:
    >>> from memlab.eval import load_locomo
    >>> topical = retag_topical(load_locomo())
    >>> topical.name, topical.documents[0].tags
    ('locomo-topical', ('session-1', 'group', 'lgbtq'))
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict

from memlab.eval.collections import Collection
from memlab.search.query import STOPWORDS, words

__all__ = ["retag_topical"]


def retag_topical(collection: Collection, *, per_memory: int = 2) -> Collection:
    """``collection`` with each document's one-word tags replaced by the topical words of its text (above)."""
    asked: dict[str, Counter[str]] = defaultdict(Counter)
    questions: Counter[str] = Counter()
    for query in collection.queries:
        asked[query.agent].update(set(words(query.text)) - STOPWORDS)
        questions[query.agent] += 1
    names: dict[str, set[str]] = defaultdict(set)
    for document in collection.documents:
        names[document.agent] |= {tag.lower() for tag in document.tags if words(tag) == [tag.lower()]}
    documents = []
    for document in collection.documents:
        counts, speakers, frame = asked[document.agent], names[document.agent], questions[document.agent] / 10
        candidates = {word for word in words(document.text) if 0 < counts[word] <= frame and word not in speakers}
        topics = sorted(candidates, key=lambda word: (-counts[word], word))[:per_memory]
        kept = tuple(tag for tag in document.tags if words(tag) != [tag.lower()])
        documents.append(dataclasses.replace(document, tags=kept + tuple(sorted(topics))))
    return Collection(f"{collection.name}-topical", documents, list(collection.queries), dict(collection.qrels))
