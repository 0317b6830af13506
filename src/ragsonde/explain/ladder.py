"""The miss ladder: which stage of the pipeline lost a relevant document.

For one query and one relevant document outside the top k, the stages of :data:`LADDER` are
tried in the documented order (:data:`~ragsonde.evaluate.misses.STAGES`); the miss is blamed on the
first one whose relaxation brings the document into the top k. The relaxations accumulate, each
on top of the ones before, as the query's searches were planned (:mod:`.probe`):

1. ``not_in_collection`` — no point carries the document's id (or each carries it only inside
   a list or an object, which the store's filter matches and a hit never counts as);
2. ``no_text`` — every chunk of it has empty or missing text;
3. ``filter`` — the query's filter excludes every chunk of it (each excluding condition named);
4. ``threshold`` — in the top k once the score threshold is dropped (its score vs the threshold);
5. ``quantization`` — in the top k once full-precision vectors are searched;
6. ``ann`` — in the top k of the exact search (exact rank vs HNSW rank, the ``hnsw_ef``);
7. ``crowding`` — in the top k documents once many more chunks are fetched before collapsing;
8. ``fusion`` (hybrid) — one branch alone ranks it within k, the fused list does not;
9. ``truncation`` — its best chunk is longer than the embedder's window (tokens vs window);
10. ``chunking`` — the answer (a span-labelled benchmark's excerpts in this document) is split:
    no chunk holds :data:`SPLIT_SHARE` of it (each chunk's share named), or none holds any of
    it; "not measurable" without answer spans, or when the chunks record none;
11. ``ranking`` — none of the above: its rank r with everything relaxed, the gap to the k-th.

A stage is one small object: :meth:`Rung.check` reads the probe and returns a
:class:`~ragsonde.evaluate.misses.Step`; adding a stage is adding a rung to :data:`LADDER`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ragsonde.evaluate.misses import STAGES, Miss, Outcome, Stage, Step
from ragsonde.evaluate.spans import span_scores
from ragsonde.explain.probe import DocFacts, Probe, Setup

__all__ = ["LADDER", "SPLIT_SHARE", "Rung", "climb"]

_SNIPPET = 300
#: The share of the answer one chunk must hold for the answer not to count as split.
SPLIT_SHARE = 0.5
Evidence = str | int | float | bool | None


@dataclass
class Attempt:
    """One missed document on its way up the ladder."""

    setup: Setup
    probe: Probe
    doc: str
    facts: DocFacts
    evidence: dict[str, Evidence] = field(default_factory=dict)

    @property
    def k(self) -> int:
        return self.setup.k


class Rung:
    """One stage: check it for a missed document, say what was found."""

    stage: ClassVar[Stage]

    def check(self, a: Attempt) -> Step:
        raise NotImplementedError

    def step(self, outcome: Outcome, detail: str) -> Step:
        return Step(stage=self.stage, outcome=outcome, detail=detail)

    def blame(self, a: Attempt, detail: str, **evidence: Evidence) -> Step:
        """This stage lost the document: ``detail`` says how, ``evidence`` the figures."""
        a.evidence.update(evidence)
        return self.step("blamed", detail)

    def skipped(self, a: Attempt) -> Step | None:
        """The step for a stage this run cannot relax (backend) or has nothing to relax."""
        if self.stage in a.setup.unmeasurable:
            return self.step("not_measurable", a.setup.unmeasurable[self.stage])
        if self.stage in a.setup.inapplicable:
            return self.step("not_applicable", a.setup.inapplicable[self.stage])
        return None


class NotInCollection(Rung):
    stage = "not_in_collection"

    def check(self, a: Attempt) -> Step:
        n, path = a.facts.chunks, a.setup.pipeline.doc_path
        if n == 0:
            return self.blame(a, f"no point carries '{a.doc}' at {path}", path=path)
        odd = a.facts.unread_ids
        if len(odd) == n:  # found by the store's filter inside a list: no hit counts as it
            return self.blame(
                a,
                f"{n} chunk(s) carry '{a.doc}' at {path} only inside a value that is no "
                f"document id ({', '.join(odd[:3])}): a hit counts as no document",
                path=path,
                unread_ids=n,
            )
        return self.step("passed", f"{n} chunk(s) carry it")


class NoText(Rung):
    stage = "no_text"

    def check(self, a: Attempt) -> Step:
        n, empty = a.facts.chunks, a.facts.empty_text
        if empty == n:
            odd = a.facts.unread_text
            why = f" ({'; '.join(odd[:3])}: not text)" if odd else ""
            return self.blame(
                a, f"all {n} chunk(s) have empty or no text{why}", chunks=n, empty=empty
            )
        return self.step("passed", f"{n - empty} chunk(s) have text")


class Filter(Rung):
    stage = "filter"

    def check(self, a: Attempt) -> Step:
        if not a.probe.case.filter:
            return self.step("not_applicable", "the query has no filter")
        if a.facts.passes_filter:
            return self.step("passed", "at least one chunk passes the query's filter")
        which = ", ".join(a.facts.excluding) or "the conditions together"
        return self.blame(
            a,
            f"the filter excludes every chunk of it ({which})",
            **{
                f"filter.{path}": f"wants {wanted}, the document has {has}"
                for path, (wanted, has) in a.facts.excluding.items()
            },
        )


class Threshold(Rung):
    stage = "threshold"

    def check(self, a: Attempt) -> Step:
        threshold = a.setup.pipeline.score_threshold
        if threshold <= 0:
            return self.step("not_applicable", "no score threshold")
        base = a.probe.base
        if base.within(a.doc, a.k):
            score, rank = a.facts.similarity, base.rank(a.doc)
            return self.blame(
                a,
                f"rank {rank} without the threshold; its best similarity {_fmt(score)} is "
                f"below {threshold:g}",
                score=_round(score),
                threshold=threshold,
                rank_without_threshold=rank,
            )
        return self.step("passed", "not in the top k without the threshold either")


class Quantization(Rung):
    stage = "quantization"

    def check(self, a: Attempt) -> Step:
        relaxed = a.probe.unquantized
        skipped = self.skipped(a)
        if skipped is not None or relaxed is None:
            return skipped or self.step("not_applicable", "nothing to relax")
        if relaxed.within(a.doc, a.k):
            quantized, full = a.probe.base.rank(a.doc), relaxed.rank(a.doc)
            return self.blame(
                a,
                f"full-precision vectors rank it {full} (quantized {_rank(quantized)})",
                quantization=a.setup.quantization_label,
                rescore=a.setup.pipeline.quantization_rescore,
                rank_quantized=quantized,
                rank_full_precision=full,
            )
        return self.step("passed", f"full-precision rank {_rank(relaxed.rank(a.doc))}")


class Ann(Rung):
    stage = "ann"

    def check(self, a: Attempt) -> Step:
        exact = a.probe.exact
        skipped = self.skipped(a)
        if skipped is not None or exact is None:
            return skipped or self.step("not_applicable", "nothing to relax")
        before = a.probe.before_exact.rank(a.doc)
        if exact.within(a.doc, a.k):
            ef = a.setup.hnsw_ef_label
            return self.blame(
                a,
                f"exact search ranks it {exact.rank(a.doc)}, HNSW {_rank(before)} (hnsw_ef {ef})",
                rank_exact=exact.rank(a.doc),
                rank_hnsw=before,
                hnsw_ef=ef,
            )
        return self.step("passed", f"exact rank {_rank(exact.rank(a.doc))}")


class Crowding(Rung):
    stage = "crowding"

    def check(self, a: Attempt) -> Step:
        if a.setup.pipeline.by_chunk:
            return self.step("not_applicable", "relevance by chunk: nothing is collapsed")
        deep = a.probe.deep
        fetched = a.probe.before_deep
        if deep.within(a.doc, a.k):
            crowder, n = max(fetched.chunks.items(), key=lambda kv: kv[1], default=("", 0))
            return self.blame(
                a,
                f"{fetched.fetched} chunks held only {len(fetched.docs)} documents ('{crowder}' "
                f"took {n}); fetching {deep.fetched} ranks it {deep.rank(a.doc)}",
                fetched_chunks=fetched.fetched,
                documents_in_fetch=len(fetched.docs),
                deep_chunks=deep.fetched,
                rank_deep=deep.rank(a.doc),
                crowded_by=crowder,
                crowder_chunks=n,
            )
        return self.step("passed", f"rank {_rank(deep.rank(a.doc))} with {deep.fetched} chunks")


class Fusion(Rung):
    stage = "fusion"

    def check(self, a: Attempt) -> Step:
        dense, sparse = a.probe.dense_branch, a.probe.sparse_branch
        if dense is None or sparse is None:
            return self.step("not_applicable", "not a hybrid search")
        rd, rs = dense.rank(a.doc), sparse.rank(a.doc)
        fused = a.probe.deep.rank(a.doc)
        if dense.within(a.doc, a.k) or sparse.within(a.doc, a.k):
            how = a.setup.pipeline.fusion
            return self.blame(
                a,
                f"dense ranks it {_rank(rd)}, BM25 {_rank(rs)}; {how} fusion {_rank(fused)}",
                rank_dense=rd,
                rank_sparse=rs,
                rank_fused=fused,
                fusion=how,
            )
        return self.step("passed", f"dense {_rank(rd)}, BM25 {_rank(rs)}: neither within k")


class Truncation(Rung):
    stage = "truncation"

    def check(self, a: Attempt) -> Step:
        window = a.setup.window
        skipped = self.skipped(a)
        if skipped is not None or window is None:
            return skipped or self.step("not_measurable", "no token window")
        tokens = a.facts.best_tokens
        if tokens is None:
            return self.step("passed", "no chunk text to count")
        if tokens > window:
            return self.blame(
                a,
                f"its best chunk is {tokens} tokens; the model reads {window}: "
                f"{tokens - window} were never embedded",
                tokens=tokens,
                window=window,
            )
        return self.step("passed", f"its best chunk is {tokens} tokens (window {window})")


class Chunking(Rung):
    stage = "chunking"

    def check(self, a: Attempt) -> Step:
        skipped = self.skipped(a)
        if skipped is not None:
            return skipped
        answer = [s for s in a.probe.case.references if s.doc_id == a.doc]
        if not answer:
            return self.step("not_applicable", "the benchmark gives no answer span in it")
        chunks = a.facts.spans
        if chunks is None:
            return self.step(
                "not_measurable", "its chunks record no span (start/end) in the document"
            )
        shares = sorted((span_scores(answer, [c]).recall for c in chunks), reverse=True)
        holding = [s for s in shares if s > 0]
        size = sum(s.end - s.start for s in answer)
        best = holding[0] if holding else 0.0
        if best >= SPLIT_SHARE:
            return self.step("passed", f"one chunk holds {best:.0%} of the answer")
        detail = (
            f"the answer ({size} characters) is split over {len(holding)} chunks; the best "
            f"holds {best:.0%} of it"
            if holding
            else f"no chunk holds any of the answer ({size} characters): it fell between them"
        )
        return self.blame(
            a,
            detail,
            answer_chars=size,
            chunks_holding=len(holding),
            best_share=round(best, 4),
        )


class Ranking(Rung):
    stage = "ranking"

    def check(self, a: Attempt) -> Step:
        deep = a.probe.deep
        r = deep.rank(a.doc)
        scores = list(deep.docs.values())
        kth = scores[a.k - 1] if len(scores) >= a.k else None
        own = deep.docs.get(a.doc, a.facts.score)
        where = str(r) if r is not None else f"beyond the {len(deep.docs)} documents searched"
        return self.blame(
            a,
            f"everything relaxed, it ranks {where}; score {_fmt(own)} vs {_fmt(kth)} at rank {a.k}",
            rank=r,
            searched_documents=len(deep.docs),
            score=_round(own),
            kth_score=_round(kth),
            gap=None if own is None or kth is None else round(kth - own, 4),
            near_miss=r == a.k + 1,
        )


#: The stages, in ladder order (a test checks it against STAGES).
LADDER: tuple[Rung, ...] = (
    NotInCollection(),
    NoText(),
    Filter(),
    Threshold(),
    Quantization(),
    Ann(),
    Crowding(),
    Fusion(),
    Truncation(),
    Chunking(),
    Ranking(),
)
if tuple(r.stage for r in LADDER) != STAGES:  # pragma: no cover - a bug
    raise RuntimeError("LADDER and STAGES disagree")


def climb(setup: Setup, probe: Probe, doc: str, grade: int, facts: DocFacts) -> Miss:
    """One missed document up the ladder: the first blamed stage is the verdict."""
    a = Attempt(setup, probe, doc, facts)
    steps: list[Step] = []
    blamed: Stage = "ranking"
    for rung in LADDER:
        step = rung.check(a)
        steps.append(step)
        if step.outcome == "blamed":
            blamed = step.stage
            break
    best = facts.best_text
    return Miss(
        doc_id=doc,
        grade=grade,
        stage=blamed,
        evidence=a.evidence,
        rank=probe.deep.rank(doc),
        best_chunk=None if best is None else best[:_SNIPPET],
        steps=steps,
    )


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def _rank(r: int | None) -> str:
    return "beyond the fetch" if r is None else str(r)
