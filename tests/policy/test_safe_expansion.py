"""What safe mode expands itself, without a shell: variables from the environment commands
run with, brace expansion, and a ``cd`` anywhere inside the workspace. The policy judges
the expanded words; what needs a shell still says why."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conch.errors import PolicyRejection
from conch.execute.environ import contained_environment, scrubbed_environment
from conch.execute.stages import run_plan
from conch.messages import Plan, RedirectKind
from conch.policy import Decision, ExecutionMode, PolicyContext, Risk, assess
from conch.policy.parse import MAX_BRACE_WORDS, ParseFailure, expand_braces, parse_tree
from conch.policy.plan import plan
from conch.policy.planned import analyse_plan

HOME = "/home/alice"
CWD = Path("/work/proj")
SECRET = "sk-canary-0123456789"
ENVIRON = {
    "HOME": HOME,
    "USER": "alice",
    "LANG": "C.UTF-8",
    "DIR": "my dir",
    "SPACED": "two words",
    "PATTERN": "*.txt",
    "EMPTY": "",
    "SYSTEM": "/usr",
}


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch) -> None:
    """``~`` is the same home as ``$HOME`` (conch expands ``~`` from its own environment)."""
    monkeypatch.setenv("HOME", HOME)


def _words(command: str, environ: dict[str, str] = ENVIRON) -> list[list[str]]:
    made = plan(command, environ, cwd=CWD)
    return [[w.text for w in stage.words] for stage in made.stages]


EXPANDED = [
    ("echo $HOME", [["echo", HOME]]),
    ("ls ${HOME}/Documents", [["ls", f"{HOME}/Documents"]]),
    ('echo "$USER"', [["echo", "alice"]]),
    ('echo "hi $USER, ${USER}!"', [["echo", "hi alice, alice!"]]),
    ("echo $PWD", [["echo", str(CWD)]]),
    ('cp "$DIR"/a.txt b.txt', [["cp", "my dir/a.txt", "b.txt"]]),
    ('echo "$SPACED" "$PATTERN"', [["echo", "two words", "*.txt"]]),
    ("echo '$HOME' \"\\$HOME\"", [["echo", "$HOME", "$HOME"]]),
    ("ls $EMPTY", [["ls"]]),
    ('ls "$EMPTY"', [["ls", ""]]),
    ("$EMPTY ls -l", [["ls", "-l"]]),
    ("cp file{,.bak}", [["cp", "file", "file.bak"]]),
    ("mkdir -p src/{a,b}", [["mkdir", "-p", "src/a", "src/b"]]),
    (
        "echo {1..3} {a..c} {01..03} {3..1}",
        [["echo", *["1", "2", "3", "a", "b", "c", "01", "02", "03", "3", "2", "1"]]],
    ),
    ("echo {1..9..4} {a,{b,c}}d", [["echo", "1", "5", "9", "ad", "bd", "cd"]]),
    ("echo '{a,b}' \\{a,b\\} {a} {} x{y", [["echo", "{a,b}", "{a,b}", "{a}", "{}", "x{y"]]),
    ('echo "{$USER,b}" {$USER,b}', [["echo", "{alice,b}", "alice", "b"]]),
    ("echo ${HOME}{,/x}", [["echo", HOME, f"{HOME}/x"]]),
    ("ls ~/{a,b}", [["ls", f"{HOME}/a", f"{HOME}/b"]]),
    ('[ -d "$HOME" ] && echo $USER', [["[", "-d", HOME, "]"], ["echo", "alice"]]),
    ("ls $HOME | grep -c $USER", [["ls", HOME], ["grep", "-c", "alice"]]),
]


@pytest.mark.parametrize(("command", "words"), EXPANDED, ids=repr)
def test_safe_mode_expands_variables_and_braces_itself(
    command: str, words: list[list[str]]
) -> None:
    assert _words(command) == words
    verdict = assess(command, PolicyContext(cwd=CWD, environ=ENVIRON))
    assert verdict.decision is not Decision.REJECT, verdict.reasons


def test_globs_in_an_expanded_word_stay_globs_and_quoted_values_do_not() -> None:
    made = plan('ls $HOME/*.txt "$PATTERN"', ENVIRON, cwd=CWD)
    (stage,) = made.stages
    assert [(w.text, w.glob) for w in stage.words] == [
        ("ls", False),
        (f"{HOME}/*.txt", True),
        ("*.txt", False),
    ]


def test_redirection_targets_are_expanded_too() -> None:
    (stage,) = plan("sort < $HOME/in.txt > ${HOME}/out.txt 2>&1", ENVIRON, cwd=CWD).stages
    assert [(r.fd, r.kind, r.target) for r in stage.redirects] == [
        (0, RedirectKind.READ, f"{HOME}/in.txt"),
        (1, RedirectKind.WRITE, f"{HOME}/out.txt"),
        (2, RedirectKind.DUP, None),
    ]


REFUSED = [
    ("echo $NOT_SET", "$NOT_SET is not set, or not passed to commands (execution.pass_env)"),
    ("echo $?", "'$?' needs a shell"),
    ("echo $$", "'$$' needs a shell"),
    ("echo $1", "'$1' needs a shell"),
    ('echo "$@"', "'$@' needs a shell"),
    ("echo $#", "'$#' needs a shell"),
    ("echo $RANDOM", "$RANDOM is set by a shell"),
    ("echo $IFS", "$IFS is set by a shell"),
    ("echo ${NOT_SET:-default}", "'${NOT_SET:-default}' needs a shell"),
    ("echo ${#HOME}", "'${#HOME}' needs a shell"),
    ("echo ${HOME/alice/bob}", "'${HOME/alice/bob}' needs a shell"),
    ("echo $SPACED", "would split into words"),
    ("ls $PATTERN", "would expand as a pattern"),
    ("echo $(whoami)", "expands at run time"),
    ('echo "$(whoami)"', "expands at run time"),
    ("echo $((1 + 2))", "expands at run time"),
    ("cat > out{1,2}", "A redirection to 2 words"),
    ("cd src && echo $PWD", "$PWD after a 'cd'"),
    ("X=1 echo $X", "The assignment"),
]


@pytest.mark.parametrize(("command", "reason"), REFUSED, ids=repr)
def test_what_needs_a_shell_runs_through_one_and_says_why(command: str, reason: str) -> None:
    with pytest.raises(PolicyRejection) as caught:
        plan(command, ENVIRON, cwd=CWD)
    assert reason in str(caught.value)
    verdict = assess(command, PolicyContext(cwd=CWD, environ=ENVIRON))
    if "is not set" in reason:
        # The shell would see it empty: refused, so the user learns to pass it.
        assert verdict.decision is Decision.REJECT and verdict.needs_unsafe
        assert any(reason in r for r in verdict.reasons), verdict.reasons
    else:
        assert verdict.decision is not Decision.REJECT and verdict.needs_shell
        what = reason.removesuffix(" needs a shell")
        assert what.lower() in verdict.reasons[0].lower(), verdict.reasons


@pytest.mark.parametrize("command", ["echo $HOME", "cp file{,.bak}", "echo {1..3}"])
def test_without_the_environment_variables_and_braces_need_a_shell(command: str) -> None:
    with pytest.raises(PolicyRejection, match="needs a shell"):
        plan(command)
    verdict = assess(command, PolicyContext(cwd=CWD))
    assert verdict.needs_shell and verdict.decision is not Decision.REJECT, verdict.reasons


def test_brace_expansion_is_capped_for_a_word_and_for_the_whole_command() -> None:
    assert len(_words(f"echo {{1..{MAX_BRACE_WORDS}}}")[0]) == MAX_BRACE_WORDS + 1
    half = MAX_BRACE_WORDS // 2 + 1
    for command in (f"echo {{1..{MAX_BRACE_WORDS + 1}}}", f"echo {{1..{half}}} {{1..{half}}}"):
        with pytest.raises(PolicyRejection, match=f"more than {MAX_BRACE_WORDS} words"):
            plan(command, ENVIRON, cwd=CWD)
    with pytest.raises(PolicyRejection, match="more than"):
        plan("echo {1..999999999}{a,b}", ENVIRON, cwd=CWD)  # refused without making them all


def test_expand_braces_reads_lists_nested_lists_and_sequences_like_bash() -> None:
    assert expand_braces("/{b..b}in") == ["/bin"]
    assert expand_braces("a{b,{c,d}e}f") == ["abf", "acef", "adef"]
    assert expand_braces("{a..e..2}") == ["a", "c", "e"]
    assert expand_braces("{-1..1}") == ["-1", "0", "1"]
    assert len(expand_braces("{1..100000}", limit=7)) == 7


# --- secrets -----------------------------------------------------------------------------


@pytest.fixture
def conch_environ(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """conch's own environment: a provider key in it, as a user's shell would have."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("USER", "alice")
    return dict(os.environ)


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "GITHUB_TOKEN"])
@pytest.mark.parametrize("command", ['echo "$NAME"', "echo ${NAME}", "printenv x$NAME"])
def test_a_secret_is_never_expanded(
    conch_environ: dict[str, str], variable: str, command: str
) -> None:
    command = command.replace("NAME", variable)
    for environ in (contained_environment(conch_environ), scrubbed_environment(conch_environ)):
        verdict = assess(command, PolicyContext(cwd=CWD, environ=environ))
        assert verdict.decision is Decision.REJECT
        assert any(
            f"${variable} is not set, or not passed to commands" in r for r in verdict.reasons
        )
        assert SECRET not in repr(verdict.to_json())
        with pytest.raises(PolicyRejection, match=r"execution\.pass_env") as caught:
            plan(command, environ, cwd=CWD)
        assert SECRET not in str(caught.value)


