"""memlab inside other frameworks: each integration sits on the public API, and nothing in memlab imports one.

``memlab.integrations.langgraph``: ``MemlabStore``, LangGraph's long-term memory store
(``pip install 'memlab[langgraph]'``).
"""
