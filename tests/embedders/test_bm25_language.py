"""The BM25 language: the names the engine knows, validation, labels, what a payload records and
which language a collection's queries use. The real engine's BM25 (``qdrant_edge.Bm25``); no
model."""

from __future__ import annotations

import pytest
import qdrant_edge as qe

from ragsonde.config import load_settings
from ragsonde.embedders.sparse import Bm25Encoder, query_language, recorded_language
from ragsonde.errors import ErrorCode, QueryValidationError
from ragsonde.models.index import BM25_LANGUAGES, DEFAULT_BM25_LANGUAGE, Bm25Params


def test_the_languages_are_the_engines_and_each_one_tokenizes() -> None:
    # a PyO3 enum: its members are the class attributes that are instances of it
    members = [n for n in dir(qe.Language) if isinstance(getattr(qe.Language, n), qe.Language)]
    assert len(members) >= 30
    assert list(BM25_LANGUAGES) == sorted(n.lower() for n in members)
    assert DEFAULT_BM25_LANGUAGE in BM25_LANGUAGES
    for language in BM25_LANGUAGES:  # the engine accepts every name as it is spelt here
        [vector] = Bm25Encoder(language=language).embed_documents(["Robots 42 robots"])
        assert vector.indices, language


def test_an_unknown_language_is_a_validation_error_naming_the_valid_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match=r"unsupported BM25 language 'klingon'.*german"):
        Bm25Params(language="klingon")
    assert Bm25Params(language=" German ").language == "german"
    monkeypatch.setenv("RAGSONDE_INDEX__BM25_LANGUAGE", "klingon")
    with pytest.raises(QueryValidationError) as caught:
        load_settings()
    assert caught.value.code is ErrorCode.VALIDATION_ERROR
    assert caught.value.field == "index.bm25_language"
    assert "'klingon'" in caught.value.message
    assert all(name in caught.value.message for name in BM25_LANGUAGES)
    monkeypatch.setenv("RAGSONDE_INDEX__BM25_LANGUAGE", "FRENCH")
    settings = load_settings()
    assert settings.index.bm25_language == "french"
    assert settings.bm25_params == Bm25Params(language="french")
    # an encoder built around the model (no Bm25Params) still fails inside the error tree
    with pytest.raises(QueryValidationError, match="unsupported language"):
        Bm25Encoder(language="klingon").embed_queries(["x"])


def test_labels_name_a_language_other_than_english_only() -> None:
    assert Bm25Params().label == "bm25-k1.2-b0.75"
    assert Bm25Params(language="english").label == "bm25-k1.2-b0.75"
    assert Bm25Params(language="german").label == "bm25-k1.2-b0.75-german"
    assert Bm25Params(k1=0.9, b=0.4, title_weight=2, language="french").label == (
        "bm25-k0.9-b0.4-t2-french"
    )
    for language in BM25_LANGUAGES:
        for params in (
            Bm25Params(language=language),
            Bm25Params(title_weight=3, language=language),
        ):
            assert Bm25Params.language_of_label(params.label) == language
    assert Bm25Params.language_of_label(Bm25Params(title_weight=2).label) == "english"
    assert Bm25Params.language_of_label("yes") is None  # not a label


def test_what_a_payload_records() -> None:
    german = Bm25Params(language="german").label
    assert recorded_language({"text": "x", "embed_hash": "h", "bm25": german}) == "german"
    titled = Bm25Params(title_weight=2).label
    assert recorded_language({"text": "x", "embed_hash": "h", "bm25": titled}) == "english"
    # ragsonde's default parameters: no label, English
    assert recorded_language({"text": "x", "embed_hash": "h"}) == "english"
    # another pipeline's chunk records nothing
    assert recorded_language({"page_content": "x", "metadata": {}}) is None
    # nor does one whose own "bm25" field is not a ragsonde label
    assert recorded_language({"page_content": "x", "bm25": "yes"}) is None


def test_the_query_language_is_the_recorded_one_and_a_contradiction_says_both() -> None:
    assert query_language("c", "german", None) == "german"
    assert query_language("c", "german", "german") == "german"
    assert query_language("c", None, "french") == "french"  # foreign: the setting
    assert query_language("c", None, None) == "english"
    with pytest.raises(QueryValidationError) as caught:
        query_language("docs-de", "german", "english")
    message = caught.value.message
    assert caught.value.code is ErrorCode.VALIDATION_ERROR
    assert "'docs-de'" in message and "built for german" in message and "is english" in message
    assert "--bm25-language english" in message and "Unset the setting" in message


def test_german_stems_and_drops_german_stop_words_where_english_does_not() -> None:
    english, german = Bm25Encoder(), Bm25Encoder.for_params(Bm25Params(language="german"))
    [de_plural, de_base] = german.embed_queries(["Häusern", "Haus"])
    [en_plural, en_base] = english.embed_queries(["Häusern", "Haus"])
    assert de_plural.indices == de_base.indices
    assert en_plural.indices != en_base.indices
    [de_stop] = german.embed_queries(["und der die"])
    [en_stop] = english.embed_queries(["und der die"])
    assert de_stop.indices == [] and len(en_stop.indices) == 3