def test_a_secret_the_user_passes_to_commands_is_expanded(conch_environ: dict[str, str]) -> None:
    environ = contained_environment(conch_environ, ["OPENAI_API_KEY"])
    assert _words('echo "$OPENAI_API_KEY" $USER', environ) == [["echo", SECRET, "alice"]]


# --- the policy judges the expanded words ------------------------------------------------

DENYLISTED = [
    "rm -rf $HOME",
    'rm -rf "$HOME"',
    "rm -rf ${HOME}/",
    "rm -rf $HOME/{x,.}",
    "rm -rf ~/{a,..}",
    "rm -rf $HOME/{a,..}",
    "rm -rf /{usr,tmp}",
    "rm -rf {/,x}",
    "rm -rf /{b..b}in",
    "rm -rf $SYSTEM",
    "rm -r{f,} /",
    "chmod -R 777 /{etc,x}",
    "cd $HOME && rm -rf *",
    "cd ~ && rm -rf .",
]


@pytest.mark.parametrize("command", DENYLISTED, ids=repr)
@pytest.mark.parametrize(
    "context",
    [
        PolicyContext(cwd=CWD, environ=ENVIRON),
        PolicyContext(cwd=CWD, environ=ENVIRON, mode=ExecutionMode.FULL),
        PolicyContext(cwd=CWD, environ=ENVIRON, sandbox_root=Path("/"), mode=ExecutionMode.FULL),
        PolicyContext(cwd=Path(HOME), environ=ENVIRON, sandbox_root=Path(HOME)),
    ],
    ids=["restricted", "full", "full-root", "home-root"],
)
def test_expanded_catastrophes_stay_denylisted(command: str, context: PolicyContext) -> None:
    verdict = assess(command, context)
    assert verdict.decision is Decision.REJECT and verdict.denylisted, verdict.reasons


