"""Worked examples chosen by similarity to the request, for few-shot prompting.

A small model copies the form of the examples it is shown: one bare command, the current
directory by default, the right program for the job. The corpus ships with conch
(``data/examples.tsv``); the nearest examples are found with BM25 over word stems of each
example's request and the program its command starts with. File names and paths say little
about which command is wanted, so they count only by their extension (``report.csv`` is
``csv``; ``/var/log/app`` counts not at all). Measured by leaving each example out and
retrieving for its request (``python benchmarks/retrieval.py``), this puts an example using
the same program first more often (58.3% of the time, against 53.0% when indexing the whole
command and every word).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

_WORD = re.compile(r"[a-z0-9]+")
# A word with a dot, slash or underscore in it: a file name, a path, an identifier.
_NAME = re.compile(r"\S*[./_]\S*")
_EXTENSION = re.compile(r"[A-Za-z0-9]{1,5}")
_QUOTES = "'\"`,;:()[]{}<>"
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "with",
        "by",
        "and",
        "or",
        "all",
        "every",
        "each",
        "this",
        "that",
        "these",
        "those",
        "my",
        "me",
        "i",
        "it",
        "its",
        "is",
        "are",
        "be",
        "please",
        "current",
        "here",
        "there",
    ]
)


@dataclass(frozen=True, slots=True)
class Example:
    """A request and the command that answers it."""

    request: str
    command: str


# Words that ask for the same thing, as one word: a request for "the five biggest files"
# should find the example for "the 5 largest files".
_SAME = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "twenty": "20",
    "biggest": "largest",
    "bigger": "larger",
    "frequency": "frequent",
    "frequently": "frequent",
}


def _stem(word: str) -> str:
    word = _SAME.get(word, word)
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _name_to_words(match: re.Match[str]) -> str:
    """A file name or path as the words that say what kind of file it is: its extensions
    (``backup.tar.gz``: tar gz), and a short plain stem (``tar.gz``: tar gz)."""
    word = match.group(0).strip(_QUOTES)
    base = word.rsplit("/", 1)[-1]
    if "." not in base:
        return " " if "/" in word else f" {word} "
    stem, *extensions = base.split(".")
    kept = [e for e in extensions if _EXTENSION.fullmatch(e)]
    if stem.isalpha() and len(stem) <= 4:
        kept.insert(0, stem)
    return f" {' '.join(kept)} "


def terms(text: str) -> list[str]:
    """The words retrieval compares: lower-cased, stemmed, stop words out, a file name or path
    reduced to its extension."""
    text = _NAME.sub(_name_to_words, text)
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def _indexed_text(example: Example) -> str:
    """What an example is found by: its request and the program its command runs."""
    return f"{example.request} {example.command.split()[0]}"


def parse_examples(text: str) -> tuple[Example, ...]:
    """Examples in the shipped format: ``request<TAB>command`` lines, ``#`` comments."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        request, _, command = line.partition("\t")
        if command.strip():
            rows.append(Example(request.strip(), command.strip()))
    return tuple(rows)


def _read(name: str) -> tuple[Example, ...]:
    return parse_examples(
        resources.files("conch.command").joinpath(f"data/{name}").read_text("utf-8")
    )


@lru_cache(maxsize=1)
def corpus() -> tuple[Example, ...]:
    """The shipped examples (``data/examples.tsv``)."""
    return _read("examples.tsv")


@lru_cache(maxsize=1)
def larger_corpus() -> tuple[Example, ...]:
    """The shipped examples and 2,359 more (``data/examples-more.tsv``): other wordings of
    the same jobs, which alone measured no better than the shipped ones, but differently."""
    return corpus() + _read("examples-more.tsv")


