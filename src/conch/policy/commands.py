"""Walk a tree-sitter-bash tree and find every command that would run.

Unknown node types are failures, not skipped: the walker only trusts constructs it knows.
"""

from __future__ import annotations

import dataclasses
import os
import re

from tree_sitter import Node

from conch.errors import PolicyRejection
from conch.policy import fed
from conch.policy.model import (
    Analysis,
    Arg,
    Feed,
    FunctionDef,
    Invocation,
    Redirect,
    printed_text,
)
from conch.policy.parse import (
    ParseFailure,
    ansi_c,
    double_quoted,
    node_text,
    parse_tree,
    unquoted_word,
)
from conch.policy.plan import plan
from conch.policy.wrappers import (
    CODE_IN_OPTIONS,
    FOREIGN_SHELLS,
    SHELLS,
    STDIN_SHELLS,
    WRAPPERS,
    reads_code_from_stdin,
    unwrap,
)

MAX_NESTING = 8  # shell code inside shell code (bash -c "eval '...'")
MAX_WRAPPING = 24  # sudo env nice timeout ... chains

_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&"})
_SEPARATOR_PARENTS = frozenset(
    {"program", "list", "pipeline", "compound_statement", "subshell", "do_group", "if_statement"}
    | {"elif_clause", "else_clause", "while_statement", "for_statement", "function_definition"}
    | {"redirected_statement", "heredoc_redirect", "negated_command", "command_substitution"}
    | {"process_substitution", "c_style_for_statement", "case_statement"}
)
# Constructs a single generated command should not need; reported like operators.
_CONSTRUCTS = {
    "subshell": "(",
    "compound_statement": "{",
    "if_statement": "if",
    "for_statement": "for",
    "c_style_for_statement": "for",
    "while_statement": "while",
    "case_statement": "case",
    "negated_command": "!",
}
_CONTAINERS = frozenset(
    {"list", "compound_statement", "subshell", "do_group", "if_statement", "elif_clause"}
    | {"else_clause", "while_statement", "for_statement", "c_style_for_statement"}
    | {"case_statement", "case_item", "negated_command", "test_command", "binary_expression"}
    | {"unary_expression", "parenthesized_expression", "ternary_expression", "array"}
    | {"postfix_expression", "subscript", "variable_assignments", "heredoc_body"}
)
_INERT = frozenset(
    {"comment", "variable_name", "test_operator", "regex", "special_variable_name"}
    | {"heredoc_start", "heredoc_end", "heredoc_content", "file_descriptor", "string_content"}
)
_VALUES = frozenset(
    {"word", "number", "raw_string", "string", "ansi_c_string", "translated_string"}
    | {"concatenation", "simple_expansion", "expansion", "command_substitution"}
    | {"process_substitution", "arithmetic_expansion", "brace_expression", "extglob_pattern"}
)
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&"})
# $HOME, ${HOME}, and ${HOME:?}, ${HOME:-x}, ${HOME:=x}: HOME is set, so all of them are HOME.
_HOME = re.compile(r"\$HOME\b|\$\{HOME(?::?[-?=][^}]*)?\}")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


