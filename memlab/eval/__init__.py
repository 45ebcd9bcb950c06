"""The relevance lab: collections, analyzers compared on the real store, IR measures and significance."""
