"""Tables and charts of an experiment's results, for the terminal, notebooks and files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from memlab.eval.collections import Collection
from memlab.eval.measures import LABELS
from memlab.eval.runner import Results
from memlab.eval.stemstats import disagreements, fts5_stems, vocabulary, words_of
from memlab.search import analyzers as registry

__all__ = [
    "collection_summary",
    "LEGEND",
    "legend",
    "measures_table",
    "analyzer_labels",
    "stemming_table",
    "write",
    "chart",
    "draw_measures",
]


def collection_summary(collection: Collection) -> str:
    """What a collection holds, in two lines: documents, agents, queries, judged queries, then its categories.

    Examples:
        >>> from memlab.eval import load_trec
        >>> print(collection_summary(load_trec("tests/fixtures/trec-agents")))
        trec-agents: 11 documents in 3 agents, 8 queries (8 judged: with a relevant document)
          categories: open-domain 1, single-hop 4, temporal 2 (1 query without one)
    """
    summary = collection.summary()
    agents, queries = summary["agents"], summary["queries"]
    first = (
        f"{collection.name}: {summary['documents']} documents in {agents} agent{'s' * (agents != 1)}, "
        f"{queries} quer{'ies' if queries != 1 else 'y'} ({summary['judged_queries']} judged: with a relevant document)"
    )
    per_category = summary["queries_per_category"]
    if not per_category:
        return f"{first}; no categories"
    without = queries - sum(per_category.values())
    counted = ", ".join(f"{category} {count}" for category, count in per_category.items())
    left = f" ({without} quer{'ies' if without != 1 else 'y'} without one)" if without else ""
    return f"{first}\n  categories: {counted}{left}"


LEGEND: dict[str, str] = {
    "S@k": "success at k: the share of queries with at least one relevant memory in the first k results",
    "R@k": "recall at k: the share of a query's relevant memories in its first k results, averaged over queries",
    "nDCG@10": "normalised discounted cumulative gain at 10: each relevant memory's grade (the qrels' relevance) "
    "divided by log2(rank + 1), summed over the first 10 and divided by the best order's sum, averaged",
    "MAP": "mean average precision: for each query, the precision at the rank of each of its relevant memories "
    "(0 for one not retrieved), averaged over them; then over queries",
    "MRR": "mean reciprocal rank: 1 / the rank of a query's first relevant memory (0 when none is retrieved), "
    "averaged over queries",
    "* / **": "p < 0.05 / p < 0.01 against the baseline row, paired randomization test (10,000 sign flips)",
    "context": "yes when the row indexes a memory's source and occurred_at as weighted columns",
    "index_vs_baseline": "the row's indexing seconds divided by the baseline row's (2.0: twice as long to index)",
    "carried": "for a fused row (hybrid), the share of queries whose first result took the larger part of its "
    "score from FTS5's ranking (lexical) or the dense one",
}
"""What each measure and column of ``memlab eval``'s tables means, as its legend prints it (ir-measures' and
pytrec_eval's definitions; a memory is relevant when the qrels judge it with relevance > 0)."""


def legend(baseline: str, width: int = 100) -> str:
    """The legend ``memlab eval`` ends with, wrapped to ``width``: each measure and what it means, then the page to
    read.

    Examples:
        >>> print(legend("porter", 80).splitlines()[1])
          S@k                success at k: the share of queries with at least one
    """
    import textwrap

    lines = [f"What the columns mean ({baseline} is the baseline row; a measure is a mean over the queries asked):"]
    for name, meaning in LEGEND.items():
        lines += textwrap.wrap(
            meaning, width, initial_indent=f"  {name:<18} ", subsequent_indent=" " * 21, break_on_hyphens=False
        )
    lines += textwrap.wrap(
        "Read docs/relevance-lab.md: how the rows are built, the collections, and what the figures say.", width
    )
    return "\n".join(lines)


def measures_table(results: Results) -> pd.DataFrame:
    """Every measure per row, three decimals, with significance marks against the baseline.

    ``*`` p < 0.05 and ``**`` p < 0.01 (paired randomization test) after S@10, nDCG@10 and MRR.
    """
    table = results.summary[list(LABELS.values())].map(lambda value: f"{value:.3f}")
    for measure, comparison in results.comparisons.items():
        table[measure] = table[measure] + comparison["sig"].reindex(table.index).fillna("")
    table.insert(0, "analyzer", analyzer_labels(results))
    table.insert(1, "context", results.summary["context"])
    return table


def analyzer_labels(results: Results) -> pd.Series:
    """Per row, what matches its queries to the memories: the analyzer; the embedder for a dense row (its store
    has an analyzer, but its ranking never reads the lexical side); both for a hybrid (``porter+minilm``).

    Examples:
        >>> from memlab.eval import Results
        >>> analyzer_labels(Results.load("data/results/locomo"))[["memlab", "dense", "hybrid"]].tolist()
        ['porter', 'minilm', 'porter+minilm']
    """
    labels = {}
    for row, analyzer in results.summary["analyzer"].items():
        described = results.configurations.get(row, {})
        embedder = described.get("embedder")
        if embedder is None or not described.get("dense"):
            labels[row] = analyzer
        elif not described.get("lexical"):
            labels[row] = embedder
        else:
            labels[row] = f"{analyzer}+{embedder}"
    return pd.Series(labels, name="analyzer").reindex(results.summary.index)


