"""The query side of the contract: :class:`Query` and :class:`BatchRequest`.

Limits (``max_query_chars``, ``max_top_k``, ``max_batch_size``) default to the contract's values
and may be lowered by a deployment: pass ``context={"limits": Limits(...)}`` to
``model_validate``; :func:`parse_query` does that for you.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ragsonde.errors import QueryValidationError
from ragsonde.models.params import SearchParams
from ragsonde.models.text import UnicodeStr, check_text, printable

__all__ = [
    "DEFAULT_LIMITS",
    "BatchRequest",
    "FilterValue",
    "Limits",
    "Query",
    "SearchMode",
    "check_collection",
    "parse_query",
    "resolve_collection",
    "validation_error_from_pydantic",
]

SearchMode = Literal["dense", "sparse", "hybrid"]
#: A filter value: one value, or a list meaning "any of".
FilterValue = StrictStr | StrictInt | StrictBool | list[StrictStr | StrictInt | StrictBool]
#: Qdrant's payload integers are 64-bit: a filter on 10**30 was a TypeError from the engine,
#: out of ``retrieve``, which never raises.
_INT64 = range(-(2**63), 2**63)


@dataclass(frozen=True)
class Limits:
    """The contract's limits; a deployment may lower them."""

    max_query_chars: int = 2000
    max_top_k: int = 100
    max_batch_size: int = 100


DEFAULT_LIMITS = Limits()

#: The longest collection name the contract takes (``Query.collection``, ``BatchRequest``'s).
MAX_COLLECTION_CHARS = 255


def _collection_rule(name: str) -> str:
    """The contract's rule for a collection's name, in the order a caller can act on: valid
    Unicode first (a lone surrogate), then 1..255 characters; ValueError says which."""
    check_text(name)
    if not name:
        raise ValueError("give a collection's name, or leave it out (None) for the default one")
    if len(name) > MAX_COLLECTION_CHARS:
        raise ValueError(f"at most {MAX_COLLECTION_CHARS} characters (got {len(name)})")
    return name


#: A collection's name as the contract takes it: valid Unicode text, 1..255 characters (the
#: bounds published as JSON Schema, checked after the text: pydantic's own length check read
#: a lone surrogate as "unable to parse", and "" as "1 item").
CollectionName = Annotated[
    StrictStr,
    AfterValidator(_collection_rule),
    Field(json_schema_extra={"minLength": 1, "maxLength": MAX_COLLECTION_CHARS}),
]


def check_collection(name: object) -> str:
    """``name`` unchanged when it is a collection's name by the contract's rule
    (:data:`CollectionName`); else QueryValidationError (``field="collection"``).

    ``""`` is refused, not read as "the default": a library call that was given ``""`` ran on
    the default collection and reported it as if asked. (The embedded store checks its own,
    narrower rule for folder names when it opens one.)"""
    if not isinstance(name, str):
        raise QueryValidationError(
            f"collection must be a string (a collection's name), not {type(name).__name__}.",
            field="collection",
        )
    try:
        return _collection_rule(name)
    except ValueError as e:
        raise QueryValidationError(f"collection: {e}.", field="collection") from e


def resolve_collection(name: object, default: str) -> str:
    """The collection a call names: ``name``, or ``default`` (the settings') when it names none
    (None). Every library entry that takes ``collection=`` resolves it here, so ``""`` or a
    name that breaks the rule is refused (:func:`check_collection`) instead of quietly meaning
    the default."""
    return default if name is None else check_collection(name)


def _limits(info: ValidationInfo) -> Limits:
    ctx = info.context
    if isinstance(ctx, Mapping):
        limits = ctx.get("limits")
        if isinstance(limits, Limits):
            return limits
    return DEFAULT_LIMITS


def _new_id() -> str:
    return str(uuid.uuid4())


