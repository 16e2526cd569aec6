"""Use cases (async, Qt-free): they reach the outside world only through ``core.ports``."""
