"""The folders an MCP client may name paths under, and the one check every path passes.

The roots are the ``--root`` folders the server was started with, or else the roots the client
declares (MCP ``roots/list``), or else the folder the server was started in. A path is resolved
(symlinks followed, ``..`` collapsed) before it is compared, so ``../`` and a link that leads
out are refused alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from ragsonde.errors import QueryValidationError
from ragsonde.models import printable

__all__ = ["Roots", "roots_from_uris"]

#: What a folder is read from by name, not by a walk: a BEIR dataset's corpus, queries and qrels.
_READ_BY_NAME = ("corpus.jsonl", "queries.jsonl", "qrels")


def roots_from_uris(uris: Iterable[str]) -> list[Path]:
    """The local folders of ``file://`` root URIs (others are not paths here: skipped)."""
    out: list[Path] = []
    for uri in uris:
        parsed = urlparse(uri)
        if parsed.scheme == "file" and parsed.path:
            out.append(Path(unquote(parsed.path)))
    return out


class Roots:
    """Allowed folders, resolved once; :meth:`check` resolves a path under them."""

    def __init__(self, folders: Sequence[Path], *, refusal: str | None = None) -> None:
        """``refusal``: the one answer to a path outside the folders or missing in them,
        whichever it is (a server reached over the network tells nothing of its disk)."""
        if not folders:
            raise ValueError("Roots: give at least one folder")
        self.folders = [Path(f).expanduser().resolve() for f in folders]
        self.refusal = refusal

    def check(self, path: str, field: str) -> Path:
        """``path`` (relative: to the first root) resolved, if under a root; else a
        VALIDATION_ERROR naming ``field``."""
        if not path or "\x00" in path:
            raise QueryValidationError(f"{field}: give a file path.", field=field)
        try:
            given = Path(path).expanduser()
            full = (given if given.is_absolute() else self.folders[0] / given).resolve()
            exists = full.exists()
        except (OSError, RuntimeError) as e:
            # a name over the file system's limit, a link loop, ~user of no such user: the
            # client's path is at fault, not the server (these were CONNECTION_ERRORs)
            raise QueryValidationError(
                f"{field}: {printable(path)[:200]!r} is not a path this server can read "
                f"({type(e).__name__}: {e.strerror if isinstance(e, OSError) else e}).",
                field=field,
            ) from e
        inside = any(full.is_relative_to(root) for root in self.folders)
        if self.refusal is not None and not (inside and exists):
            raise QueryValidationError(f"{field}: {self.refusal}", field=field)
        if not inside:
            listed = ", ".join(str(r) for r in self.folders)
            raise QueryValidationError(
                f"{field}: {path!r} is outside the folders this server may read ({listed}). "
                "Name a file under one of them, or start the server with --root FOLDER.",
                field=field,
            )
        if not exists:
            raise QueryValidationError(f"{field}: {path!r} does not exist.", field=field)
        if full.is_dir():
            self._named_files_inside(full, path, field)
        return full

    def _named_files_inside(self, folder: Path, path: str, field: str) -> None:
        """The files a folder is read from by name (a BEIR dataset's), under the roots too: a
        walk of a folder skips a link that leads out of it, but a ``corpus.jsonl`` linked to a
        file outside the roots was read by name."""
        for name in _READ_BY_NAME:
            named = folder / name
            inner = sorted(named.iterdir()) if named.is_dir() and not named.is_symlink() else []
            for file in (named, *inner):
                if not file.is_symlink():
                    continue
                target = file.resolve()
                if not any(target.is_relative_to(root) for root in self.folders):
                    said = self.refusal or (
                        f"{printable(path)[:200]!r} holds {file.relative_to(folder)}, a link to "
                        "a file outside the folders this server may read."
                    )
                    raise QueryValidationError(f"{field}: {said}", field=field)

    def __repr__(self) -> str:
        return f"Roots({[str(f) for f in self.folders]})"
