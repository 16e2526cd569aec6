"""The sample import the first run offers on the bundled demo server: which tool, which file,
and the words that ask a model for it in the chat."""

from __future__ import annotations

SAMPLE_TOOL = "import_suppliers"
"""The bundled demo server's long-running tool the welcome offers to try."""
SAMPLE_FILE = "suppliers_ambiguous_id.csv"
"""The bundled sample it imports (relative to the demo server's samples folder).

The one with two identifier-like columns, so the demo server asks which holds the ids: the
sample shows what Mooring is for — a long task, approved, that needs the user's answer."""
SAMPLE_SUGGESTION = "Try: Import the sample suppliers"
"""The chip an empty conversation with a local model shows (it fills the message box)."""
SAMPLE_PROMPT = (
    f"Import the sample suppliers: call the {SAMPLE_TOOL} tool with the path {SAMPLE_FILE}."
)
"""What the chip puts in the message box: plain enough for a small local model to make the
call (naming the tool and its argument); the call is asked about like any other."""
