"""What the model turns of a ``conch shell`` session used: tokens per turn as the provider
reported them, totals per model and for the session, and their price where one is known.

Prices come from ``shell.prices`` (per million input and output tokens, by model name); a
model without a price counts tokens only. ``CostBook.add`` says once when the session's
price passes ``shell.cost_warning``.

A turn may also carry an ``Estimate``: its tokens guessed from the text alone (about four
characters a token, ``estimate``), the guess the context window slides by when no tokenizer
is at hand. ``CostBook.detail`` (``:cost detail``) sets it against the tokens the provider
counted, per turn and over the session, so how far off the guess runs for a model is seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from conch.agent.conversation import estimate_tokens, message_tokens
from conch.messages import Message, Usage

__all__ = ["CostBook", "Estimate", "Price", "Spent", "TurnCost", "estimate", "format_money"]


@dataclass(frozen=True, slots=True)
class Price:
    """What a model costs per million tokens read (input) and written (output)."""

    input_per_million: float = 0.0
    output_per_million: float = 0.0

    def of(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The price of one turn."""
        return (
            prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million
        ) / 1_000_000


@dataclass(frozen=True, slots=True)
class Estimate:
    """A turn's tokens guessed from its text: what was sent (``prompt_tokens``, the chat
    template's role markers included) and the reply (``completion_tokens``)."""

    prompt_tokens: int
    completion_tokens: int


def estimate(messages: Sequence[Message], reply: str) -> Estimate:
    """The cheap estimate of a turn: ``messages`` as sent and the ``reply``'s text, at about
    four characters a token (``conch.agent.conversation.estimate_tokens``)."""
    prompt = sum(message_tokens(message, estimate_tokens) for message in messages)
    return Estimate(prompt, estimate_tokens(reply))


@dataclass(frozen=True, slots=True)
class TurnCost:
    """One turn: the model, what kind of turn (``ask``, ``auto``, ``memory``, ``plan``...),
    its tokens and price (None: the model has no price), and the ``estimate`` of its tokens
    from the text where the caller made one."""

    model: str
    kind: str
    prompt_tokens: int
    completion_tokens: int
    price: float | None
    estimate: Estimate | None = None


@dataclass(slots=True)
class Spent:
    """Totals over some turns. ``priced`` is false when a turn without a price is among them,
    so ``price`` is a lower bound."""

    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    price: float = 0.0
    priced: bool = True

    def add(self, turn: TurnCost) -> None:
        self.turns += 1
        self.prompt_tokens += turn.prompt_tokens
        self.completion_tokens += turn.completion_tokens
        if turn.price is None:
            self.priced = False
        else:
            self.price += turn.price


