"""``mooring doctor``: is every part of the environment usable, and if not, what to do."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from mooring.core.ports import ProbeResult

__all__ = ["Check", "Level", "ProbeResult", "Report"]


class Level(StrEnum):
    """How bad a finding is. Only ``fail`` makes ``doctor`` exit non-zero."""

    OK = "ok"
    WARN = "warn"
    """Mooring works, with less (e.g. secrets for this session only)."""
    FAIL = "fail"
    """Something Mooring needs is unusable."""


@dataclass(frozen=True, slots=True)
class Check:
    """One finding."""

    name: str
    level: Level
    summary: str
    hint: str = ""


@dataclass(slots=True)
class Report:
    """Every finding, in order."""

    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, level: Level, summary: str, hint: str = "") -> None:
        """Record a finding."""
        self.checks.append(Check(name, level, summary, hint))

    @property
    def ok(self) -> bool:
        """No finding is a failure."""
        return all(c.level is not Level.FAIL for c in self.checks)

    def as_json(self) -> dict[str, object]:
        """A JSON-ready form (``mooring doctor --json``)."""
        return {
            "ok": self.ok,
            "checks": [
                {"name": c.name, "level": c.level.value, "summary": c.summary, "hint": c.hint}
                for c in self.checks
            ],
        }

    def as_text(self) -> str:
        """A human-readable form."""
        width = max((len(c.name) for c in self.checks), default=0)
        lines = []
        for c in self.checks:
            lines.append(f"{c.level.value.upper():4}  {c.name:<{width}}  {c.summary}")
            if c.hint:
                lines.append(f"{'':4}  {'':<{width}}  → {c.hint}")
        return "\n".join(lines)
