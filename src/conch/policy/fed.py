"""The words ``xargs`` (and ``parallel``) add to the command they run, read from their input.

Those words are arguments like any other, options included: ``echo '-o /etc/passwd' | xargs
sort`` runs ``sort -o /etc/passwd``, and ``xargs nice <<< 'rm -rf /etc'`` runs ``rm``. So:

- when the input is known text (``echo``, ``printf``, a here-string or here-document), the
  command is judged again with the words it gets (``xargs -I {}``: put where ``{}`` stands);
- when the input is the paths ``find`` prints (they begin with its start point, never with a
  dash), the command is judged again with two such paths, as operands;
- otherwise the words are unknown: the command stays marked, and ``conch.policy.classify``
  reads it as ``unknown`` (it may be given any option).
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable

from conch.policy.model import Arg, Invocation

# Two paths as find prints them: enough to reach a program's second operand (``uniq IN OUT``).
_FOUND = tuple(Arg(f"./found-{n}", f"./found-{n}", path_text=f"./found-{n}") for n in (1, 2))


def words_of(text: str) -> list[Arg]:
    """The arguments xargs makes of ``text``: blank-separated words, quotes honoured."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    return [Arg(shlex.quote(w), w, path_text=w) for w in words]


def _finds_paths(producers: list[Invocation]) -> bool:
    """Whether every producer is a ``find`` whose start points cannot begin with a dash."""
    from conch.policy.reach import find_starts

    if not producers:
        return False
    for inv in producers:
        if inv.name != "find":
            return False
        starts = find_starts(inv)
        if any(a.path_text is None or a.path_text.startswith("-") for a in starts):
            return False
    return True


def complete(
    consumers: list[Invocation],
    producers: list[Invocation],
    text: str | None,
    invocations: list[Invocation],
    run: Callable[[list[Arg]], None],
) -> list[Invocation]:
    """Judge each command of ``consumers`` that gets arguments from its input with the
    words it would get (``run`` walks a command line), marking it ``stdin_judged`` in
    ``invocations``; the consumers, as they now stand."""
    words: list[Arg] | None = None
    if text is not None:
        words = words_of(text)
    elif _finds_paths(producers):
        words = list(_FOUND)
    out: list[Invocation] = []
    for inv in consumers:
        if not inv.stdin_args or inv.stdin_judged or words is None or inv.name is None:
            out.append(inv)
            continue
        judged = dataclasses.replace(inv, stdin_judged=True)
        index = next((i for i, x in enumerate(invocations) if x is inv), None)
        if index is not None:
            invocations[index] = judged
        out.append(judged)
        args = list(inv.args)
        slots = [i for i, a in enumerate(args) if a.text is not None and "{}" in a.text]
        if slots and words:
            line = " ".join(w.text or "" for w in words)
            for i in slots:
                replaced = (args[i].text or "").replace("{}", line)
                args[i] = Arg(shlex.quote(replaced), replaced, path_text=replaced)
        else:
            args += words
        run([Arg(inv.raw_name or inv.name, inv.raw_name or inv.name), *args])
    return out
