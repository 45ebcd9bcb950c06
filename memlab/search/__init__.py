"""Search support: turning natural language into safe FTS5 queries."""

from memlab.search.query import STOPWORDS, match_expression, query_terms

__all__ = ["STOPWORDS", "match_expression", "query_terms"]
