"""The hybrid example lookup of the conch-embedding-retrieval variant, with made-up vectors."""

from __future__ import annotations

import numpy as np
from benchmarks.accuracy.conch_tool import examples_found_by
from benchmarks.accuracy.hybrid_retrieval import HybridRetrieval

import conch.command.generate
from conch.command.examples import corpus, nearest
from conch.config.settings import PromptConfig

REQUEST = "show all environment variables"


def retrieval(weight: float, like: int) -> HybridRetrieval:
    """Random example vectors; every request embeds exactly like example ``like``."""
    vectors = np.random.default_rng(7).normal(size=(len(corpus()), 16)).astype(np.float32)
    return HybridRetrieval(weight, vectors, lambda texts: vectors[[like] * len(texts)])


def test_embeddings_alone_find_the_example_the_request_embeds_like() -> None:
    like = len(corpus()) // 2
    found = retrieval(1.0, like).nearest(REQUEST, 3)
    assert len(found) == 3 and found[-1] == corpus()[like]  # most similar last


def test_bm25_alone_finds_what_conch_finds() -> None:
    assert retrieval(0.0, 0).nearest(REQUEST, 4) == nearest(REQUEST, 4)


def test_installed_swaps_conchs_lookup_and_puts_it_back() -> None:
    like = 5
    hybrid = retrieval(1.0, like)
    with examples_found_by(hybrid.nearest):
        chosen = conch.command.generate.select_examples(PromptConfig(), REQUEST, 2)
    assert chosen[-1] == corpus()[like]
    assert conch.command.generate.select_examples(PromptConfig(), REQUEST, 2) == nearest(REQUEST, 2)
