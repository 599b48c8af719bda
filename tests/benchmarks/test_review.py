"""The parts of the conch-review variant that need no model: example parsing, the lookup
that holds unasked words against an example, and the choice among scored commands."""

from __future__ import annotations

import pytest
from benchmarks.accuracy.review import Retrieval, parse_examples, pick

import conch.generate
from conch.examples import Example, corpus, nearest
from conch.settings import PromptConfig

EXAMPLES = (
    Example("print all environment variables in alphabetical order", "printenv | sort"),
    Example("show environment variables", "printenv"),
    Example("count the lines in notes.txt", "wc -l notes.txt"),
    Example("print the date", "date"),
)


def test_parse_examples_reads_the_shipped_format() -> None:
    text = "# a comment\nshow the date\tdate\n\nno command here\t \nlist files\tls -l\n"
    assert parse_examples(text) == (
        Example("show the date", "date"),
        Example("list files", "ls -l"),
    )


def test_without_the_penalty_the_lookup_is_conchs_own() -> None:
    request = "print the environment variables"
    assert Retrieval(corpus()).nearest(request, 4) == nearest(request, 4)


def test_unasked_words_put_the_plainer_example_nearest() -> None:
    request = "print environment variables"
    # BM25 alone puts the example that shares "print" nearest, though it asks for an order
    # the user did not; held against it, "alphabetical" and "order" put the plain one first.
    bm25 = Retrieval(EXAMPLES).nearest(request, 2)
    plain = Retrieval(EXAMPLES, unasked=0.3).nearest(request, 2)
    assert [e.command for e in bm25] == ["printenv", "printenv | sort"]  # most similar last
    assert [e.command for e in plain] == ["printenv | sort", "printenv"]


def test_an_example_sharing_no_word_is_never_found() -> None:
    found = Retrieval(EXAMPLES, unasked=0.3).nearest("print environment variables", 3)
    assert Example("count the lines in notes.txt", "wc -l notes.txt") not in found


def test_installed_swaps_conchs_lookup_and_puts_it_back() -> None:
    request = "print environment variables"
    with Retrieval(EXAMPLES, unasked=0.3).installed():
        chosen = conch.generate.select_examples(PromptConfig(), request, 1)
    assert chosen == [Example("show environment variables", "printenv")]
    assert conch.generate.select_examples(PromptConfig(), request, 1) == nearest(request, 1)


@pytest.mark.parametrize(
    ("scores", "expected"),
    [({"a": -3.0, "b": -1.0, "c": -2.0}, 1), ({"a": -1.0, "b": -1.0, "c": -5.0}, 0)],
)
def test_pick_takes_the_best_score_and_the_earliest_on_a_tie(
    scores: dict[str, float], expected: int
) -> None:
    assert pick(["a", "b", "c"], scores) == expected


def test_the_plain_examples_variant_installs_the_same_ranking() -> None:
    from benchmarks.accuracy.ablation import ConchVariant

    variant = ConchVariant("conch-plain-examples", "http://127.0.0.1:9/v1", "m")
    request = "print the current date and time"
    assert variant.retrieval.nearest(request, 4) == Retrieval(corpus(), 0.3).nearest(request, 4)
