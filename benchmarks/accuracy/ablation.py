"""Variants of conch with one part of the pipeline changed, to measure what that part adds.

Each variant is conch's own ``propose`` call with settings overridden as a config file would
(``--tools conch-no-dry-run,conch-vote``); the report shows them next to conch.
"""

from __future__ import annotations

from typing import Any

from benchmarks.accuracy.candidate import Candidate, Task
from benchmarks.accuracy.conch_tool import (
    ConchGenerator,
    FixtureDryRunner,
    conch_candidate,
)

_NO_DRY_RUN: dict[str, Any] = {"dry_run": False}

VARIANTS: dict[str, dict[str, Any]] = {
    # what `conch --no-dry-run` does: no dry runs, so no extra candidates and no repair
    "conch-no-dry-run": {"generation": _NO_DRY_RUN},
    # dry runs read-only only: a write command is not run again in a copy of the tree
    "conch-no-scratch": {"generation": {"dry_run_scratch": False}},
    # this machine's --help excerpt for the programs of the two nearest worked examples
    "conch-docs-2": {"generation": {"documentation": 2}},
    # the programs whose whatis lines best match the request, named in the system prompt
    "conch-hints-5": {"generation": {"program_hints": 5}},
    # when in doubt, every other extra candidate sees the next-nearest worked examples
    "conch-next-examples": {"generation": {"sample_examples": "next"}},
    # the end-of-reply token's logit raised by 2: the command ends as soon as it could
    "conch-brevity-2": {"generation": {"brevity": 2.0}},
    # several candidates for every request, chosen by dry-run outcome and vote
    "conch-vote": {"generation": {"sample_when": "always"}},
    # the same with eight candidates (the greedy answer and seven samples)
    "conch-vote-8": {"generation": {"sample_when": "always", "candidates": 8}},
    # the few-shot examples: none, or twice as many (dry runs off to isolate the prompt)
    "conch-few-shot-0": {"generation": {**_NO_DRY_RUN, "few_shot": 0}},
    "conch-few-shot-8": {"generation": {**_NO_DRY_RUN, "few_shot": 8}},
    # worked examples every request shares (cached by the engine) before fewer of its own
    "conch-shared-40-k1": {"generation": {"shared_examples": 40, "few_shot": 1}},
    "conch-shared-40-k2": {"generation": {"shared_examples": 40, "few_shot": 2}},
    "conch-shared-100-k1": {"generation": {"shared_examples": 100, "few_shot": 1}},
    # eight examples with everything else as conch does it
    "conch-k8": {"generation": {"few_shot": 8}},
    # fewer examples (a shorter prompt to read for every answer) with everything else as conch
    # does it
    "conch-k2": {"generation": {"few_shot": 2}},
    "conch-k3": {"generation": {"few_shot": 3}},
    # safe mode, as `conch --print REQUEST` runs (the others run as with --unsafe): what a
    # user waits for at the default settings; and the same with two worked examples
    "conch-safe": {},
    "conch-k2-safe": {"generation": {"few_shot": 2}},
    # a meta prompt that also asks for exactly the requested output and nothing more
    "conch-terse": {
        "default_prompt": {
            "meta_prompt": (
                "You are conch, an expert at the Unix shell. Translate the user's request into "
                "exactly one shell command for the user's platform described below. Reply with "
                "the command only, on one line: no explanation, no markdown, no code fences. "
                "The command must print exactly what was asked and nothing more: a count or a "
                "total as one number, names or paths without extra columns. Prefer simple, "
                "standard, non-destructive commands; never invent files or options."
            )
        }
    },
    # validation (help text, static checks, model verdict) off, dry runs off
    "conch-no-validation": {"generation": _NO_DRY_RUN, "validation": {"enabled": False}},
    # one answer, not three reviewed (what conch did before generation.review)
    "conch-no-review": {"generation": {"review": 1}},
    # one answer, examples found by BM25 mixed 7:3 with the model's own embeddings
    # (hybrid_retrieval.py)
    "conch-embedding-retrieval": {"generation": {"review": 1}},
    # one answer, examples ranked by BM25 less 0.3 x the idf of each word they ask for that
    # the request does not (conch.command.examples.retrieval("plain")): plainer examples first
    "conch-plain-examples": {"generation": {"review": 1}},
}
# Variants that find conch's worked examples another way: the weight of the embeddings, or
# of the words an example asks for beyond the request.
RETRIEVAL_WEIGHTS = {"conch-embedding-retrieval": 0.3}
PLAIN_EXAMPLES = ("conch-plain-examples",)
# Variants that run in safe mode (no shell: what needs one is refused, after one more try).
SAFE_MODE = ("conch-safe", "conch-k2-safe")


class ConchVariant(ConchGenerator):
    """conch with the settings of one variant."""

    def __init__(self, name: str, base_url: str, model: str | None) -> None:
        super().__init__(base_url, model)
        self.name = name
        self.overrides = VARIANTS[name]
        self.nearest: Any = None
        if name in RETRIEVAL_WEIGHTS:
            from benchmarks.experiments.retrieval.hybrid_retrieval import HybridRetrieval

            self.nearest = HybridRetrieval.load(RETRIEVAL_WEIGHTS[name]).nearest
        elif name in PLAIN_EXAMPLES:
            from conch.command.examples import retrieval

            self.nearest = retrieval("plain").nearest

    def generate(self, task: Task) -> Candidate:
        root = self.roots.get(task.fs)
        scratch = self.overrides.get("generation", {}).get("dry_run_scratch", True)
        runner = FixtureDryRunner(root, task, scratch=scratch) if root is not None else None
        return conch_candidate(
            self.provider,
            task.nl,
            runner,
            self.overrides,
            task.shell,
            self.nearest,
            unsafe=self.name not in SAFE_MODE,
        )