class Bm25:
    """BM25 over a fixed list of texts (terms as ``terms`` makes them)."""

    def __init__(self, texts: list[str]) -> None:
        self.docs = [Counter(terms(text)) for text in texts]
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.avg = sum(sum(d.values()) for d in self.docs) / max(n, 1)

    def scores(self, query_text: str, ignore: frozenset[str] = frozenset()) -> list[float]:
        """Every text's BM25 score for ``query_text`` (0 when no term is shared); terms in
        ``ignore`` do not count."""
        query = set(terms(query_text)) - ignore
        out = []
        for doc in self.docs:
            length = sum(doc.values())
            score = 0.0
            for term in query & doc.keys():
                tf = doc[term]
                score += self.idf[term] * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / self.avg))
            out.append(score)
        return out

    def top(self, query_text: str, k: int, ignore: frozenset[str] = frozenset()) -> list[int]:
        """The indices of the ``k`` texts most similar to ``query_text``, best first (only
        texts sharing a term with it); terms in ``ignore`` do not count."""
        scored = [(s, i) for i, s in enumerate(self.scores(query_text, ignore)) if s > 0]
        scored.sort(reverse=True)
        return [i for _, i in scored[:k]]


def rank(texts: list[str], query: str, k: int, ignore: frozenset[str] = frozenset()) -> list[int]:
    """The indices of the ``k`` of ``texts`` most similar to ``query`` (BM25), best first."""
    return Bm25(texts).top(query, k, ignore) if k > 0 else []


class Retrieval:
    """Find the examples of ``examples`` nearest a request: BM25, less ``unasked`` times the
    idf of each word an example's request has and the user's request lacks (with ``unasked``
    above 0, plainer examples come first). Only examples sharing a word with the request."""

    def __init__(
        self, examples: tuple[Example, ...], unasked: float = 0.0, index: Bm25 | None = None
    ) -> None:
        self.examples = examples
        self.unasked = unasked
        self.index = index or Bm25([_indexed_text(e) for e in examples])
        self.asks = [frozenset(terms(e.request)) for e in examples] if unasked else []

    def nearest(self, request: str, k: int = 4) -> list[Example]:
        """The ``k`` examples most similar to ``request``, most similar last.

        Most similar last: the example closest to the request then sits right before it.
        """
        if k <= 0:
            return []
        query = set(terms(request))
        idf = self.index.idf
        scored = [
            (s - self.unasked * sum(idf[t] for t in self.asks[i] - query) if self.unasked else s, i)
            for i, s in enumerate(self.index.scores(request))
            if s > 0
        ]
        scored.sort(reverse=True)
        return [self.examples[i] for _, i in reversed(scored[:k])]


# The example sets conch can be asked to find examples in (``generation.review``).
RETRIEVALS = ("shipped", "larger", "plain")
# How much ``plain`` holds an example's unasked words against it (measured: 0.3).
PLAIN_UNASKED = 0.3


@cache
def retrieval(name: str = "shipped") -> Retrieval:
    """``shipped``: the shipped examples; ``larger``: with ``data/examples-more.tsv``;
    ``plain``: the shipped examples, plainer ones first."""
    if name == "shipped":
        return Retrieval(corpus())
    if name == "larger":
        return Retrieval(larger_corpus())
    if name == "plain":
        return Retrieval(corpus(), PLAIN_UNASKED, retrieval("shipped").index)
    raise ValueError(f"unknown example retrieval {name!r}; choose from {', '.join(RETRIEVALS)}")


@cache
def shared_examples(count: int) -> tuple[Example, ...]:
    """The first ``count`` examples every request shares (``data/shared-examples.tsv``: the
    shipped examples most often among the nearest to 2,359 other requests, at most two per
    program; made by ``benchmarks/accuracy/shared_examples.py``)."""
    return _read("shared-examples.tsv")[:count] if count > 0 else ()


def nearest(request: str, k: int = 4) -> list[Example]:
    """The ``k`` shipped examples most similar to ``request`` (BM25), most similar last."""
    return retrieval("shipped").nearest(request, k)
