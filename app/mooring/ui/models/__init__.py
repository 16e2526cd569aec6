"""Qt item models: thin projections over the host's views, updated from its events."""
