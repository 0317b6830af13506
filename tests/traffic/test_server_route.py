"""``POST /v1/traffic`` over a real loopback server: the report for the rows sent, clean errors."""

from __future__ import annotations

from pathlib import Path

import httpx

from ragsonde.config import Settings
from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.retriever import Retriever
from ragsonde.server.app import create_app
from ragsonde.server.routes_traffic import MAX_RECORDS
from tests.support import run_server

OFF_TOPIC = "who won the football world cup in 1998?"


def test_rows_in_the_traffic_report_out(sample_home: Path, embedder: OnnxEmbedder) -> None:
    settings = Settings(home=sample_home, collection="robotics")
    records = [
        {"query": "how do I calibrate the laser scanner?", "ids": ["x"], "top_k": 1},
        {"query": OFF_TOPIC},
        {"query": OFF_TOPIC.upper()},
        {"session": "s1"},
    ]
    with Retriever(settings, embedder=embedder) as r, run_server(create_app(settings, r)) as url:
        ok = httpx.post(f"{url}/v1/traffic", json={"records": records}, timeout=120)
        too_many = httpx.post(
            f"{url}/v1/traffic", json={"records": [{"query": "q"}] * (MAX_RECORDS + 1)}
        )
        empty = httpx.post(f"{url}/v1/traffic", json={"records": [{"nothing": 1}]}, timeout=60)
        missing = httpx.post(
            f"{url}/v1/traffic", json={"records": records, "collection": "nope"}, timeout=60
        )
    assert ok.status_code == 200, ok.text
    report = ok.json()
    assert report["n_queries"] == 2 and report["n_records"] == 3
    assert report["read"]["no_query_text"] == 1
    off = next(q for q in report["queries"] if q["query"] == OFF_TOPIC)
    assert off["weight"] == 2 and off["weak"] is True
    calib = next(q for q in report["queries"] if q["query"] != OFF_TOPIC)
    assert calib["mismatch"] == [  # its one id, "x", is no document the replay returned
        "top_k: production 1, replay 5",
        "ids: production returned other documents (0 of its 1 among the replay's 5)",
    ]
    assert report["history_run"] is None
    assert report["flag_reading"].startswith("On SciFact in dense mode the weak flag marked 21%")
    for bad in (too_many, empty):
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "VALIDATION_ERROR"
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "COLLECTION_NOT_FOUND"