class Query(BaseModel):
    """One retrieval query, as CONTRACT.md defines it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    query_text: Annotated[
        UnicodeStr,
        Field(
            validation_alias=AliasChoices("query_text", "text", "query"),
            description="The question; non-empty after stripping, at most max_query_chars long.",
            # The contract's default limits, stated for OpenAPI clients; the validators enforce
            # the deployment's own (which may be lower).
            json_schema_extra={"minLength": 1, "maxLength": DEFAULT_LIMITS.max_query_chars},
            examples=["How does the lidar sensor measure distance?"],
        ),
    ]
    top_k: Annotated[
        StrictInt,
        Field(
            description="How many results, 1..max_top_k (default max 100).",
            json_schema_extra={"minimum": 1, "maximum": DEFAULT_LIMITS.max_top_k},
        ),
    ] = 5
    score_threshold: Annotated[
        StrictFloat | StrictInt,
        Field(
            validation_alias=AliasChoices("score_threshold", "threshold", "similarity_threshold"),
            description="Keep results whose similarity_score >= this, 0.0..1.0.",
            json_schema_extra={"minimum": 0, "maximum": 1},
        ),
    ] = 0.0
    filters: Annotated[
        dict[str, FilterValue] | None,
        Field(description='Payload conditions: {"url": "…"}, {"section": ["a", "b"]} (any of).'),
    ] = None
    include_metadata: StrictBool = True
    include_vectors: StrictBool = False
    query_id: Annotated[UnicodeStr, Field(min_length=1, max_length=200)] = Field(
        default_factory=_new_id
    )
    collection: CollectionName | None = None
    mode: SearchMode = Field(
        default="dense",
        description="dense, sparse or hybrid; unset = the deployment's search.mode setting.",
    )
    search: SearchParams | None = Field(
        default=None,
        description="Search parameters for this query alone (fusion, hnsw_ef, exact, "
        "quantization_rescore, …); those it does not set inherit the deployment's settings. "
        "mode, top_k and score_threshold given at the top level win over the same names here.",
    )

    @field_validator("query_text")
    @classmethod
    def _check_text(cls, value: str, info: ValidationInfo) -> str:
        text = value.strip()
        if not text:
            raise ValueError("must not be empty or only whitespace")
        if not any(ch.isprintable() and not ch.isspace() for ch in text):  # "\x00": 5 hits
            raise ValueError("must hold a visible character, not only control characters (NUL)")
        limit = _limits(info).max_query_chars
        if len(text) > limit:
            raise ValueError(f"must be at most {limit} characters (got {len(text)})")
        return text

    @field_validator("top_k")
    @classmethod
    def _check_top_k(cls, value: int, info: ValidationInfo) -> int:
        limit = _limits(info).max_top_k
        if not 1 <= value <= limit:
            raise ValueError(f"must be between 1 and {limit} (got {value})")
        return value

    @field_validator("score_threshold")
    @classmethod
    def _check_threshold(cls, value: float) -> float:
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"must be between 0.0 and 1.0 (got {value})")
        return float(value)

    @field_validator("filters")
    @classmethod
    def _check_filters(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        for key, cond in value.items():
            check_text(key, "a filter field name")
            if not key.strip():
                raise ValueError("filter field names must not be empty")
            for item in cond if isinstance(cond, list) else [cond]:
                if isinstance(item, str):
                    check_text(item, f"filter '{printable(key)}'")
                elif isinstance(item, int) and item not in _INT64:
                    raise ValueError(
                        f"filter '{printable(key)}': {item} is out of range (a 64-bit integer)"
                    )
            if isinstance(cond, list) and not cond:
                raise ValueError(f"filter '{key}' has an empty list: give at least one value")
        return value


class BatchRequest(BaseModel):
    """Many queries at once. Queries are embedded in one call and searched in one request.

    A raw JSON batch in which some queries are invalid is still answered (those queries get an
    error response each): use :meth:`ragsonde.Retriever.retrieve_batch` with the raw mapping.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    queries: Annotated[list[Query], Field(min_length=1)]
    collection: CollectionName | None = None
    batch_id: Annotated[UnicodeStr, Field(min_length=1, max_length=200)] = Field(
        default_factory=_new_id
    )

    @field_validator("queries")
    @classmethod
    def _check_size(cls, value: list[Query], info: ValidationInfo) -> list[Query]:
        limit = _limits(info).max_batch_size
        if len(value) > limit:
            raise ValueError(f"must hold at most {limit} queries (got {len(value)})")
        return value


def validation_error_from_pydantic(err: ValidationError) -> QueryValidationError:
    """Turn pydantic's error into one that names each field and the rule it broke."""
    parts: list[str] = []
    first_field: str | None = None
    for item in err.errors(include_url=False):
        loc = printable(".".join(str(p) for p in item["loc"])) or "body"
        first_field = first_field or loc
        msg = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            msg = "is not a known field"
        parts.append(f"{loc}: {msg}")
    return QueryValidationError("Invalid query: " + "; ".join(parts), field=first_field)


def parse_query(data: Query | Mapping[str, Any], limits: Limits = DEFAULT_LIMITS) -> Query:
    """Validate ``data`` into a :class:`Query` under ``limits``; raise QueryValidationError."""
    try:
        if isinstance(data, Query):
            # only what the caller set, so unset fields keep inheriting the settings (the id
            # is kept: it was made when the query was)
            kept = data.model_fields_set | {"query_id"}
            data = {k: getattr(data, k) for k in kept}
        if not isinstance(data, Mapping):
            raise QueryValidationError(
                f"A query must be a JSON object, not {type(data).__name__}.", field="body"
            )
        for key in data:  # pydantic said "body: Input should be a valid string, unable to …"
            if isinstance(key, str):
                try:
                    check_text(key, "a field name")
                except ValueError as e:
                    raise QueryValidationError(f"Invalid query: {e}", field="body") from e
        # strictly, the nested search block too: JSON true is not 1 (score_threshold: true
        # was a threshold of 1.0 and no results) and "yes" is not a bool
        return Query.model_validate(data, strict=True, context={"limits": limits})
    except ValidationError as e:
        raise validation_error_from_pydantic(e) from e
