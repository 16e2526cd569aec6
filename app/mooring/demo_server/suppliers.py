"""Supplier CSV files: header mapping, identifier-column detection, row validation, safe samples."""

from __future__ import annotations

import csv
import hashlib
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

# Header names (normalised: lower case, non-alphanumerics as "_") for each known field.
NAME_HEADERS = frozenset(
    {"name", "supplier_name", "company", "company_name", "vendor_name", "legal_name"}
)
COUNTRY_HEADERS = frozenset({"country", "country_code", "iso_country"})
EMAIL_HEADERS = frozenset({"email", "contact_email", "e_mail"})
PHONE_HEADERS = frozenset({"phone", "telephone", "phone_number", "contact_phone"})
CERTAIN_ID_HEADERS = frozenset({"supplier_id"})
_ID_LIKE = re.compile(r"(^|_)(id|code|number|no|ref|reference|key)$")

MAX_ID_LENGTH = 64
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_COUNTRY = re.compile(r"^[A-Za-z]{2}$")

SAMPLE_VALUES = 3
SAMPLE_CHARS = 24


def normalise_header(header: str) -> str:
    """``" Supplier ID "`` -> ``"supplier_id"``."""
    return re.sub(r"[^0-9a-z]+", "_", header.strip().lower()).strip("_")


def file_checksum(path: Path) -> str:
    """SHA-256 of the file's bytes, hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class ColumnMap:
    """Which column (by index) holds each supplier field."""

    identifier: int
    name: int | None
    country: int | None
    email: int | None
    phone: int | None


def _find(headers: Sequence[str], wanted: frozenset[str]) -> int | None:
    for index, header in enumerate(headers):
        if normalise_header(header) in wanted:
            return index
    return None


def identifier_candidates(headers: Sequence[str]) -> list[str]:
    """Columns that look like a supplier identifier; exactly one means no question is needed."""
    certain = [h for h in headers if normalise_header(h) in CERTAIN_ID_HEADERS]
    if certain:
        return certain
    field_headers = NAME_HEADERS | COUNTRY_HEADERS | EMAIL_HEADERS | PHONE_HEADERS
    return [
        h
        for h in headers
        if normalise_header(h) not in field_headers
        and _ID_LIKE.search(normalise_header(h)) is not None
    ]


def column_map(headers: Sequence[str], identifier: str) -> ColumnMap:
    """Map the known fields; ``identifier`` is the chosen identifier column's header."""
    return ColumnMap(
        identifier=list(headers).index(identifier),
        name=_find(headers, NAME_HEADERS),
        country=_find(headers, COUNTRY_HEADERS),
        email=_find(headers, EMAIL_HEADERS),
        phone=_find(headers, PHONE_HEADERS),
    )


def safe_sample(value: str) -> str:
    """A short, display-safe rendering of a cell: no control characters, e-mail users masked."""
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in value).strip()
    if _EMAIL.match(text):
        local, _, domain = text.partition("@")
        text = f"{local[:1]}***@{domain}"
    if len(text) > SAMPLE_CHARS:
        text = text[: SAMPLE_CHARS - 1] + "…"
    return text


def column_samples(path: Path, limit_rows: int = 50) -> tuple[list[str], dict[str, list[str]]]:
    """The header and up to three safe sample values per column, from the first rows."""
    samples: dict[str, list[str]] = {}
    with open_csv(path) as handle:
        reader = csv.reader(handle)
        headers = next(reader, [])
        samples = {h: [] for h in headers}
        for count, row in enumerate(reader):
            if count >= limit_rows:
                break
            for header, value in zip(headers, row, strict=False):
                if value.strip() and len(samples[header]) < SAMPLE_VALUES:
                    samples[header].append(safe_sample(value))
    return list(headers), samples


def open_csv(path: Path) -> TextIO:
    """Open a CSV file for reading (UTF-8, BOM tolerated, universal newlines as csv wants)."""
    return path.open("r", encoding="utf-8-sig", newline="")


@dataclass(frozen=True)
class SupplierRecord:
    """One accepted row."""

    row: int
    supplier_id: str
    name: str
    country: str
    email: str | None
    phone: str | None


@dataclass(frozen=True)
class RejectedRow:
    """One rejected row and why."""

    row: int
    supplier_id: str | None
    reason: str


def validate_row(
    row_number: int, cells: Sequence[str], width: int, columns: ColumnMap
) -> SupplierRecord | RejectedRow:
    """Validate one data row (``row_number`` counts data rows from 1, the header excluded)."""

    def cell(index: int | None) -> str:
        return cells[index].strip() if index is not None and index < len(cells) else ""

    supplier_id = cell(columns.identifier) or None
    if len(cells) != width:
        return RejectedRow(row_number, supplier_id, f"expected {width} fields, found {len(cells)}")
    if supplier_id is None:
        return RejectedRow(row_number, None, "missing supplier id")
    if len(supplier_id) > MAX_ID_LENGTH:
        return RejectedRow(
            row_number, supplier_id[:MAX_ID_LENGTH], f"supplier id longer than {MAX_ID_LENGTH}"
        )
    name = cell(columns.name)
    if not name:
        return RejectedRow(row_number, supplier_id, "missing name")
    country = cell(columns.country)
    if not _COUNTRY.match(country):
        shown = safe_sample(country) if country else "(empty)"
        return RejectedRow(
            row_number, supplier_id, f"country {shown!r} is not a two-letter ISO code"
        )
    email = cell(columns.email) or None
    if email is not None and not _EMAIL.match(email):
        return RejectedRow(row_number, supplier_id, f"invalid email {safe_sample(email)!r}")
    phone = cell(columns.phone) or None
    return SupplierRecord(row_number, supplier_id, name, country.upper(), email, phone)


def data_rows(handle: TextIO) -> tuple[list[str], Iterator[list[str]]]:
    """The header and an iterator over the non-blank data rows of an open CSV file."""
    reader = csv.reader(handle)
    headers = next(reader, [])
    return headers, (cells for cells in reader if cells and any(c.strip() for c in cells))
