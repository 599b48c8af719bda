"""Choosing among commands made from different worked examples by asking the model which one
best explains the request (benchmark variant ``conch-review``, not in conch).

conch's answer to one request changes with the worked examples it is shown: five full runs
that differed only in the example corpus and how examples are found each passed 136 to 145
of the 258 clean tasks, while 175 were passed by at least one run, and neither a vote among
the runs' outputs nor their dry-run outcomes tells the right answer from the others. This
variant makes several answers on purpose, each with a different set of examples:

1. conch as it is (the shipped examples, BM25);
2. conch with the 4,411 examples of commit 0333848 (the shipped 2,052 and 2,359 more);
3. conch with the shipped examples ranked by BM25 less 0.3 times the idf of every word an
   example's request has and the user's does not (plainer examples first);

and keeps the one under which the user's request is most likely as the description of the
command: the sum of the model's log-probabilities of the request's tokens (and the end of the
reply) after "Here is a shell command: ... What request, in plain English, would this command
answer?". The first answer wins ties. The scores come from llama.cpp's ``/completion``: the
reply is forced token by token with a grammar of token ids, and ``n_probs`` reports each
forced token's probability before any sampling, so it is the model's own, unconstrained.
"""

from __future__ import annotations

import contextlib
import functools
import json
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.accuracy.candidate import Candidate, Task
from benchmarks.accuracy.conch_tool import (
    ConchCandidate,
    ConchGenerator,
    FixtureDryRunner,
    conch_candidate,
    examples_found_by,
)
from conch.examples import Bm25, Example, _indexed_text, _terms, corpus, parse_examples

ROOT = Path(__file__).resolve().parents[2]
LARGER_CORPUS_COMMIT = "0333848"
UNASKED_WEIGHT = 0.3
REVIEW_SYSTEM = "You are an expert at the Unix shell."
REVIEW_USER = (
    "Here is a shell command:\n{command}\n"
    "What request, in plain English, would this command answer? Reply with the request only."
)


@functools.cache
def larger_corpus() -> tuple[Example, ...]:
    """The 4,411 examples as they stood at ``LARGER_CORPUS_COMMIT`` (read from git)."""
    text = subprocess.run(
        ["git", "show", f"{LARGER_CORPUS_COMMIT}:src/conch/data/examples.tsv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return parse_examples(text)


class Retrieval:
    """``nearest`` over ``examples`` by BM25, less ``unasked`` times the idf of each word of an
    example's request that the user's request lacks; most similar last, as conch orders them."""

    def __init__(self, examples: tuple[Example, ...], unasked: float = 0.0) -> None:
        self.examples = examples
        self.unasked = unasked
        self.index = Bm25([_indexed_text(e) for e in examples])
        self.asks = [frozenset(_terms(e.request)) for e in examples]

    def nearest(self, request: str, k: int = 4) -> list[Example]:
        if k <= 0:
            return []
        query = set(_terms(request))
        scored = [
            (score - self.unasked * sum(self.index.idf[t] for t in self.asks[i] - query), i)
            for i, score in enumerate(self.index.scores(request))
            if score > 0  # only examples sharing a word with the request, as conch's own
        ]
        scored.sort(reverse=True)
        return [self.examples[i] for _, i in reversed(scored[:k])]

    def installed(self) -> contextlib.AbstractContextManager[None]:
        """conch finds its examples with this retrieval inside the block."""
        return examples_found_by(self.nearest)


def chat_prompt(system: str, user: str) -> str:
    """Qwen2.5's chat template around one system and one user message, reply open."""
    return (
        f"<|im_start|>system\n{system}<|im_end|>\n"
        f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    )


class Reviewer:
    """How likely the model finds ``request`` as the description of ``command``."""

    def __init__(self, base_url: str, timeout: float = 120.0) -> None:
        self.root = base_url.removesuffix("/").removesuffix("/v1")
        self.timeout = timeout

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            self.root + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            return json.load(response)

    def score(self, command: str, request: str) -> float:
        tokens = self._post("/tokenize", {"content": request})["tokens"]
        grammar = "root ::= " + " ".join(f"<[{t}]>" for t in tokens)
        reply = self._post(
            "/completion",
            {
                "prompt": chat_prompt(REVIEW_SYSTEM, REVIEW_USER.format(command=command)),
                "grammar": grammar,
                "n_predict": len(tokens) + 2,
                "n_probs": 1,
                "temperature": 0,
                "cache_prompt": True,
            },
        )
        return float(sum(p["logprob"] for p in reply.get("completion_probabilities") or []))


def pick(commands: list[str], scores: dict[str, float]) -> int:
    """The index of the best-scoring command; the earliest on a tie."""
    return max(range(len(commands)), key=lambda i: (scores[commands[i]], -i))


class ReviewVariant(ConchGenerator):
    """conch three times with different examples; the reviewer picks one answer."""

    name = "conch-review"

    def __init__(self, base_url: str, model: str | None) -> None:
        super().__init__(base_url, model)
        self.reviewer = Reviewer(base_url)
        self.retrievals: list[Retrieval | None] = [
            None,
            Retrieval(larger_corpus()),
            Retrieval(corpus(), UNASKED_WEIGHT),
        ]

    def generate(self, task: Task) -> Candidate:
        started = time.monotonic()
        answers: list[Candidate] = []
        for retrieval in self.retrievals:
            root = self.roots.get(task.fs)
            runner = FixtureDryRunner(root, task) if root is not None else None
            with retrieval.installed() if retrieval else contextlib.nullcontext():
                answers.append(conch_candidate(self.provider, task.nl, runner, shell=task.shell))
        usable = [a for a in answers if a.command]
        if not usable:
            return answers[0]
        commands = list(dict.fromkeys(a.command for a in usable if a.command))
        scores = (
            {c: self.reviewer.score(c, task.nl) for c in commands}
            if len(commands) > 1
            else {commands[0]: 0.0}
        )
        chosen = commands[pick(commands, scores)]
        answer = next(a for a in usable if a.command == chosen)
        trials = [
            {"command": a.command, "source": f"examples-{i}", "review": scores.get(a.command or "")}
            for i, a in enumerate(answers)
        ]
        return ConchCandidate(chosen, answer.raw, time.monotonic() - started, trials=trials)