@dataclass(slots=True)
class CostBook:
    """The turns of one session. ``prices`` by model name; ``warning``: a session price past
    which ``add`` returns a warning, once."""

    prices: Mapping[str, Price] = field(default_factory=dict)
    warning: float | None = None
    turns: list[TurnCost] = field(default_factory=list)
    warned: bool = False

    def add(
        self, model: str, usage: Usage, kind: str = "ask", estimated: Estimate | None = None
    ) -> str | None:
        """Count one turn's usage (and its estimate from the text, ``estimated``, for
        ``detail``); a warning when the session's price just passed the threshold, else
        None."""
        price = self.prices.get(model)
        amount = None if price is None else price.of(usage.prompt_tokens, usage.completion_tokens)
        self.turns.append(
            TurnCost(model, kind, usage.prompt_tokens, usage.completion_tokens, amount, estimated)
        )
        total = self.total().price
        if self.warning is None or self.warned or total < self.warning:
            return None
        self.warned = True
        return (
            f"this session has cost {format_money(total)}, past the warning at "
            f"{format_money(self.warning)} (shell.cost_warning); :cost has the details"
        )

    def total(self) -> Spent:
        """Totals over the session."""
        spent = Spent()
        for turn in self.turns:
            spent.add(turn)
        return spent

    def per_model(self) -> dict[str, Spent]:
        """Totals per model, in the order the models were first used."""
        spent: dict[str, Spent] = {}
        for turn in self.turns:
            spent.setdefault(turn.model, Spent()).add(turn)
        return spent

    def report(self) -> list[str]:
        """``:cost``: a line per turn, a line per model, and the session's total."""
        if not self.turns:
            return ["no model turns yet in this session"]
        width = max(len(t.model) for t in self.turns)
        kinds = max(4, *(len(t.kind) for t in self.turns))
        lines = [
            f"  {'#':>3}  {'model':<{width}}  {'kind':<{kinds}}  {'prompt':>7}  {'reply':>6}  price"
        ]
        for number, turn in enumerate(self.turns, 1):
            price = "-" if turn.price is None else format_money(turn.price)
            lines.append(
                f"  {number:>3}  {turn.model:<{width}}  {turn.kind:<{kinds}}  "
                f"{turn.prompt_tokens:>7}  {turn.completion_tokens:>6}  {price}"
            )
        lines.append("per model:")
        for model, spent in self.per_model().items():
            lines.append(f"  {model:<{width}}  {_summary(spent)}")
        lines.append(f"session: {_summary(self.total())}")
        if any(t.price is None for t in self.turns):
            lines.append("(models without a price in shell.prices count tokens only)")
        return lines

    def detail(self) -> list[str]:
        """``:cost detail``: per turn, the tokens estimated from the text against those the
        provider counted (``est/counted`` and how far off the estimate was), then the same
        over the session. A count of 0 (the provider reported none) or a turn without an
        estimate shows ``-`` and is left out of the totals."""
        if not self.turns:
            return ["no model turns yet in this session"]
        width = max(len(t.model) for t in self.turns)
        kinds = max(4, *(len(t.kind) for t in self.turns))
        lines = [
            f"  {'#':>3}  {'model':<{width}}  {'kind':<{kinds}}  "
            f"{'prompt est/counted':>24}  {'reply est/counted':>22}"
        ]
        sums = [0, 0, 0, 0]  # estimated and counted, prompt then reply
        for number, turn in enumerate(self.turns, 1):
            guess = turn.estimate
            est_prompt = None if guess is None else guess.prompt_tokens
            est_reply = None if guess is None else guess.completion_tokens
            for index, (est, counted) in enumerate(
                ((est_prompt, turn.prompt_tokens), (est_reply, turn.completion_tokens))
            ):
                if est is not None and counted:
                    sums[2 * index] += est
                    sums[2 * index + 1] += counted
            lines.append(
                f"  {number:>3}  {turn.model:<{width}}  {turn.kind:<{kinds}}  "
                f"{_versus(est_prompt, turn.prompt_tokens):>24}  "
                f"{_versus(est_reply, turn.completion_tokens):>22}"
            )
        if sums[1] or sums[3]:
            lines.append(
                f"session: prompt {_versus(sums[0] if sums[1] else None, sums[1])}, "
                f"reply {_versus(sums[2] if sums[3] else None, sums[3])}"
            )
        else:
            lines.append("session: no turn has both an estimate and a count")
        lines.append("(est: about four characters a token; counted: as the provider reported)")
        return lines


def _versus(estimated: int | None, counted: int) -> str:
    """``812/790 +3%``: an estimate, the count, and how far off the estimate was."""
    est = "-" if estimated is None else str(estimated)
    if not counted:
        return f"{est}/-"
    if estimated is None:
        return f"-/{counted}"
    off = round((estimated - counted) * 100 / counted)
    return f"{est}/{counted} {off:+d}%"


def format_money(amount: float) -> str:
    """A price with enough digits to tell small turns apart: ``$0.0042``, ``$1.25``."""
    return f"${amount:.4f}" if amount < 1 else f"${amount:.2f}"


def _summary(spent: Spent) -> str:
    turns = f"{spent.turns} turn{'s' if spent.turns != 1 else ''}"
    tokens = f"{spent.prompt_tokens} prompt + {spent.completion_tokens} reply tokens"
    if spent.priced:
        price = format_money(spent.price)
    elif spent.price:
        price = f"at least {format_money(spent.price)}"
    else:
        price = "no price"
    return f"{turns}, {tokens}, {price}"
