"""Resource templates' variables and their expansion; attachments marked in a message."""

from __future__ import annotations

from mooring.core.library import (
    Attachment,
    expand_template,
    template_variables,
    with_attachments,
)


def test_a_template_s_variables_are_found_in_order_once_each() -> None:
    assert template_variables("demo://{kind}/x/{id}/{kind}") == ["kind", "id"]
    assert template_variables("file:///{+path}{?a,b}") == ["path", "a", "b"]
    assert template_variables("plain://uri") == []


def test_a_template_is_filled_in_with_encoded_values() -> None:
    uri = expand_template("demo://imports/{task_id}/report", {"task_id": "a b/c"})
    assert uri == "demo://imports/a%20b%2Fc/report"


def test_attachments_follow_the_message_marked_and_a_cut_one_says_so() -> None:
    text = with_attachments(
        "Look",
        [Attachment("demo", "demo://a", "A"), Attachment("demo", "demo://b", "B", True)],
    )
    assert text == (
        "Look\n\n[Attached resource demo:demo://a]\nA\n[End of demo://a]\n\n"
        "[Attached resource demo:demo://b, cut at 32,000 characters]\nB\n[End of demo://b]"
    )
    assert with_attachments("Look", []) == "Look"
