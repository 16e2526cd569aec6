"""The MCP conformance suite's task fixture tools (exposed with ``--conformance-fixtures``).

``greet`` and ``large_text`` are synchronous only; ``slow_compute`` can run either way; the
rest need a task.
``test_tool_with_task`` first gathers a name through an MRTR round on ``tools/call`` and only
then creates its task (the suite's MRTR-to-Tasks composition scenario).
"""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolRequestParams
from pydantic import BaseModel, Field

from mooring.demo_server.extension import NeedInput
from mooring.demo_server.jobs import text_result
from mooring.demo_server.runner import JobContext, JobError, JobSpec
from mooring.demo_server.wire import INTERNAL_ERROR


class SlowComputeArgs(BaseModel):
    """Arguments of ``slow_compute``."""

    seconds: float = Field(ge=0, description="How long to compute")
    label: str = Field(default="", description="Echoed in the result")


class NoArgs(BaseModel):
    """A tool without arguments."""


class ConfirmDeleteArgs(BaseModel):
    """Arguments of ``confirm_delete``."""

    filename: str


class GreetTaskArgs(BaseModel):
    """Task arguments of ``test_tool_with_task`` (gathered through MRTR before the task exists)."""

    user_name: str


def _elicit(message: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
            },
        },
    }


def _accepted(answer: Any) -> dict[str, Any]:
    if (
        isinstance(answer, dict)
        and answer.get("action") == "accept"
        and isinstance(answer.get("content"), dict)
    ):
        return dict(answer["content"])
    return {}


async def slow_compute(jc: JobContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Sleep ``seconds``, then answer."""
    args = SlowComputeArgs.model_validate(arguments)
    await jc.status(f"computing {args.label or 'result'} for {args.seconds:g}s")
    await jc.pause(args.seconds)
    return text_result(f"Computed {args.label or 'result'} after {args.seconds:g}s")


async def failing_job(jc: JobContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool-level error: the task completes with ``isError``."""
    return text_result("failing_job failed, as designed", is_error=True)


async def protocol_error_job(jc: JobContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC error: the task ends ``failed``."""
    raise JobError(INTERNAL_ERROR, "protocol_error_job raised a protocol-level error, as designed")


async def confirm_delete(jc: JobContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """One elicitation, then a result that reflects the answer."""
    args = ConfirmDeleteArgs.model_validate(arguments)
    answers = await jc.ask(
        {"confirm-delete": _elicit(f"Delete {args.filename}?", {"confirm": {"type": "boolean"}})},
        message=f"Waiting for confirmation to delete {args.filename}",
    )
    confirmed = _accepted(answers["confirm-delete"]).get("confirm") is True
    return text_result(f"Deleted {args.filename}" if confirmed else f"Kept {args.filename}")


async def multi_input(jc: JobContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Two elicitations outstanding at once; completes when both are answered."""
    answers = await jc.ask(
        {
            "name": _elicit("What name should be used?", {"name": {"type": "string"}}),
            "confirm": _elicit("Proceed?", {"confirm": {"type": "boolean"}}),
        },
        message="Waiting for two answers",
    )
    name = _accepted(answers["name"]).get("name", "")
    confirmed = _accepted(answers["confirm"]).get("confirm") is True
    return text_result(f"name={name} confirmed={confirmed}")


async def greet_task(jc: JobContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """The task half of ``test_tool_with_task``."""
    args = GreetTaskArgs.model_validate(arguments)
    return text_result(f"Hello, {args.user_name}! (name gathered before the task was created)")


HOSTILE = "\x1b[2J\x1b]0;pwned\x07bad\x00\x08\x08 \u202etxt.exe\u202c \u2067isolated\u2069"
"""Text that would rewrite a terminal or disguise itself if a host printed it raw."""


async def hostile_text(jc: JobContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Hostile text in the status message, the question and the result (a host's display
    must show it inert)."""
    await jc.status(f"status {HOSTILE}")
    answers = await jc.ask(
        {"hostile": _elicit(f"question {HOSTILE}", {"ok": {"type": "boolean"}})},
        message=f"waiting {HOSTILE}",
    )
    return text_result(f"result {HOSTILE} ok={_accepted(answers['hostile']).get('ok')}")


def gather_user_name(params: CallToolRequestParams) -> dict[str, Any] | NeedInput:
    """MRTR round 1 asks for ``user_name``; round 2 turns the answer into task arguments."""
    responses = params.input_responses or {}
    answer = responses.get("user_name")
    content = _accepted(
        answer.model_dump(by_alias=True) if isinstance(answer, BaseModel) else answer
    )
    name = content.get("name") or content.get("user_name")
    if isinstance(name, str) and name:
        return {"user_name": name}
    return NeedInput({"user_name": _elicit("What is your name?", {"name": {"type": "string"}})})


FIXTURE_JOBS = [
    JobSpec("slow_compute", slow_compute, SlowComputeArgs, "optional"),
    JobSpec("failing_job", failing_job, NoArgs, "required"),
    JobSpec("protocol_error_job", protocol_error_job, NoArgs, "required"),
    JobSpec("confirm_delete", confirm_delete, ConfirmDeleteArgs, "required"),
    JobSpec("multi_input", multi_input, NoArgs, "required"),
    JobSpec("test_tool_with_task", greet_task, GreetTaskArgs, "required"),
    JobSpec("hostile_text", hostile_text, NoArgs, "required"),
]

LARGE_TEXT_LIMIT_MB = 64.0


def large_rows(megabytes: float) -> str:
    """About ``megabytes`` MB of CSV rows (one header line; at most :data:`LARGE_TEXT_LIMIT_MB`)."""
    wanted = int(min(max(megabytes, 0.0), LARGE_TEXT_LIMIT_MB) * 1_000_000)
    lines = ["id,name,city,amount"]
    size = len(lines[0]) + 1
    n = 0
    while size < wanted:
        n += 1
        line = f"{n:08d},Supplier {n:08d},{_CITIES[n % len(_CITIES)]},{n % 10_000 / 100:.2f}"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"


_CITIES = ("Amsterdam", "Lyon", "Porto", "Gdańsk", "Tampere", "Graz", "Cork")
