"""What every command shares: settings from options, JSON output, and one error boundary.

Commands are thin: parse options, call the library, print. Library errors become one clean
message (or, with ``--json``, the contract error object on stdout) and an exit code:
2 for VALIDATION_ERROR and usage errors, 1 for every other error, 0 for success.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, ParamSpec, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from ragsonde.errors import ErrorCode, QueryValidationError, RagsondeError, RelevanceError
from ragsonde.models.text import json_for_terminal, printable, terminal_text

if TYPE_CHECKING:
    # the settings (pydantic-settings, the store's index models) are loaded by the commands that
    # read them: `history list --history FILE` needs none
    from ragsonde.config import Settings

__all__ = [
    "EXIT_CODES",
    "CollectionOpt",
    "ConfigOpt",
    "EmbedderOpt",
    "FieldOpt",
    "HomeOpt",
    "JsonOpt",
    "SafeConsole",
    "VectorOpt",
    "cli_errors",
    "console",
    "err_console",
    "exit_code_for",
    "fail",
    "parse_fields",
    "print_json",
    "settings_from_options",
]

P = ParamSpec("P")
R = TypeVar("R")


class SafeConsole(Console):
    """A Rich console that shows control characters instead of obeying them.

    Whatever a command prints can hold text somebody else wrote: a stored chunk, a logged query,
    a benchmark's ids, an error echoing its input. Rich passes ESC, the other C0/C1 controls and
    the bidi overrides to the terminal, where they restyle it, move the cursor or reorder a line;
    this console shows each as an escape (``\\x1b``) and a lone surrogate as U+FFFD, keeping
    line breaks and tabs (:func:`ragsonde.models.text.terminal_text`). Strings are cleaned before
    Rich lays them out (so a table measures what it shows), and every rendered segment once more
    (a ``Text`` built directly); Rich's own control segments (styles, cursor moves) pass as they
    are."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal_text(text), **kwargs)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None and segment.text:
                shown = terminal_text(segment.text)
                if shown is not segment.text:
                    segment = Segment(shown, segment.style)
            yield segment


def _console(stderr: bool = False) -> Console:
    """The CLI's console (:class:`SafeConsole`); piped into a file or a CI log it is 120 columns
    wide, not 80, so the tables are not cut into ellipses (``COLUMNS`` still wins)."""
    stream = sys.stderr if stderr else sys.stdout
    wide = not stream.isatty() and "COLUMNS" not in os.environ
    return SafeConsole(stderr=stderr, highlight=False, width=120 if wide else None)


console = _console()
err_console = _console(stderr=True)


#: ``--collection/-c``: which collection (default: RAGSONDE_COLLECTION, else rag_embedding).
CollectionOpt = Annotated[
    str | None,
    typer.Option(
        "--collection",
        "-c",
        help="Collection name \\[default: RAGSONDE_COLLECTION or rag_embedding]",
    ),
]
#: ``--embedder``: which embedder (default: RAGSONDE_EMBEDDER, else the local MiniLM).
EmbedderOpt = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        help="local:<model> | openai:<model> | cohere:<model> \\[default: RAGSONDE_EMBEDDER]",
    ),
]
#: ``--json``: print exactly the contract JSON on stdout.
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON (the contract's shape).")
]


def _home_folder(text: str) -> Path:
    """``--home`` as a path; an empty one was the working folder (``Path("")`` is ``.``), so a
    script's unset variable (``--home "$HOME_DIR"``) wrote collections and history there."""
    if not text.strip():
        raise typer.BadParameter(
            "must name a folder (leave --home out for RAGSONDE_HOME or ./.ragsonde)"
        )
    return Path(text)


#: ``--home``: where the embedded store lives.
HomeOpt = Annotated[
    Path | None,
    typer.Option(
        "--home",
        parser=_home_folder,
        help="Embedded store folder \\[default: RAGSONDE_HOME or ./.ragsonde]",
    ),
]


#: Exit codes by error type, looked up along the raised error's MRO; an error no entry names
#: exits 2 for VALIDATION_ERROR and 1 otherwise. A benchmark whose ids the collection lacks is a
#: VALIDATION_ERROR, but the evaluation itself failed: 1, as for a failed gate.
EXIT_CODES: dict[type[RagsondeError], int] = {RelevanceError: 1}


def exit_code_for(exc: RagsondeError) -> int:
    """The exit code for ``exc``: its type's :data:`EXIT_CODES` entry, else 2 for bad input and
    1 for everything else."""
    for cls in type(exc).__mro__:
        code = EXIT_CODES.get(cls)
        if code is not None:
            return code
    return 2 if exc.code is ErrorCode.VALIDATION_ERROR else 1


#: ``--config FILE``: the settings file (TOML) to read instead of RAGSONDE_CONFIG/ragsonde.toml.
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Settings file (TOML), e.g. the one `ragsonde tune --save-config` writes; read "
        "instead of RAGSONDE_CONFIG / ./ragsonde.toml (options and environment still win).",
    ),
]

#: ``ragsonde --config FILE <command>``: the root option, for commands given no --config.
_root: dict[str, Path | None] = {"config": None}


def set_root_config(path: Path | None) -> None:
    """Remember the root ``--config`` (the app's callback calls this on every invocation)."""
    _root["config"] = path


def config_file_in_use(config: Path | None = None) -> Path:
    """The settings file a command reads: its ``--config``, the root one, else
    RAGSONDE_CONFIG or ./ragsonde.toml (which may not exist)."""
    from ragsonde.config_file import config_file_path

    return config or _root["config"] or config_file_path()


