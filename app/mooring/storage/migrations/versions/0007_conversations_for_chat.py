"""What a chat needs: per-conversation model settings, message order, status and tool calls,
and an FTS5 full-text index over titles and message text kept in step by triggers.

Revision ID: 0007
Revises: 0006 (re-chained at merge after 0006)
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

# Triggers run inside the writing statement's transaction: the index never lags a commit.
_SEARCH = [
    "CREATE VIRTUAL TABLE conversation_search USING fts5("
    "text, conversation_id UNINDEXED, message_id UNINDEXED, "
    "tokenize = 'unicode61 remove_diacritics 2')",
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
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("provider_id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("model", sa.Text(), nullable=True))
        batch_op.add_column(
            sa.Column("auto_continue", sa.Boolean(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("muted", sa.Boolean(), nullable=False, server_default="0"))
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("seq", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(
            sa.Column("status", sa.String(length=16), nullable=False, server_default="complete")
        )
        batch_op.add_column(sa.Column("error_kind", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("error", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("tool_calls", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("tool_call_id", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("tool_round_id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("is_error", sa.Boolean(), nullable=False, server_default="0"))
        batch_op.add_column(
            sa.Column("awaits_task", sa.Boolean(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("followup", sa.Boolean(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("model", sa.Text(), nullable=True))
        batch_op.create_foreign_key(
            "fk_messages_tool_round_id_tool_rounds", "tool_rounds", ["tool_round_id"], ["id"]
        )
        batch_op.create_index(
            "ix_messages_conversation_seq", ["conversation_id", "seq"], unique=False
        )
        batch_op.create_index(
            "uq_messages_followup_round",
            ["tool_round_id"],
            unique=True,
            sqlite_where=sa.text("followup = 1"),
        )
    # Messages written before this revision keep their order (time, then id) as numbers.
    op.execute(
        "UPDATE messages SET seq = (SELECT n FROM (SELECT id, ROW_NUMBER() OVER ("
        "PARTITION BY conversation_id ORDER BY created_at, id) AS n FROM messages) AS o "
        "WHERE o.id = messages.id)"
    )
    for statement in _SEARCH:
        op.execute(statement)
    op.execute(
        "INSERT INTO conversation_search (text, conversation_id, message_id) "
        "SELECT title, id, NULL FROM conversations"
    )
    op.execute(
        "INSERT INTO conversation_search (text, conversation_id, message_id) "
        "SELECT content, conversation_id, id FROM messages"
    )


def downgrade() -> None:
    for name in (
        "conversation_search_message_ad",
        "conversation_search_message_au",
        "conversation_search_message_ai",
        "conversation_search_title_ad",
        "conversation_search_title_au",
        "conversation_search_title_ai",
    ):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.execute("DROP TABLE IF EXISTS conversation_search")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index("uq_messages_followup_round", sqlite_where=sa.text("followup = 1"))
        batch_op.drop_index("ix_messages_conversation_seq")
        batch_op.drop_constraint("fk_messages_tool_round_id_tool_rounds", type_="foreignkey")
        for column in (
            "model",
            "followup",
            "awaits_task",
            "is_error",
            "tool_round_id",
            "tool_call_id",
            "tool_calls",
            "error",
            "error_kind",
            "status",
            "seq",
        ):
            batch_op.drop_column(column)
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        for column in ("muted", "auto_continue", "model", "provider_id"):
            batch_op.drop_column(column)
