"""Few-shot examples: the shipped corpus and similarity selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.command.examples import (
    Example,
    Retrieval,
    corpus,
    larger_corpus,
    nearest,
    parse_examples,
    retrieval,
)
from conch.command.generate import select_examples
from conch.config.settings import AllowedProgram, PromptConfig
from conch.policy import assess


def test_corpus_commands_all_parse_and_none_is_rejected_with_unsafe() -> None:
    from conch.policy import PolicyContext

    assert len(corpus()) >= 80
    for example in corpus():
        verdict = assess(example.command, PolicyContext(unsafe=True))
        assert verdict.decision.value != "reject", (example, verdict.reasons)


def test_nearest_examples_share_words_with_the_request_most_similar_last() -> None:
    picked = nearest("extract the tar.gz archive here", 3)
    assert len(picked) == 3
    assert "tar -x" in picked[-1].command


def test_no_examples_when_nothing_matches_or_k_is_zero() -> None:
    assert nearest("zzzz qqqq", 4) == []
    assert nearest("find files", 0) == []


def test_whitelist_keeps_only_examples_using_allowed_tools() -> None:
    prompt = PromptConfig(tools=[AllowedProgram(name="grep")])
    picked = select_examples(prompt, "search for errors in the log and count them", 3)
    assert picked and all(e.command.split()[0] == "grep" for e in picked)


def test_file_names_and_paths_count_by_their_extensions_only() -> None:
    from conch.command.examples import terms

    assert terms("extract the tar.gz archive") == ["extract", "tar", "gz", "archive"]
    assert terms("count lines of setup_nl2b_fs_1.sh in /var/log/app") == ["count", "lin", "sh"]
    assert terms("list '*.php' files") == ["list", "php", "fil"]


def test_a_file_name_in_the_request_does_not_pull_in_examples_about_other_files() -> None:
    picked = nearest("show the sha512 checksum of notes.txt", 4)
    assert any("sum" in e.command.split()[0] for e in picked), picked


def test_documentation_covers_the_programs_of_the_nearest_examples(tmp_path: Path) -> None:
    from conch.command.generate import documentation_for
    from conch.config.settings import ValidationSettings

    prompt = PromptConfig()
    request = "count the lines in notes.txt"
    nearest_first = list(dict.fromkeys(e.command.split()[0] for e in reversed(nearest(request))))
    text = documentation_for(prompt, request, 1, 4, ValidationSettings(), tmp_path)
    assert text.startswith(f"## {nearest_first[0]} (")  # found on PATH, with its path
    assert "Usage" in text or "usage" in text
    assert documentation_for(prompt, request, 0, 4, ValidationSettings(), tmp_path) == ""


def test_documentation_ends_the_system_prompt_and_the_request_comes_last() -> None:
    from conch.command.generate import DOCUMENTATION_PROMPT, Ask, generate
    from conch.command.request import RequestContext
    from conch.providers import ScriptedProvider

    provider = ScriptedProvider.of("wc -l notes.txt")
    prompt = PromptConfig()
    ctx = RequestContext(request="count the lines in notes.txt")
    ask = Ask(prompt, "Linux", ctx, documentation="## wc\nUsage: wc")
    generated = generate(provider, ask)
    assert generated.command == "wc -l notes.txt"
    system, last = provider.sent[0].messages[0], provider.sent[0].messages[-1]
    assert (last.role, last.content) == ("user", "count the lines in notes.txt")
    assert system.role == "system"
    assert system.content.endswith(DOCUMENTATION_PROMPT + "## wc\nUsage: wc")


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


def test_the_larger_corpus_is_the_shipped_one_and_more() -> None:
    shipped, larger = corpus(), larger_corpus()
    assert larger[: len(shipped)] == shipped and len(larger) > 2 * len(shipped)
    assert retrieval("larger").examples == larger


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


def test_an_unknown_retrieval_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match="unknown example retrieval 'nope'"):
        retrieval("nope")
