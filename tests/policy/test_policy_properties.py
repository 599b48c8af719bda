"""Properties of assess() over arbitrary text, and the measured parser choice."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conch.policy import Decision, PolicyContext, Verdict, assess
from conch.policy.parse import parse_tree

_SPEC = importlib.util.spec_from_file_location(
    "policy_parser_corpus", Path(__file__).with_name("policy_parser_corpus.py")
)
assert _SPEC is not None and _SPEC.loader is not None
corpus = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(corpus)

SHELLISH = st.text(alphabet=st.sampled_from(list("abcrm -/~$(){}[]|&;<>'\"`\\*?!#=\n\t:.")))


@settings(max_examples=300)
@given(st.text())
def test_assess_never_raises_on_arbitrary_text(text: str) -> None:
    assert isinstance(assess(text), Verdict)


@settings(max_examples=300)
@given(SHELLISH, st.booleans())
def test_assess_never_raises_on_shell_like_text(text: str, unsafe: bool) -> None:
    assert isinstance(assess(text, PolicyContext(unsafe=unsafe)), Verdict)


@settings(max_examples=300)
@given(SHELLISH)
def test_text_that_fails_to_parse_is_never_allowed(text: str) -> None:
    if "\x00" in text or parse_tree(text).has_error:
        assert assess(text).decision is not Decision.ALLOW


@settings(max_examples=200)
@given(SHELLISH)
def test_unsafe_never_turns_a_verdict_into_allow(text: str) -> None:
    assert assess(text, PolicyContext(unsafe=True)).decision is not Decision.ALLOW


def test_tree_sitter_parses_more_of_the_corpus_than_bashlex() -> None:
    assert (
        corpus.measure(corpus.tree_sitter_names)["parsed"]
        > corpus.measure(corpus.bashlex_names)["parsed"]
    )


def test_the_policy_misses_no_command_in_the_corpus() -> None:
    assert corpus.measure(corpus.policy_names)["unsafe"] == []