class Walker:
    """Collects invocations, operators, redirects and feeds into one shared Analysis."""

    def __init__(self, analysis: Analysis, nesting: int = 0) -> None:
        self.a = analysis
        self.nesting = nesting
        self.stdin_text: dict[int, str] = {}

    # statements -----------------------------------------------------------------------
    def walk(self, node: Node) -> None:
        kind = node.type
        if node.is_error or node.is_missing:
            if not self.a.failures:
                self._fail(f"syntax error near {node_text(node)[:40]!r}")
            self._children(node)  # still collect what we can, for the denylist
        elif kind == "program":
            self._program(node)
        elif kind == "command":
            self._command(node)
        elif kind == "pipeline":
            self._pipeline(node)
        elif kind == "redirected_statement":
            self._redirected(node)
        elif kind == "function_definition":
            self._function(node)
        elif kind == "variable_assignment":
            self._assignment(node)
        elif kind in ("declaration_command", "unset_command"):
            keyword = node.children[0].type if node.children else kind
            args = [self.arg(c) for c in node.named_children if c.type in _VALUES]
            exported = keyword == "export" or any(
                (a.text or "").startswith("-") and "x" in (a.text or "") for a in args
            )
            names = tuple(
                node_text(c.child_by_field_name("name") or c)
                for c in node.named_children
                if c.type == "variable_assignment" and exported
            )
            self.a.invocations.append(
                Invocation(keyword, tuple(args), raw_name=keyword, assignments=names)
            )
            for child in node.named_children:
                if child.type not in _VALUES:
                    self.walk(child)
        elif kind == "test_command" and node.children and node.children[0].type == "[":
            # `[ -d x ]` is the ordinary `[` builtin, not a compound command
            self.a.invocations.append(Invocation("[", (), raw_name="["))
            self._children(node)
        elif kind in _CONTAINERS:
            if kind in _CONSTRUCTS or kind == "test_command":
                first = node.children[0].type if node.children else kind
                self._op(_CONSTRUCTS.get(kind, first) if kind != "while_statement" else first)
            self._children(node)
        elif kind in _VALUES:
            self.arg(node)
        elif kind in _REDIRECTS:
            self._redirect(node, [])
        elif kind not in _INERT:
            self._fail(f"unsupported shell construct {kind!r}")

    def _assignment(self, node: Node) -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        value = self.arg(value_node).path_text if value_node is not None else ""
        for child in node.named_children:
            if child is not name_node and child is not value_node:
                self.walk(child)
        if name_node is not None and name_node.type == "variable_name":
            self.a.variables[node_text(name_node)] = value

    def _children(self, node: Node) -> None:
        for child in node.children:
            if child.is_named or child.is_error or child.is_missing:
                self.walk(child)
            elif child.type in _SEPARATORS and node.type in _SEPARATOR_PARENTS:
                self._op(child.type)

    def _program(self, node: Node) -> None:
        previous_was_statement = False
        for child in node.children:
            if child.type == "comment" or child.is_error:
                continue
            if child.is_named and previous_was_statement:
                self._op("newline")  # two commands on separate lines run one after another
            if child.is_named or child.type in _SEPARATORS or child.is_error:
                previous_was_statement = child.is_named
        self._children(node)

    def _pipeline(self, node: Node, first: list[Invocation] | None = None) -> None:
        stages: list[list[Invocation]] = [first] if first is not None else []
        for child in node.children:
            if child.type in ("|", "|&"):
                self._op(child.type)
            elif child.is_named or child.is_error:
                start = len(self.a.invocations)
                self.walk(child)
                stages.append(self.a.invocations[start:])
        for k in range(1, len(stages)):
            producers = [inv for stage in stages[:k] for inv in stage]
            self._feed(producers, stages[k], self._text_of(stages[k - 1]))

    def _function(self, node: Node) -> None:
        self._op("function")
        name_node = node.child_by_field_name("name")
        name = node_text(name_node) if name_node is not None else None
        start_inv, start_op = len(self.a.invocations), len(self.a.operators)
        for child in node.named_children:
            if child is not name_node:
                self.walk(child)
        calls = tuple(inv.name for inv in self.a.invocations[start_inv:])
        self.a.functions.append(FunctionDef(name, calls, tuple(self.a.operators[start_op:])))

    def _redirected(self, node: Node) -> None:
        start = len(self.a.invocations)
        redirects = [c for c in node.named_children if c.type in _REDIRECTS]
        for child in node.children:
            if child.type in _SEPARATORS:
                self._op(child.type)
            elif (child.is_named or child.is_error) and child.type not in _REDIRECTS:
                self.walk(child)
        body = self.a.invocations[start:]
        for child in redirects:
            self._redirect(child, body)

    def _command(self, node: Node) -> None:
        mark = len(self.a.invocations)
        argv: list[Arg] = []
        redirects: list[Node] = []
        assigned: list[str] = []
        values: list[Arg] = []
        for child in node.named_children:
            if child.type == "command_name":
                argv.extend(self.arg(c) for c in child.named_children)
            elif child.type in _REDIRECTS:
                redirects.append(child)
            elif child.type in _VALUES:
                argv.append(self.arg(child))
            else:
                if child.type == "variable_assignment":
                    name = child.child_by_field_name("name")
                    assigned.append(node_text(name) if name is not None else "")
                    value = child.child_by_field_name("value")
                    if value is not None and value.type in _VALUES:
                        start = len(self.a.invocations)
                        values.append(self.arg(value))
                        del self.a.invocations[start:]  # walked below, once
                self.walk(child)
        nested = self.a.invocations[mark:]
        del self.a.invocations[mark:]
        if argv:
            self.run(argv, stdin_args=False, depth=0)
        if assigned and len(self.a.invocations) > mark:
            # `PAGER=... man ls`: the variables are the command's environment, judged with it.
            first = self.a.invocations[mark]
            self.a.invocations[mark] = dataclasses.replace(
                first, assignments=tuple(assigned), assigned_values=tuple(values)
            )
        own = self.a.invocations[mark:]
        self.a.invocations.extend(nested)
        for child in redirects:
            self._redirect(child, own)

    # redirects and feeds -------------------------------------------------------------
    def _redirect(self, node: Node, body: list[Invocation]) -> None:
        descriptor = ""
        operator = ""
        target: Arg | None = None
        heredoc: str | None = None
        deferred: list[Node] = []
        for child in node.children:
            if child.type == "file_descriptor":
                descriptor = node_text(child)
            elif not child.is_named and not child.is_error and not operator:
                operator = child.type
            elif child.type == "heredoc_body":
                start = len(self.a.invocations)
                self._children(child)
                inner = tuple(self.a.invocations[start:])
                heredoc = node_text(child) if not inner and not self._expands(child) else None
                target = Arg(node_text(child), heredoc, inner=inner)
            elif child.type in _VALUES and target is None:
                target = self.arg(child)
            elif child.is_named or child.is_error:
                deferred.append(child)  # `cat <<EOF | sh`: the pipe hangs off the heredoc
        self._op(descriptor + operator)
        if heredoc is not None:
            for inv in body:
                self.stdin_text[id(inv)] = heredoc
        for child in deferred:
            if child.type == "pipeline":
                self._pipeline(child, first=body)
            else:
                self.walk(child)
        if target is None:
            return
        writes = operator in _WRITE_OPS and not (operator == ">&" and target.text in _FD_TARGETS)
        self.a.redirects.append(Redirect(descriptor + operator, target, writes))
        if operator in ("<<", "<<-", "<<<", "<"):
            literal = heredoc if operator != "<<<" else target.text
            if operator == "<" and target.text is not None:
                literal = None  # a file: its contents are not ours to read
            for inv in body:
                if literal is not None:
                    self.stdin_text[id(inv)] = literal
            self._feed(list(target.inner), body, literal)

    def _feed(
        self, producers: list[Invocation], consumers: list[Invocation], text: str | None
    ) -> None:
        consumers = fed.complete(consumers, producers, text, self.a.invocations, self._rerun)
        self.a.feeds.append(Feed(tuple(producers), tuple(consumers), text))
        for inv in consumers:
            if not reads_code_from_stdin(inv):
                continue
            if text is not None and (inv.name in SHELLS or inv.name in STDIN_SHELLS):
                self.source(text, f"{inv.name} reading stdin")
            else:
                self.a.unknowable.append(
                    f"'{inv.name}' reads its program from stdin, so what it runs cannot be known."
                )

    def _rerun(self, argv: list[Arg]) -> None:
        self.run(argv, stdin_args=False, depth=1)

    def _text_of(self, stage: list[Invocation]) -> str | None:
        """The literal text a pipeline stage prints, when that is knowable (echo, heredoc)."""
        if len(stage) != 1:
            return None
        inv = stage[0]
        if id(inv) in self.stdin_text and inv.name == "cat" and not inv.args:
            return self.stdin_text[id(inv)]
        return printed_text(inv)

    @staticmethod
    def _expands(node: Node) -> bool:
        return any(c.type in _VALUES for c in node.named_children)

    # words --------------------------------------------------------------------------
    def arg(self, node: Node) -> Arg:
        """Evaluate one word; substitutions inside it are walked and kept in ``inner``."""
        start = len(self.a.invocations)
        text, glob, brace, path = self._value(node)
        inner = tuple(self.a.invocations[start:])
        return Arg(node_text(node), text, glob, brace, path, inner)

    def _value(self, node: Node) -> tuple[str | None, bool, bool, str | None]:
        kind = node.type
        raw = node_text(node)
        if kind == "word":
            value, glob, brace = unquoted_word(raw)
            return value, glob, brace, value
        if kind == "number":
            return raw, False, False, raw
        if kind == "raw_string":
            return raw[1:-1], False, False, raw[1:-1]
        if kind == "ansi_c_string":
            value = ansi_c(raw[2:-1])
            return value, False, False, value
        if kind == "extglob_pattern":
            return raw, True, False, raw
        if kind in ("string", "translated_string"):
            body = raw[2:-1] if kind == "translated_string" else raw[1:-1]
            if all(c.type == "string_content" for c in node.named_children):
                value = double_quoted(body)
                return value, False, False, value
            self._children(node)
            homeless = _HOME.sub("~", self._substitute(body))
            known = "$" not in homeless and "`" not in homeless
            return None, False, False, double_quoted(homeless) if known else None
        if kind == "concatenation":
            parts = [self._value(c) for c in node.named_children]
            texts = [p[0] for p in parts]
            paths = [p[3] for p in parts]
            text = None if any(t is None for t in texts) else "".join(t or "" for t in texts)
            path = None if any(p is None for p in paths) else "".join(p or "" for p in paths)
            brace = any(p[2] for p in parts) or bool(re.search(r"\{[^}]*,", raw))
            return text, any(p[1] for p in parts), brace, path
        if kind in ("simple_expansion", "expansion"):
            self._children(node)
            if _HOME.fullmatch(raw):
                return None, False, False, "~"
            value = self._substitute(raw)
            return None, False, False, value if value != raw and "$" not in value else None
        if kind == "command_substitution":
            self._op("`" if raw.startswith("`") else "$(")
        elif kind == "process_substitution":
            self._op(raw[:2])
        elif kind == "arithmetic_expansion":
            self._op("$((")
        elif kind != "brace_expression":
            self.walk(node)  # not a word type: the walker decides (and fails on the unknown)
            return None, False, False, None
        self._children(node)
        return None, False, kind == "brace_expression", None

    def _substitute(self, text: str) -> str:
        """``text`` with the variables the command set to literal values put in."""

        def value(match: re.Match[str]) -> str:
            found = self.a.variables.get(match.group(1) or match.group(2))
            return match.group() if found is None else found

        return _VARIABLE.sub(value, text) if self.a.variables else text

    # commands -----------------------------------------------------------------------
    def run(self, argv: list[Arg], stdin_args: bool, depth: int) -> None:
        """Record the command ``argv`` and whatever it runs in turn."""
        if depth > MAX_WRAPPING:
            self._fail("too many nested wrapper commands")
            return
        head, args = argv[0], argv[1:]
        for arg in args:
            if arg.text is None and arg.path_text is None:
                self.a.nonliteral_args.append(arg.raw)
        if head.text is None:
            self.a.unknowable.append(
                f"The command name {head.raw!r} is not a literal word, "
                "so the program that would run cannot be known."
            )
            self.a.invocations.append(
                Invocation(None, tuple(args), stdin_args, head.raw, name_inner=head.inner)
            )
            return
        if head.text in _MISPLACED_KEYWORDS and head.raw == head.text:
            # tree-sitter reads a stray `done` or `fi` as a command; bash calls it an error.
            self._fail(f"the misplaced keyword {head.text!r}")
        name = os.path.basename(head.text.rstrip("/")) or head.text
        self.a.invocations.append(Invocation(name, tuple(args), stdin_args, head.text))
        if args and any(f.name == name and None in f.calls for f in self.a.functions):
            # `f() { "$@"; }; f rm -rf /`: the function runs its arguments as a command.
            self.run(args, stdin_args, depth + 1)
        if name not in WRAPPERS and name not in CODE_IN_OPTIONS and name not in FOREIGN_SHELLS:
            return
        inner = unwrap(name, args)
        if inner.argv:
            self.run(inner.argv, inner.stdin_args or stdin_args, depth + 1)
        for command in inner.execs:
            self.run(command, False, depth + 1)
        if inner.script:
            start = len(self.a.invocations)
            self._script(name, inner.script)
            if inner.stdin_args or stdin_args:
                # `xargs sh -c 'rm -r "$@"'`: the code gets its arguments from stdin.
                for i in range(start, len(self.a.invocations)):
                    self.a.invocations[i] = dataclasses.replace(
                        self.a.invocations[i], stdin_args=True
                    )

    def _script(self, name: str, script: list[Arg]) -> None:
        """Parse the shell code a wrapper runs (``sh -c``, ``eval``), or note it is unknowable."""
        texts = [a.text for a in script]
        if all(t is not None for t in texts):
            self.source(" ".join(t or "" for t in texts), name)
        else:
            self.a.unknowable.append(
                f"'{name}' runs shell code that is only known at run time "
                f"({' '.join(a.raw for a in script)[:60]!r})."
            )
            # Best effort with the expansions left in place, so `eval "rm -rf $HOME"`
            # still meets the denylist; the verdict is already a rejection.
            self.source(" ".join(a.approximate() for a in script), name)

    def source(self, text: str, origin: str) -> None:
        """Parse shell code found inside the command (``bash -c``, ``eval``) the same way."""
        if self.nesting >= MAX_NESTING:
            self._fail(f"shell code nested too deeply inside {origin!r}")
            return
        try:
            root = parse_tree(text)
        except ParseFailure as exc:
            self._fail(f"the code run by {origin!r}: {exc}")
            return
        if root.has_error:
            self._fail(f"the code run by {origin!r} ({text[:60]!r})")
        else:
            try:
                plan(text)
            except PolicyRejection as exc:
                # What needs a shell at the top needs one inside `sh -c` as well.
                self.a.nested_needs.append(str(exc).rstrip("."))
        Walker(self.a, self.nesting + 1).walk(root)

    def _op(self, operator: str) -> None:
        self.a.operators.append(operator)
        if self.nesting:
            self.a.nested_operators.append(operator)

    def _fail(self, detail: str) -> None:
        self.a.failures.append(
            f"The policy could not parse {detail}; it is rejected because its effect "
            "cannot be checked."
        )


_FD_TARGETS = frozenset({"0", "1", "2", "-"})
_MISPLACED_KEYWORDS = frozenset({"done", "fi", "then", "else", "elif", "esac", "do", "in", "}"})


def analyse(command: str) -> Analysis:
    """Everything the policy needs to know about ``command``."""
    analysis = Analysis()
    walker = Walker(analysis)
    try:
        root = parse_tree(command)
    except ParseFailure as exc:
        walker._fail(f"the command: {exc}")
        return analysis
    if root.has_error:
        walker._fail(f"the command ({command.strip()[:60]!r})")
    walker.walk(root)
    return analysis