def _stemmer(name: str, words: set[str]) -> Callable[[str], str] | None:
    analyzer = registry.get(name)
    if analyzer.tokenize == "trigram":
        return None  # trigram indexes substrings: it has no stems
    return analyzer.word_terms(words).__getitem__


def stemming_table(results: Results, collection: Collection, measure: str = "S@10") -> pd.DataFrame:
    """Per row: its analyzer's vocabulary before and after stemming, mean conflation class size, the words on
    which it disagrees with FTS5's porter, and per-query wins and losses against the baseline on ``measure``."""
    texts = [document.text for document in collection.documents]
    words = {word for text in texts for word in words_of(text)}
    fts5 = fts5_stems(words)
    comparison = results.comparisons.get(measure)
    rows = []
    for name, analyzer in results.summary["analyzer"].items():
        stem = _stemmer(analyzer, words)
        row: dict[str, object] = {"row": name, "analyzer": analyzer}
        if stem is not None:
            stats = vocabulary(texts, stem)
            differ = disagreements(words, fts5.__getitem__, stem)
            row |= {
                "words": stats["words"],
                "stems": stats["stems"],
                "mean class": round(stats["mean_class_size"], 3),
                "differs from FTS5 porter": len(differ),
                "e.g.": ", ".join(f"{r.word}:{r.a}/{r.b}" for r in differ.head(3).itertuples()),
            }
        if comparison is not None:
            row |= {
                f"wins {measure}": comparison.loc[name, "wins"],
                f"losses {measure}": comparison.loc[name, "losses"],
            }
        rows.append(row)
    table = pd.DataFrame(rows).set_index("row")
    counts = [column for column in table.columns if column in ("words", "stems", "differs from FTS5 porter")]
    return table.astype({column: "Int64" for column in counts}).fillna({"e.g.": ""})


def chart(results: Results, path: Path, measures: tuple[str, ...] = ("S@1", "S@5", "S@10", "nDCG@10")) -> Path:
    """A bar chart of ``measures`` per row with 95% bootstrap confidence intervals, saved as PNG."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(max(8, len(results.summary.index) * 1.1), 4.5), layout="tight")
    draw_measures(figure.subplots(), results, measures)
    figure.savefig(path, dpi=110, facecolor="white")  # a file is seen on its own: on white, whatever the viewer
    return path


def draw_measures(axis, results: Results, measures: tuple[str, ...] = ("S@1", "S@5", "S@10", "nDCG@10")) -> None:
    """Draw ``chart``'s bars of ``measures`` per row, with 95% bootstrap confidence intervals, on a matplotlib axis."""
    import matplotlib

    from memlab.eval.measures import confidence_interval

    names = list(results.summary.index)
    width = 0.8 / len(measures)
    for offset, measure in enumerate(measures):
        means, lows, highs = [], [], []
        compared = results.comparisons.get(measure)  # its intervals are computed already
        for name in names:
            values = results.per_query.loc[results.per_query["row"] == name, measure]
            if compared is not None:
                low, high = compared.loc[name, "ci_low"], compared.loc[name, "ci_high"]
            else:
                low, high = confidence_interval(values.to_numpy())
            means.append(values.mean())
            lows.append(values.mean() - low)
            highs.append(high - values.mean())
        positions = [index + (offset - (len(measures) - 1) / 2) * width for index in range(len(names))]
        # Error bars in the text's colour (matplotlib's default is black, unseen on a dark page).
        ink = matplotlib.rcParams["text.color"]
        axis.bar(positions, means, width, yerr=[lows, highs], capsize=2, ecolor=ink, label=measure)
    axis.set_xticks(range(len(names)), names, rotation=30, ha="right")
    axis.set_ylabel("mean over queries (95% CI)")
    axis.set_title(f"Search configurations on {results.collection}: {len(results.per_query) // len(names)} queries")
    axis.set_ylim(0, 1)
    axis.legend(ncols=len(measures), loc="upper left")


def write(results: Results, collection: Collection, folder: Path) -> list[Path]:
    """Write CSVs (per query, summary, per category when queries carry categories, timings, stemming), what each row was
    (``configurations.json``) and the chart into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    by_category = results.by_category()
    files = {
        "per_query.csv": results.per_query,
        "summary.csv": results.summary,
        **({"by_category.csv": by_category} if not by_category.empty else {}),
        "timings.csv": results.timings,
        "stemming.csv": stemming_table(results, collection),
    }
    written = []
    for name, frame in files.items():
        frame.to_csv(folder / name, index=name != "per_query.csv")
        written.append(folder / name)
    (folder / "configurations.json").write_text(json.dumps(results.configurations, indent=2) + "\n")
    written.append(folder / "configurations.json")
    written.append(chart(results, folder / "measures.png"))
    return written
