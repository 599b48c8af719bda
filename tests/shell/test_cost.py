"""Cost accounting of ``conch shell``: tokens per turn, totals per model and for the session,
prices, and the warning threshold."""

from __future__ import annotations

from conch.messages import Message, Usage
from conch.shell.cost import CostBook, Estimate, Price, estimate, format_money


def test_a_price_is_per_million_tokens_read_and_written() -> None:
    price = Price(input_per_million=2.0, output_per_million=10.0)
    assert price.of(1_000_000, 0) == 2.0
    assert price.of(500_000, 100_000) == 2.0
    assert price.of(0, 0) == 0.0


def test_turns_are_totalled_per_model_and_for_the_session() -> None:
    book = CostBook({"cloud": Price(1.0, 2.0)})
    book.add("cloud", Usage(1000, 100))
    book.add("fast", Usage(200, 20), kind="auto")
    book.add("cloud", Usage(3000, 300))
    per_model = book.per_model()
    assert list(per_model) == ["cloud", "fast"]
    assert (per_model["cloud"].turns, per_model["cloud"].prompt_tokens) == (2, 4000)
    assert per_model["cloud"].completion_tokens == 400
    assert per_model["cloud"].price == (4000 * 1.0 + 400 * 2.0) / 1_000_000
    assert per_model["cloud"].priced
    assert not per_model["fast"].priced
    total = book.total()
    assert (total.turns, total.prompt_tokens, total.completion_tokens) == (3, 4200, 420)
    assert not total.priced


def test_the_report_has_a_line_per_turn_per_model_and_the_session_total() -> None:
    book = CostBook({"cloud": Price(1.0, 2.0)})
    book.add("cloud", Usage(1000, 100))
    book.add("fast", Usage(200, 20), kind="auto")
    report = book.report()
    assert report[1].split() == ["1", "cloud", "ask", "1000", "100", "$0.0012"]
    assert report[2].split() == ["2", "fast", "auto", "200", "20", "-"]
    assert "per model:" in report
    assert "cloud  1 turn, 1000 prompt + 100 reply tokens, $0.0012" in "\n".join(report)
    assert "fast   1 turn, 200 prompt + 20 reply tokens, no price" in "\n".join(report)
    assert report[-2] == "session: 2 turns, 1200 prompt + 120 reply tokens, at least $0.0012"
    assert "shell.prices" in report[-1]


def test_an_empty_session_says_so() -> None:
    assert CostBook().report() == ["no model turns yet in this session"]


def test_the_warning_comes_once_when_the_session_passes_the_threshold() -> None:
    book = CostBook({"cloud": Price(1000.0, 1000.0)}, warning=1.0)
    assert book.add("cloud", Usage(500, 0)) is None  # $0.50
    warning = book.add("cloud", Usage(600, 0))  # $1.10
    assert warning is not None
    assert "$1.10" in warning and "$1.00" in warning and "shell.cost_warning" in warning
    assert book.add("cloud", Usage(600, 0)) is None


def test_money_keeps_enough_digits_for_small_turns() -> None:
    assert format_money(0.00042) == "$0.0004"
    assert format_money(1.254) == "$1.25"


def test_the_estimate_counts_four_characters_a_token_and_the_role_markers() -> None:
    sent = [Message("system", "x" * 40), Message("user", "y" * 8)]
    guess = estimate(sent, "z" * 20)
    assert guess == Estimate(10 + 4 + 2 + 4, 5)


def test_the_report_widens_for_longer_kinds() -> None:
    book = CostBook()
    book.add("fast", Usage(10, 2), kind="memory")
    report = book.report()
    assert report[1].split() == ["1", "fast", "memory", "10", "2", "-"]


def test_detail_sets_the_estimate_against_the_count_per_turn_and_for_the_session() -> None:
    book = CostBook()
    book.add("fast", Usage(100, 20), estimated=Estimate(110, 15))
    book.add("cloud", Usage(200, 0), kind="plan", estimated=Estimate(180, 30))
    book.add("fast", Usage(50, 5))  # no estimate
    lines = book.detail()
    assert "prompt est/counted" in lines[0] and "reply est/counted" in lines[0]
    assert lines[1].split() == ["1", "fast", "ask", "110/100", "+10%", "15/20", "-25%"]
    # The provider counted no reply tokens: the estimate stands alone.
    assert lines[2].split() == ["2", "cloud", "plan", "180/200", "-10%", "30/-"]
    assert lines[3].split() == ["3", "fast", "ask", "-/50", "-/5"]
    assert lines[4] == "session: prompt 290/300 -3%, reply 15/20 -25%"
    assert "four characters" in lines[-1]


def test_detail_without_counts_says_so() -> None:
    book = CostBook()
    assert book.detail() == ["no model turns yet in this session"]
    book.add("fast", Usage(0, 0), estimated=Estimate(10, 2))
    assert book.detail()[-2] == "session: no turn has both an estimate and a count"
