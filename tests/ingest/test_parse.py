"""Parsers: sections along headings, front matter, main content only."""

from __future__ import annotations

from ragsonde.ingest.parse.html import parse_html
from ragsonde.ingest.parse.markdown import parse_markdown

MD = """---
title: Sensors
url: https://docs.example/sensors
category: hardware
---
# Sensors

Intro about sensors.

## Lidar

Lidar times laser pulses.

```python
# not a heading
scan_range_max = 12.0
```

### Calibration

Spin it on a flat floor.

## Sonar

Ultrasonic echoes.
"""


def test_markdown_sections_follow_the_heading_path():
    parsed = parse_markdown(MD)
    assert parsed.title == "Sensors"
    assert parsed.metadata == {
        "title": "Sensors",
        "url": "https://docs.example/sensors",
        "category": "hardware",
    }
    names = [s.name for s in parsed.sections]
    assert names == [
        "Sensors",
        "Sensors > Lidar",
        "Sensors > Lidar > Calibration",
        "Sensors > Sonar",
    ]
    lidar = parsed.sections[1].text
    assert "# not a heading" in lidar and "scan_range_max" in lidar
    assert parsed.sections[2].text == "Spin it on a flat floor."


def test_markdown_without_front_matter_takes_the_first_h1_as_title():
    parsed = parse_markdown("Preamble.\n\n# Title\n\nBody.\n")
    assert parsed.title == "Title"
    assert [(s.name, s.text) for s in parsed.sections] == [(None, "Preamble."), ("Title", "Body.")]


def test_markdown_with_bad_front_matter_keeps_it_as_text_and_says_so():
    parsed = parse_markdown("---\ntitle: Lidar\nurl: [unclosed\n---\nBody\n")
    assert parsed.metadata == {}
    assert "Body" in parsed.sections[-1].text
    # the metadata it meant (title, url) is lost: said, with where YAML stopped
    assert len(parsed.warnings) == 1 and "not valid YAML" in parsed.warnings[0]
    assert "line " in parsed.warnings[0]


def test_a_rule_then_a_setext_heading_is_markdown_not_a_broken_front_matter():
    parsed = parse_markdown("---\nLidar\n---\nBody\n")  # YAML reads the block as a string
    assert parsed.warnings == () and parsed.metadata == {}
    good = parse_markdown("---\ntitle: Lidar\n---\nBody\n")
    assert good.warnings == () and good.title == "Lidar"


HTML = """<!doctype html><html><head><title>Lidar | Rover docs</title>
<script>var secret = "tracking";</script><style>p{color:red}</style></head>
<body><nav><a href="/">Home</a> <a href="/x">Menu item</a></nav>
<header>Site header</header>
<main><h1>Lidar</h1><p>Lidar times <b>laser</b> pulses.</p>
<h2>Mounting</h2><ul><li><p>Keep it level.</p></li><li>Use M3 screws.</li></ul>
<pre>scan_range_max: 12.0
scan_range_min: 0.1</pre>
<h2>Calibration</h2><p>Spin on a flat floor.</p></main>
<footer>Copyright footer</footer></body></html>"""


def test_html_keeps_main_content_and_splits_on_headings():
    parsed = parse_html(HTML)
    assert parsed.title == "Lidar | Rover docs"
    text = "\n".join(s.text for s in parsed.sections)
    for gone in ("Menu item", "Site header", "Copyright footer", "tracking", "color:red"):
        assert gone not in text
    names = [s.name for s in parsed.sections]
    assert names == ["Lidar", "Lidar > Mounting", "Lidar > Calibration"]
    mounting = parsed.sections[1].text
    assert mounting.count("Keep it level.") == 1  # a <p> inside an <li> is not read twice
    assert "Use M3 screws." in mounting
    assert "scan_range_max: 12.0\nscan_range_min: 0.1" in mounting


def test_html_title_falls_back_to_h1():
    assert parse_html("<body><h1>Docking</h1><p>x</p></body>").title == "Docking"
