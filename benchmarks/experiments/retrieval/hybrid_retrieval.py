"""An experiment: conch's worked examples found by BM25 mixed with the embedded model's own
embeddings (``retrieval_embeddings.py`` beside it measures the same mix on the shipped
examples alone). Not part of conch: the variant ``conch-embedding-retrieval`` of the accuracy
benchmark swaps conch's example lookup for this one while it generates.

The examples' vectors come from ``benchmarks/.work/example-embeddings.npy`` (made on first
use, about 15 minutes); each request is embedded as it comes, by a second copy of the model
loaded for embeddings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.experiments.retrieval.retrieval_embeddings import (
    VECTORS,
    Embedder,
    embedded_model,
    example_vectors,
    unit_rows,
)
from conch.command.examples import Example, corpus, retrieval


class HybridRetrieval:
    """``nearest`` by ``weight * cosine + (1 - weight) * BM25 / max(BM25)``."""

    def __init__(self, weight: float, vectors: Any, embed: Callable[[Sequence[str]], Any]) -> None:
        self.weight = weight
        self.mean = vectors.mean(axis=0)
        self.unit = unit_rows(vectors, self.mean)
        self.embed = embed

    @classmethod
    def load(cls, weight: float, vectors: Path = VECTORS) -> HybridRetrieval:
        """The shipped examples' vectors (made on first use) and the model to embed requests."""
        return cls(weight, example_vectors(vectors), Embedder(embedded_model()))

    def nearest(self, request: str, k: int = 4) -> list[Example]:
        """The ``k`` examples scoring highest for ``request``, most similar last."""
        import numpy as np

        if k <= 0:
            return []
        query = unit_rows(self.embed([request])[0], self.mean)
        lexical = np.array(retrieval("shipped").index.scores(request), dtype=np.float64)
        lexical = lexical / (lexical.max() or 1.0)
        score = self.weight * (self.unit @ query) + (1 - self.weight) * lexical
        # Ties go to the later example, as in conch's own BM25 ranking.
        best = sorted(range(len(score)), key=lambda i: (score[i], i), reverse=True)[:k]
        examples = corpus()
        return [examples[i] for i in reversed(best)]
