"""The prompts, and reading the answers. Bump a ``*_VERSION`` when its prompt changes: the
version is part of the cache key, so old answers are not reused for a new prompt.

The judge prompt follows UMBRELA (Upadhyay et al., 2024, "UMBRELA: UMbrela is the (Open-Source
Reproduction of the) Bing RELevance Assessor"), itself after Thomas et al. (2023): the TREC 0–3
relevance scale spelled out, a decomposed instruction (the query's intent, how well the passage
matches it, how trustworthy it is, then an overall grade), and the answer as one final number in a
fixed format, with no reasoning written out, so it is cheap and can be parsed.

A base model (a local GGUF that was never instruction-tuned, :mod:`.local`) does not follow such
instructions; it continues text. For it (``style="fewshot"``) the question prompt is InPars'
(Bonifacio et al., 2022): examples of a document and a query written for it, then the chunk and
an open ``Relevant Query:`` for the model to complete (doc2query by a language model). The judge
prompt is the same idea: two judged examples, then ``Relevant:`` to complete with yes or no, read
as grade 2 or 0 (relevant or not at the threshold UMBRELA binarises at).

Position bias (``judge --position-bias``): a pointwise judge reads one query and one passage,
so the order it can be swayed by is theirs. ``passage_first`` gives each prompt with the
passage before the query (the few-shot examples swapped alike), everything else unchanged; its
answers are cached under their own version (``-passage-first``).
"""

from __future__ import annotations

import re

__all__ = [
    "JUDGE_VERSION",
    "JUDGE_VERSIONS",
    "QUESTION_VERSION",
    "QUESTION_VERSIONS",
    "REFUSALS",
    "is_question",
    "judge_messages",
    "judge_version",
    "longest_copied_run",
    "parse_excerpt",
    "parse_grade",
    "parse_question",
    "question_messages",
]

JUDGE_VERSION = "umbrela-v1"
QUESTION_VERSION = "question-excerpt-v2"
#: Prompt version per style: part of the cache key, so a base model's answers stay apart.
JUDGE_VERSIONS = {"instruct": JUDGE_VERSION, "fewshot": "fewshot-yn-v1"}
QUESTION_VERSIONS = {"instruct": QUESTION_VERSION, "fewshot": "inpars-v1"}

_JUDGE = """You are a search quality rater judging how relevant a passage is to a search query.
Give the passage an integer grade from 0 to 3:
3 = the passage is dedicated to the query and contains the exact answer.
2 = the passage has some answer for the query, but the answer may be a bit unclear, or hidden \
amongst extraneous information.
1 = the passage seems related to the query but does not answer it.
0 = the passage has nothing to do with the query.
Grade 1 when the passage is about the topic but not the question; grade 2 when it answers part of \
it amid other material; grade 3 only when it answers it entirely. If none fits, grade 0.

Query: {query}

Passage: {passage}

Work through these steps silently:
1. Consider the underlying intent of the query.
2. Measure how well the passage's content matches a likely intent of the query (M).
3. Measure how trustworthy the passage is (T).
4. Weigh M and T and decide the final grade (O), an integer from 0 to 3.
Do not write out the steps or any reasoning. Answer with exactly one line:
##final score: O"""

_QUESTION = """Here is a passage from a document collection.

Passage: {passage}

Write one question that a user of this collection might ask and that this passage answers. \
Use your own words: do not copy phrases of four or more words from the passage, and do not refer \
to "the passage" or "the text". Then copy, exactly as written in the passage, the shortest \
excerpt that answers the question. Answer with exactly two lines:
Question: <the question>
Excerpt: <the excerpt, copied word for word from the passage>"""

_INPARS = """Example 1:
Document: We don't know a lot about the effects of caffeine during pregnancy on you and your \
baby. So it's best to limit the amount you get each day.
Relevant Query: Is caffeine safe during pregnancy?

Example 2:
Document: Vitamin D deficiency was associated with a higher risk of hip fracture in older women \
followed for ten years.
Relevant Query: low vitamin D increases hip fracture risk in elderly women

Example 3:
Document: {passage}
Relevant Query:"""

_JUDGE_FEWSHOT = """Query: Is caffeine safe during pregnancy?
Document: We don't know a lot about the effects of caffeine during pregnancy on you and your baby.
Relevant: yes

Query: low vitamin D increases hip fracture risk
Document: Mitochondrial DNA copy number is associated with cancer risk in smokers.
Relevant: no

Query: {query}
Document: {passage}
Relevant:"""
_JUDGE_FEWSHOT_SWAPPED = """Document: We don't know a lot about the effects of caffeine during \
pregnancy on you and your baby.
Query: Is caffeine safe during pregnancy?
Relevant: yes

Document: Mitochondrial DNA copy number is associated with cancer risk in smokers.
Query: low vitamin D increases hip fracture risk
Relevant: no

Document: {passage}
Query: {query}
Relevant:"""
_SWAPPED = "-passage-first"
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)

_FINAL = re.compile(r"final\s*score\s*[:=]?\s*\**\s*([0-3])\b", re.IGNORECASE)
_ALONE = re.compile(r"^\s*\**\s*([0-3])\s*\**\s*$")


def _passage_first(template: str) -> str:
    """The instruct prompt with its passage before its query (the rest unchanged)."""
    q, p = "Query: {query}\n\n", "Passage: {passage}\n\n"
    return template.replace(q + p, p + q)


