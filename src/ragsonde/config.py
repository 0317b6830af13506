"""Settings: init arguments, then environment (``RAGSONDE_…``, ``QDRANT_URL``, …), then
``ragsonde.toml`` (or the file named by ``--config FILE``, else by ``RAGSONDE_CONFIG``), then
defaults."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from ragsonde.config_file import CONFIG_FILE, config_file_path
from ragsonde.config_sources import DEPRECATED_FLAT, nest_flat, setting_sources
from ragsonde.errors import QueryValidationError
from ragsonde.models import Limits
from ragsonde.models.index import (
    Bm25Params,
    Hnsw,
    IndexConfig,
    bm25_language_named,
    quantization_named,
)
from ragsonde.models.keys import unknown_key_message
from ragsonde.models.params import IndexParams, SearchParams
from ragsonde.models.payload import PayloadMapping, build_mapping
from ragsonde.models.query import CollectionName
from ragsonde.models.text import check_json, check_text

__all__ = [
    "DEFAULT_COLLECTION",
    "DEFAULT_EMBEDDER",
    "IndexParams",
    "SearchParams",
    "Settings",
    "bm25_params_of",
    "index_config_of",
    "load_settings",
    "parse_qdrant_url",
]


DEFAULT_EMBEDDER = "local:sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_COLLECTION = "rag_embedding"


_URL_FORMS = (
    "'http(s)://host:port' for a server, ':memory:' for qdrant-client's in-memory local mode, "
    "or 'path:/folder' (or an existing folder) for its on-disk local mode"
)


def parse_qdrant_url(value: str | None) -> str | None:
    """Check a ``QDRANT_URL``: one of the accepted forms (:data:`_URL_FORMS`), or ``None``/empty
    for the embedded store. An existing folder comes back as ``path:<folder>``."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value == ":memory:":
        return value
    if value.startswith("path:") and len(value) > len("path:"):
        folder = Path(value.removeprefix("path:"))
        if folder.exists() and not folder.is_dir():  # qdrant-client: "[Errno 17] File exists"
            raise ValueError(
                f"{value!r} names a file, not a folder: qdrant-client's local mode keeps its "
                "collections in a folder (path:/dir)"
            )
        return value
    parts = urlsplit(value)
    if parts.scheme in ("http", "https"):
        try:
            parts.port  # noqa: B018 - raises ValueError on a port that is not a number
        except ValueError:
            msg = f"QDRANT_URL {value!r} has a bad port; accepted forms: {_URL_FORMS}"
            raise ValueError(msg) from None
        if parts.hostname:
            return value
    elif Path(value).is_dir():
        return f"path:{value}"
    hint = f" (did you mean 'http://{value}'?)" if "://" not in value and ":" in value else ""
    raise ValueError(
        f"QDRANT_URL {value!r} is not a Qdrant location{hint}; accepted forms: {_URL_FORMS}"
    )