def test_rm_rf_home_is_denylisted_wherever_the_home_directory_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = str(tmp_path / "alice")  # not below a system directory
    monkeypatch.setenv("HOME", home)
    context = PolicyContext(cwd=tmp_path, environ={**ENVIRON, "HOME": home})
    for command in ("rm -rf $HOME", "rm -rf ${HOME}/", "rm -rf ~/{a,..}", 'rm -rf "$HOME"/*'):
        verdict = assess(command, context)
        assert verdict.denylisted, (command, verdict.reasons)


def test_rm_rf_pwd_in_the_home_directory_is_denylisted() -> None:
    verdict = assess('rm -rf "$PWD"', PolicyContext(cwd=Path(HOME), environ=ENVIRON))
    assert verdict.denylisted


def _parses(text: str) -> bool:
    try:
        parse_tree(text)
    except ParseFailure:
        return False
    return True


@given(st.text(max_size=40), st.booleans())
def test_the_policy_reads_back_exactly_the_words_that_run(value: str, glob: bool) -> None:
    command = 'ls "$V"/*.txt' if glob else 'ls "$V" x'
    environ = {**ENVIRON, "V": value}
    try:
        made = plan(command, environ, cwd=CWD)
    except PolicyRejection:
        return
    analysis = analyse_plan(command, environ, cwd=CWD)
    assert analysis is not None
    if not _parses(value):
        assert analysis.failures  # a control character: refused, never misread
        return
    assert not analysis.failures
    (stage,) = made.stages
    read = [analysis.invocations[0].raw_name, *analysis.invocations[0].texts()]
    home = HOME + "/"
    assert read == [
        w.text.replace(home, "~/", 1) if w.text.startswith(home) else w.text for w in stage.words
    ]