def judge_messages(
    query: str, passage: str, style: str = "instruct", *, passage_first: bool = False
) -> list[dict[str, str]]:
    """The judge's prompt; ``passage_first``: the passage shown before the query."""
    if style == "fewshot":
        template = _JUDGE_FEWSHOT_SWAPPED if passage_first else _JUDGE_FEWSHOT
    else:
        template = _passage_first(_JUDGE) if passage_first else _JUDGE
    return [{"role": "user", "content": template.format(query=query, passage=passage)}]


def judge_version(style: str, *, passage_first: bool = False) -> str:
    """The cache version of the judge prompt of ``style`` (and order)."""
    return JUDGE_VERSIONS[style] + (_SWAPPED if passage_first else "")


def question_messages(passage: str, style: str = "instruct") -> list[dict[str, str]]:
    template = _INPARS if style == "fewshot" else _QUESTION
    return [{"role": "user", "content": template.format(passage=passage)}]


def parse_grade(answer: str, style: str = "instruct") -> int | None:
    """The grade in ``##final score: N`` (or an answer that is only the digit); else None.
    ``fewshot``: a leading yes (grade 2) or no (grade 0)."""
    if style == "fewshot":
        yn = _YES_NO.match(answer)
        return None if yn is None else (2 if yn.group(1).lower() == "yes" else 0)
    found = _FINAL.findall(answer)
    if found:
        return int(found[-1])
    alone = _ALONE.match(answer)
    return int(alone.group(1)) if alone else None


#: How an answer that declines, or talks about the task instead of asking, begins: a refusal
#: ("I cannot decide.", "Sorry, …", "As an AI …", "Unfortunately …") or a remark on the
#: passage ("The passage does not say …", "There is no question …", "Not enough information").
#: Matched at the start of the question line, case-insensitively. It catches the usual
#: openings; :func:`is_question` also asks for a question's shape, which a refusal rarely has.
REFUSALS: tuple[str, ...] = (
    r"i\s*(?:cannot|can\s*not|can[’']?t|could\s*not|couldn[’']?t|won[’']?t|will\s*not|do\s*not"
    r"|don[’']?t|am\s*(?:not|unable|sorry|afraid)|[’']m\s*(?:not|unable|sorry|afraid)"
    r"|apologi[sz]e|refuse|decline)\b",
    r"(?:sorry|unfortunately|as\s+an?\s+(?:ai|language\s+model|assistant))\b",
    r"(?:the|this)\s+(?:passage|text|document|excerpt|chunk)\s+(?:does\s*n[o’']t|is\s*n[o’']t"
    r"|contains\s+no|has\s+no|lacks|only|just)\b",
    r"there\s+(?:is|are)\s+no\b",
    r"(?:not\s+enough|insufficient|no)\s+(?:information|context|question)\b",
    r"(?:unable|impossible)\s+to\b",
)
_REFUSAL = re.compile("|".join(f"(?:{r})" for r in REFUSALS), re.IGNORECASE)
#: The words a question in English opens with: interrogatives and inverted auxiliaries.
_QUESTION_WORDS = frozenset(
    {"what", "which", "who", "whom", "whose", "when", "where", "why", "how"}
    | {"is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had"}
    | {"can", "could", "should", "would", "will", "shall", "may", "might", "must"}
)


def is_question(text: str, style: str = "instruct") -> bool:
    """Whether ``text`` (one line, its label stripped) can be a generated query: 3 words or
    more, no refusal (:data:`REFUSALS`), and for an instruction-tuned model, which was asked
    for a question, a question's shape: it ends with ``?`` or opens with a question word. A
    base model's few-shot prompt shows keyword queries too (InPars), so ``fewshot`` needs no
    question mark."""
    words = text.split()
    if len(words) < 3 or _REFUSAL.match(text):
        return False
    if style == "fewshot":
        return True
    return text.endswith("?") or words[0].lower().strip(",:;") in _QUESTION_WORDS


def parse_question(answer: str, style: str = "instruct") -> str | None:
    """The first non-empty line, without a ``Question:`` label or quotes; None if it is not a
    question (:func:`is_question`: too short, a refusal, or not shaped as one)."""
    for line in answer.splitlines():
        text = re.sub(r"^\s*(question\s*:\s*|q\s*:\s*|[-*\d.]+\s+)", "", line, flags=re.I)
        text = text.strip().strip('"“”').strip()
        if text:
            return text if is_question(text, style) else None
    return None


_EXCERPT = re.compile(r"^\s*\**excerpt\**\s*:\s*(.*)", re.IGNORECASE | re.MULTILINE | re.DOTALL)


def parse_excerpt(answer: str) -> str | None:
    """What follows ``Excerpt:`` (to the end of the answer, quotes trimmed); None without it."""
    m = _EXCERPT.search(answer)
    if m is None:
        return None
    text = m.group(1).strip().strip('"“”').strip()
    return text or None


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def longest_copied_run(question: str, passage: str) -> int:
    """The longest run of consecutive words of ``question`` that also occurs in ``passage``."""
    q, p = _words(question), " " + " ".join(_words(passage)) + " "
    best = 0
    for i in range(len(q)):
        j = i + best + 1
        while j <= len(q) and f" {' '.join(q[i:j])} " in p:
            best = j - i
            j += 1
    return best
