"""Containment: a command nobody said yes to is held to its verdict by the OS, not by trust.

Each test forces a wrong verdict (the classifier "thinks" a writing command only reads) and
checks that the sandbox still stops it: no write under a read-only verdict, no write outside
the workspace under a writing one, no secret from conch's environment, no network, no way to
the real root through ``/proc``. The payloads only touch marker files in the test's own
directories; a canary outside them must stay as it was.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from conch.errors import NoOneToAsk, PolicyRejection
from conch.execute.checked import Answer, run_checked
from conch.execute.contain import Shape, explain_failure, shape_for, wrap
from conch.execute.run import Ran
from conch.execute.sandbox import Sandbox
from conch.policy import Decision, ExecutionMode, PolicyContext, Risk, Verdict
from conch.policy.confirm import Confirmation, ConfirmOptions
from requires import needs

SECRET = "sk-canary-0123456789"


def wrong(command: str, risk: Risk = Risk.READ_ONLY) -> Verdict:
    """A verdict that lets ``command`` run without a question, whatever it does."""
    return Verdict(Decision.ALLOW, risk, (), (command.split()[0],), (), (), risks=(risk,))


def never_asked(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
    raise AssertionError(f"nobody should be asked about {command!r}")


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A workspace, a home beside it and a canary outside both."""
    home = tmp_path / "userhome"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched\n", encoding="utf-8")
    (work / "data.txt").write_text("hello\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("CONCH_TEST_TOKEN", SECRET)
    return {"home": home, "work": work, "canary": canary, "root": tmp_path}


def contained(
    command: str,
    place: dict[str, Path],
    verdict: Verdict,
    mode: ExecutionMode,
    work: Path | None = None,
) -> Ran:
    """``command`` run as judged ``verdict`` in ``work`` (default: the place's workspace)."""
    work = place["work"] if work is None else work
    context = PolicyContext(mode=mode, cwd=work, sandbox_root=work)
    return run_checked(
        command,
        context,
        cwd=work,
        state_dir=None,
        approve=never_asked,
        options=ConfirmOptions(mode=mode),
        interactive=False,
        verdict=verdict,
        timeout=20,
    )


def _python(code: str) -> str:
    return f'python3 -c "{code}"'


@needs("bubblewrap")
def test_a_write_under_a_read_only_verdict_fails_with_the_os_error(
    place: dict[str, Path],
) -> None:
    command = _python("open('made.txt', 'w').write('x')")
    ran = contained(command, place, wrong(command), ExecutionMode.RESTRICTED)
    assert not ran.asked and ran.contained == Shape((), False)
    assert ran.result.exit_code != 0
    assert "Read-only file system" in ran.result.stderr
    assert not (place["work"] / "made.txt").exists()
    assert ran.note is not None and "contained" in ran.note and "writing" in ran.note


@needs("bubblewrap")
def test_a_writing_verdict_writes_in_the_workspace_and_nowhere_else(
    place: dict[str, Path],
) -> None:
    inside = _python("open('made.txt', 'w').write('x')")
    ran = contained(inside, place, wrong(inside, Risk.WRITES), ExecutionMode.FULL)
    assert ran.result.exit_code == 0, ran.result.stderr
    assert (place["work"] / "made.txt").read_text(encoding="utf-8") == "x"

    # Beside the workspace (here under /tmp: the sandbox's /tmp is a private, empty one, so
    # the write lands there and vanishes) and in a directory the user can write elsewhere.
    for target in ("../canary.txt", "../userhome/planted.txt"):
        outside = _python(f"open('{target}', 'w').write('x')")
        contained(outside, place, wrong(outside, Risk.WRITES), ExecutionMode.FULL)
    assert place["canary"].read_text(encoding="utf-8") == "untouched\n"
    assert not (place["home"] / "planted.txt").exists()
    elsewhere = Path("/var/tmp") / f"conch-containment-{os.getpid()}.txt"
    outside = _python(f"open('{elsewhere}', 'w').write('x')")
    try:
        ran = contained(outside, place, wrong(outside, Risk.WRITES), ExecutionMode.FULL)
        assert not elsewhere.exists()
        assert ran.result.exit_code != 0
        assert "Read-only file system" in ran.result.stderr
    finally:
        with contextlib.suppress(OSError):  # read-only itself when the tests run in a sandbox
            elsewhere.unlink(missing_ok=True)


@needs("bubblewrap")
def test_a_workspace_inside_a_home_under_tmp_stays_writable(place: dict[str, Path]) -> None:
    # The home is shown read-only in the private /tmp; the workspace inside it must still be
    # writable (the read-only bind of the home once covered it).
    project = place["home"] / "project"
    project.mkdir()
    inside = _python("open('made.txt', 'w').write('x')")
    full = ExecutionMode.FULL
    ran = contained(inside, place, wrong(inside, Risk.WRITES), full, project)
    assert ran.contained is not None and str(project) in ran.contained.writable
    assert ran.result.exit_code == 0, ran.result.stderr
    assert (project / "made.txt").read_text(encoding="utf-8") == "x"
    planted = _python("open('../planted.txt', 'w').write('x')")
    contained(planted, place, wrong(planted, Risk.WRITES), full, project)
    assert not (place["home"] / "planted.txt").exists()
    assert place["canary"].read_text(encoding="utf-8") == "untouched\n"


@needs("bubblewrap")
def test_no_secret_of_conchs_environment_reaches_a_contained_command(
    place: dict[str, Path],
) -> None:
    ran = contained("env", place, wrong("env"), ExecutionMode.RESTRICTED)
    assert ran.result.exit_code == 0
    assert SECRET not in ran.result.stdout
    assert f"HOME={place['home']}" in ran.result.stdout
    assert "PATH=" in ran.result.stdout


@needs("bubblewrap")
def test_an_approved_command_runs_as_asked_but_without_secrets(place: dict[str, Path]) -> None:
    work = place["work"]
    asked: list[Confirmation] = []

    def yes(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        asked.append(wanted)
        return Answer.run()

    context = PolicyContext(mode=ExecutionMode.INTERACTIVE, cwd=work)
    ran = run_checked(
        "env", context, cwd=work, state_dir=None, approve=yes, interactive=False, timeout=20
    )
    assert ran.asked and ran.contained is None and asked
    assert SECRET not in ran.result.stdout
    assert "PATH=" in ran.result.stdout


@needs("bubblewrap")
def test_no_network_unless_the_verdict_is_network_and_the_mode_runs_it(
    place: dict[str, Path],
) -> None:
    probe = _python(
        "import socket; s = socket.socket(); s.settimeout(2); s.connect(('192.0.2.1', 9))"
    )
    ran = contained(probe, place, wrong(probe, Risk.WRITES), ExecutionMode.FULL)
    assert ran.result.exit_code != 0
    assert "Network is unreachable" in ran.result.stderr
    assert shape_for([Risk.NETWORK], workspace=place["work"], network_allowed=True).network
    assert not shape_for([Risk.NETWORK], workspace=place["work"], network_allowed=False).network


@needs("bubblewrap")
def test_proc_does_not_lead_to_the_real_root(place: dict[str, Path]) -> None:
    canary = place["canary"]
    code = (
        "import os; paths = ['/proc/%s/root%s' % (p, r) for p in os.listdir('/proc') "
        f"if p.isdigit() for r in ['{canary}']]; "
        "[open(p, 'w').write('x') for p in paths if os.path.exists(p)]"
    )
    command = _python(code)
    ran = contained(command, place, wrong(command, Risk.WRITES), ExecutionMode.FULL)
    assert canary.read_text(encoding="utf-8") == "untouched\n", ran.result.stderr


def test_without_a_sandbox_nothing_runs_unasked(place: dict[str, Path]) -> None:
    work = place["work"]
    broken = Sandbox(None, None, "no bwrap here", "install bubblewrap")
    context = PolicyContext(mode=ExecutionMode.FULL, cwd=work)
    seen: list[Confirmation] = []

    def nobody(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        seen.append(wanted)
        raise NoOneToAsk(command)

    with pytest.raises(NoOneToAsk):
        run_checked(
            "ls",
            context,
            cwd=work,
            state_dir=None,
            approve=nobody,
            options=ConfirmOptions(mode=ExecutionMode.FULL),
            interactive=False,
            sandbox=broken,
        )
    assert seen and seen[0].uncontained
    assert "sandbox" in seen[0].reasons[0]


def test_a_denylisted_command_is_refused_before_any_sandbox(place: dict[str, Path]) -> None:
    work = place["work"]
    context = PolicyContext(mode=ExecutionMode.FULL, cwd=work)
    with pytest.raises(PolicyRejection):
        run_checked(
            "mkfs.ext4 /dev/sda1",
            context,
            cwd=work,
            state_dir=None,
            approve=never_asked,
            options=ConfirmOptions(mode=ExecutionMode.FULL),
            interactive=False,
        )


def test_the_shape_follows_the_verdict(tmp_path: Path) -> None:
    assert shape_for([Risk.READ_ONLY], workspace=tmp_path, network_allowed=True) == Shape((), False)
    writes = shape_for([Risk.READ_ONLY, Risk.WRITES], workspace=tmp_path, network_allowed=False)
    assert writes == Shape((os.path.realpath(tmp_path),), False)
    argv = wrap(["ls"], writes, bwrap="bwrap", cwd=tmp_path)
    assert argv[:4] == ["bwrap", "--ro-bind", "/", "/"]
    assert "--unshare-all" in argv and "--share-net" not in argv
    assert argv[-2:] == ["--", "ls"]
    bound = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--bind"]
    assert bound == [os.path.realpath(tmp_path)]


def test_only_the_sandbox_s_own_refusals_are_explained() -> None:
    shape = Shape((), False)
    assert explain_failure(shape, 0, "Read-only file system") is None
    assert explain_failure(shape, 1, "No such file or directory") is None
    line = explain_failure(shape, 1, "touch: cannot touch 'x': Read-only file system")
    assert line is not None and "the filesystem read-only" in line


@needs("bubblewrap")
def test_a_writing_command_whose_workspace_holds_home_is_asked_about(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    work = place["work"]
    monkeypatch.setenv("HOME", str(work / "me"))  # the home directory inside the workspace
    (work / "me").mkdir()
    seen: list[Confirmation] = []

    def nobody(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        seen.append(wanted)
        raise NoOneToAsk(command)

    command = "touch made.txt"
    context = PolicyContext(mode=ExecutionMode.FULL, cwd=work, sandbox_root=work)
    with pytest.raises(NoOneToAsk):
        run_checked(
            command,
            context,
            cwd=work,
            state_dir=None,
            approve=nobody,
            options=ConfirmOptions(mode=ExecutionMode.FULL),
            interactive=False,
        )
    assert seen and seen[0].uncontained and not (work / "made.txt").exists()
    # Reading needs no writable workspace: it still runs contained, unasked.
    ran = contained("ls", place, wrong("ls"), ExecutionMode.FULL)
    assert ran.contained == Shape((), False) and ran.result.exit_code == 0


@needs("bubblewrap")
def test_git_hooks_and_the_project_overlay_stay_read_only_in_the_workspace(
    place: dict[str, Path],
) -> None:
    work = place["work"]
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".conch.yaml").write_text("{}\n", encoding="utf-8")
    for target in (".git/hooks/pre-commit", ".conch.yaml"):
        command = _python(f"open('{target}', 'w').write('x')")
        ran = contained(command, place, wrong(command, Risk.WRITES), ExecutionMode.FULL)
        assert "Read-only file system" in ran.result.stderr, target
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    assert (work / ".conch.yaml").read_text(encoding="utf-8") == "{}\n"


@needs("bubblewrap")
def test_a_yes_given_in_advance_runs_contained(place: dict[str, Path]) -> None:
    work = place["work"]
    command = _python("open('../outside.txt', 'w').write('x')")

    def yes(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        return Answer.unattended()

    context = PolicyContext(mode=ExecutionMode.INTERACTIVE, cwd=work, sandbox_root=work)
    ran = run_checked(
        command,
        context,
        cwd=work,
        state_dir=None,
        approve=yes,
        interactive=False,
        verdict=wrong(command, Risk.WRITES),
    )
    assert not ran.asked and ran.contained is not None
    assert not (place["root"] / "outside.txt").exists()


def test_run_and_home_sockets_are_covered(tmp_path: Path) -> None:
    import socket

    home = tmp_path / "me"
    (home / ".ssh").mkdir(parents=True)
    path = home / ".ssh" / "control.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        argv = wrap(
            ["ls"], Shape((), False), bwrap="bwrap", cwd=tmp_path, environ={"HOME": str(home)}
        )
    finally:
        server.close()
    assert argv[argv.index("/run") - 1 : argv.index("/run") + 1] == ["--tmpfs", "/run"]
    covered = [
        argv[i + 2]
        for i, arg in enumerate(argv)
        if arg == "--ro-bind" and argv[i + 1] == "/dev/null"
    ]
    assert str(path) in covered
