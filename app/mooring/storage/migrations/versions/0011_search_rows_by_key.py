"""The search index's rows are found by key: a title's or a message's row is changed and
removed through an indexed map (``conversation_search_rows``), never by scanning the index.

FTS5 does not index its ``UNINDEXED`` columns, so the triggers of 0007 looked a row up by
``message_id`` or ``conversation_id`` with a scan of the whole index: with 50,000 messages a
rename took ~16 ms and deleting a conversation of 500 messages ~6 s (one scan per message),
all on the writer thread every other database request waits for.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None

_TRIGGERS = (
    "conversation_search_title_ai",
    "conversation_search_title_au",
    "conversation_search_title_ad",
    "conversation_search_message_ai",
    "conversation_search_message_au",
    "conversation_search_message_ad",
)

# A title's key is "c:" and its conversation's id, a message's "m:" and its id. The row a
# conversation's delete cascades to (its messages) each remove their own search row.
_ROW_OF_TITLE = "(SELECT fts_rowid FROM conversation_search_rows WHERE key = 'c:' || old.id)"
_ROW_OF_MESSAGE = "(SELECT fts_rowid FROM conversation_search_rows WHERE key = 'm:' || old.id)"
_BY_KEY = [
    "CREATE TRIGGER conversation_search_title_ai AFTER INSERT ON conversations BEGIN "
    "INSERT INTO conversation_search (text, conversation_id, message_id) "
    "VALUES (new.title, new.id, NULL); "
    "INSERT INTO conversation_search_rows (key, fts_rowid) "
    "VALUES ('c:' || new.id, last_insert_rowid()); END",
    "CREATE TRIGGER conversation_search_title_au AFTER UPDATE OF title ON conversations BEGIN "
    f"UPDATE conversation_search SET text = new.title WHERE rowid = {_ROW_OF_TITLE}; END",
    "CREATE TRIGGER conversation_search_title_ad AFTER DELETE ON conversations BEGIN "
    f"DELETE FROM conversation_search WHERE rowid = {_ROW_OF_TITLE}; "
    "DELETE FROM conversation_search_rows WHERE key = 'c:' || old.id; END",
    "CREATE TRIGGER conversation_search_message_ai AFTER INSERT ON messages BEGIN "
    "INSERT INTO conversation_search (text, conversation_id, message_id) "
    "VALUES (new.content, new.conversation_id, new.id); "
    "INSERT INTO conversation_search_rows (key, fts_rowid) "
    "VALUES ('m:' || new.id, last_insert_rowid()); END",
    "CREATE TRIGGER conversation_search_message_au AFTER UPDATE OF content ON messages BEGIN "
    f"UPDATE conversation_search SET text = new.content WHERE rowid = {_ROW_OF_MESSAGE}; END",
    "CREATE TRIGGER conversation_search_message_ad AFTER DELETE ON messages BEGIN "
    f"DELETE FROM conversation_search WHERE rowid = {_ROW_OF_MESSAGE}; "
    "DELETE FROM conversation_search_rows WHERE key = 'm:' || old.id; END",
]

# 0007's triggers, for the way back.
_BY_SCAN = [
    "CREATE TRIGGER conversation_search_title_ai AFTER INSERT ON conversations BEGIN "
    "INSERT INTO conversation_search (text, conversation_id, message_id) "
    "VALUES (new.title, new.id, NULL); END",
    "CREATE TRIGGER conversation_search_title_au AFTER UPDATE OF title ON conversations BEGIN "
    "UPDATE conversation_search SET text = new.title "
    "WHERE conversation_id = old.id AND message_id IS NULL; END",
    "CREATE TRIGGER conversation_search_title_ad AFTER DELETE ON conversations BEGIN "
    "DELETE FROM conversation_search WHERE conversation_id = old.id; END",
    "CREATE TRIGGER conversation_search_message_ai AFTER INSERT ON messages BEGIN "
    "INSERT INTO conversation_search (text, conversation_id, message_id) "
    "VALUES (new.content, new.conversation_id, new.id); END",
    "CREATE TRIGGER conversation_search_message_au AFTER UPDATE OF content ON messages BEGIN "
    "UPDATE conversation_search SET text = new.content WHERE message_id = old.id; END",
    "CREATE TRIGGER conversation_search_message_ad AFTER DELETE ON messages BEGIN "
    "DELETE FROM conversation_search WHERE message_id = old.id; END",
]


def upgrade() -> None:
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    # Kept in step by the triggers alone, like the index (not in SQLAlchemy's metadata).
    op.execute(
        "CREATE TABLE conversation_search_rows (key TEXT NOT NULL PRIMARY KEY, "
        "fts_rowid INTEGER NOT NULL)"
    )
    op.execute(
        "INSERT OR REPLACE INTO conversation_search_rows (key, fts_rowid) "
        "SELECT CASE WHEN message_id IS NULL THEN 'c:' || conversation_id "
        "ELSE 'm:' || message_id END, rowid FROM conversation_search"
    )
    for statement in _BY_KEY:
        op.execute(statement)


def downgrade() -> None:
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.execute("DROP TABLE IF EXISTS conversation_search_rows")
    for statement in _BY_SCAN:
        op.execute(statement)
