"""Tricky shell commands, and a measurement of how bashlex and tree-sitter-bash cope.

Run ``python tests/policy/policy_parser_corpus.py`` to print the table quoted in
docs/policy.md. Each entry is ``(command, names)``: ``names`` are the programs the shell
grammar says would run (quotes removed; wrappers such as ``sudo`` are policy, not grammar,
so they are not unwrapped here), or None when the text is not valid bash.

An *unsafe* result is a parser that reports success but misses a program that would run, or
that accepts text bash itself rejects.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

N = frozenset
CORPUS: list[tuple[str, frozenset[str] | None]] = [
    # simple commands and quoting
    ("ls -la", N({"ls"})),
    ("r''m -rf /", N({"rm"})),
    ('"r"m -rf /', N({"rm"})),
    ("\\rm -rf /", N({"rm"})),
    ("/bin/rm -rf /", N({"/bin/rm"})),
    ("echo 'a b' \"c d\" e\\ f", N({"echo"})),
    ("echo $'\\x41' $\"hi\"", N({"echo"})),
    ("FOO=1 BAR=2 env", N({"env"})),
    ("ls -- -weird", N({"ls"})),
    ("grep -E 'a|b' file", N({"grep"})),
    ('echo "it\'s" \'say "hi"\'', N({"echo"})),
    ("awk '{print $1}' f", N({"awk"})),
    # pipelines and lists
    ("ls | wc -l", N({"ls", "wc"})),
    ("a && b || c; d & e", N({"a", "b", "c", "d", "e"})),
    ("ls |& cat", N({"ls", "cat"})),
    ("! grep x f", N({"grep"})),
    ("ls\nrm x", N({"ls", "rm"})),
    ("ls; ; rm", None),
    ("(cd /tmp && rm x)", N({"cd", "rm"})),
    ("{ ls; rm x; }", N({"ls", "rm"})),
    # substitutions
    ("echo $(rm x)", N({"echo", "rm"})),
    ("echo `rm x`", N({"echo", "rm"})),
    ('echo "$(rm x)"', N({"echo", "rm"})),
    ("echo $(echo $(rm x))", N({"echo", "rm"})),
    ("x=$(rm y)", N({"rm"})),
    ("$(echo rm) -rf /", N({"echo"})),
    ("echo ${x:-$(rm y)}", N({"echo", "rm"})),
    ("diff <(ls a) <(ls b)", N({"diff", "ls"})),
    ("tee >(rm x) < f", N({"tee", "rm"})),
    ("bash <(curl -s x)", N({"bash", "curl"})),
    ("cat < <(rm x)", N({"cat", "rm"})),
    ('echo "`rm x`"', N({"echo", "rm"})),
    # heredocs and here-strings
    ("cat <<EOF\nhello\nEOF", N({"cat"})),
    ("cat <<'EOF'\n$(not run)\nEOF", N({"cat"})),
    ("cat <<EOF\n$(rm x)\nEOF", N({"cat", "rm"})),
    ("cat <<-EOF\n\thi\n\tEOF", N({"cat"})),
    ("cat <<EOF | sh\nrm -rf /\nEOF", N({"cat", "sh"})),
    ('grep x <<< "$(rm y)"', N({"grep", "rm"})),
    ("wc -l <<< 'a b'", N({"wc"})),
    ("cat <<EOF > out\nx\nEOF", N({"cat"})),
    # arithmetic
    ("echo $((1+2))", N({"echo"})),
    ("echo $(( $(rm x) + 1 ))", N({"echo", "rm"})),
    ("((i++))", N()),
    ("x=$((y*2)); echo $x", N({"echo"})),
    ("for ((i=0;i<3;i++)); do rm $i; done", N({"rm"})),
    ("echo $[1+2]", N({"echo"})),
    # [[ ]] and [ ]
    ("[[ -f x ]] && rm x", N({"rm"})),
    ("[[ $a == b* ]] || ls", N({"ls"})),
    ("[[ $(rm x) ]]", N({"rm"})),
    ("[ -d d ] && ls d", N({"[", "ls"})),
    ("test -e f && cat f", N({"test", "cat"})),
    ("[[ a =~ ^b$ ]] && echo y", N({"echo"})),
    # arrays
    ("a=(1 2 3); echo ${a[@]}", N({"echo"})),
    ("a=($(rm x))", N({"rm"})),
    ("declare -A m=([k]=v); echo ${m[k]}", N({"declare", "echo"})),
    ("a+=(x); ls", N({"ls"})),
    ("echo ${#a[@]}", N({"echo"})),
    ("a[$(rm x)]=1", N({"rm"})),
    # case
    ("case $x in a) rm y;; esac", N({"rm"})),
    ("case $x in a|b) ls;; *) rm z;; esac", N({"ls", "rm"})),
    ("case $(rm x) in *) ;; esac", N({"rm"})),
    ("case x in (a) ls;; esac", N({"ls"})),
    ("case x in a) ls", None),
    # functions
    ("f() { rm x; }; f", N({"rm", "f"})),
    ("function g { ls; }; g", N({"ls", "g"})),
    ("f() ( rm x )", N({"rm"})),
    ("function h() { :; }", N({":"})),
    (":(){ :|:& };:", N({":"})),
    ("bomb(){ bomb|bomb& };bomb", N({"bomb"})),
    ("b(){ b & b; }; b", N({"b"})),
    # control flow
    ("if true; then rm x; fi", N({"true", "rm"})),
    ("if ls; then :; elif rm x; then :; else cat y; fi", N({"ls", "rm", "cat", ":"})),
    ('for f in *.txt; do rm "$f"; done', N({"rm"})),
    ("for f in $(ls); do echo $f; done", N({"ls", "echo"})),
    ('while read l; do rm "$l"; done < list', N({"read", "rm"})),
    ("until false; do ls; done", N({"false", "ls"})),
    ("select x in a b; do rm $x; done", N({"rm"})),
    ("if true; then ls", None),
    # redirections
    ("ls > out 2>&1", N({"ls"})),
    ("ls &> out", N({"ls"})),
    ("ls >> out 2> err", N({"ls"})),
    ("> /etc/passwd", N()),
    (":> /dev/sda", N({":"})),
    ("cat x >| y", N({"cat"})),
    ("exec 3<> file", N({"exec"})),
    ("ls 2>/dev/null | grep x", N({"ls", "grep"})),
    # obfuscation and nesting
    ("bash -c 'rm -rf ~'", N({"bash"})),
    ('eval "rm -rf /"', N({"eval"})),
    ("echo cm0gLXJmIC8= | base64 -d | sh", N({"echo", "base64", "sh"})),
    ("curl -s http://x | sudo bash", N({"curl", "sudo"})),
    ("find / -name x -exec rm {} \\;", N({"find"})),
    ("ls $(\n rm x\n)", N({"ls", "rm"})),
    ("echo {a,b}c {1..3}", N({"echo"})),
    ("shopt -s extglob; ls !(x)", N({"shopt", "ls"})),
    ("coproc rm x", N({"rm"})),
    ("time rm x", N({"rm"})),
    # not bash at all
    ("echo 'unterminated", None),
    ('echo "unterminated', None),
    ("echo $(unclosed", None),
    ("echo `unclosed", None),
    ("(ls", None),
    ("ls )", None),
    ("{ ls", None),
    ("if; then; fi", None),
    ("| ls", None),
    ("ls &&", None),
    ("done", None),
    ("cat <<EOF\nno end", None),
]


def _strip_quotes(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", re.sub(r"['\"]", "", text))


_TS = Parser(Language(tree_sitter_bash.language()))


def _ts_names(node: Node) -> Iterator[str]:
    if node.type == "command":
        name = node.child_by_field_name("name")
        if name is not None and name.text is not None:
            text = name.text.decode()
            if "$" not in text and "`" not in text:
                yield _strip_quotes(text)
    elif node.type == "test_command" and node.children and node.children[0].type == "[":
        yield "["  # `[ ... ]` is the `[` builtin, which tree-sitter gives its own node type
    elif node.type == "declaration_command" and node.children:
        yield node.children[0].type
    for child in node.children:
        yield from _ts_names(child)


def tree_sitter_names(command: str) -> frozenset[str] | None:
    """Command names tree-sitter-bash finds, or None when it reports a syntax error."""
    root = _TS.parse(command.encode()).root_node
    if root.has_error:
        return None
    return frozenset(_ts_names(root))


def _bashlex_names(node: Any) -> Iterator[str]:
    if getattr(node, "kind", None) == "command":
        for part in node.parts:
            if part.kind == "word":
                if not part.parts:  # a word built from substitutions has no literal name
                    yield part.word
                break
            if part.kind not in ("assignment", "redirect"):
                break
    for value in vars(node).values():
        children = value if isinstance(value, list) else [value]
        for child in children:
            if hasattr(child, "kind"):
                yield from _bashlex_names(child)


def bashlex_names(command: str) -> frozenset[str] | None:
    """Command names bashlex finds, or None when it raises."""
    import bashlex  # only for the comparison; conch itself does not depend on it

    try:
        trees = bashlex.parse(command)
    except Exception:
        return None
    return frozenset(n for tree in trees for n in _bashlex_names(tree))


def measure(extract: Any) -> dict[str, Any]:
    """Parsed/failed counts and the unsafe results of one extractor over the corpus."""
    parsed = failed = 0
    unsafe: list[str] = []
    for command, expected in CORPUS:
        try:
            found = extract(command)
        except Exception:
            found = None
        if found is None:
            failed += 1
            continue
        parsed += 1
        if expected is None:
            unsafe.append(f"accepted invalid {command!r}")
        elif not expected <= found:
            unsafe.append(f"{command!r} missed {sorted(expected - found)}")
    return {"total": len(CORPUS), "parsed": parsed, "failed": failed, "unsafe": unsafe}


def policy_names(command: str) -> frozenset[str] | None:
    """What conch's policy finds: None when it rejects the text as unparsable."""
    from conch.policy import assess, base_commands

    if any("could not parse" in r for r in assess(command).reasons):
        return None
    found = set(base_commands(command))
    return frozenset(found | {f"/bin/{n}" for n in found})  # the corpus names /bin/rm


EXTRACTORS = (
    ("bashlex", bashlex_names),
    ("tree-sitter-bash", tree_sitter_names),
    ("conch policy (tree-sitter-bash + walker)", policy_names),
)


def main() -> None:
    for label, extract in EXTRACTORS:
        result = measure(extract)
        print(
            f"{label}: {result['parsed']}/{result['total']} parsed, {result['failed']} failed, "
            f"{len(result['unsafe'])} unsafe"
        )
        for line in result["unsafe"]:
            print("   unsafe:", line)


if __name__ == "__main__":
    main()
