"""A chunking configuration (splitter, size, overlap), its label, and the default grid."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragsonde.errors import QueryValidationError
from ragsonde.ingest.splitters import SPLITTERS, TOKEN_UNITS

__all__ = ["DEFAULT_GRID", "RAGSONDE", "ChunkingConfig", "parse_configs"]

#: The ingest pipeline's own chunking: its splitter, the model's window, 10 % overlap.
RAGSONDE = "ragsonde"
_LABEL = re.compile(r"^\s*([a-z-]+)(?:\s+(\d+)\s*/\s*(\d+))?\s*$")


class ChunkingConfig(BaseModel):
    """``splitter`` (:data:`~ragsonde.ingest.splitters.SPLITTERS`, or ``ragsonde``),
    ``size`` and ``overlap`` in its unit (tokens, or characters for ``recursive-chars``);
    ``ragsonde`` with size 0 takes ingest's defaults for the embedder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    splitter: str
    size: int = Field(default=0, ge=0)
    overlap: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _check(self) -> ChunkingConfig:
        if self.splitter != RAGSONDE and self.splitter not in SPLITTERS:
            raise ValueError(
                f"unknown splitter {self.splitter!r}: one of {RAGSONDE}, {', '.join(SPLITTERS)}"
            )
        if self.splitter != RAGSONDE and self.size < 16:
            raise ValueError(f"{self.splitter}: the size must be at least 16")
        if self.size and self.overlap * 2 > self.size:
            raise ValueError(f"{self.label}: the overlap must be at most half the size")
        return self

    @property
    def unit(self) -> str:
        return "tokens" if self.splitter in TOKEN_UNITS else "characters"

    def fits(self, window: int | None) -> bool:
        """Whether ``ragsonde ingest`` takes this configuration for an embedder that reads
        ``window`` word pieces: a size in tokens must fit in it (``None``: no local tokenizer,
        sizes in characters)."""
        return window is None or self.unit != "tokens" or self.size <= window

    @property
    def label(self) -> str:
        """``recursive 400/200`` (``ragsonde`` alone for ingest's defaults)."""
        if self.splitter == RAGSONDE and not self.size:
            return RAGSONDE
        return f"{self.splitter} {self.size}/{self.overlap}"

    @property
    def key(self) -> str:
        """The label as a file name: ``recursive-400-200``."""
        return self.label.replace(" ", "-").replace("/", "-")


def parse_configs(labels: list[str]) -> list[ChunkingConfig]:
    """``["recursive 400/200", "ragsonde"]`` -> configurations (VALIDATION_ERROR naming the
    label that is wrong)."""
    out = []
    for label in labels:
        m = _LABEL.match(label)
        if m is None or (m.group(2) is None and m.group(1) != RAGSONDE):
            raise QueryValidationError(
                f"chunking configuration {label!r}: write SPLITTER SIZE/OVERLAP "
                f"(e.g. 'recursive 400/200') or '{RAGSONDE}'",
                field="configs",
            )
        try:
            out.append(
                ChunkingConfig(
                    splitter=m.group(1), size=int(m.group(2) or 0), overlap=int(m.group(3) or 0)
                )
            )
        except ValidationError as e:
            why = "; ".join(str(err["msg"]).removeprefix("Value error, ") for err in e.errors())
            raise QueryValidationError(
                f"chunking configuration {label!r}: {why}", field="configs"
            ) from None
    if len({c.label for c in out}) != len(out):
        raise QueryValidationError("chunking configurations repeat", field="configs")
    return out


#: The default sweep: Chroma's report's headline configurations (recursive windows of 200 to
#: 800 tokens; fixed token windows of 200/0 and with 50 % overlap, 250/125, 400/200 and OpenAI's
#: 800/400), the Markdown-aware splitter, and ingest's own; ``recursive-chars``, ``sentence``,
#: 128-token and other windows on demand (``--config-grid``). Each costs a full embedding pass
#: over the corpus, except where it makes the same chunks as another (measured once).
DEFAULT_GRID: tuple[ChunkingConfig, ...] = tuple(
    parse_configs(
        [
            RAGSONDE,
            "recursive 200/0",
            "recursive 400/200",
            "recursive 800/400",
            "fixed 200/0",
            "fixed 250/125",
            "fixed 400/200",
            "fixed 800/400",
            "markdown 200/0",
        ]
    )
)
