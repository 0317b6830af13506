"""MkDocs hooks: the generated references (the CLI from Typer, the JSON schemas from the models),
and the figures bench/ draws (bench/results/*.svg) published beside the pages that show them, so
that the site links them from where they are made instead of keeping copies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def on_files(files: Any, config: Any, **kwargs: Any) -> Any:
    from mkdocs.structure.files import File

    for svg in sorted((ROOT / "bench" / "results").glob("*.svg")):
        files.append(
            File(
                f"bench/results/{svg.name}",
                src_dir=str(ROOT),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return files


def _cli_reference() -> str:
    """Every command's help as Markdown, by Typer's own generator (``typer … utils docs``)."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "typer", "ragsonde.cli._all", "utils", "docs"]
    text = subprocess.run(  # noqa: S603 (this interpreter, fixed arguments)
        [*command, "--name", "ragsonde"], capture_output=True, text=True, check=True
    ).stdout
    return text.replace("# `ragsonde`", "", 1)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """``<!-- cli -->`` becomes every command's help, and ``<!-- schemas -->`` every published
    schema (``ragsonde schema NAME``) in a collapsed block: the reference is generated from the
    code at build time, so it cannot drift from it."""
    if "<!-- cli -->" in markdown:
        markdown = markdown.replace("<!-- cli -->", _cli_reference())
    marker = "<!-- schemas -->"
    if marker not in markdown:
        return markdown
    from ragsonde.evaluate.schema import SCHEMAS, schema_text

    parts = []
    for name in SCHEMAS:
        body = "\n".join("    " + line for line in schema_text(name).splitlines())
        parts.append(
            f'## `{name}`\n\n`ragsonde schema {name}`\n\n??? note "the schema"\n\n'
            f"    ```json\n{body}\n    ```\n"
        )
    return markdown.replace(marker, "\n".join(parts))
