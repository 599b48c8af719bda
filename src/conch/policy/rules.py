"""One rule for every action: run it, ask the person first, or refuse it.

Every surface asks this module, for every kind of action an agent or a user's request can
take: a command (judged by the policy first, ``conch.policy.assess``), a write or edit of an
existing file, a delete, a move over an existing file, a foreign MCP server's tool, a web
fetch. ``decide`` takes the action, the execution mode, the user's choices (``--confirm``,
``--explain``, unsafe mode, a prompt config's allowed programs) and the user's permission
rules, and returns a ``Ruling``: ``run`` (nobody is asked, so the action is contained: see
``conch.execute.contain``), ``ask`` (the front end's question), or ``refuse``, with the reason
and the permission rule that decided, if one did.

The order, first that applies:

1. A command the policy rejects is refused (the denylist, a whitelist, the sandbox root, code
   safe mode cannot see). No rule or mode changes that.
2. The user's custom denylist (``permissions.deny``): a match is refused, in every mode.
3. The user's permission rules for the action's tool (``permissions.rules``: glob patterns
   with ``allow``, ``ask`` or ``deny``; the last pattern that matches wins). ``deny`` refuses;
   ``ask`` asks; ``allow`` runs without a question where the mode would have asked (in
   every mode: the user wrote the pattern; a command still runs contained).
4. What the user asked for: ``--confirm``, ``--explain``, unsafe mode, or a program that must
   be explained (``force_explain``) ask.
5. The mode: interactive asks for everything; restricted-autonomous runs read-only commands
   and reads, and asks for the rest; full-autonomous runs everything.
6. Fail closed: an action that would run without a question but cannot be contained (no
   sandbox runs here, ``contain=False``) is asked about instead.

A front end with no one to ask turns ``ask`` into a refusal (``conch.errors.NoOneToAsk``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from conch.policy.classify import Risk

if TYPE_CHECKING:
    from conch.config.permissions import PermissionSettings

__all__ = [
    "Action",
    "ExecutionMode",
    "Kind",
    "Outcome",
    "Permission",
    "Permissions",
    "Ruling",
    "always_pattern",
    "decide",
    "mode_outcome",
    "permissions_from",
    "with_rule",
]


class ExecutionMode(StrEnum):
    """How much the user lets conch run without asking."""

    INTERACTIVE = "interactive"
    RESTRICTED = "restricted-autonomous"
    FULL = "full-autonomous"


class Outcome(StrEnum):
    """What happens to an action."""

    RUN = "run"
    ASK = "ask"
    REFUSE = "refuse"


class Kind(StrEnum):
    """The kinds of action the rule decides."""

    COMMAND = "command"  # a shell command (the policy's verdict comes with it)
    READ = "read"  # reading a file or listing a directory inside the workspace
    CREATE = "create"  # writing a file that does not exist yet
    WRITE = "write"  # writing or editing a file that exists
    DELETE = "delete"
    MOVE = "move"  # a move or copy over a file that exists
    MCP_TOOL = "mcp_tool"  # a tool of another MCP server
    FETCH = "fetch"  # a web fetch or search


# The permission rules' tool name for each kind (``permissions.rules`` keys).
TOOL_OF_KIND: dict[Kind, str] = {
    Kind.COMMAND: "bash",
    Kind.READ: "read",
    Kind.CREATE: "write",
    Kind.WRITE: "write",
    Kind.DELETE: "delete",
    Kind.MOVE: "move",
    Kind.MCP_TOOL: "mcp",
    Kind.FETCH: "fetch",
}

# What each kind is, for the mode rule: like a read-only command, or like one that writes.
_READS = frozenset({Kind.READ})


@dataclass(frozen=True, slots=True)
class Action:
    """One thing about to happen. ``subject``: what it is, in one line (the command text,
    the path, ``server.tool``, the URL). ``parts``: what the permission patterns match, each
    on its own (a command's programs with their arguments, one per stage; the paths of a
    delete); empty: ``subject`` alone. ``whole``: the parts are all there is (False for a
    command run through a shell, whose parts conch cannot list: no ``allow`` rule applies).
    ``risk``: how much it can do (None: by its kind, reading or writing); ``rejected``: the
    policy rejected the command (``reasons`` say why)."""

    kind: Kind
    subject: str
    risk: Risk | None = None
    rejected: bool = False
    reasons: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()
    whole: bool = True

    @property
    def tool(self) -> str:
        return TOOL_OF_KIND[self.kind]

    @property
    def level(self) -> Risk:
        """The risk, or the kind's own: reading is read-only, anything else writes."""
        if self.risk is not None:
            return self.risk
        return Risk.READ_ONLY if self.kind in _READS else Risk.WRITES

    @property
    def matched(self) -> tuple[str, ...]:
        return self.parts or (self.subject,)


