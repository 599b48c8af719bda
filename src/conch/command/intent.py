"""Is a request a question (asked ABOUT something) or a task (asked FOR something)?

A question ("what does this error mean", "why does this fail", "is it safe to delete
~/.cache") gets a short answer in prose; a task ("what is using port 8080", "how many lines
are in foo.txt", "show me the git log") gets a command. ``classify`` decides with word
patterns only: it is pure and takes microseconds, where asking the model would take seconds.

The rules ask for positive evidence of a question and call everything else a task, the path
conch has always taken. The evidence, in order:

- words that only a question uses: *mean*, *explain*, *why*, *difference between*, *vs*,
  *what happens if*, *how does X work*, *the purpose of*, *used for*, *tell me about*;
- a request for advice: *should I*, *is it safe to*, *can I* (to do something, not to see
  something), *do I need*, *is this normal*, *which is faster*;
- piped or pasted material referred to as *this*, *these* or *it* together with a word of
  diagnosis (*wrong*, *fix*, *causing the problem*, *summarize*);
- *what is / what are* followed by a concept rather than a thing on this machine: *a/an X*,
  a bare noun (*what is umask*), *the X* without a measurable property (*what is the sticky
  bit*, but not *what is the kernel version* or *what is the largest file here*);
- a question about how a program behaves in general (*does chmod -R follow symlinks*, *can
  rsync resume*, *by default*).

Everything about the state of this machine (*my*, *here*, *running*, *installed*, a file
name, a size, a count, a version, *which process*, *where is*, *how many*) stays a task.
The measured accuracy is in docs/questions.md.
"""

from __future__ import annotations

import re
from enum import StrEnum


class Intent(StrEnum):
    """What the user wants from a request."""

    QUESTION = "question"
    TASK = "task"


_CONTRACTIONS = (
    (r"\bwhat'?s\b", "what is"),
    (r"\bwhat're\b", "what are"),
    (r"\bwhere'?s\b", "where is"),
    (r"\bwho'?s\b", "who is"),
    (r"\bhow'?s\b", "how is"),
    (r"\bthat'?s\b", "that is"),
    (r"\bit's\b", "it is"),
    (r"\bi'?m\b", "i am"),
    (r"\bi'd\b", "i would"),
    (r"\blet's\b", "let us"),
    (r"\b(do|does|did|is|are|was|were|ca|wo|should|would|could)n'?t\b", r"\1 not"),
)
_CODE = re.compile(r"`[^`]*`|\"[^\"]*\"")
# Words in front of a request that change nothing about it.
_FILLER = re.compile(
    r"^(?:(?:hey|hi|ok|okay|so|um|uh|and|but|well|please|conch|quick question|question)"
    r"\b[\s,:!]*)+"
)
# "I want to know ...", "can you tell me ...": what follows is the request.
_LEAD_IN = re.compile(
    r"^(?:i (?:want|would like|need|wanna) to (?:know|find out|understand)|i wonder"
    r"|i am wondering|do you know|can you tell me|could you tell me|please tell me|tell me"
    r"|any idea|i am curious)\b(?! about)\s*(?:if\b|whether\b)?\s*"
)

# Phrases only a question uses.
_QUESTION_PHRASES = re.compile(
    r"|".join(
        (
            r"\bexplain\w*\b",
            r"\bwhy\b",
            r"\bhow come\b",
            r"\bwhat (?:exactly )?(?:does|do|did|would|will)\b.*\b(?:mean|means|meant|do|stand"
            r" for|signify|imply|indicate|represent)\b",
            r"\bwhat (?:it|this|that|they|these|those) means?\b",
            r"\bmeaning\b",
            r"\bwhat is meant\b",
            r"^what (?:happens|happened|would happen|will happen|could happen|went wrong)\b",
            r"\bwhat is (?:wrong|the matter|going on)\b",
            r"\bpurpose of\b|\bwhat is the (?:point|use) of\b",
            r"\b(?:used|good|meant) for\b",
            r"\bstands? for\b",
            r"\btell me about\b",
            r"\b(?:help me|i do not|i cannot) (?:understand|make sense of)\b",
            r"\bwhen (?:should|would|to)\b|\bwhen (?:do|does) (?:you|one|i|we) (?:use|need)\b",
            r"\bby default\b",
            r"\b(?:summari[sz]e|tl;?dr|sum up)\b.*\b(?:this|these|it|above|following)\b",
        )
    )
)

