"""What the CLI prints of text somebody else wrote is shown, never obeyed by the terminal.

A stored chunk, a judged query or an error echoing its input can hold ESC sequences (a colour, a
window title, "clear the screen"), CR, BEL or a bidi override. Every command prints through
:class:`ragsonde.cli._common.SafeConsole`, which shows each as an escape and keeps line breaks
and tabs. Before it, only the traffic report escaped them: ``ragsonde query`` on a collection
whose chunk held ``ESC[2J`` cleared the user's terminal.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.table import Table
from rich.text import Text

from ragsonde.cli._common import SafeConsole, print_json

HOSTILE = "lidar \x1b]0;pwned\x07 sensor \x1b[2J reads\r \u202eegnar \x9b31m"
#: What a terminal would act on: C0 but newline, C1 (0x9b is CSI), DEL, the bidi overrides.
ACTED_ON = [chr(c) for c in (*range(0, 9), *range(11, 32), *range(127, 160))] + [
    "\u202a",
    "\u202e",
    "\u2066",
    "\u2069",
]


def _printed(*renderables: object) -> str:
    out = io.StringIO()
    console = SafeConsole(file=out, width=200, highlight=False)
    for r in renderables:
        console.print(r)
    return out.getvalue()


def test_strings_text_and_table_cells_are_shown_as_escapes() -> None:
    table = Table()
    table.add_column("query")
    table.add_row(HOSTILE)
    table.add_row(Text("direct " + HOSTILE))  # a Text built directly skips render_str
    shown = _printed(HOSTILE, Text(HOSTILE), table)
    assert not any(c in shown for c in ACTED_ON)
    assert shown.count("\\x1b[2J") == 4 and shown.count("\\u202eegnar") == 4
    assert "\\x9b31m" in shown and "\\r" in shown


def test_line_breaks_tabs_and_plain_text_are_kept() -> None:
    shown = _printed("first line\n\tsecond line", "naïve café — ✓")
    assert shown == "first line\n        second line\nnaïve café — ✓\n"


def test_a_lone_surrogate_is_printed_as_the_replacement_character() -> None:
    assert _printed("bad \ud800 text") == "bad \ufffd text\n"


def test_json_output_escapes_what_a_terminal_acts_on_and_reads_back_the_same(
    capsys: pytest.CaptureFixture[str],
) -> None:
    value = {"text": HOSTILE + " \x7f \u2066x\u2069 bad \udc80 end", "n": 1}
    print_json(value)
    out = capsys.readouterr().out
    assert not any(c in out for c in ACTED_ON)
    assert "\\u009b31m" in out and "\\udc80" in out
    out.encode("utf-8")  # a lone surrogate written raw could not be
    assert json.loads(out) == value


@pytest.mark.slow  # the real model embeds the chunk and the query
def test_query_shows_a_stored_chunk_escapes_as_text(cli, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "evil.md").write_text(f"# Evil page\n\nThe {HOSTILE} range.\n", encoding="utf-8")
    home = ["--home", str(tmp_path / "home"), "-c", "evil"]
    assert cli("ingest", str(docs), *home).exit_code == 0
    out = cli("query", "lidar sensor \x1b[31m", *home)
    assert out.exit_code == 0, out.output
    assert not any(c in out.stdout for c in ACTED_ON)
    assert "\\x1b[2J" in out.stdout and "\\u202eegnar" in out.stdout
