"""The long-running jobs behind the task tools: supplier import and export.

Both are checkpointed: every ``rows_per_checkpoint`` rows the job commits its work together with
its progress state in one transaction, so a job resumed after a crash or restart continues from
the last checkpoint without repeating or skipping a row.
"""

from __future__ import annotations

import csv
import io
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from pydantic import BaseModel, Field

from mooring.demo_server import suppliers
from mooring.demo_server.runner import JobContext, JobError, JobSpec
from mooring.demo_server.wire import INTERNAL_ERROR, now_ms

REPORT_URI = "mooring-demo://imports/{task_id}/report"
INLINE_SAVED_IDS = 100
INLINE_REJECTED_ROWS = 1000
MAX_QUESTIONS = 3

IMPORT_DESCRIPTION = """Import a supplier CSV file into the server's supplier table. Runs as a task.

The file needs a header row; known columns are the supplier identifier, name, country (two-letter
ISO code), email and phone. Rows are validated and accepted suppliers are saved at checkpoints,
each checkpoint one transaction; progress shows in the task's statusMessage. If the identifier
column is ambiguous the task asks which column it is (input_required); the answer is bound to the
file's checksum, and if the file changes the task asks again.

Cancellation is cooperative: suppliers saved before the cancel stay saved and the task ends
cancelled. Re-importing the same file skips suppliers that are already saved (idempotent by
supplier id). The result lists saved, skipped and rejected counts, the saved ids (or a resource
link to them) and each rejected row with its reason. A database write failure ends the task
failed. Relative paths are looked up in the bundled samples directory first."""

EXPORT_DESCRIPTION = """Export every saved supplier to a new CSV file. Runs as a task.

Writes to `<path>.partial` at checkpoints and renames it to `path` when done; refuses to overwrite
an existing file. Cancellation is cooperative: the partial file is removed and the task ends
cancelled."""


class ImportArgs(BaseModel):
    """Arguments of ``import_suppliers``."""

    path: str = Field(
        description="CSV file to import (absolute, or relative to the samples directory)"
    )


class ExportArgs(BaseModel):
    """Arguments of ``export_suppliers``."""

    path: str = Field(description="CSV file to create (must not exist yet)")


def resolve_input(path: str, samples_dir: Path | None) -> Path:
    """An absolute path as given; a relative one in the samples directory, else in the CWD."""
    candidate = Path(path).expanduser()
    if candidate.is_absolute():
        return candidate
    if samples_dir is not None and (samples_dir / candidate).exists():
        return samples_dir / candidate
    return Path.cwd() / candidate