# Comparing two things: a question, unless the things are files (then it is a diff).
_COMPARISON = re.compile(
    r"\bdifferen(?:ce|ces|t) (?:between|from)\b|\bvs\.?\b|\bversus\b|\bcompared? (?:to|with)\b"
    r"|\bhow (?:is|are|do|does) .*\bdiffer\b"
    r"|^(?:which|what) (?:one )?(?:is|are) (?:\w+ )?(?:better|faster|slower|safer|preferable"
    r"|preferred|recommended|quicker|more \w+|less \w+)\b"
    r"|^(?:is|are) .*\b(?:better|worse|faster|slower|safer|the same as|equivalent to"
    r"|deprecated|obsolete)\b"
)

# Advice: safety, necessity, whether something is normal.
_ADVICE_WORDS = (
    r"(?:safe|safely|ok|okay|fine|normal|bad|dangerous|risky|serious|harmful|malicious|wise"
    r"|necessary|needed|recommended|worried|worry|secure|legit|a (?:good|bad) idea"
    r"|a problem|an issue)"
)
_ADVICE = re.compile(
    rf"^(?:is|are|was|should|would|could|can|may|do|does|will)\b.*\b{_ADVICE_WORDS}\b"
    rf"|\b(?:is it|it is|is this|is that)\b.*\b{_ADVICE_WORDS}\b"
    r"|\bshould (?:i|we)\b(?<!how should i)(?<!how should we)"
    r"|^(?:do|does|did) (?:i|we|you) (?:need|have to|must)\b"
    r"|^(?:does|do) \S+ .*\b(?:need|require|requires)\b"
)

# Material in front of conch (piped or pasted), called "this", with a word of diagnosis.
_DEICTIC = (
    r"(?:(?:this|these|that|it|those)(?! (?:machine|computer|system|box|server|host))"
    r"|the (?:above|following|output|error|errors|message|log|problem|issue|failure|crash"
    r"|warning|stack trace|traceback))"
)
_DIAGNOSIS = re.compile(
    rf"\b(?:read|interpret|understand|decode|make sense of)\b (?:\w+ )?{_DEICTIC}\b"
    rf"|^how (?:do|can|should|would|could) (?:i|we|you) (?:fix|solve|debug|resolve) (?:\w+ )?"
    rf"{_DEICTIC}\b"
    rf"|\b(?:caus\w*|cause of)\b (?:\w+ )?{_DEICTIC}\b"
    rf"|\bcaus\w* the (?:problem|error|issue|failure|crash)\b"
    rf"|^what (?:is|are|was|were) {_DEICTIC}\b"
    rf"|\b(?:wrong|broken) (?:with|in) {_DEICTIC}\b"
    rf"|\b(?:is|are) {_DEICTIC} (?:an? )?(?:error|bug|problem|warning)\b"
    rf"|^what (?:does|do|did) {_DEICTIC}\b.*\b(?:tell|say|says|show|shows|indicate)\b"
)
# A yes-or-no question about piped material: "is this a memory leak", "does it look right".
_ABOUT_PIPED = re.compile(
    r"^(?:is|are|was|were|does|do|did|can|could|would|will|should) (?:this|these|that|those|it)\b"
)

# A bare request made about piped material: "explain", "help", "what?", "huh".
_BARE = re.compile(r"^(?:help|what|why|huh|wtf|meaning|\?+)$")

# Imperative verbs that start a task.
_TASK_VERB = re.compile(
    r"^(?:list|show|find|search|count|delete|remove|rm|make|create|compress|extract|rename"
    r"|move|copy|kill|stop|start|restart|print|display|get|give|fetch|download|upload|sort"
    r"|replace|change|set|check|convert|monitor|clone|open|close|run|install|uninstall"
    r"|update|upgrade|backup|back up|tar|zip|unzip|grep|ping|mount|unmount|clean|clear|free"
    r"|add|append|merge|split|filter|format|pretty|turn|generate|send|watch|follow|tail"
    r"|compare|diff|calculate|compute|measure|sum|total|group|dedupe|resize|scan|test)\b"
)

