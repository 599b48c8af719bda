"""What the extractor learns about a command line, before any judgement is made."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Arg:
    """One shell word.

    ``text`` is the value after quote removal, or None when the word expands at run time
    (``$x``, ``$(...)``). ``path_text`` is ``text`` with ``$HOME``/``${HOME}`` read as ``~``,
    for path checks. ``inner`` holds the commands run by substitutions inside the word.
    """

    raw: str
    text: str | None
    glob: bool = False
    brace: bool = False
    path_text: str | None = None
    inner: tuple[Invocation, ...] = ()

    def approximate(self) -> str:
        """The value, or the raw word without its double quotes when it expands at run time."""
        if self.text is not None:
            return self.text
        quoted = len(self.raw) >= 2 and self.raw[0] == self.raw[-1] == '"'
        return self.raw[1:-1] if quoted else self.raw


@dataclass(frozen=True, slots=True)
class Invocation:
    """One program that would run: its base name (None when unknowable) and its arguments.

    ``stdin_args`` marks commands run by ``xargs``, which get more arguments from stdin;
    ``stdin_judged`` says those words are known and judged (``conch.policy.fed``).
    """

    name: str | None
    args: tuple[Arg, ...]
    stdin_args: bool = False
    raw_name: str = ""
    # The commands run by substitutions in the name itself (``$(base64 -d <<< ...)``).
    name_inner: tuple[Invocation, ...] = ()
    # Variables set for this command alone (``LC_ALL=C sort``), by name.
    assignments: tuple[str, ...] = ()
    # Their values, as words (``PAGER='less -R'``: ``less -R``), for the denylist's reading.
    assigned_values: tuple[Arg, ...] = ()
    stdin_judged: bool = False

    def texts(self) -> list[str | None]:
        """The literal arguments (None where not literal)."""
        return [a.text for a in self.args]


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: its operator (``'>'``, ``'2>'``, ``'<<<'``...) and its target word."""

    operator: str
    target: Arg
    writes: bool


@dataclass(frozen=True, slots=True)
class Feed:
    """Output of ``producers`` becomes the stdin of ``consumers`` (a pipe or an input redirect)."""

    producers: tuple[Invocation, ...]
    consumers: tuple[Invocation, ...]
    text: str | None = None  # the literal text fed, when known (echo, heredoc, here-string)


@dataclass(frozen=True, slots=True)
class FunctionDef:
    """A shell function: the commands its body runs and the operators it uses."""

    name: str | None
    calls: tuple[str | None, ...]
    operators: tuple[str, ...]


@dataclass(slots=True)
class Analysis:
    """Everything found in one command line, nested shells included."""

    invocations: list[Invocation] = field(default_factory=list)
    operators: list[str] = field(default_factory=list)
    # The operators of shell code run by a program of the command (``sh -c``, ``eval``).
    nested_operators: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    feeds: list[Feed] = field(default_factory=list)
    functions: list[FunctionDef] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    unknowable: list[str] = field(default_factory=list)
    nonliteral_args: list[str] = field(default_factory=list)
    # Why shell code run by a program of the command needs a shell (``sh -c 'ls $HOME'``).
    nested_needs: list[str] = field(default_factory=list)
    # Variables the command sets to a literal value before using them (``d=/etc; rm -r $d``),
    # for path checks; None when the value is not literal.
    variables: dict[str, str | None] = field(default_factory=dict)


def printed_text(inv: Invocation) -> str | None:
    """The literal text ``echo``/``printf`` prints, when that is knowable."""
    texts = inv.texts()
    if inv.name not in ("echo", "printf") or any(t is None for t in texts):
        return None
    words = [t for t in texts if t is not None]
    if inv.name == "echo":
        while words and words[0] in ("-n", "-E"):
            words = words[1:]
        return None if words and words[0].startswith("-e") else " ".join(words)
    return words[0] if len(words) == 1 and "%" not in words[0] and "\\" not in words[0] else None
