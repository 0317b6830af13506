"""The command line with every command registered, for tools that read the Typer app from a
module (the docs site's CLI reference: ``typer ragsonde.cli._all utils docs``). ``ragsonde``
itself registers only the command a command line names (:func:`ragsonde.cli._register`)."""

from ragsonde.cli import _register, app

__all__ = ["app"]

_register()
