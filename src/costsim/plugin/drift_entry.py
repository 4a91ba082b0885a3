"""A replayed call whose request, as the code sent it, differs from the recording: as the
plugin's reports list it, and as an xdist worker hands it to the controller."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from costsim.api.testing import Difference, amount_text, drift_summary

__all__ = ["DriftEntry"]


@dataclass(frozen=True, slots=True)
class DriftEntry:
    """A replayed call whose request, as the code sent it, differs from the recording."""

    test: str
    cassette: str
    index: int
    differences: tuple[Difference, ...]
    prompt_delta: int | None
    """Metered prompt tokens as sent minus as recorded (None when neither is known)."""
    cost_delta: Decimal | None

    @property
    def kind(self) -> str:
        return drift_summary(list(self.differences))

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "cassette": self.cassette,
            "interaction": self.index,
            "kind": self.kind,
            "differences": [{"aspect": d.aspect, "detail": d.detail} for d in self.differences],
            "prompt_tokens_delta": self.prompt_delta,
            "cost_usd_delta": amount_text(self.cost_delta),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DriftEntry:
        cost = data["cost_usd_delta"]
        return cls(
            test=data["test"],
            cassette=data["cassette"],
            index=data["interaction"],
            differences=tuple(Difference(d["aspect"], d["detail"]) for d in data["differences"]),
            prompt_delta=data["prompt_tokens_delta"],
            cost_delta=None if cost is None else Decimal(cost),
        )
