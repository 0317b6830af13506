"""Collections ragsonde derives from a user's collection, and the edits it makes on purpose.

A derived copy (``generate --method ict`` writes one) belongs to ragsonde, not to the user: every
point of it carries a :class:`DerivedCopy` stamp under :data:`COPY_KEY` in its payload, saying
what it was copied from, by which method and from which inputs (a digest). So:

- ``generate`` reuses the copy when the inputs are the same, rebuilds it when they differ, and
  never touches a collection without the stamp (a copy the user made);
- ``ragsonde collections`` lists which collections are derived and of what, and prunes them;
- the integrity check knows an intended edit from damage: a chunk ICT rewrote (its query sentence
  removed) carries an :class:`Edit` under :data:`EDIT_KEY` with the hash of the text it wrote,
  so its stored text is checked against that, not against the source's ``content_hash`` (kept
  as the source chunk's). Text changed after the copy was made still fails the check.

The stamp travels with the points (a payload field), so it holds on every backend and after a
push, with nothing kept beside the store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["COPY_KEY", "EDIT_KEY", "DerivedCopy", "Edit", "edit_of", "stamp_of", "text_sha256"]

_M = TypeVar("_M", bound=BaseModel)

#: The payload field that marks every point of a derived copy.
COPY_KEY = "ragsonde_copy"
#: The payload field of a chunk the derivation rewrote on purpose.
EDIT_KEY = "ragsonde_edit"


def text_sha256(text: str) -> str:
    """The hash ``content_hash`` holds: SHA-256 of the UTF-8 text, in hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class DerivedCopy(BaseModel):
    """What a derived copy was made from: the source collection, the method, the inputs."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    of: str
    """The collection it was copied from."""
    method: str
    """How it differs from the source (``ict``: query sentences removed)."""
    inputs: str
    """A digest of everything the copy depends on (source chunks, queries, embedder)."""
    seed: int | None = None


class Edit(BaseModel):
    """A chunk rewritten on purpose: what was removed, and the hash of the text written."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    method: str
    removed: str
    text_sha256: str

    def holds(self, text: str) -> bool:
        """Whether ``text`` is the text this edit wrote (False: changed since)."""
        return text_sha256(text) == self.text_sha256


def _parse(cls: type[_M], value: Any) -> _M | None:
    if not isinstance(value, Mapping):
        return None
    try:
        return cls.model_validate(value)
    except ValidationError:
        return None


def stamp_of(payload: Mapping[str, Any]) -> DerivedCopy | None:
    """The derived-copy stamp of a point's payload (None: not a point of a derived copy)."""
    return _parse(DerivedCopy, payload.get(COPY_KEY))


def edit_of(payload: Mapping[str, Any]) -> Edit | None:
    """The intended edit a point's payload records (None: the chunk is as ingested)."""
    return _parse(Edit, payload.get(EDIT_KEY))
