"""The engine link: how the window and the commands reach their data folder's engine.

One engine per data folder owns every server connection (see docs/architecture.md); each face
is a client of it over a private Unix socket in the data folder (:mod:`.address`), speaking
length-prefixed pickle frames (:mod:`.wire`). :mod:`.server` is the engine's end,
:mod:`.client` a face's.
"""
