"""What safe mode runs itself, without a shell, and what it runs through a shell instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.errors import PolicyRejection
from conch.messages import RedirectKind
from conch.policy import Decision, PolicyContext, assess
from conch.policy.plan import plan

# (command, safe mode runs it without a shell); the rest runs through a shell, except
# REFUSED_EVEN_IN_A_SHELL.
TABLE = [
    # one program, as always
    ("ls -la", True),
    ("grep -rn TODO src", True),
    ("find . -name '*.log' -size +10M", True),
    ("ls *.txt", True),
    ("echo 'a | b'", True),
    ('echo "a && b"', True),
    ("[ -d src ]", True),
    ("cd src", True),
    # pipelines
    ("ls -S | head -n 5", True),
    ("ps aux --sort=-%mem | head", True),
    ("env | grep PATH", True),
    ("du -sh * | sort -h", True),
    ("cat access.log | cut -d ' ' -f 1 | sort | uniq -c | sort -rn", True),
    ("find . -name '*.tmp' | xargs rm", True),
    ("yes | head -n 3", True),
    ("make 2>&1 | tail -n 20", True),
    ("make |& tail", True),
    # lists
    ("mkdir -p build && ls build", True),
    ("test -f x || echo missing", True),
    ("ls; pwd", True),
    ("ls\npwd", True),
    ("cd src && ls", True),
    ("[ -d build ] && ls build", True),
    ("false || true && echo done", True),
    # redirections
    ("sort < names.txt", True),
    ("ls > listing.txt", True),
    ("ls >> listing.txt", True),
    ("ls 2> errors.txt", True),
    ("ls 2>/dev/null", True),
    ("ls > all.txt 2>&1", True),
    ("ls 2>&1 > out.txt", True),
    ("ls &> all.txt", True),
    ("ls &>> all.txt", True),
    ("ls >| out.txt", True),
    ("echo hi >&2", True),
    ("sort < in.txt > out.txt", True),
    ("ls -S | head -n 5 > top.txt", True),
    ("ls > 'my file.txt'", True),
    ("ls > ~/listing.txt", True),
    ("ls # and a comment", True),
    # what needs a shell, so runs through one
    ("echo $(date)", False),
    ("echo `date`", False),
    ("diff <(ls a) <(ls b)", False),
    ("ls | tee >(wc -l)", False),
    ("cat <<EOF\nhi\nEOF", False),
    ("grep x <<< 'text'", False),
    ("for f in *.txt; do wc -l $f; done", False),
    ("while true; do ls; done", False),
    ("if [ -d x ]; then ls x; fi", False),
    ("case $x in a) ls;; esac", False),
    ("f() { ls; }; f", False),
    ("(cd src && ls)", False),
    ("{ ls; pwd; }", False),
    ("sleep 10 &", False),
    ("echo $HOME", False),
    ("echo ${PATH}", False),
    ("ls $DIR", False),
    ("FOO=1 make", False),
    ("export PATH=/x", False),
    ("echo {a,b}.txt", False),
    ("echo $((1 + 2))", False),
    ("! grep x f", False),
    ("[[ -d x ]]", False),
    ("source env.sh", False),
    ("alias ll='ls -l'", False),
    ("ls > $OUT", False),
    ("ls > *.txt", False),
    ("ls 3> fd3.txt", False),
    ("ls 2>&-", False),
    ("cat 0<in.txt", False),
    ("cd a b", False),
    ("cd", False),
    ("cd / && ls *", False),  # (`cd / && rm -rf *` is denylisted: tests/policy/bypass_corpus.yaml)
    ("cd ~ && ls", False),
    ("cd .. && ls", False),
    ("cd src/../.. && ls", False),
    ("cd src | ls", False),
    # shell code handed to a shell: conch spawns that shell like any program
    ("sh -c 'ls | wc'", True),
    ("bash -c 'a && b'", True),
    ("ls | sh", False),
]


# Code the policy cannot see: refused in safe mode even through a shell.
REFUSED_EVEN_IN_A_SHELL = {"source env.sh", "ls | sh"}


@pytest.mark.parametrize(("command", "runs_itself"), TABLE, ids=repr)
def test_safe_mode_runs_a_command_itself_exactly_when_the_table_says(
    command: str, runs_itself: bool
) -> None:
    verdict = assess(command)
    if command in REFUSED_EVEN_IN_A_SHELL:
        assert verdict.decision is Decision.REJECT and verdict.needs_unsafe, verdict.reasons
    elif runs_itself:
        assert verdict.decision is not Decision.REJECT, verdict.reasons
        assert not verdict.needs_shell
        plan(command)
    else:
        assert verdict.decision is not Decision.REJECT, verdict.reasons
        assert verdict.reasons[0].startswith("Runs through a shell ("), verdict.reasons
        with pytest.raises(PolicyRejection):
            plan(command)
    assert assess(command, PolicyContext(unsafe=True)).decision is Decision.CONFIRM


def test_the_table_covers_at_least_sixty_commands_both_ways() -> None:
    assert len(TABLE) >= 60
    assert sum(runs for _, runs in TABLE) >= 25 and sum(not runs for _, runs in TABLE) >= 25


@pytest.mark.parametrize(
    "command", ["ls | wc -l", "ls > out.txt", "ls && pwd", "sort < in.txt", "ls; pwd"]
)
def test_a_prompt_config_with_one_program_at_a_time_refuses_every_operator(command: str) -> None:
    names = frozenset({"ls", "wc", "sort", "pwd"})
    strict = PolicyContext(allowed_tools=names, pipelines=False)
    assert assess(command, strict).decision is Decision.REJECT
    assert assess(command, PolicyContext(allowed_tools=names)).decision is not Decision.REJECT


def test_a_redirection_to_a_file_is_a_write_and_to_dev_null_is_not() -> None:
    assert str(assess("ls > out.txt").risk) == "writes"
    assert str(assess("ls 2>/dev/null").risk) == "read-only"


def test_a_redirected_file_outside_the_sandbox_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path
    context = PolicyContext(cwd=root, sandbox_root=root)
    assert assess("ls > inside.txt", context).decision is not Decision.REJECT
    assert assess("ls > /tmp/../etc/outside.txt", context).decision is Decision.REJECT


def test_the_plan_gives_trailing_redirections_to_the_last_program() -> None:
    steps = plan("ls -S | head -n 5 > top.txt 2>&1").steps
    ls, head = steps[0].stages
    assert ls.redirects == ()
    assert [(r.fd, r.kind) for r in head.redirects] == [
        (1, RedirectKind.WRITE),
        (2, RedirectKind.DUP),
    ]


def test_the_plan_reads_connectors_in_order() -> None:
    steps = plan("a && b || c; d").steps
    assert [s.connector for s in steps] == ["", "&&", "||", ";"]


def test_the_plan_keeps_words_the_grammar_hangs_after_a_redirection() -> None:
    (stage,) = plan("ls > out.txt -l").stages
    assert [w.text for w in stage.words] == ["ls", "-l"]


@pytest.mark.parametrize("command", ["", "   ", "# only a comment"])
def test_the_plan_of_nothing_is_refused(command: str) -> None:
    with pytest.raises(PolicyRejection):
        plan(command)
