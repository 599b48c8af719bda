"""The hybrid example lookup of the conch-embedding-retrieval variant, with made-up vectors."""

from __future__ import annotations

import numpy as np
from benchmarks.experiments.retrieval.hybrid_retrieval import HybridRetrieval

from conch.command.examples import corpus, nearest
from conch.command.generate import select_examples
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


def test_a_lookup_given_to_conch_replaces_its_own() -> None:
    like = 5
    hybrid = retrieval(1.0, like)
    chosen = select_examples(PromptConfig(), REQUEST, 2, find=hybrid.nearest)
    assert chosen[-1] == corpus()[like]
    assert select_examples(PromptConfig(), REQUEST, 2) == nearest(REQUEST, 2)
