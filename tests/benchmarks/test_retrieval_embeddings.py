"""The embeddings-vs-BM25 retrieval proxy, on a handful of examples and hand-made vectors."""

from __future__ import annotations

import numpy as np
from benchmarks.experiments.retrieval.retrieval_embeddings import same_program_first

from conch.command.examples import Bm25, Example

EXAMPLES = [
    Example("show the files here", "ls"),
    Example("list the directory contents", "ls -l"),
    Example("show the files in the archive", "tar -tf a.tar"),
    Example("print the date", "date"),
]
# The first two requests mean the same thing in other words: close in the vector space.
VECTORS = np.array([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)


def programs(command: str) -> frozenset[str]:
    return frozenset({command.split()[0]})


def test_each_weight_scores_the_best_other_example_by_its_mix() -> None:
    index = Bm25([e.request for e in EXAMPLES])
    shares = same_program_first(EXAMPLES, VECTORS, index.scores, programs, (0.0, 1.0))
    # BM25 alone: "show the files here" finds the archive listing (shared words), "list the
    # directory contents" shares no word and falls back to the first; the vectors pair the
    # two ls requests. "print the date" and the archive request have no right neighbour.
    assert shares[0.0] == 1 / 4
    assert shares[1.0] == 2 / 4


def test_an_example_is_never_its_own_neighbour() -> None:
    twins = [*EXAMPLES, Example("print the date", "date -u")]
    index = Bm25([e.request for e in twins])
    vectors = np.vstack([VECTORS, VECTORS[3]])
    shares = same_program_first(twins, vectors, index.scores, programs, (1.0,))
    # The two date requests are each other's twin by text: both are skipped as "itself".
    assert shares[1.0] == 2 / 5