def test_the_policy_classifies_the_words_brace_expansion_makes() -> None:
    verdict = assess("find . -{delete,print}", PolicyContext(cwd=CWD, environ=ENVIRON))
    assert verdict.risk is Risk.DESTRUCTIVE
    assert assess("find . -{name,print}", PolicyContext(cwd=CWD, environ=ENVIRON)).risk is (
        Risk.READ_ONLY
    )


def test_a_program_named_by_a_variable_is_judged_as_that_program() -> None:
    environ = {**ENVIRON, "EDITOR": "rm"}
    verdict = assess("$EDITOR -rf /", PolicyContext(cwd=CWD, environ=environ))
    assert verdict.denylisted and verdict.commands == ("rm",)


def test_the_paths_a_sandbox_checks_are_the_expanded_ones(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    environ = {**ENVIRON, "OUT": str(tmp_path / "elsewhere"), "IN": str(root / "x")}
    context = PolicyContext(cwd=root, sandbox_root=root, environ=environ)
    assert assess("cat $IN", context).decision is not Decision.REJECT
    verdict = assess("cp $IN $OUT", context)
    assert verdict.decision is Decision.REJECT
    assert any("outside the sandbox root" in r for r in verdict.reasons)


# --- cd within the workspace -------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """ws/proj/sub, with a link in proj that points out of ws."""
    (tmp_path / "ws" / "proj" / "sub").mkdir(parents=True)
    (tmp_path / "ws" / "proj" / "out").symlink_to(tmp_path)
    return tmp_path / "ws"


CD = [
    # (command, run as a plan without a root, allowed with the root at ws)
    ("cd sub && ls", True, True),
    ("cd sub/.. && ls", True, True),
    ("cd .. && ls", False, True),
    ("cd ../proj/sub && ls", True, True),
    ("cd ../.. && ls", False, False),
    ("cd .. && cd .. && ls", False, False),
    ("cd WS && ls", False, True),
    ("cd PROJ/sub; ls", True, True),
    ("cd / && ls", False, False),
    ("cd ~ && ls", False, False),
    ("cd - && ls", False, False),
    ("cd *b && ls", False, False),
]


@pytest.mark.parametrize(("command", "planned", "rooted"), CD, ids=repr)
def test_cd_goes_anywhere_inside_the_workspace_and_nowhere_else(
    workspace: Path, command: str, planned: bool, rooted: bool
) -> None:
    proj = workspace / "proj"
    command = command.replace("PROJ", str(proj)).replace("WS", str(workspace))
    # Without a root, a `cd` the plan does not make runs through a shell.
    alone = assess(command, PolicyContext(cwd=proj, environ=ENVIRON))
    assert alone.decision is not Decision.REJECT and alone.needs_shell is not planned
    # With one, a shell's `cd` is refused: the paths after it are not followed.
    verdict = assess(command, PolicyContext(cwd=proj, sandbox_root=workspace, environ=ENVIRON))
    assert (verdict.decision is not Decision.REJECT) is rooted, verdict.reasons


def test_without_a_working_directory_cd_only_goes_down() -> None:
    plan("cd sub && ls")
    for command in ("cd .. && ls", "cd /tmp && ls"):
        with pytest.raises(PolicyRejection, match="out of the working directory"):
            plan(command)


def test_paths_after_a_cd_are_judged_from_the_directory_it_names(workspace: Path) -> None:
    proj = workspace / "proj"
    context = PolicyContext(cwd=proj, sandbox_root=workspace, environ=ENVIRON)
    # From proj, ../x.txt is inside ws; after `cd ..` it is not.
    assert assess("cat ../x.txt", context).decision is not Decision.REJECT
    verdict = assess("cd .. && cat ../x.txt", context)
    assert verdict.decision is Decision.REJECT
    assert any("outside the sandbox root" in r for r in verdict.reasons), verdict.reasons
    assert assess("cd .. && cat proj/x.txt", context).decision is not Decision.REJECT
    assert assess("cd sub && ls > ../../../out.txt", context).decision is Decision.REJECT


def test_a_cd_out_through_a_symlink_is_refused_by_the_sandbox_check(workspace: Path) -> None:
    proj = workspace / "proj"
    context = PolicyContext(cwd=proj, sandbox_root=workspace, environ=ENVIRON)
    assert assess("cd out && ls", context).decision is Decision.REJECT


def test_cd_up_then_a_glob_delete_of_the_home_directory_is_denylisted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    context = PolicyContext(cwd=home / "proj", sandbox_root=home, environ={"HOME": str(home)})
    verdict = assess("cd .. && rm -rf *", context)
    assert verdict.denylisted, verdict.reasons


def test_a_plan_carries_its_workspace_for_the_runner(workspace: Path) -> None:
    made = plan("cd .. && ls", ENVIRON, cwd=workspace / "proj", root=workspace)
    assert made.workspace == os.path.realpath(workspace)
    assert Plan.from_json(made.to_json()) == made
    assert plan("ls").workspace is None


# --- running expanded plans for real -----------------------------------------------------


@pytest.fixture
def sandboxed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary HOME holding the workspace ws/proj, and a canary outside HOME that must
    come through every test untouched."""
    home = tmp_path / "home"
    proj = home / "ws" / "proj"
    proj.mkdir(parents=True)
    (proj / "notes.txt").write_text("notes\n", encoding="utf-8")
    canary = tmp_path / "canary.txt"
    canary.write_text("canary\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USER", "alice")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    before = sorted(p.name for p in tmp_path.iterdir())
    yield proj
    assert canary.read_text(encoding="utf-8") == "canary\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def _run(command: str, proj: Path, out: Path) -> tuple[int, str, str]:
    """Judge ``command`` as safe mode would, then run its plan; (status, stdout, stderr)."""
    root = proj.parent.parent  # HOME: $HOME is a path inside the sandbox root
    environ = contained_environment(os.environ)
    context = PolicyContext(cwd=proj, sandbox_root=root, environ=environ, mode=ExecutionMode.FULL)
    verdict = assess(command, context)
    assert verdict.decision is Decision.ALLOW, verdict.reasons
    made = plan(command, environ, cwd=proj, root=root)
    stdout, stderr = out / "stdout", out / "stderr"
    with (
        open(os.devnull, "rb") as stdin,
        stdout.open("wb") as so,
        stderr.open("wb") as se,
    ):
        status, timed_out = run_plan(
            made, proj, env=environ, fds=(stdin.fileno(), so.fileno(), se.fileno()), timeout=30
        )
    assert not timed_out
    return status, stdout.read_text(encoding="utf-8"), stderr.read_text(encoding="utf-8")


@pytest.fixture
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("output")


def test_expanded_plans_run_for_real(sandboxed: Path, out: Path) -> None:
    proj = sandboxed
    home = proj.parent.parent

    assert _run("cp notes.txt{,.bak}", proj, out)[0] == 0
    assert (proj / "notes.txt.bak").read_text(encoding="utf-8") == "notes\n"

    assert _run("mkdir -p src/{a,b}/{1..2}", proj, out)[0] == 0
    assert sorted(str(p.relative_to(proj)) for p in (proj / "src").glob("*/*")) == [
        "src/a/1",
        "src/a/2",
        "src/b/1",
        "src/b/2",
    ]

    assert _run('echo "$USER" $HOME $PWD', proj, out) == (0, f"alice {home} {proj}\n", "")

    status, listing, _ = _run("cd .. && ls && cd proj/src && ls", proj, out)
    assert (status, listing) == (0, "proj\na\nb\n")


def test_a_secret_is_not_in_what_runs(sandboxed: Path, out: Path) -> None:
    status, printed, _ = _run("env", sandboxed, out)
    assert status == 0 and SECRET not in printed and "USER=alice" in printed
    context = PolicyContext(cwd=sandboxed, environ=contained_environment(os.environ))
    assert assess("echo $OPENAI_API_KEY", context).decision is Decision.REJECT


def test_a_cd_that_fails_ends_the_plan(sandboxed: Path, out: Path) -> None:
    proj = sandboxed
    status, _, error = _run("cd missing; touch after.txt", proj, out)
    assert status == 1 and "missing" in error
    assert not (proj / "after.txt").exists() and not (proj / "missing").exists()


def test_the_runner_refuses_a_cd_out_of_the_workspace_through_a_symlink(
    sandboxed: Path, out: Path
) -> None:
    proj = sandboxed
    above = proj.parent.parent.parent  # the directory that holds HOME and the canary
    (proj / "out").symlink_to(above)
    # In the text, out/.. is proj itself; on disk it is the directory above `above`.
    made = plan("cd out/.. && touch escaped.txt", ENVIRON, cwd=proj)
    with open(os.devnull, "rb") as stdin, (out / "err").open("wb") as err:
        status, _ = run_plan(made, proj, fds=(stdin.fileno(), err.fileno(), err.fileno()))
    assert status == 1 and "leaves the workspace" in (out / "err").read_text(encoding="utf-8")
    assert not (above.parent / "escaped.txt").exists() and not (proj / "escaped.txt").exists()
    (proj / "out").unlink()