class Permission(StrEnum):
    """What a permission rule says."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class Permissions:
    """The user's permission rules. ``rules``: per tool (``bash``, ``write``, ``delete``,
    ``move``, ``mcp``, ``fetch``, ``read``, or ``*`` for every tool), glob patterns in order,
    each with what it says; the last that matches wins. ``deny``: patterns refused for
    commands in every mode (a custom denylist)."""

    rules: Mapping[str, Sequence[tuple[str, Permission]]] = field(default_factory=dict)
    deny: tuple[str, ...] = ()

    def match(self, tool: str, subject: str) -> tuple[str, Permission] | None:
        """The last rule for ``tool`` (or ``*``) whose pattern matches ``subject``."""
        found: tuple[str, Permission] | None = None
        for key in ("*", tool):
            for pattern, says in self.rules.get(key, ()):
                if _glob(subject, pattern):
                    found = (f"{key}: {pattern!r} -> {says}", says)
        return found

    def denied(self, subject: str) -> str | None:
        """The custom denylist pattern ``subject`` matches, or None."""
        return next((p for p in self.deny if _glob(subject, p)), None)

    def judge(self, action: Action) -> tuple[str, Permission] | None:
        """The rules' say on ``action``, part by part: ``deny`` when one part's last matching
        rule denies, else ``ask`` when one asks, else ``allow`` when every part's allows (and
        the parts are the whole action); None when no rule decides."""
        found = [self.match(action.tool, part) for part in action.matched]
        for says in (Permission.DENY, Permission.ASK):
            hit = next((m for m in found if m is not None and m[1] is says), None)
            if hit is not None:
                return hit
        if action.whole and found and all(m is not None for m in found):
            return found[0]
        return None


# Programs whose first word is a subcommand: "always" for them means that subcommand only.
_SUBCOMMANDS = frozenset(
    {"git", "docker", "podman", "kubectl", "npm", "pnpm", "yarn", "pip", "pip3", "cargo", "go"}
    | {"apt", "apt-get", "brew", "systemctl", "make", "uv", "poetry", "gh", "conda", "helm"}
)


def always_pattern(kind: Kind, part: str) -> str:
    """The pattern an "always, for this session" answer allows, from the first ``part`` of an
    action: for a command its program (and its subcommand: ``git status *``), with any
    arguments; for a file action the path itself; for the rest the subject."""
    if kind is not Kind.COMMAND:
        return part
    words = part.split()
    if not words:
        return part
    if len(words) > 1 and words[0] in _SUBCOMMANDS and not words[1].startswith("-"):
        return f"{words[0]} {words[1]}*"
    return f"{words[0]}*"


def with_rule(permissions: Permissions | None, tool: str, pattern: str) -> Permissions:
    """``permissions`` with one more ``allow`` rule for ``tool``, after the others (so it
    wins where it matches, as the last matching rule does)."""
    base = permissions or Permissions()
    rules = dict(base.rules)
    rules[tool] = (*rules.get(tool, ()), (pattern, Permission.ALLOW))
    return Permissions(rules, base.deny)


def permissions_from(section: PermissionSettings) -> Permissions:
    """The ``permissions:`` section of the config as ``decide`` takes it."""
    tables = (
        ("bash", section.bash),
        ("write", section.write),
        ("delete", section.delete),
        ("move", section.move),
        ("read", section.read),
        ("mcp", section.mcp),
        ("fetch", section.fetch),
    )
    rules = {
        tool: tuple((pattern, Permission(word)) for pattern, word in table.items())
        for tool, table in tables
        if table
    }
    return Permissions(rules, tuple(section.deny))


def _glob(subject: str, pattern: str) -> bool:
    """``fnmatch`` on the whole text, where ``*`` spans anything (spaces and slashes too)."""
    return fnmatch.fnmatchcase(subject.strip(), pattern.strip())


@dataclass(frozen=True, slots=True)
class Ruling:
    """The rule's answer: the outcome, why (one line each), the permission rule that
    decided (None: the mode or the policy did), and whether the front end must explain the
    action before asking. ``uncontained``: asked only because no sandbox could hold it."""

    outcome: Outcome
    reasons: tuple[str, ...] = ()
    rule: str | None = None
    explain: bool = False
    uncontained: bool = False

    @property
    def why(self) -> str:
        return self.reasons[0] if self.reasons else ""


def mode_outcome(mode: ExecutionMode | str, risk: Risk, *, reads: bool = False) -> Outcome:
    """Step 5 alone: what ``mode`` does with an action of ``risk`` (``reads``: an action that
    only reads, whatever its risk says)."""
    mode = ExecutionMode(mode)
    if mode is ExecutionMode.INTERACTIVE:
        return Outcome.ASK
    if mode is ExecutionMode.FULL:
        return Outcome.RUN
    return Outcome.RUN if reads or risk is Risk.READ_ONLY else Outcome.ASK


def decide(
    action: Action,
    mode: ExecutionMode | str,
    *,
    permissions: Permissions | None = None,
    confirm: bool = False,
    explain: bool = False,
    unsafe: bool = False,
    forced_explain: Sequence[str] = (),
    contain: bool = True,
) -> Ruling:
    """Run, ask or refuse ``action`` in ``mode`` (see the module's docstring for the order).

    ``contain``: an action that runs without a question can be contained here (a sandbox
    runs, or the action is the tool's own and checked in-process); False turns a ``run``
    into an ``ask`` (fail closed).
    """
    mode = ExecutionMode(mode)
    permissions = permissions or Permissions()
    if action.rejected:
        return Ruling(Outcome.REFUSE, action.reasons or ("rejected by the safety policy",))
    if action.kind is Kind.COMMAND:
        custom = next(
            (d for part in (action.subject, *action.parts) if (d := permissions.denied(part))),
            None,
        )
        if custom is not None:
            why = f"Your denylist refuses it (permissions.deny: {custom!r})."
            return Ruling(Outcome.REFUSE, (why,), rule=f"deny: {custom!r}")
    matched = permissions.judge(action)
    if matched is not None and matched[1] is Permission.DENY:
        return Ruling(
            Outcome.REFUSE, (f"Your permission rule refuses it ({matched[0]}).",), matched[0]
        )
    forced = tuple(forced_explain)
    wants = [
        why
        for flag, why in (
            (unsafe, "Unsafe mode always asks."),
            (confirm, "You asked to confirm every command."),
            (explain, "You asked to explain every command."),
            (bool(forced), f"{', '.join(forced)} must be explained before it runs."),
        )
        if flag
    ]
    if matched is not None and matched[1] is Permission.ASK:
        wants.insert(0, f"Your permission rule asks ({matched[0]}).")
    show = bool(forced)  # --explain is the front end's own: it explains every command
    if wants:
        return Ruling(Outcome.ASK, tuple(wants), matched[0] if matched else None, show)
    outcome = mode_outcome(mode, action.level, reads=action.kind in _READS)
    rule = None
    if matched is not None and matched[1] is Permission.ALLOW:
        outcome, rule = Outcome.RUN, matched[0]
    if outcome is Outcome.ASK:
        what = f"It is {action.level}" if action.kind is Kind.COMMAND else f"It is a {action.kind}"
        return Ruling(Outcome.ASK, (f"{what}, so it needs your yes in {mode} mode.",))
    if not contain and not (rule is not None and action.kind is not Kind.COMMAND):
        # A command with no sandbox, or another program's tool conch cannot hold (unless
        # the user's own rule allows that tool by name): fail closed.
        why = (
            "It cannot run contained here (no sandbox runs, or it writes and the workspace is /, "
            "a system directory or holds your home directory), so conch asks first."
            if action.kind is Kind.COMMAND
            else "conch cannot contain what it does, so it asks first (a permission rule can allow it)."
        )
        return Ruling(Outcome.ASK, (why,), rule, uncontained=True)
    reason = (
        f"Allowed by your rule ({rule})." if rule else f"Runs without a question in {mode} mode."
    )
    return Ruling(Outcome.RUN, (reason,), rule)