# How a thing on this machine is named: a path, a file name, a port, here, mine.
_MACHINE = re.compile(
    r"[/~]|\b[\w-]+\.(?:[a-z][a-z0-9]{0,4})\b"
    r"|\b(?:my|mine|our|here|this (?:machine|computer|system|box|server|host|directory"
    r"|folder|repo|repository|project)|current|currently|right now|local|localhost"
    r"|installed|running|open|free|left|available|used|using|listening|mounted|today|now"
    r"|yesterday|the (?:cpu|gpu|disk|disks|kernel|network|firewall|machine|computer|system))\b"
    r"|\b(?:in|on|under|inside) this\b|\b(?:process|pid|port|job) \d+"
)

# Properties conch can measure by running something: sizes, counts, versions, names, states.
_MEASURABLE = re.compile(
    r"\b(?:size|sizes|count|number|total|version|versions|name|hostname|username|ip|address"
    r"|addresses|gateway|dns|time|date|uptime|load|usage|temperature|speed|pid|port|ports"
    r"|branch|commit|kernel|distro|release|encoding|owner|permissions|status|path|location"
    r"|contents?|output|value|values|checksum|hash|md5|sha\w*|type|format|mime|shell"
    r"|largest|biggest|smallest|oldest|newest|latest|last|first|most|least|longest|top"
    r"|average|mean|median|sum|max|maximum|min|minimum|length|each|every|all)\b"
)

# Words asking for a way to do something: "what is a good way to", "the command for".
_WAY = re.compile(r"\b(?:way|command|one-liner|oneliner|script|syntax to|how to)\b")

# Verbs of a fact to check on this machine: "does the backup folder exist".
_STATE = re.compile(
    r"\b(?:exist|exists|contain|contains|include|includes|have|has|respond|responds|listen"
    r"|listens|resolve|resolves|match|matches|point|points|run|runs|start|starts|fail|failed"
    r"|succeed|succeeded)\b"
)

# Concepts asked about with "the": a purpose, a difference, the options of a program.
_CONCEPT = re.compile(
    r"\b(?:difference|differences|purpose|meaning|role|reason|idea|rules|advantages"
    r"|disadvantages|pros|cons|benefits|risks|options|flags|arguments|parameters|syntax"
    r"|convention|conventions|best practice|best practices)\b"
)

# Quantities: "how many", "how much", "how big"...; a question only when asked in general.
_QUANTITY = re.compile(r"^how (?:many|much|big|large|long|old|often|full|fast|small)\b")
_GENERAL = re.compile(r"\b(?:should|need|needs|require|requires|typically|usually|normally)\b")


# With the files in front of the model (``--scope``, ``--peek``): "which of these is the
# build script", "what is in it", "is this valid JSON" ask about what it was shown.
_ABOUT_SHOWN = re.compile(
    r"^(?:which|what|is|are|does|do|where)\b.*\b(?:these|this|them|those|it|one|ones)\b"
)


def classify(request: str, piped: bool = False, shown: bool = False) -> Intent:
    """Whether ``request`` asks a question about something or asks for a task to be done.

    ``piped`` says that input was piped to conch: "this" then refers to it. Text pasted after
    a colon or on later lines ("what does this mean: No such file or directory") counts the
    same. ``shown`` says that files were listed or sampled for the model (``--scope``,
    ``--peek``): a which/what/is question about *these*, *this* or *them* is about those
    files, and the model can answer it from what it was shown, unless it asks for something
    to measure (the largest, how many). Pure and fast: word patterns, no model.
    """
    head, pasted = _split(request)
    sentences = [_normalise(s) for s in re.split(r"(?<=[?.!])\s+", head)]
    sentences = [s for s in sentences if s]
    if not sentences:
        return Intent.TASK
    # "what went wrong at boot? show this boot's errors": an instruction after the question
    # makes it a task.
    if any(_TASK_VERB.match(s) and not _QUESTION_PHRASES.search(s) for s in sentences[1:]):
        return Intent.TASK
    first = sentences[0]
    if shown and _ABOUT_SHOWN.search(first) and not _MEASURABLE.search(first):
        return Intent.QUESTION
    return _classify(first, piped or pasted)


def _split(request: str) -> tuple[str, bool]:
    """The request's own words, and whether material was pasted after them."""
    text = request.strip()
    first, newline, _ = text.partition("\n")
    pasted = bool(newline)
    head, colon, tail = first.partition(": ")
    if colon and tail.strip() and len(head.split()) >= 2:
        return head, True
    return first, pasted


