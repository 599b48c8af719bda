"""Commands that need a shell: judged like any command, run through ``/bin/sh`` contained.

Safe mode runs loops, substitutions, conditionals and here-documents through a shell when the
policy sees every program they run: read-only ones run without a question (contained), the
rest are asked about. What it cannot see (``eval "$x"``, ``source``, a variable as the
program) stays refused, and so does a program that destroys a path only known at run time.

The commands here are data: the table tests only hand them to ``assess``. The execution tests
run harmless payloads under a temporary HOME; the sandbox is what stops their writes, and a
canary outside every directory they may touch must stay as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.execute.checked import Answer, run_checked
from conch.execute.contain import Shape
from conch.execute.run import Ran
from conch.policy import Decision, ExecutionMode, PolicyContext, Risk, Verdict, assess
from conch.policy.confirm import Confirmation, ConfirmOptions
from conch.policy.loops import readings
from requires import needs

RESTRICTED = PolicyContext()
FULL = PolicyContext(mode=ExecutionMode.FULL)
INTERACTIVE = PolicyContext(mode=ExecutionMode.INTERACTIVE)
UNSAFE = PolicyContext(unsafe=True)

# Every program they run only reads: run without a question in restricted mode, contained.
READ_ONLY = [
    'for f in *.txt; do wc -l "$f"; done',
    "for f in *.txt; do wc -l $f; done",
    'for i in {1..3}; do echo "$i"; done',
    'for d in src tests; do ls "$d"; done',
    'echo "$(date)"',
    "echo `whoami`",
    "if [ -f a.txt ]; then cat a.txt; else echo none; fi",
    "cat <<EOF\nhello\nEOF",
    "grep x <<< 'text'",
    'while read -r line; do echo "$line"; done < list.txt',
    "diff <(sort a.txt) <(sort b.txt)",
    "(cd src && ls)",
    "{ ls; pwd; }",
    'x=5; echo "$x"',
    "echo $((1 + 2))",
    "[[ -d src ]] && echo yes",
    '[[ "$(uname)" == Linux ]] && echo linux',
    "x=1; printf '%s\\n' '$(not run)'",
    "ulimit -a",
    "sh -c 'ls | wc -l'",
]

# Something they run writes: asked about in restricted mode.
WRITES = [
    'for f in *.txt; do sort "$f" > "$f.sorted"; done',
    'echo "$(date)" > stamp.txt',
    "if [ -d build ]; then touch build/.keep; fi",
    "for f in $(ls); do wc -l $f; done",  # words only known at run time may be options
    "cat <<EOF > notes.txt\nhello\nEOF",
    "sleep 5 &",  # it would outlive the command
    "PATH=/opt/bin:$PATH; ls",  # the programs it names may be others
    'for f in *.gz; do gunzip "$f" & done; wait',  # as many as the files, no more
    "while read -r l; do echo $l; done < /dev/tcp/example.com/80",  # bash opens a socket
]

# Code the policy cannot see: refused in safe mode, asked about in unsafe mode.
HIDDEN_CODE = [
    'eval "$x"',
    'sh -c "$x"',
    "$cmd args",
    '"$cmd" --help',
    "source env.sh",
    ". ./env.sh",
    "trap 'ls' EXIT",
    "PS4='$(id)'; set -x; ls",
    "declare -n ref=PS4; ref=x",
    "hash -p /opt/x ls",
    'alias ll="$x"',
    "x='a[$(id)]'; echo $((x))",
    "[[ -v 'a[$(id)]' ]] && ls",
    "unset 'a[$(id)]'; ls",
    "x=1; printf -v 'a[$(id)]' %s x",
    "while true; do sleep 1 & done",
    "ls | sh",
]

# A program that destroys a path only known at run time: never run without a question.
RUNTIME_DESTROYS = [
    "for f in *.log; do rm $f; done",  # unquoted: a matched name splits at its blanks
    'for f in *; do mv $f "${f%.md}.txt"; done',
    'for f in *.md; do mv "$f" "${f/.md/${x}}"; done',  # an operator the reading does not follow
    'for f in *; do mv "$f" "${f//x/..}"; done',  # a name made ".." would name the parent
    'for f in *; do mv "$f" "${f//x/}"; done',  # so would one left as dots alone
    'for f in *; do mv "$f" "${f/#a/\\/tmp\\/}"; done',  # a slash in the replacement
    'find . -name "*.tmp" | while read -r f; do rm "$f"; done',
    'dd if=/dev/zero of="$target" bs=1M count=1',
    'x=$(pwd); rm -rf "$x"',
    'f() { rm -rf "$1"; }; f build',
    'cd "$dir" && rm -rf *',
    "cd - && rm -f *.o",
    'truncate -s 0 "$(ls | head -n 1)"',
    'chmod 600 "$key"',
    "chown -R nobody $(pwd)",
    # Expansions whose reading would differ from what bash does: not followed.
    'shopt -s nocasematch; for f in ..X/other; do rm -rf "${f/x/}"; done',  # any case
    'for f in /B\u0130N; do rm -rf "${f,,}"; done',  # glibc lowers the dotted I to "i"
    'for f in */../../x.txt; do mv "$f" "${f/./_}"; done',  # a name's own dot comes first
    'for f in *; do mv "$f" "${f/#x/-}"; done',  # a name made an option
    'for f in */x; do mv -- "$f" "${f#a/}"; done',  # a directory the glob's text does not hold
]

# Loops whose words name a catastrophe: denylisted in every mode, unsafe mode included.
DENYLISTED_LOOPS = [
    'for f in /*; do rm -rf "$f"; done',
    "for d in ~/*; do rm -rf $d; done",
    'for d in / ; do rm -rf "$d"; done',
    'for f in "/ x"; do rm -rf $f; done',
]


@pytest.mark.parametrize("command", READ_ONLY, ids=repr)
def test_a_read_only_command_that_needs_a_shell_runs_without_a_question(command: str) -> None:
    verdict = assess(command, RESTRICTED)
    assert verdict.decision is Decision.ALLOW, verdict.reasons
    assert verdict.risk is Risk.READ_ONLY
    assert verdict.reasons[0].startswith("Runs through a shell (")
    assert verdict.reasons[0].endswith("what runs without a question runs contained.")
    assert not verdict.needs_unsafe


@pytest.mark.parametrize("command", WRITES, ids=repr)
def test_a_command_that_needs_a_shell_and_writes_is_asked_about(command: str) -> None:
    verdict = assess(command, RESTRICTED)
    assert verdict.decision is Decision.CONFIRM, verdict.reasons
    assert verdict.risk is not Risk.READ_ONLY
    assert assess(command, FULL).decision is Decision.ALLOW


@pytest.mark.parametrize("command", HIDDEN_CODE, ids=repr)
def test_code_the_policy_cannot_see_stays_refused_in_safe_mode(command: str) -> None:
    for context in (RESTRICTED, FULL, INTERACTIVE):
        verdict = assess(command, context)
        assert verdict.decision is Decision.REJECT, (context.mode, verdict.reasons)
        assert verdict.needs_unsafe and not verdict.needs_shell
    assert assess(command, UNSAFE).decision is Decision.CONFIRM


@pytest.mark.parametrize("command", RUNTIME_DESTROYS, ids=repr)
def test_destroying_a_path_only_known_at_run_time_is_never_allowed(command: str) -> None:
    for context in (RESTRICTED, FULL, INTERACTIVE):
        verdict = assess(command, context)
        assert verdict.decision is Decision.REJECT, (context.mode, verdict.reasons)
        if not verdict.denylisted:  # the denylist may already know the pattern
            assert verdict.needs_unsafe
            assert "only known at run time" in verdict.reasons[0]
    assert assess(command, UNSAFE).decision is not Decision.ALLOW


# A loop over globs whose variable is always quoted, and used whole or with a literal
# suffix or prefix taken off, is judged as its words: the same verdict as the glob command.
LOOPS_AS_THEIR_WORDS = [
    ('for f in *; do rm -rf "$f"; done', "rm -rf *"),
    ('for f in *.md; do mv -- "$f" "${f%.md}.txt"; done', "mv -- *.md *.txt"),
    ('for f in IMG_*.jpg; do mv "$f" "holiday_${f#IMG_}"; done', "mv IMG_*.jpg holiday_*.jpg"),
    ('for f in *.conf; do cp "$f" "$f.bak"; done', "cp *.conf *.conf.bak"),
    ('for f in *.md; do mv "$f" "${f/.md/.txt}"; done', "mv *.md *.txt"),
    ('for f in reports/*; do mv "$f" "${f,,}"; done', "mv reports/* reports/*"),
    (
        'for f in photos/*.jpg; do mv -- "$f" "photos/holiday_${f#photos/}"; done',
        "mv -- photos/*.jpg photos/holiday_*.jpg",
    ),
    ('for f in Docs/*; do mv -- "$f" "${f^^}"; done', "mv -- Docs/* DOCS/*"),
    ('for f in docs/*; do mv "$f" "${f// /_}"; done', "mv docs/* docs/*"),
    ('for f in /etc/*.conf; do rm "$f"; done', "rm /etc/*.conf"),
]


@pytest.mark.parametrize(("loop", "words"), LOOPS_AS_THEIR_WORDS, ids=repr)
def test_a_loop_whose_variable_is_followed_is_judged_as_its_words(loop: str, words: str) -> None:
    for context in (RESTRICTED, FULL, INTERACTIVE):
        verdict, plain = assess(loop, context), assess(words, context)
        assert (verdict.decision, verdict.risk) == (plain.decision, plain.risk), context.mode
        assert verdict.decision is not Decision.ALLOW or context.mode is ExecutionMode.FULL


def test_a_loop_over_literal_words_is_read_through_its_expansions_exactly() -> None:
    loop = 'for f in "My Notes.TXT" b.md; do mv "$f" "%s"; done'
    read = {
        "${f,,}": ["'My Notes.TXT' 'my notes.txt'", "b.md b.md"],
        "${f^}": ["'My Notes.TXT' 'My Notes.TXT'", "b.md B.md"],
        "${f// /_}": ["'My Notes.TXT' My_Notes.TXT", "b.md b.md"],
        "${f/%.TXT/.txt}": ["'My Notes.TXT' 'My Notes.txt'", "b.md b.md"],
        # A slash: the word stays as it is, only known at run time.
        "${f/#b/../x}": ["'My Notes.TXT' \"${f/#b/../x}\"", 'b.md "${f/#b/../x}"'],
    }
    for expansion, moves in read.items():
        found = readings(loop % expansion)
        assert [r.split("do mv ")[1].split(";")[0] for r in found] == moves, expansion


@pytest.mark.parametrize("command", DENYLISTED_LOOPS, ids=repr)
def test_a_loop_over_a_catastrophe_is_denylisted_in_every_mode(command: str) -> None:
    for context in (RESTRICTED, FULL, INTERACTIVE, UNSAFE):
        verdict = assess(command, context)
        assert verdict.decision is Decision.REJECT and verdict.denylisted, verdict.reasons


def test_a_loop_variable_is_read_as_the_words_of_its_loop() -> None:
    # `$f` is one of the files `*.txt` names: an operand, so `wc` only reads.
    assert assess('for f in *.txt; do wc -l "$f"; done').risk is Risk.READ_ONLY
    # Set again inside the loop, it is only known at run time.
    assert assess('for f in *.txt; do f="-x"; wc -l "$f"; done').risk is not Risk.READ_ONLY
    # Used before the loop, it is whatever the environment holds.
    assert assess('wc -l "$f"; for f in *.txt; do :; done').risk is not Risk.READ_ONLY


def test_a_loop_inside_the_workspace_is_judged_against_the_sandbox_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    inside = PolicyContext(cwd=root, sandbox_root=root)
    assert assess('for f in *.txt; do wc -l "$f"; done', inside).decision is Decision.ALLOW
    outside = assess('for f in /etc/*.conf; do wc -l "$f"; done', inside)
    assert outside.decision is Decision.REJECT and "sandbox root" in outside.reasons[0]
    # A shell's `cd` moves where relative paths are read from: not followed, so refused.
    moved = assess("(cd .. && cd .. && cat notes.txt)", inside)
    assert moved.decision is Decision.REJECT


def test_a_prompt_config_that_lists_programs_runs_no_shell() -> None:
    context = PolicyContext(allowed_tools=frozenset({"wc"}))
    verdict = assess('for f in *.txt; do wc -l "$f"; done', context)
    assert verdict.decision is Decision.REJECT and not verdict.needs_shell


def test_shell_code_that_a_program_builds_is_not_run_as_a_shell_would() -> None:
    # GNU parallel builds a command line from its arguments and runs it through a shell.
    assert assess("parallel echo ::: a b").decision is Decision.REJECT


def test_a_variable_nothing_sets_is_refused_with_how_to_pass_it() -> None:
    context = PolicyContext(environ={"HOME": "/home/alice", "PATH": "/usr/bin"})
    verdict = assess('for f in *.txt; do echo "$OPENAI_API_KEY"; done', context)
    assert verdict.decision is Decision.REJECT
    assert "execution.pass_env" in verdict.reasons[0]
    assert assess('for f in *.txt; do echo "$HOME/$f"; done', context).decision is Decision.ALLOW


def test_the_verdict_says_which_commands_run_through_a_shell() -> None:
    assert assess("for i in 1 2; do echo $i; done").needs_shell
    assert not assess("ls | wc -l").needs_shell
    assert not assess("sh -c 'ls | wc'").needs_shell  # conch spawns sh like any program
    assert assess("echo $(date)").to_json()["needs_shell"] is True


# --- running them --------------------------------------------------------------------------


def never_asked(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
    raise AssertionError(f"nobody should be asked about {command!r}")


def said_yes(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
    return Answer.run()


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A workspace, a home beside it and a canary outside both."""
    home = tmp_path / "userhome"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched\n", encoding="utf-8")
    (work / "data.txt").write_text("one\ntwo\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    return {"home": home, "work": work, "canary": canary}


def run(
    command: str,
    place: dict[str, Path],
    mode: ExecutionMode,
    *,
    verdict: Verdict | None = None,
    shell: str = "/bin/sh",
    approve: object = never_asked,
) -> Ran:
    work = place["work"]
    return run_checked(
        command,
        PolicyContext(mode=mode, cwd=work, sandbox_root=work),
        cwd=work,
        state_dir=None,
        approve=approve,  # type: ignore[arg-type]
        options=ConfirmOptions(mode=mode),
        shell=shell,
        interactive=False,
        verdict=verdict,
        timeout=20,
    )


@needs("bubblewrap")
def test_a_read_only_loop_runs_contained_through_sh(place: dict[str, Path]) -> None:
    ran = run('for f in *.txt; do wc -l "$f"; done', place, ExecutionMode.RESTRICTED)
    assert not ran.asked and ran.contained == Shape((), False)
    assert ran.verdict.needs_shell
    assert (ran.result.exit_code, ran.result.stdout) == (0, "2 data.txt\n")


@needs("bubblewrap")
def test_a_contained_loop_that_writes_under_a_wrong_verdict_fails_read_only(
    place: dict[str, Path],
) -> None:
    command = 'for f in *.txt; do sort "$f" > "$f.sorted"; done'
    # The classifier "thinks" it only reads: the sandbox still holds it to that.
    wrong = Verdict(Decision.ALLOW, Risk.READ_ONLY, (), ("sort",), (), (), risks=(Risk.READ_ONLY,))
    ran = run(command, place, ExecutionMode.RESTRICTED, verdict=wrong)
    assert not ran.asked and ran.contained == Shape((), False)
    assert ran.result.exit_code != 0
    assert "Read-only file system" in ran.result.stderr
    assert not (place["work"] / "data.txt.sorted").exists()
    assert ran.note is not None and "writing" in ran.note


@needs("bubblewrap")
def test_a_writing_loop_writes_in_the_workspace_and_nowhere_else(place: dict[str, Path]) -> None:
    ran = run('for f in *.txt; do sort "$f" > "$f.sorted"; done', place, ExecutionMode.FULL)
    assert not ran.asked and ran.contained is not None and ran.contained.writable
    assert ran.result.exit_code == 0, ran.result.stderr
    assert (place["work"] / "data.txt.sorted").read_text(encoding="utf-8") == "one\ntwo\n"

    outside = "for f in ../userhome/planted.txt ../canary.txt; do echo x > $f; done"
    wrong = Verdict(Decision.ALLOW, Risk.WRITES, (), ("echo",), (), (), risks=(Risk.WRITES,))
    ran = run(outside, place, ExecutionMode.FULL, verdict=wrong)
    assert "Read-only file system" in ran.result.stderr
    assert not (place["home"] / "planted.txt").exists()
    assert place["canary"].read_text(encoding="utf-8") == "untouched\n"


def test_an_approved_command_that_needs_a_shell_runs_in_the_users_shell(
    place: dict[str, Path],
) -> None:
    # `[[ ]]` is bash's: the user's shell runs it, not /bin/sh, and nothing contains it.
    command = "if [[ -f data.txt ]]; then echo found; fi"
    ran = run(command, place, ExecutionMode.INTERACTIVE, shell="bash", approve=said_yes)
    assert ran.asked and ran.contained is None
    assert (ran.result.exit_code, ran.result.stdout) == (0, "found\n")
    assert place["canary"].read_text(encoding="utf-8") == "untouched\n"
