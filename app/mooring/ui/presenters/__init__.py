"""The window's use cases, apart from its widgets: plain Python over ``HostApi``, no Qt.

A presenter decides what is read, changed and kept (which conversation is shown, what waits
for its undo); its view lays out widgets, renders what the presenter returns and delegates
every action to it. Tests drive a presenter over a real host without building a widget.
"""
