"""The SQLite schema (SQLAlchemy Core). Alembic migrations must match it (a test checks)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.types import TypeDecorator

from mooring.storage.records import utc_from_text, utc_text

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes stored as ISO 8601 text (sortable, readable, no zone lost)."""

    impl = String(32)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> str | None:
        return utc_text(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return utc_from_text(value)


def _id(name: str = "id") -> Column[str]:
    return Column(name, String(64), primary_key=True)


servers = Table(
    "servers",
    metadata,
    _id(),
    Column("alias", String(200), nullable=False),
    Column("transport", String(16), nullable=False),
    Column("command", Text),
    Column("args", JSON, nullable=False),
    Column("env", JSON, nullable=False),
    Column("cwd", Text),
    Column("url", Text),
    Column("headers", JSON, nullable=False),
    Column("trusted", Boolean, nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("builtin", Boolean, nullable=False),
    Column("allowed_tools", JSON),
    Column("hidden_tools", JSON, nullable=False, server_default="[]"),
    Column("created_at", UtcDateTime, nullable=False),
    Column("removed_at", UtcDateTime),
    # Environment values read from Mooring's own environment at connect time: name → variable.
    Column("env_refs", JSON, nullable=False, server_default="{}"),
)
# Aliases are unique among servers that still exist; removed ones keep theirs for history.
Index(
    "uq_servers_alias_live",
    servers.c.alias,
    unique=True,
    sqlite_where=servers.c.removed_at.is_(None),
)

credential_profiles = Table(
    "credential_profiles",
    metadata,
    _id(),
    Column("server_id", ForeignKey("servers.id"), nullable=False, index=True),
    Column("label", String(200), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("removed_at", UtcDateTime),
)

# -- assistants: saved presets for new conversations (migration 0015) -------------------------
# Servers are stored by id (JSON list), tools as [server id, tool name] pairs; both NULL: every
# tool. No foreign key to providers or servers: they come and go (a missing one is shown so).
assistants = Table(
    "assistants",
    metadata,
    _id(),
    Column("name", String(200), nullable=False, unique=True),
    Column("system_prompt", Text, nullable=False, server_default=""),
    Column("provider_id", String(64)),
    Column("model", Text),
    Column("servers", JSON),
    Column("tools", JSON),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

conversations = Table(
    "conversations",
    metadata,
    _id(),
    Column("title", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    # Chat settings (migration 0007). No foreign key to providers: they come and go.
    Column("provider_id", String(64)),
    Column("model", Text),
    Column("auto_continue", Boolean, nullable=False, server_default="0"),
    Column("muted", Boolean, nullable=False, server_default="0"),
    Column("system_prompt", Text),  # migration 0013; NULL: the default of Settings
    # Migration 0015: the assistant it started from (copied settings; NULL once it is removed)
    # and the tools it offers the model (JSON text of a ToolOffering; NULL: every tool).
    # The migration adds it with a plain ADD COLUMN (no rebuild of this table and its search
    # triggers) as `REFERENCES assistants (id) ON DELETE SET NULL`; SQLAlchemy's SQLite
    # reflection does not read the ON DELETE of a column constraint, so it is not declared
    # here (the schema comparison would differ). storage/assistants.py also clears the link.
    Column("assistant_id", ForeignKey("assistants.id")),
    Column("offered_tools", Text),
)

messages = Table(
    "messages",
    metadata,
    _id(),
    Column(
        "conversation_id",
        ForeignKey("conversations.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("role", String(16), nullable=False),
    Column("content", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    # What a chat needs (migration 0007): order, status, tool calls and results.
    Column("seq", Integer, nullable=False, server_default="0"),
    Column("status", String(16), nullable=False, server_default="complete"),
    Column("error_kind", String(32)),
    Column("error", Text),
    Column("tool_calls", JSON),
    Column("tool_call_id", String(200)),
    Column("tool_round_id", ForeignKey("tool_rounds.id")),
    Column("is_error", Boolean, nullable=False, server_default="0"),
    Column("awaits_task", Boolean, nullable=False, server_default="0"),
    Column("followup", Boolean, nullable=False, server_default="0"),
    Column("model", Text),
    # Migration 0014: set while the message is in a version the conversation does not show.
    Column("version_id", String(64)),
)
Index("ix_messages_conversation_seq", messages.c.conversation_id, messages.c.seq)
# A background task's final result is stored in its conversation once, whoever sees it first.
Index(
    "uq_messages_followup_round",
    messages.c.tool_round_id,
    unique=True,
    sqlite_where=messages.c.followup.is_(True),
)

message_attachments = Table(
    "message_attachments",
    metadata,
    _id(),
    Column(
        "message_id",
        ForeignKey("messages.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("kind", String(16), nullable=False),
    Column("name", Text, nullable=False),
    Column("mime", String(100), nullable=False),
    Column("size", Integer, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("content", LargeBinary, nullable=False),
    Column("created", UtcDateTime, nullable=False),
)
"""Files the user attached to a message (migration 0016): text files and images, their bytes
as they were read; ordered by ``rowid`` (the order they were attached)."""

message_versions = Table(
    "message_versions",
    metadata,
    _id(),
    Column(
        "conversation_id",
        ForeignKey("conversations.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    # The message the version follows (NULL: the conversation's start); not a foreign key,
    # since that message may itself be in a version at times.
    Column("after_message_id", String(64)),
    Column("created_at", UtcDateTime, nullable=False),
)
"""Versions of a conversation's tail kept when a message was edited or a reply regenerated
(migration 0014): the messages that followed ``after_message_id`` then, kept whole."""

http_sessions = Table(
    "http_sessions",
    metadata,
    Column("server_id", ForeignKey("servers.id"), primary_key=True),
    # The credential profile's id, "" for the server's default account (a key part: not NULL).
    Column("profile_key", String(64), primary_key=True),
    Column("session_id", Text, nullable=False),
    Column("recorded_at", UtcDateTime, nullable=False),
    # The server's ``initialize`` result that began the session, as JSON (migration 0018).
    Column("initialized", Text),
)
"""The Streamable HTTP session each server and account holds (migration 0017), kept until the
engine ends it: one a crashed engine left open is resumed (``core.ports.HttpSessions``)."""

SEARCH_TABLE = "conversation_search"
"""The FTS5 index over conversation titles and message text (migration 0007). SQLAlchemy does
not model virtual tables: triggers keep it in step with ``conversations`` and ``messages`` in
the same transaction as every write."""


def is_declared_here(name: str | None) -> bool:
    """Whether a table belongs to this metadata's comparison (not the FTS index and the shadow
    tables SQLite makes for it)."""
    return not (name or "").startswith(SEARCH_TABLE)


tool_rounds = Table(
    "tool_rounds",
    metadata,
    _id(),
    Column("conversation_id", ForeignKey("conversations.id", ondelete="SET NULL"), index=True),
    Column("server_id", ForeignKey("servers.id"), nullable=False),
    Column("tool", String(200), nullable=False),
    Column("arguments", JSON, nullable=False),
    Column("argument_digest", String(80), nullable=False),
    Column("approval", String(32)),
    Column("outcome", String(16), nullable=False),
    Column("result", JSON),
    Column("error", JSON),
    Column("created_at", UtcDateTime, nullable=False),
    Column("finished_at", UtcDateTime),
)

task_records = Table(
    "task_records",
    metadata,
    _id(),
    Column("server_id", ForeignKey("servers.id"), nullable=False),
    Column("credential_profile_id", ForeignKey("credential_profiles.id")),
    Column("task_id", Text),
    Column("tool", String(200), nullable=False),
    Column("argument_digest", String(80), nullable=False),
    Column("state", String(32), nullable=False, index=True),
    Column("server_status", String(32)),
    Column("status_message", Text),
    Column("flags", JSON, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("server_created_at", UtcDateTime),
    Column("server_updated_at", UtcDateTime),
    Column("sent_at", UtcDateTime),
    Column("last_checked_at", UtcDateTime),
    Column("next_poll_at", UtcDateTime),
    Column("ttl_ms", Integer),
    Column("poll_interval_ms", Integer),
    Column("poll_count", Integer, nullable=False),
    Column("poll_failures", Integer, nullable=False),
    Column("poll_errors", Integer, nullable=False, server_default="0"),
    Column("anomaly_count", Integer, nullable=False),
    Column("cancel_requested", Boolean, nullable=False),
    Column("conversation_id", ForeignKey("conversations.id", ondelete="SET NULL")),
    Column("tool_round_id", ForeignKey("tool_rounds.id")),
    Column("trace_context", String(128)),
    Column("owner", String(200)),
    Column("reason", Text),
    # 0008: which Tasks wire created the task; a plain call's last progress.
    Column("wire", String(16)),
    Column("progress", Float),
    Column("progress_total", Float),
    Column("progress_message", Text),
    Column("last_sign_of_life_at", UtcDateTime),
    UniqueConstraint("server_id", "task_id"),
)
# 0009: exact lookups by the server's task id alone (``find``), and the list newest first.
Index("ix_task_records_task_id", task_records.c.task_id)
Index("ix_task_records_newest", task_records.c.created_at.desc(), task_records.c.id)

task_inputs = Table(
    "task_inputs",
    metadata,
    Column(
        "record_id",
        ForeignKey("task_records.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("key", String(200), primary_key=True),
    Column("method", String(64), nullable=False),
    Column("params", JSON, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("answer", JSON),
    Column("answered_at", UtcDateTime),
    Column("acknowledged_at", UtcDateTime),
    Column("outcome", Text),
)

approval_rules = Table(
    "approval_rules",
    metadata,
    _id(),
    Column("server_identity", Text, nullable=False, index=True),
    Column("tool_pattern", String(200), nullable=False),
    Column("decision", String(16), nullable=False),
    Column("scope", String(16), nullable=False),
    Column("conversation_id", ForeignKey("conversations.id", ondelete="CASCADE")),
    Column("created_at", UtcDateTime, nullable=False),
)

approval_audit = Table(
    "approval_audit",
    metadata,
    _id(),
    Column("at", UtcDateTime, nullable=False, index=True),
    Column("server_id", ForeignKey("servers.id"), nullable=False),
    Column("tool", String(200), nullable=False),
    Column("argument_digest", String(80), nullable=False),
    Column("outcome", String(16), nullable=False),
    Column("actor", String(64), nullable=False),
    Column("rule_id", String(64)),
    Column("tool_round_id", ForeignKey("tool_rounds.id")),
    Column("reason", Text),  # migration 0010: why the policy decided or asked
    Column("remembered", String(16)),  # migration 0010: the scope the user chose to remember
)

issues = Table(
    "issues",
    metadata,
    _id(),
    Column("kind", String(32), nullable=False),
    Column("subject", String(64), nullable=False),
    Column("title", Text, nullable=False),
    Column("detail", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("resolved_at", UtcDateTime),
)
# At most one open issue of a kind per subject.
Index(
    "uq_issues_open",
    issues.c.kind,
    issues.c.subject,
    unique=True,
    sqlite_where=issues.c.resolved_at.is_(None),
)

trace_links = Table(
    "trace_links",
    metadata,
    Column(
        "record_id",
        ForeignKey("task_records.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("trace_id", String(32), nullable=False, index=True),
)

# -- model providers (issue 12) ------------------------------------------------------------
# API keys and header values live in the keyring; only header names are stored here.
providers = Table(
    "providers",
    metadata,
    _id(),
    Column("name", String(200), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("base_url", Text, nullable=False),
    Column("model", String(200), nullable=False),
    Column("header_names", JSON, nullable=False),
    Column("has_api_key", Boolean, nullable=False),
    Column("is_default", Boolean, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    # The key is read from this environment variable at each use (no secret stored).
    Column("api_key_env", String(200)),
)
# At most one default provider.
Index(
    "uq_providers_default",
    providers.c.is_default,
    unique=True,
    sqlite_where=providers.c.is_default.is_(True),
)
