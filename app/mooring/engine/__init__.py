"""The engine: one per data folder, the host that owns every server connection, served to
the window and the commands over the link (see ``docs/architecture.md``)."""
