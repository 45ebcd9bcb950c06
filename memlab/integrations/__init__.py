"""memlab inside other frameworks: each integration sits on the public API, and nothing in memlab imports one.

``memlab.integrations.langgraph``: ``MemlabStore``, LangGraph's long-term memory store
(``pip install 'memlab[langgraph]'``).

``memlab.integrations.mem0``: ``Memory`` and ``AsyncMemory``, mem0's memory API over gated sessions (no extra).
"""