class Settings(BaseSettings):
    """Everything ragsonde can be told. Secrets are ``SecretStr`` and never printed."""

    model_config = SettingsConfigDict(
        env_prefix="RAGSONDE_",
        env_nested_delimiter="__",
        extra="ignore",
        populate_by_name=True,
    )

    home: Path = Field(
        default=Path(".ragsonde"),
        description="Where the embedded Qdrant Edge store keeps its collections.",
    )
    embedder: str = Field(
        default=DEFAULT_EMBEDDER,
        description="local:<model or path> | cohere:<model> | openai:<model>",
    )
    collection: CollectionName = DEFAULT_COLLECTION
    qdrant_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("RAGSONDE_QDRANT_URL", "QDRANT_URL", "qdrant_url"),
        description="Where Qdrant is: 'http(s)://host:port' (a server), ':memory:' "
        "(qdrant-client local mode, in memory), 'path:/dir' or an existing folder (local mode "
        "on disk); unset = the embedded Qdrant Edge store.",
    )
    vector: str | None = Field(
        default=None,
        description="RAGSONDE_VECTOR: the named dense vector to search in a collection that has "
        "several; unset = the collection's only dense vector.",
    )
    qdrant_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "RAGSONDE_QDRANT_API_KEY", "QDRANT_API_KEY", "qdrant_api_key"
        ),
    )
    qdrant_timeout_s: float = Field(default=5.0, gt=0)
    cohere_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "RAGSONDE_COHERE_API_KEY", "COHERE_API_KEY", "cohere_api_key"
        ),
    )
    cohere_base_url: str = "https://api.cohere.com"
    openai_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "RAGSONDE_OPENAI_API_KEY", "OPENAI_API_KEY", "openai_api_key"
        ),
    )
    openai_base_url: str = Field(
        default="https://api.openai.com/v1",
        validation_alias=AliasChoices(
            "RAGSONDE_OPENAI_BASE_URL", "OPENAI_BASE_URL", "openai_base_url"
        ),
    )
    embed_timeout_s: float = Field(default=30.0, gt=0)
    embed_deadline_s: float = Field(
        default=30.0,
        gt=0,
        description="RAGSONDE_EMBED_DEADLINE_S: the most one embed call to a remote API may "
        "take, across its requests and retries.",
    )
    embed_max_retries: int = Field(default=4, ge=0, le=10)
    #: RAGSONDE_LLM_DEADLINE_S: one chat call across its retries (never below its timeout).
    llm_deadline_s: float = Field(default=60.0, gt=0)
    embed_batch_size: int = Field(default=64, ge=1, le=4096)
    embed_tokens_per_batch: int = Field(
        default=256,
        ge=1,
        le=1_000_000,
        description="RAGSONDE_EMBED_TOKENS_PER_BATCH: the ONNX backend runs texts in passes of "
        "at most this many padded tokens (and at most embed_batch_size texts); small passes stay "
        "in the CPU's cache (ragsonde.embedders.onnx.DEFAULT_TOKENS_PER_BATCH).",
    )
    device: str = "cpu"
    max_query_chars: int = Field(default=2000, ge=1, le=2000)
    max_top_k: int = Field(default=100, ge=1, le=100)
    max_batch_size: int = Field(default=100, ge=1, le=100)
    # -- how a search runs and how a collection is built: one nested model each, the same names
    # on every surface (ragsonde.models.params). Today's flat names (RAGSONDE_MODE, ``mode = …``
    # at the top of ragsonde.toml, ``Settings(mode=…)``) still work for one release, with a
    # warning: :data:`DEPRECATED_FLAT`.
    search: SearchParams = Field(
        default_factory=SearchParams,
        description="How a search runs: [search] in ragsonde.toml, RAGSONDE_SEARCH__<NAME>.",
    )
    index: IndexParams = Field(
        default_factory=IndexParams,
        description="How a collection is built (applied when one is created): [index] in "
        "ragsonde.toml, RAGSONDE_INDEX__<NAME>.",
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="RAGSONDE_API_KEY: when set, the server's /v1/ routes require this key.",
    )
    max_body_bytes: int = Field(
        default=1_048_576, ge=1024, description="Largest request body the server accepts."
    )
    microbatch: bool | None = Field(
        default=None,
        description="RAGSONDE_MICROBATCH: the server embeds concurrent single queries together, "
        "in one model call; unset: on for the local model, off for remote APIs (see "
        "ragsonde.server.batcher for the measurements).",
    )
    microbatch_ms: float = Field(
        default=0.0,
        ge=0,
        le=1000,
        description="How long a micro-batch waits for more queries; 0 = it takes only those "
        "already waiting.",
    )
    microbatch_max: int = Field(
        default=32, ge=1, le=4096, description="Most query texts in one micro-batch."
    )
    lock_wait_s: float = Field(
        default=10.0,
        ge=0,
        le=600,
        description="RAGSONDE_LOCK_WAIT_S: how long a process waits for another one (the server, "
        "an ingest) to let go of an embedded collection before it fails with CONNECTION_ERROR.",
    )
    server_idle_release_s: float = Field(
        default=2.0,
        gt=0,
        description="RAGSONDE_SERVER_IDLE_RELEASE_S: the server lets go of an embedded collection "
        "it has not queried for this long (at once when another process asks for it), so "
        "`ragsonde ingest` into the same home can write; the next query reopens it.",
    )
    eval_datasets: list[Path] | None = Field(
        default=None,
        description="RAGSONDE_EVAL_DATASETS: the folders whose benchmark files the server's "
        "/v1/eval may read by name; unset = <home>/datasets and <home>/benchmarks (the Judge "
        "view's). Any other path is refused.",
    )
    eval_max_jobs: int = Field(
        default=4,
        ge=1,
        le=1000,
        description="The most /v1/eval jobs queued and running at once; more get 429.",
    )
    mapping: dict[str, str] = Field(
        default_factory=dict,
        description='Where a collection keeps each field: ``[mapping] text = "page_content"``, '
        "RAGSONDE_MAPPING__DOC_ID=metadata.source, --field doc_id=metadata.source; "
        '``layout = "langchain"`` starts from a named layout. Empty: every known layout is '
        "read as is (see ragsonde.models.payload).",
    )

    def __init__(self, **values: Any) -> None:
        """The settings from ``values``, the environment and the settings file. A name that is
        no setting (``Workspace(colection="docs")``) is a VALIDATION_ERROR naming it: it was
        ignored, and the call ran on the default collection. A bad value is one too, naming the
        field and who gave it (pydantic's ValidationError was the error of a library call)."""
        unknown = [k for k in values if not k.startswith("_") and k not in _names()]
        if unknown:
            raise QueryValidationError(
                unknown_key_message(unknown[0], type(self).model_fields, "settings"),
                field=unknown[0],
            )
        try:
            super().__init__(**values)
        except ValidationError as e:
            raise _invalid(e, values) from e

    @field_validator("search")
    @classmethod
    def _check_search(cls, value: SearchParams, info: ValidationInfo) -> SearchParams:
        """``top_k`` within ``max_top_k`` (declared before ``search``, so already read): out of
        it, the settings are refused where they are read, naming whoever gave them (a flag, the
        file, the environment), not at the first query as if a setting nobody set were wrong."""
        most = info.data.get("max_top_k")
        if isinstance(most, int) and value.top_k > most:
            raise ValueError(f"top_k: must be at most max_top_k = {most} (got {value.top_k})")
        return value

    @field_validator("index")
    @classmethod
    def _check_index(cls, value: IndexParams) -> IndexParams:
        """Quantization and BM25 language by their names (the store's tables), normalised."""
        fixed: dict[str, Any] = {}
        checks: dict[str, Callable[[str], str]] = {
            "quantization": lambda v: quantization_named(v).label,
            "bm25_language": bm25_language_named,
        }
        for name, check in checks.items():
            given = getattr(value, name)
            if given is None:
                continue
            try:
                fixed[name] = check(given)
            except (QueryValidationError, ValueError) as e:  # "name: why": _load places it
                why = e.message if isinstance(e, QueryValidationError) else str(e)
                raise ValueError(f"{name}: {why}") from e
        return value.overlay(fixed)

    @property
    def index_config(self) -> IndexConfig | None:
        """The quantization and HNSW graph asked for (only the fields set); ``None``: none."""
        return index_config_of(self.index)

    @property
    def bm25_params(self) -> Bm25Params | None:
        """The BM25 parameters asked for; ``None``: the encoder's defaults."""
        return bm25_params_of(self.index)

    @field_validator("embedder")
    @classmethod
    def _check_embedder(cls, value: str) -> str:
        if ":" not in value:
            raise ValueError("must look like 'local:<model>', 'cohere:<model>' or 'openai:<model>'")
        return value

    @field_validator("home", mode="before")
    @classmethod
    def _check_home(cls, value: Any) -> Any:
        """Empty, it was the working folder; a NUL or a lone surrogate failed at the first write."""
        text = str(value) if isinstance(value, str | Path) else None
        if text is not None and (not text.strip() or "\x00" in text):
            raise ValueError("must name a folder, with no NUL in it (unset: ./.ragsonde)")
        return value if text is None else check_text(text)

    @field_validator("qdrant_url")
    @classmethod
    def _check_qdrant_url(cls, value: str | None) -> str | None:
        return parse_qdrant_url(value if value is None else check_text(value))

    @field_validator("mapping")
    @classmethod
    def _check_mapping(cls, value: dict[str, str]) -> dict[str, str]:
        try:
            build_mapping(check_json(value))
        except QueryValidationError as e:
            raise ValueError(e.message) from e
        return value

    @property
    def payload_mapping(self) -> PayloadMapping:
        """The payload mapping the ``mapping`` setting describes."""
        return build_mapping(self.mapping)

    @property
    def limits(self) -> Limits:
        return Limits(
            max_query_chars=self.max_query_chars,
            max_top_k=self.max_top_k,
            max_batch_size=self.max_batch_size,
        )

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update``; a flat search or index name in it (``{"hnsw_ef": 8}``) goes
        into its table with a :class:`~ragsonde.config_sources.FlatNameWarning`, instead of
        becoming an attribute nothing reads (pydantic's ``model_copy`` does not validate)."""
        if update:
            nested = nest_flat(update, "model_copy")
            for table in ("search", "index"):
                if isinstance(nested.get(table), Mapping):
                    nested[table] = getattr(self, table).overlay(nested[table])
            update = nested
        return super().model_copy(update=update, deep=deep)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return setting_sources(settings_cls, init_settings, env_settings, config_file_path())


def index_config_of(index: IndexParams) -> IndexConfig | None:
    """The store's quantization and HNSW graph for ``index`` (only the fields set); ``None``."""
    fields: dict[str, Any] = {}
    if index.quantization is not None:
        fields["quantization"] = quantization_named(index.quantization)
    graph = {"m": index.hnsw_m, "ef_construct": index.hnsw_ef_construct}
    if any(v is not None for v in graph.values()):
        fields["hnsw"] = Hnsw(**{k: v for k, v in graph.items() if v is not None})
    return IndexConfig(**fields) if fields else None


def bm25_params_of(index: IndexParams) -> Bm25Params | None:
    """The store's BM25 parameters for ``index``; ``None``: the encoder's defaults."""
    given = {
        "k1": index.bm25_k1,
        "b": index.bm25_b,
        "title_weight": index.bm25_title_weight,
        "language": index.bm25_language,
    }
    if all(v is None for v in given.values()):
        return None
    return Bm25Params(**{k: v for k, v in given.items() if v is not None})


def load_settings(*, config: Path | str | None = None, **overrides: Any) -> Settings:
    """Build :class:`Settings`, dropping ``None`` overrides; bad values and a bad config file
    (not TOML, not UTF-8, a folder) become VALIDATION_ERROR naming the file and the line.

    ``config``: the settings file to read instead of ``RAGSONDE_CONFIG`` / ``ragsonde.toml``
    (``--config FILE``, e.g. the one ``ragsonde tune --save-config`` wrote); it must exist.
    """
    clean = {k: v for k, v in overrides.items() if v is not None}
    if config is not None:
        path = Path(config)
        if not path.exists():
            raise QueryValidationError(f"The config file {path} does not exist.", field="config")
        token = CONFIG_FILE.set(path)
        try:
            return _load(path, clean)
        finally:
            CONFIG_FILE.reset(token)
    return _load(config_file_path(), clean)


_TABLES: dict[str, frozenset[str]] = {
    "search": frozenset(SearchParams.model_fields),
    "index": frozenset(IndexParams.model_fields),
}


def _located(err: Any) -> tuple[str, str]:
    """An error's dotted field and message; a table's own check that says ``name: why`` (the
    index names) is placed under that name: ``index.bm25_language``."""
    where = ".".join(str(p) for p in err["loc"])
    why = str(err["msg"]).removeprefix("Value error, ")
    table, _, key = where.rpartition(".")
    if err.get("type") == "extra_forbidden" and table in _TABLES:
        return where, unknown_key_message(key, _TABLES[table], f"[{table}]")
    name, sep, rest = why.partition(": ")
    if sep and name in _TABLES.get(where, ()):
        return f"{where}.{name}", rest
    return where, why


def _given(clean: Mapping[str, Any], loc: Sequence[Any]) -> bool:
    """Whether the value at ``loc`` (a validation error's location) was an override."""
    node: Any = clean
    for key in loc:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return True


@functools.cache
def _names() -> frozenset[str]:
    """The names :class:`Settings` takes: its fields, their aliases, and the flat search and
    index names (:data:`~ragsonde.config_sources.DEPRECATED_FLAT`)."""
    names = set(Settings.model_fields) | set(DEPRECATED_FLAT)
    for field in Settings.model_fields.values():
        if isinstance(field.validation_alias, AliasChoices):
            names.update(c for c in field.validation_alias.choices if isinstance(c, str))
    return frozenset(names)


def _invalid(err: ValidationError, given: Mapping[str, Any]) -> QueryValidationError:
    """``err`` as one VALIDATION_ERROR naming each field, and who gave the first: the options
    (``given``: a command's flags, a call's keywords) or the settings file and environment."""
    errors = err.errors(include_url=False)
    located = [_located(e) for e in errors]
    # a value given as an option (a command's flag, a keyword) was blamed on the file
    source = (
        "options given"
        if _given(given, errors[0]["loc"])
        else f"{config_file_path()} / environment"
    )
    return QueryValidationError(
        f"Invalid settings ({source}): " + "; ".join(f"{where}: {why}" for where, why in located),
        field=located[0][0],
    )


def _load(path: Path, clean: dict[str, Any]) -> Settings:
    from ragsonde.inputs import MAX_SETTINGS_BYTES, not_a_file, size_text

    why = not_a_file(path) if path.exists() else None  # a file that is not there: defaults
    if why is None and path.exists() and path.stat().st_size > MAX_SETTINGS_BYTES:
        why = f"it is larger than {size_text(MAX_SETTINGS_BYTES)}, the most read of a settings file"
    if why is not None:  # a FIFO would block the read, /dev/zero never end
        raise QueryValidationError(
            f"The config file {path} cannot be read: {why}. Remove it, or point "
            "--config (RAGSONDE_CONFIG) at a TOML file.",
            field="config",
        )
    try:
        return Settings(**clean)  # a bad value: VALIDATION_ERROR (Settings.__init__, _invalid)
    except tomllib.TOMLDecodeError as e:  # its message ends "(at line L, column C)"
        raise QueryValidationError(
            f"The config file {path} is not valid TOML: {e}.", field="config"
        ) from e
    except UnicodeDecodeError as e:
        line = e.object[: e.start].count(b"\n") + 1
        raise QueryValidationError(
            f"The config file {path} is not UTF-8 text (line {line}, byte {e.start}).",
            field="config",
        ) from e
    except OSError as e:
        raise QueryValidationError(
            f"The config file {path} cannot be read: {e.strerror or e}.", field="config"
        ) from e
