"""An instruction of several actions, given to a small model one action per turn.

"Write a script count.py that prints the number of words in essay.txt. Run it and save its
output to result.txt." is two jobs. A small model handed both at once tends to do the last
one first, and to write the output file itself with what it guesses the script would print.
Handed one at a time, in the same conversation, it writes the script, then runs it.

The split is by sentence. A sentence that starts with an action verb ("Write", "Run",
"Make", "Save", "Then", ...) starts a new step; other sentences stay with their step: what
comes before the first action is context for it ("numbers.txt holds one number per line.
Write their sum to total.txt." is one step), and what follows an action is a condition on it
("Change the port to 9090. Leave everything else as it is." is one step). An instruction
with one action, a question, or text of more than one line (a task file's prompt, whose
instructions guide the agent as a whole) is one step.
"""

from __future__ import annotations

import re

# Verbs that start a new job when they open a sentence (imperative mood). Verbs that
# usually state a condition on the job before ("Keep", "Leave", "Sort", "Use") are not here.
ACTIONS = frozenset(
    {
        "add",
        "afterwards",
        "copy",
        "create",
        "delete",
        "execute",
        "finally",
        "make",
        "move",
        "next",
        "print",
        "put",
        "rename",
        "run",
        "save",
        "then",
        "write",
    }
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_FIRST_WORD = re.compile(r"[A-Za-z]+")


def split_steps(text: str) -> list[str]:
    """``text`` as the steps to give one per turn, in order; the whole text as one step
    when it asks for one action. Joined with spaces, the steps are the text's sentences."""
    if "\n" in text.strip():  # a message of several lines (a task file's prompt) stays whole
        return [text]
    steps: list[str] = []
    context = ""
    for sentence in (s.strip() for s in _SENTENCE_END.split(text.strip())):
        if not sentence:
            continue
        first = _FIRST_WORD.match(sentence)
        action = first is not None and first.group(0).lower() in ACTIONS
        if action and steps:
            steps.append(sentence)
        elif action:
            steps.append(f"{context} {sentence}".strip())
        elif steps:
            steps[-1] = f"{steps[-1]} {sentence}"
        else:
            context = f"{context} {sentence}".strip()
    if len(steps) < 2:
        return [text]
    return steps


# A file name as a request names one: letters, digits, dots, dashes and slashes, with an
# extension ("count.py", "docs/INDEX.md").
_FILE_NAME = re.compile(
    r"(?<![\w./-])(?:[\w./-]*\w\w\.[A-Za-z]\w{0,7}|[\w./-]*\w\.[A-Za-z]\w{1,7})(?![\w/-])"
)  # "e.g." and "i.e." are not file names: a name or an extension of two characters at least
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'|`[^`]*`")
_IT = re.compile(r"\b(?:it|its)\b", re.IGNORECASE)


def resolve_it(step: str, before: str | None) -> str:
    """``step`` with "it" and "its" replaced by the first file the step ``before`` it names,
    when the step names no file of its own before its first "it": "Run it and save its output to
    result.txt" after "Write a script count.py ..." reads "Run count.py and save count.py's
    output to result.txt". A step handed to the one-shot pipeline alone has no earlier
    sentence to read "it" from. Unchanged when there is no such earlier file."""
    first = _IT.search(step)
    if before is None or first is None or _FILE_NAME.search(step, 0, first.start()):
        return step  # no "it", nothing before to mean, or a file of its own named first
    named = _FILE_NAME.search(before)
    if named is None:
        return step
    name = named.group(0).rstrip(".")

    def swap(found: re.Match[str]) -> str:
        return name if found.group(0).lower() == "it" else f"{name}'s"

    # Quoted text is the user's own words ("replace the word 'it'"): left as written.
    parts, end = [], 0
    for quoted in _QUOTED.finditer(step):
        parts += [_IT.sub(swap, step[end : quoted.start()]), quoted.group(0)]
        end = quoted.end()
    return "".join([*parts, _IT.sub(swap, step[end:])])
