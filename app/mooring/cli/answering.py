"""``mooring tasks answer``: which question is answered, with what, and what is said after.

Shared by the handler the full path runs (:func:`mooring.cli.tasks.answer`) and the narrow
client's (:func:`mooring.cli.calling.answer_detached`), so both choose, refuse and print alike.
"""

from __future__ import annotations

import json

from mooring.cli.exit_codes import ExitCode
from mooring.core.elicitation import ELICITATION_METHOD, accept, decline
from mooring.core.elicitation import cancel as cancel_reply
from mooring.core.errors import KnownError
from mooring.core.ids import short_id

TYPE_CHECKING = False  # not typing's: the narrow client loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from mooring.cli.output import Terminal
    from mooring.core.events import AnswerDidSettle
    from mooring.core.tasks.inputs import TaskInput
    from mooring.core.views import TaskView


def json_object(text: str, option: str = "the answer") -> dict[str, Any]:
    """``text`` as a JSON object, or a usage error naming ``option``."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise KnownError(f"{option} is not valid JSON: {exc}", code="usage") from exc
    if not isinstance(value, dict):
        raise KnownError(f"{option} must be a JSON object.", code="usage")
    return value


def open_question(view: TaskView, key: str | None) -> TaskInput:
    """The question of the task that ``key`` names, or its only open one."""
    record = view.record
    open_inputs = [i for i in view.inputs if i.awaiting_answer]
    if key:
        matches = [i for i in open_inputs if i.key == key]
        if not matches:
            raise KnownError(f"Task {short_id(record.id)} has no open question {key!r}.")
        return matches[0]
    if len(open_inputs) == 1:
        return open_inputs[0]
    if not open_inputs:
        raise KnownError(
            f"Task {short_id(record.id)} is not waiting for an answer.", code="no_input"
        )
    keys = ", ".join(i.key for i in open_inputs)
    raise KnownError(f"Task {short_id(record.id)} asks several questions; name one: {keys}.")


def given_answer(args: argparse.Namespace, item: TaskInput) -> dict[str, Any] | None:
    """The reply the command line gives (``None``: none; the person is asked, if there is
    one to ask: else :func:`no_answer_given`)."""
    if args.decline:
        return decline()
    if args.cancel:
        return cancel_reply()
    if args.value is not None:
        value = json_object(args.value, option="--value")
        return accept(value) if item.method == ELICITATION_METHOD else value
    return None


def no_answer_given() -> KnownError:
    return KnownError(
        "No answer given and no terminal to ask on.",
        hint="Pass --value JSON, --decline or --cancel.",
        code="usage",
    )


def say_settled(
    terminal: Terminal, as_json: bool, record_id: str, key: str, settled: AnswerDidSettle
) -> ExitCode:
    """Say what became of the answer; the exit code."""
    if as_json:
        shown = {"key": key, "delivered": settled.delivered, "detail": settled.detail}
        terminal.say(json.dumps(shown), exact=True)
    else:
        terminal.say(f"{short_id(record_id)}: answer {key!r}: {settled.detail}")
    return ExitCode.OK if settled.delivered else ExitCode.WAITING
