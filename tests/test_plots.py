"""The shared SVG scatter plot (tune's and chunking's reports)."""

from __future__ import annotations

import re

from ragsonde.plots import Dot, scatter_svg


def test_labels_face_the_middle_and_rings_circle_their_dot() -> None:
    dots = [
        Dot(x=1.0, y=0.5, title="left", fill="#111", label="left <a>"),
        Dot(x=2.0, y=0.9, title="right", fill="#222", label="right", ring="#0f0"),
    ]
    svg = scatter_svg(dots, x_label="MB", y_label="recall", width=400, height=200, pad=40)
    texts = dict(
        (label, (float(x), anchor))
        for x, anchor, label in re.findall(
            r'<text x="([\d.]+)" y="[\d.]+" font-size="10"( text-anchor="end")?>([^<]+)</text>',
            svg,
        )
    )
    # the left dot sits at the axis (x 40), the right one at the far end (x 360)
    assert texts["left &lt;a&gt;"] == (46.0, "")
    assert texts["right"] == (354.0, ' text-anchor="end"')
    assert svg.count('stroke="#0f0"') == 1 and '<circle cx="360.0" cy="40.0" r="9"' in svg
    assert "(log)" not in svg and scatter_svg([], x_label="", y_label="") == ""