def _normalise(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = _CODE.sub(" code ", text)
    for pattern, replacement in _CONTRACTIONS:
        text = re.sub(pattern, replacement, text)
    text = re.sub(r"[?!.,;]+(?=\s|$)", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = _FILLER.sub("", text)
    lead = _LEAD_IN.match(text)
    if lead and lead.end() < len(text):
        text = text[lead.end() :]
    return text.strip()


def _classify(text: str, piped: bool) -> Intent:
    """One normalised sentence: the evidence of a question first, then by its first word."""
    about_this = piped or re.search(r"\b(?:this|these)\b", text) is not None
    if (
        _QUESTION_PHRASES.search(text)
        or (_COMPARISON.search(text) and not _files(text))
        or _ADVICE.search(text)
        or (about_this and _DIAGNOSIS.search(text))
        or (piped and (_BARE.match(text) or _ABOUT_PIPED.match(text)))
    ):
        return Intent.QUESTION
    if _TASK_VERB.match(text):
        return Intent.TASK
    first = text.split()[0]
    if first == "what":
        return _what(text)
    if first == "how":
        return _how(text)
    if first in ("can", "could", "may"):
        return _can(text)
    if first == "did":
        return Intent.TASK  # did the nginx unit fail: something that happened here
    if first in ("does", "do"):
        return _does(text)
    return Intent.TASK


def _what(text: str) -> Intent:
    """``what is/are X``: a concept is a question, a thing on this machine a task."""
    match = re.match(r"^what (?:is|are|was|were) (.+)$", text)
    if match is None:
        return Intent.TASK  # what files changed, what version of python is installed
    rest = match.group(1)
    words = rest.split()
    if words[0][0].isdigit():
        return Intent.TASK  # what is 15% of 240: arithmetic
    if _MACHINE.search(rest) or re.match(r"^\w+ing\b", rest):
        return Intent.TASK  # what is my IP, what is using port 8080, what is in /etc
    if words[0] in ("a", "an"):
        return Intent.TASK if _WAY.search(rest) else Intent.QUESTION
    if words[0] == "the":
        if _WAY.search(rest):
            return Intent.TASK  # what is the command to ...
        if _CONCEPT.search(rest):
            return Intent.QUESTION
        if _MEASURABLE.search(rest):
            return Intent.TASK  # what is the kernel version, the largest file
        # "the X" (one): a thing asked about; "the Xs" (several): things to list.
        last = words[-1]
        plural = len(words) > 1 and last.endswith("s") and not last.endswith("ss")
        return Intent.TASK if plural else Intent.QUESTION
    if words[0] in ("in", "on", "inside", "under", "there", "left"):
        return Intent.TASK  # what is in the config directory
    return Intent.QUESTION  # what is umask, what are file descriptors


def _how(text: str) -> Intent:
    """``how do I`` asks for a way (a command); ``how does X work`` asks about X."""
    if _QUANTITY.match(text):
        return Intent.QUESTION if _GENERAL.search(text) else Intent.TASK
    if re.match(r"^how (?:do|does|did) (?!(?:i|you|we|one)\b)", text):
        return Intent.QUESTION  # how does rsync decide, how do pipes work
    if re.match(r"^how (?:is|are) .*\b(?:different|related|used|safe)\b", text):
        return Intent.QUESTION
    return Intent.TASK


def _can(text: str) -> Intent:
    """``can you`` is a polite task, ``can I see`` too; ``can I delete`` asks permission and
    ``can rsync resume`` asks what a program does."""
    if re.match(r"^\w+ (?:you|u)\b", text):
        return Intent.TASK
    if re.match(
        r"^\w+ (?:i|we) (?:please )?(?:see|get|view|list|show|find|check|have|count)\b", text
    ):
        return Intent.TASK
    if re.match(r"^\w+ (?:i|we)\b", text):
        return Intent.QUESTION
    return Intent.TASK if _MACHINE.search(text) else Intent.QUESTION


def _does(text: str) -> Intent:
    """``does foo.txt contain`` is a task; ``does chmod -R follow symlinks`` a question."""
    if _MACHINE.search(text) or _STATE.search(text):
        return Intent.TASK
    return Intent.QUESTION


def _files(text: str) -> bool:
    """Two or more file-like names: comparing them is a diff, not a question."""
    return len(re.findall(r"(?:^|\s)(?:[\w.-]*/[\w./-]*|[\w-]+\.[a-z][a-z0-9]{0,4})\b", text)) >= 2
