"""What the model is given: the stored conversation made valid for both wires, and tool results
as bounded text."""

from __future__ import annotations

from mooring.core.chat import ToolCallRequest
from mooring.core.conversation import Message, MessageStatus, Role
from mooring.core.ids import new_id
from mooring.services.chat_context import (
    FOLLOWUP_PREFIX,
    MAX_RESULT_CHARS,
    NOT_RECORDED,
    build_context,
    result_for_model,
)
from tests.core.tasks.factories import T0


def msg(role: Role, content: str = "", **changes: object) -> Message:
    return Message(
        id=new_id(),
        conversation_id="c",
        role=role,
        content=content,
        created_at=T0,
        **changes,  # type: ignore[arg-type]
    )


def call(call_id: str) -> ToolCallRequest:
    return ToolCallRequest(id=call_id, name="demo__x", arguments={})


def test_a_call_left_unanswered_by_a_crash_gets_an_explicit_no_result() -> None:
    context = build_context(
        [
            msg(Role.USER, "go"),
            msg(Role.ASSISTANT, tool_calls=(call("a"), call("b"))),
            msg(Role.TOOL, "result a", tool_call_id="a"),
            msg(Role.USER, "well?"),
        ]
    )
    assert [(m.role, m.tool_call_id, m.content) for m in context] == [
        (Role.USER, None, "go"),
        (Role.ASSISTANT, None, ""),
        (Role.TOOL, "a", "result a"),
        (Role.TOOL, "b", NOT_RECORDED),
        (Role.USER, None, "well?"),
    ]
    assert context[3].is_error


def test_follow_ups_are_user_side_notes_and_user_side_messages_are_joined() -> None:
    context = build_context(
        [
            msg(Role.USER, "import"),
            msg(Role.ASSISTANT, tool_calls=(call("a"),)),
            msg(Role.TOOL, "started", tool_call_id="a", awaits_task=True),
            msg(Role.ASSISTANT, "It runs."),
            msg(Role.TOOL, "done: 12 saved", tool_call_id="a", followup=True),
            msg(Role.USER, "and?"),
        ]
    )
    assert [m.role for m in context] == [
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
        Role.USER,
    ]
    assert context[-1].content == f"{FOLLOWUP_PREFIX}\ndone: 12 saved\n\nand?"


def test_failed_replies_keep_only_their_text_and_stray_results_are_dropped() -> None:
    context = build_context(
        [
            msg(Role.USER, "hi"),
            msg(Role.ASSISTANT, "", status=MessageStatus.ERROR, error="unreachable"),
            msg(Role.TOOL, "orphan", tool_call_id="zzz"),
            msg(Role.USER, "hi again"),
            msg(Role.ASSISTANT, "Half", status=MessageStatus.INTERRUPTED),
            msg(Role.USER, "more"),
            msg(Role.ASSISTANT, ""),  # the model said nothing at all
        ]
    )
    assert [(m.role, m.content) for m in context] == [
        (Role.USER, "hi\n\nhi again"),
        (Role.ASSISTANT, "Half"),
        (Role.USER, "more"),
    ]


def test_tool_results_are_text_with_other_blocks_described_and_bounded() -> None:
    text = result_for_model(
        {
            "content": [
                {"type": "text", "text": "first"},
                {"type": "image", "mimeType": "image/png", "data": "AAAA"},
                {"type": "resource_link", "uri": "mooring-demo://r", "name": "report"},
                {"type": "text", "text": "second"},
            ]
        }
    )
    assert text.splitlines() == [
        "first",
        "[image: image/png, ~3 bytes]",
        "[resource link: mooring-demo://r report]",
        "second",
    ]
    assert result_for_model({"content": [], "structuredContent": {"n": 1}}) == '{"n": 1}'
    long = result_for_model({"content": [{"type": "text", "text": "x" * (MAX_RESULT_CHARS + 5)}]})
    assert long.endswith("[… 5 more characters not shown]")
    assert len(long) < MAX_RESULT_CHARS + 100