def settings_from_options(*, config: Path | None = None, **overrides: Any) -> Settings:
    """Settings from CLI options (``None`` = not given), then environment, then the settings
    file: ``config`` (the command's ``--config``), else the root ``--config``, else
    RAGSONDE_CONFIG or ragsonde.toml. A ``--config`` file that is missing or invalid is a
    VALIDATION_ERROR naming it."""
    from ragsonde.config import load_settings

    return load_settings(config=config or _root["config"], **overrides)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if hasattr(obj, "to_json") and callable(obj.to_json):
        return obj.to_json()
    return obj


def print_json(obj: Any) -> None:
    """Write ``obj`` (a model, a dict, or anything with ``to_json()``) as JSON on stdout, with
    what a terminal would act on escaped (text in it is anybody's: a chunk, a logged query)."""
    dumped = json.dumps(_jsonable(obj), indent=2, ensure_ascii=False, default=str)
    sys.stdout.write(json_for_terminal(dumped))
    sys.stdout.write("\n")
    sys.stdout.flush()


def fail(exc: RagsondeError, *, json_output: bool, payload: Any = None) -> NoReturn:
    """Report ``exc`` and exit: JSON ``payload`` (default: the error object) on stdout with
    ``--json``, a one-line message on stderr otherwise."""
    if json_output:
        print_json(
            payload
            if payload is not None
            else {"status": "error", "error": {"code": exc.code.value, "message": exc.message}}
        )
    else:
        # escaped: messages quote install hints like 'ragsonde[local]' that Rich reads as markup
        err_console.print(f"[bold red]{exc.code.value}[/]: {escape(exc.message)}", soft_wrap=True)
    raise typer.Exit(exit_code_for(exc))


def _path_error(exc: OSError) -> RagsondeError:
    """``exc`` as a VALIDATION_ERROR when it is about a path; re-raised otherwise (a socket)."""
    if exc.filename is None:
        raise exc
    name = os.fsdecode(exc.filename) if isinstance(exc.filename, bytes) else str(exc.filename)
    shown = printable(name if len(name) <= 200 else name[:200] + "…")
    return QueryValidationError(
        f"Cannot use the path '{shown}': {exc.strerror or exc}.", field="path"
    )


def _as_ragsonde_error(exc: RagsondeError | OSError | ValidationError) -> RagsondeError:
    """What the user reads: a RagsondeError as it is; a model the command built from its
    arguments that refused a value as a VALIDATION_ERROR naming the field and the rule."""
    if isinstance(exc, RagsondeError):
        return exc
    if isinstance(exc, OSError):
        return _path_error(exc)
    from ragsonde.evaluate.options import options_error

    return options_error(exc)


def _where_looked(error: RagsondeError, arguments: Mapping[str, Any]) -> RagsondeError:
    """An empty store's COLLECTION_NOT_FOUND, when the store is the default one under the
    working folder: where that is. Run from another folder, a user read "there are no
    collections yet" about collections they had just ingested elsewhere."""
    from ragsonde.errors import CollectionNotFoundError

    default_store = not (
        arguments.get("home")
        or arguments.get("config_file")
        or any(os.environ.get(v) for v in ("RAGSONDE_HOME", "QDRANT_URL", "RAGSONDE_QDRANT_URL"))
        or Path("ragsonde.toml").is_file()
    )
    if not isinstance(error, CollectionNotFoundError) or error.available or not default_store:
        return error
    cwd = printable(os.getcwd())
    error.message += (
        f" (Looked in ./.ragsonde under the working folder {cwd}: run from the folder you "
        "ingested in, or name its store with --home / RAGSONDE_HOME.)"
    )
    return error


def cli_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorate a command: any RagsondeError becomes a clean message/JSON and its exit code.

    The command's ``json_output`` parameter (if it has one) decides the format. An OSError about
    a path the command was given (a name too long, a directory where a file was meant, no
    permission, a full disk) that no check caught earlier is a VALIDATION_ERROR naming the path,
    and so is a pydantic ValidationError of a model built from the arguments (``tune
    --max-latency-ms 0``): never a traceback (both found by tests/fuzz).
    """
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (RagsondeError, OSError, ValidationError) as exc:
            error = _as_ragsonde_error(exc)
            bound = signature.bind_partial(*args, **kwargs)
            error = _where_looked(error, bound.arguments)
            fail(error, json_output=bool(bound.arguments.get("json_output", False)))

    return wrapper


#: ``--field FIELD=PATH``: where the collection keeps a field (repeatable; merged over the
#: ``mapping`` setting from ragsonde.toml / RAGSONDE_MAPPING__FIELD).
FieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--field",
        help="FIELD=PATH: read a field from another payload path, e.g. --field text=page_content "
        "--field doc_id=metadata.source (dotted for nested; layout=langchain picks a layout).",
    ),
]


#: ``--vector``: the named dense vector to search, in a collection that has several.
VectorOpt = Annotated[
    str | None,
    typer.Option(
        "--vector",
        help="Named dense vector to search \\[default: RAGSONDE_VECTOR, else the only one]",
    ),
]


def parse_fields(items: list[str] | None) -> dict[str, str] | None:
    """``--field FIELD=PATH`` options as a ``mapping`` setting."""
    if not items:
        return None
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise QueryValidationError(
                f"Bad --field {item!r}: write FIELD=PATH, e.g. --field doc_id=metadata.source.",
                field="mapping",
            )
        out[key.strip()] = value.strip()
    return out
