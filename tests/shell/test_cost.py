"""Cost accounting of ``conch shell``: tokens per turn, totals per model and for the session,
prices, and the warning threshold."""

from __future__ import annotations

from conch.messages import Usage
from conch.shell.cost import CostBook, Price, format_money


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