def text_result(text: str, *, is_error: bool = False, structured: Any = None) -> dict[str, Any]:
    """A ``CallToolResult`` as JSON."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
    if structured is not None:
        result["structuredContent"] = structured
    return result


# -- import -------------------------------------------------------------------------------------


def _question(
    path: Path, headers: list[str], samples: Mapping[str, list[str]], preface: str
) -> dict[str, Any]:
    lines = [f"- {h}: {', '.join(samples.get(h) or []) or '(empty)'}" for h in headers]
    message = (
        f"{preface}Which column is the supplier identifier? The import of {path.name} cannot "
        "continue until you choose one. Columns and sample values:\n" + "\n".join(lines)
    )
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "column": {
                        "type": "string",
                        "title": "Supplier identifier column",
                        "description": "The column whose values uniquely identify each supplier",
                        "enum": headers,
                    }
                },
                "required": ["column"],
            },
        },
    }


@dataclass
class _Batch:
    first_row: int
    records: list[suppliers.SupplierRecord]
    rejected: list[suppliers.RejectedRow]
    rows: int


class _Reader:
    """Reads data rows in batches from where the last checkpoint stopped."""

    def __init__(self, path: Path, skip: int) -> None:
        self._handle = suppliers.open_csv(path)
        self.headers, self._rows = suppliers.data_rows(self._handle)
        self.position = 0
        for _ in range(skip):
            if next(self._rows, None) is None:
                break
            self.position += 1

    def read(self, count: int, columns: suppliers.ColumnMap) -> _Batch:
        first = self.position + 1
        records: list[suppliers.SupplierRecord] = []
        rejected: list[suppliers.RejectedRow] = []
        rows = 0
        for cells in self._rows:
            rows += 1
            self.position += 1
            outcome = suppliers.validate_row(self.position, cells, len(self.headers), columns)
            if isinstance(outcome, suppliers.SupplierRecord):
                records.append(outcome)
            else:
                rejected.append(outcome)
            if rows >= count:
                break
        return _Batch(first, records, rejected, rows)

    def close(self) -> None:
        self._handle.close()


def _count_rows(path: Path) -> int:
    with suppliers.open_csv(path) as handle:
        _, rows = suppliers.data_rows(handle)
        return sum(1 for _ in rows)


def _save_batch(
    conn: sqlite3.Connection, task_id: str, source: str, batch: _Batch, fail: bool
) -> tuple[int, int, int]:
    """Save one batch inside the checkpoint transaction; returns (saved, skipped, rejected)."""
    if fail:
        # Fault switch: a real SQLite write failure, raised by the engine itself.
        conn.execute(
            "CREATE TEMP TRIGGER IF NOT EXISTS mooring_fault_write BEFORE INSERT ON suppliers"
            " BEGIN SELECT RAISE(ABORT, 'simulated write failure (disk I/O error)'); END"
        )
    ids = [r.supplier_id for r in batch.records]
    existing: set[str] = set()
    saved_here: dict[str, int] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        existing.update(
            row[0]
            for row in conn.execute(
                f"SELECT supplier_id FROM suppliers WHERE supplier_id IN ({marks})", chunk
            )
        )
        saved_here.update(
            (row[0], row[1])
            for row in conn.execute(
                "SELECT supplier_id, row_number FROM import_rows"
                f" WHERE task_id = ? AND outcome = 'saved' AND supplier_id IN ({marks})",
                [task_id, *chunk],
            )
        )
    at = now_ms()
    new_rows: list[tuple[Any, ...]] = []
    outcomes: list[tuple[Any, ...]] = []
    skipped = 0
    rejected = [(r.row, r.supplier_id, r.reason) for r in batch.rejected]
    for record in batch.records:
        if record.supplier_id in saved_here:
            first = saved_here[record.supplier_id]
            rejected.append(
                (
                    record.row,
                    record.supplier_id,
                    f"duplicate supplier id (first seen at row {first})",
                )
            )
        elif record.supplier_id in existing:
            skipped += 1
            outcomes.append((task_id, record.row, record.supplier_id, "skipped", "already saved"))
        else:
            saved_here[record.supplier_id] = record.row
            new_rows.append(
                (
                    record.supplier_id,
                    record.name,
                    record.country,
                    record.email,
                    record.phone,
                    source,
                    task_id,
                    record.row,
                    at,
                )
            )
            outcomes.append((task_id, record.row, record.supplier_id, "saved", None))
    outcomes += [
        (task_id, row, supplier_id, "rejected", reason) for row, supplier_id, reason in rejected
    ]
    conn.executemany(
        "INSERT INTO import_rows (task_id, row_number, supplier_id, outcome, reason)"
        " VALUES (?, ?, ?, ?, ?)",
        outcomes,
    )
    conn.executemany(
        "INSERT INTO suppliers (supplier_id, name, country, email, phone, source_file,"
        " source_task_id, source_row, saved_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        new_rows,
    )
    if fail:
        conn.execute("DROP TRIGGER IF EXISTS temp.mooring_fault_write")
    return len(new_rows), skipped, len(rejected)


def import_cancel_message(state: Mapping[str, Any]) -> str:
    """What a cancelled import says: how far it got and that saved records stay saved."""
    done, total, saved = (
        int(state.get("nextRow", 0)),
        state.get("totalRows"),
        int(state.get("saved", 0)),
    )
    of_total = f" of {int(total):,}" if total is not None else ""
    return (
        f"Cancelled after {done:,}{of_total} rows; "
        f"the {saved:,} suppliers saved before the cancel stay saved."
    )


def _progress(state: Mapping[str, Any]) -> str:
    return (
        f"validated {int(state['nextRow']):,} of {int(state['totalRows']):,} rows; "
        f"saved {int(state['saved']):,}, skipped {int(state['skipped']):,} already saved, "
        f"rejected {int(state['rejected']):,}"
    )


async def _save_state(jc: JobContext, state: dict[str, Any], message: str | None) -> None:
    await jc.checkpoint(lambda _conn: (state, message))


async def _choose_identifier(
    jc: JobContext, path: Path, state: dict[str, Any]
) -> str | dict[str, Any]:
    """The identifier column: detected, previously answered for this checksum, or asked for.

    Returns the column header, or a tool-error result when the user declines or keeps giving
    answers that are not columns of the file.
    """
    preface = ""
    while True:
        checksum = await anyio.to_thread.run_sync(suppliers.file_checksum, path)
        headers, samples = await anyio.to_thread.run_sync(suppliers.column_samples, path)
        bound = state.get("identifier")
        if bound is not None and state.get("identifierChecksum") == checksum and bound in headers:
            return str(bound)
        if bound is not None and state.get("identifierSource") == "answered":
            preface = (
                f"{path.name} changed since you chose {bound!r} (its checksum differs), "
                "so the import asks again instead of guessing. "
            )
        candidates = suppliers.identifier_candidates(headers)
        if len(candidates) == 1 and state.get("identifierSource") != "answered":
            return candidates[0]
        if int(state.get("invalidAnswers", 0)) >= MAX_QUESTIONS:
            await jc.checkpoint(
                lambda _conn: (state, "Import stopped: no valid identifier column was chosen.")
            )
            return text_result(
                f"Import stopped: {MAX_QUESTIONS} answers were not columns of {path.name}. "
                "Nothing was saved.",
                is_error=True,
            )
        asked = int(state.get("questions", 0))
        if not state.get("pendingQuestion"):
            # Persist the key before publishing it: keys stay unique for the task's whole life.
            asked += 1
            state.update(questions=asked, pendingQuestion=f"identifier-column-{asked}")
            await _save_state(jc, state, None)
        key = str(state["pendingQuestion"])
        answers = await jc.ask(
            {key: _question(path, headers, samples, preface)},
            message=f"{preface}Waiting for input: which column of {path.name} is the supplier id?",
        )
        answer = answers[key] if isinstance(answers.get(key), dict) else {}
        state["pendingQuestion"] = None
        action = answer.get("action")
        content = answer.get("content") if isinstance(answer.get("content"), dict) else {}
        column = content.get("column") if content else None
        if action != "accept":
            await jc.checkpoint(
                lambda _conn: (state, "Import stopped: no identifier column was chosen.")
            )
            return text_result(
                f"Import stopped: you {'declined' if action == 'decline' else 'cancelled'} "
                "choosing the "
                f"supplier identifier column of {path.name}. Nothing was saved.",
                is_error=True,
            )
        now_checksum = await anyio.to_thread.run_sync(suppliers.file_checksum, path)
        if now_checksum != checksum:
            preface = (
                f"{path.name} changed while you were answering, "
                "so the import asks again instead of guessing. "
            )
            state.update(identifier=None, identifierChecksum=None)
            await _save_state(jc, state, preface.strip())
            continue
        if not isinstance(column, str) or column not in headers:
            shown = suppliers.safe_sample(str(column)) if column is not None else "(nothing)"
            preface = (
                f"{shown!r} is not a column of {path.name}; choose one of: {', '.join(headers)}. "
            )
            state["invalidAnswers"] = int(state.get("invalidAnswers", 0)) + 1
            await _save_state(jc, state, preface.strip())
            continue
        # The answer is saved, bound to this task and to the file's checksum, before work resumes.
        state.update(identifier=column, identifierChecksum=checksum, identifierSource="answered")
        await _save_state(jc, state, f"Using {column!r} as the supplier identifier.")
        return column


async def run_import(jc: JobContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """The ``import_suppliers`` job."""
    args = ImportArgs.model_validate(arguments)
    path = resolve_input(args.path, jc.samples_dir)
    if not path.is_file():
        return text_result(f"File not found: {args.path}", is_error=True)
    state: dict[str, Any] = dict(jc.state)
    state.setdefault("resumes", -1)
    state["resumes"] = int(state["resumes"]) + 1
    checksum = await anyio.to_thread.run_sync(suppliers.file_checksum, path)
    if state.get("checksum") not in (None, checksum):
        await jc.status(
            f"{path.name} changed since the last checkpoint; "
            "starting over (saved suppliers are skipped)."
        )
        task_id = jc.task_id

        def restart(conn: sqlite3.Connection) -> tuple[Mapping[str, Any], str | None]:
            conn.execute("DELETE FROM import_rows WHERE task_id = ?", (task_id,))
            return state, None

        state.update(nextRow=0, saved=0, skipped=0, rejected=0, totalRows=None, checksum=None)
        await jc.checkpoint(restart)
    chosen = await _choose_identifier(jc, path, state)
    if isinstance(chosen, dict):
        return chosen
    identifier = chosen
    if state.get("checksum") != checksum or state.get("totalRows") is None:
        total = await anyio.to_thread.run_sync(_count_rows, path)
        state.update(checksum=checksum, totalRows=total, identifier=identifier)
        state.setdefault("identifierSource", "detected")
        state.setdefault("nextRow", 0)
        for key in ("saved", "skipped", "rejected", "checkpoints"):
            state.setdefault(key, 0)
        await jc.checkpoint(lambda _conn: (state, f"Reading {path.name}: {total:,} rows."))
    reader = await anyio.to_thread.run_sync(_Reader, path, int(state["nextRow"]))
    try:
        columns = suppliers.column_map(reader.headers, identifier)
        fail_at = jc.config.faults.db_write_fail_at_checkpoint
        task_id = jc.task_id or "inline"
        while True:
            batch = await anyio.to_thread.run_sync(
                reader.read, jc.config.rows_per_checkpoint, columns
            )
            if batch.rows == 0:
                break
            number = int(state["checkpoints"]) + 1

            def build(
                conn: sqlite3.Connection, batch: _Batch = batch, number: int = number
            ) -> tuple[Mapping[str, Any], str | None]:
                saved, skipped, rejected = _save_batch(
                    conn, task_id, path.name, batch, fail=number == fail_at
                )
                state.update(
                    nextRow=int(state["nextRow"]) + batch.rows,
                    saved=int(state["saved"]) + saved,
                    skipped=int(state["skipped"]) + skipped,
                    rejected=int(state["rejected"]) + rejected,
                    checkpoints=number,
                )
                return state, _progress(state)

            snapshot = dict(state)
            try:
                await jc.checkpoint(build)
            except sqlite3.Error as exc:
                state.clear()
                state.update(snapshot)
                raise JobError(
                    INTERNAL_ERROR,
                    f"Database write failed at checkpoint {number} (rows {batch.first_row:,}-"
                    f"{batch.first_row + batch.rows - 1:,}): {exc}. "
                    f"The {int(snapshot['saved']):,} suppliers saved at earlier checkpoints "
                    "stay saved.",
                    data={"checkpoint": number, "savedBeforeFailure": int(snapshot["saved"])},
                ) from exc
            await jc.pause(jc.config.checkpoint_delay_ms / 1000)
    finally:
        reader.close()
    return await _import_result(jc, path, state)


async def _import_result(jc: JobContext, path: Path, state: Mapping[str, Any]) -> dict[str, Any]:
    task_id = jc.task_id or "inline"
    report = await jc.store.run(jc.store.import_report, task_id)
    saved_ids: list[str] = report["savedIds"]
    rejected_rows: list[dict[str, Any]] = report["rejectedRows"]
    uri = REPORT_URI.format(task_id=task_id)
    structured = {
        "file": path.name,
        "checksum": state["checksum"],
        "identifierColumn": state["identifier"],
        "rowsRead": int(state["nextRow"]),
        "saved": int(state["saved"]),
        "skipped": int(state["skipped"]),
        "rejected": int(state["rejected"]),
        "savedIds": saved_ids[:INLINE_SAVED_IDS],
        "savedIdsComplete": len(saved_ids) <= INLINE_SAVED_IDS,
        "rejectedRows": rejected_rows[:INLINE_REJECTED_ROWS],
        "rejectedRowsComplete": len(rejected_rows) <= INLINE_REJECTED_ROWS,
        "report": uri,
        "resumes": int(state.get("resumes", 0)),
    }
    lines = [
        f"Imported {path.name}: {structured['saved']:,} suppliers saved, "
        f"{structured['skipped']:,} skipped (already saved), "
        f"{structured['rejected']:,} rows rejected, of {structured['rowsRead']:,} rows."
    ]
    if saved_ids:
        shown = ", ".join(saved_ids[:20]) + (" …" if len(saved_ids) > 20 else "")
        lines.append(f"Saved ids: {shown}")
    for row in rejected_rows[:20]:
        lines.append(f"Rejected row {row['row']} ({row['supplierId'] or 'no id'}): {row['reason']}")
    if len(rejected_rows) > 20:
        lines.append(f"… and {len(rejected_rows) - 20:,} more rejected rows in the report.")
    return {
        "content": [
            {"type": "text", "text": "\n".join(lines)},
            {
                "type": "resource_link",
                "uri": uri,
                "name": f"import-report-{task_id}",
                "title": f"Import report for {path.name}",
                "mimeType": "application/json",
            },
        ],
        "structuredContent": structured,
        "isError": False,
    }


IMPORT_JOB = JobSpec(
    name="import_suppliers",
    run=run_import,
    args_model=ImportArgs,
    task_support="required",
    cancel_message=import_cancel_message,
    initial_message="Queued: import suppliers.",
)


# -- export -------------------------------------------------------------------------------------


def _export_rows(store_rows: list[tuple[Any, ...]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(store_rows)
    return buffer.getvalue().encode("utf-8")


def _append(partial: Path, data: bytes, truncate_to: int | None) -> int:
    with partial.open("r+b" if partial.exists() else "wb") as handle:
        if truncate_to is not None:
            handle.truncate(truncate_to)
        handle.seek(0, os.SEEK_END)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
        return handle.tell()


def _export_problem(target: Path, partial: Path, resuming: bool) -> str | None:
    if resuming:
        return None if partial.exists() else f"The partial export file {partial} disappeared."
    if target.exists():
        return f"{target} already exists; export refuses to overwrite it."
    if not target.parent.is_dir():
        return f"Folder {target.parent} does not exist."
    return None


async def run_export(jc: JobContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """The ``export_suppliers`` job."""
    args = ExportArgs.model_validate(arguments)
    target = await anyio.to_thread.run_sync(lambda: Path(args.path).expanduser().absolute())
    partial = target.with_name(target.name + ".partial")
    state: dict[str, Any] = dict(jc.state)
    problem = await anyio.to_thread.run_sync(_export_problem, target, partial, bool(state))
    if problem is not None:
        return text_result(problem, is_error=True)
    if not state:
        total = int((await jc.store.run(jc.store.list_suppliers, 1, None, None))[1])
        header = _export_rows([("supplier_id", "name", "country", "email", "phone")])
        size = await anyio.to_thread.run_sync(_append, partial, header, 0)
        state = {"afterId": None, "written": 0, "bytes": size, "total": total}
        await _save_state(jc, state, f"Exporting {total:,} suppliers to {target.name}.")
    truncate_to: int | None = int(state["bytes"])  # a crash may have left rows after the checkpoint
    try:
        while True:
            rows = await jc.store.run(
                jc.store.supplier_page, state["afterId"], jc.config.rows_per_checkpoint
            )
            if not rows:
                break
            size = await anyio.to_thread.run_sync(_append, partial, _export_rows(rows), truncate_to)
            truncate_to = None
            state.update(afterId=rows[-1][0], written=int(state["written"]) + len(rows), bytes=size)
            message = f"exported {int(state['written']):,} of {int(state['total']):,} suppliers"
            await _save_state(jc, state, message)
            await jc.pause(jc.config.checkpoint_delay_ms / 1000)
    except anyio.get_cancelled_exc_class():
        if jc.cancel_requested:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(lambda: partial.unlink(missing_ok=True))
        raise
    if truncate_to is not None:
        await anyio.to_thread.run_sync(_append, partial, b"", truncate_to)
    await anyio.to_thread.run_sync(os.replace, partial, target)
    return text_result(
        f"Exported {int(state['written']):,} suppliers to {target}.",
        structured={"path": str(target), "rows": int(state["written"])},
    )


EXPORT_JOB = JobSpec(
    name="export_suppliers",
    run=run_export,
    args_model=ExportArgs,
    task_support="required",
    cancel_message=lambda state: (
        f"Cancelled after exporting {int(state.get('written', 0)):,} suppliers; "
        "the partial file was removed."
    ),
    initial_message="Queued: export suppliers.",
)
