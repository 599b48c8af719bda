"""The one-shot CLI end to end with the scripted provider (control flow, not model quality)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest

from cliutil import CliResult, write_config
from conch.config.paths import Paths
from conch.config.settings import AISettings
from conch.storage.history import History
from requires import needs

Conch = Callable[..., CliResult]


def scripted(home: Path, *replies: str, extra: str = "", dry_run: bool = False) -> Path:
    """A config whose model replies from ``replies``; dry runs off unless asked for, so each
    reply is used where the test expects it (a dry run may ask for more candidates)."""
    script = "".join(f"    - {json.dumps(r)}\n" for r in replies)
    generation = "" if dry_run else "generation:\n  dry_run: false\n"
    return write_config(home, f"{generation}ai:\n  provider: scripted\n  script:\n{script}{extra}")


def last_entry() -> dict[str, object]:
    entry = History(Paths.default().state_dir).latest()
    assert entry is not None
    return asdict(entry)


def test_print_shows_only_the_extracted_command(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "```bash\nls -la\n```")
    result = conch("--print", "list", "all", "files")
    assert result.code == 0
    assert result.out == "ls -la\n"


def test_json_output_carries_command_risk_decision_and_reasons(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "rm notes.txt")
    result = conch("--json", "delete notes.txt")
    data = json.loads(result.out)
    assert data["command"] == "rm notes.txt"
    assert data["decision"] == "confirm"
    assert data["risk"] == "destructive"
    assert isinstance(data["reasons"], list)
    assert data["commands"] == ["rm"]


def test_denylisted_command_is_rejected_with_exit_3_and_never_runs(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "rm -rf ~")
    result = conch("--yes", "clean up my home directory")
    assert result.code == 3
    assert "not running it" in result.err
    assert last_entry()["executed"] is False


def test_safe_mode_runs_a_pipe_itself_a_loop_through_a_shell_and_refuses_hidden_code(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "printf 'a\\nb\\n' | wc -l")
    piped = conch("--yes", "count lines")
    scripted(isolated_dirs, 'for i in 1 2; do echo "n$i"; done')
    looped = conch("--yes", "count to two")
    scripted(isolated_dirs, "source env.sh && ls", "source env.sh && ls")
    sourced = conch("--yes", "list files with my settings")

    assert piped.code == 0 and "Runs without a shell" in piped.err
    assert looped.code == 0 and "Runs through a shell" in looped.err
    assert sourced.code == 3 and "'source'" in sourced.err


def test_a_command_that_needs_a_shell_is_asked_for_again_before_refusing(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, 'eval "echo $(date +%Y)"', "date +%Y")
    result = conch("-p", "what year is it")

    assert (result.code, result.out) == (0, "date +%Y\n")
    candidates = last_entry()["candidates"]
    assert [c["source"] for c in candidates] == ["greedy", "reshaped"]


def test_yes_runs_a_safe_command_and_returns_its_exit_code(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    scripted(isolated_dirs, "touch made-by-conch.txt")
    result = conch("--yes", "create a file", cwd=work)
    assert result.code == 0
    assert (work / "made-by-conch.txt").exists()
    entry = last_entry()
    assert entry["executed"] is True
    assert entry["generated_command"] == "touch made-by-conch.txt"


def test_safe_mode_expands_globs_itself(conch: Conch, isolated_dirs: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "a.log").write_text("x", encoding="utf-8")
    (work / "b.log").write_text("y", encoding="utf-8")
    scripted(isolated_dirs, "rm *.log")
    result = conch("--yes", "delete the logs", cwd=work)
    assert result.code == 0
    assert not list(work.glob("*.log"))


def test_command_exit_code_is_conch_exit_code(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "ls /definitely/not/here")
    result = conch("--yes", "list a missing dir")
    assert result.code == 2  # ls's own code for a missing operand


def test_no_terminal_and_confirmation_needed_prints_command_and_exits_4(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    scripted(isolated_dirs, "touch should-not-exist")
    result = conch("make a file")
    assert result.code == 4
    assert result.out.strip() == "touch should-not-exist"
    assert "no terminal" in result.err
    assert not (tmp_path / "work" / "should-not-exist").exists()


def test_abort_is_the_default_answer(conch: Conch, isolated_dirs: Path, tmp_path: Path) -> None:
    scripted(isolated_dirs, "touch nope")
    result = conch("make a file", tty=True, answers="\n")
    assert result.code == 4
    assert not (tmp_path / "work" / "nope").exists()
    assert "aborted" in (last_entry()["notes"] or "")


def test_execute_answer_runs_the_command(conch: Conch, isolated_dirs: Path, tmp_path: Path) -> None:
    scripted(isolated_dirs, "touch yes-file")
    result = conch("make a file", tty=True, answers="e\n")
    assert result.code == 0
    assert (tmp_path / "work" / "yes-file").exists()
    assert "[E]xecute, [D]escribe, [M]odify, [A]bort" in result.err


def test_describe_asks_the_model_then_asks_again(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    scripted(isolated_dirs, "touch described", "It creates an empty file named described.")
    result = conch("make a file", tty=True, answers="d\na\n")
    assert "It creates an empty file" in result.err
    assert result.code == 4
    assert not (tmp_path / "work" / "described").exists()


def test_modified_command_is_checked_by_the_policy_again(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "touch fine")
    result = conch("make a file", tty=True, answers="m\nrm -rf /\n")
    assert result.code == 3
    assert last_entry()["generated_command"] == "rm -rf /"


def test_whitelisted_read_only_command_runs_without_a_question(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(
        isolated_dirs,
        "ls",
        extra="default_prompt:\n  tools:\n    - name: ls\n      config: list files\n",
    )
    result = conch("list files")
    assert result.code == 0
    assert "[E]xecute" not in result.err
    assert result.err.endswith("  ls\n  risk: read-only\n")  # shown all the same
    (line,) = (Paths.default().state_dir / "audit.log").read_text().splitlines()
    assert " | ls | exit:0 | " in line  # every command that runs leaves one audit line


@pytest.mark.parametrize("flags", [(), ("--quiet",), ("--yes",), ("--yes", "--quiet")])
def test_a_command_is_shown_once_before_it_runs_asked_or_not(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "wc.yaml").write_text(
        "meta_prompt: only wc\ntools:\n  - name: wc\n    config: count\n", encoding="utf-8"
    )
    (work / "notes.txt").write_text("a\nb\n", encoding="utf-8")
    scripted(isolated_dirs, "wc -l notes.txt")
    result = conch(*flags, "wc.yaml", "count the lines of notes.txt", cwd=work)
    assert result.code == 0
    # Without --yes nothing is asked (the prompt config allows wc); with it, the question's
    # display is the one; either way the command is on stderr once, before it ran.
    assert result.err.count("  wc -l notes.txt\n  risk: read-only\n") == 1
    assert last_entry()["executed"] is True


def test_whitelist_rejects_other_programs(conch: Conch, isolated_dirs: Path) -> None:
    scripted(
        isolated_dirs,
        "rm x",
        extra="default_prompt:\n  tools:\n    - name: ls\n      config: list files\n",
    )
    result = conch("--yes", "remove x")
    assert result.code == 3
    assert "Disallowed command 'rm'" in result.err


def test_confirm_flag_forces_a_question_even_for_whitelisted_tools(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(
        isolated_dirs,
        "ls",
        extra="default_prompt:\n  tools:\n    - name: ls\n      config: list files\n",
    )
    result = conch("--confirm", "list files", tty=True, answers="a\n")
    assert result.code == 4
    assert "[E]xecute, [D]escribe, [M]odify, [A]bort" in result.err


def test_force_explain_tool_explains_and_confirms(conch: Conch, isolated_dirs: Path) -> None:
    scripted(
        isolated_dirs,
        "ls",
        "It lists the directory.",
        extra=(
            "default_prompt:\n  tools:\n    - name: ls\n      config: list files\n"
            "      force_explain: true\n"
        ),
    )
    result = conch("list files", tty=True, answers="a\n")
    assert "It lists the directory." in result.err
    assert "force_explain" in result.err
    assert result.code == 4


def test_unsafe_runs_pipes_in_the_users_shell(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    scripted(isolated_dirs, "echo hello | tr a-z A-Z > shout.txt")
    result = conch("--unsafe", "--yes", "shout hello into a file", cwd=work)
    assert result.code == 0
    assert (work / "shout.txt").read_text(encoding="utf-8") == "HELLO\n"


def test_explain_json_includes_the_explanation(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "du -sh .", "Shows the total size of the current directory.")
    data = json.loads(conch("--json", "--explain", "how big is this dir").out)
    assert data["explanation"].startswith("Shows the total size")


def test_prompt_file_replaces_default_prompt_and_its_tools(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "j.yaml").write_text(
        "meta_prompt: only jq\ntools:\n  - name: jq\n    config: use jq\n", encoding="utf-8"
    )
    scripted(isolated_dirs, "grep x file")
    result = conch("--yes", "j.yaml", "find x", cwd=work)
    assert result.code == 3
    assert "Allowed tools: jq" in result.err


def test_invalid_prompt_file_names_file_line_and_key_of_every_problem(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    bad = work / "bad.yaml"
    bad.write_text("meta_prompt: x\ntools:\n  - nam: jq\n", encoding="utf-8")
    scripted(isolated_dirs, "jq .")
    result = conch("bad.yaml", "do it", cwd=work)
    assert result.code == 1
    assert result.err.splitlines() == [
        f"conch: 2 problems in {bad}:",
        f"  {bad}:3: tools.0.name: required key is missing",
        f"  {bad}:3: tools.0.nam: unknown key; check its spelling against `conch help config`",
    ]


def test_missing_prompt_file_is_a_clear_error(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "ls")
    result = conch("nothere.yaml", "do it")
    assert result.code == 1
    assert "nothere.yaml does not exist" in result.err


def test_builtin_prompt_is_used_when_no_file_has_that_name(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "rm x")
    result = conch("--yes", "jq.yaml", "remove x")
    assert result.code == 3
    assert "Allowed tools: jq" in result.err


def test_scope_dot_embeds_a_listing_and_peek_sends_samples(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conch.providers import ScriptedProvider, register_provider

    provider = ScriptedProvider.of("jq .name data.json")
    register_provider("capture", lambda settings: provider)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "data.json").write_text('{"name": "conch"}' + " " * 20000, encoding="utf-8")
    (work / "sub").mkdir()
    write_config(isolated_dirs, "ai:\n  provider: capture\n")
    result = conch("--print", "get the name", "-s", ".", "--peek", "data.json", cwd=work)
    assert result.code == 0
    sent = provider.sent[0].messages
    texts = [m.content for m in sent]
    assert any("data.json" in t and "sub/" in t for t in texts)
    assert any("(truncated after 16384 bytes)" in t for t in texts)
    assert sent[0].role == "system" and "Linux" in sent[0].content


def test_piped_stdin_is_sent_as_context(conch: Conch, isolated_dirs: Path) -> None:
    from conch.providers import ScriptedProvider, register_provider

    provider = ScriptedProvider.of("echo fix-it")
    register_provider("capture2", lambda settings: provider)
    write_config(isolated_dirs, "ai:\n  provider: capture2\n")
    conch("--print", "why does this fail", stdin="Error: disk full\n")
    assert any("Error: disk full" in m.content for m in provider.sent[0].messages)


def test_unreadable_peek_file_is_a_one_line_error(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "ls")
    result = conch("--print", "x", "--peek", "missing.json")
    assert result.code == 1
    assert result.err == f"conch: peek file {Path(result.err.split()[3])} does not exist\n"


def test_empty_model_output_is_exit_5_and_recorded(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "   ")
    result = conch("--print", "anything")
    assert result.code == 5
    assert "empty reply" in result.err
    entry = last_entry()
    assert entry["exit_code"] == 5
    assert "empty reply" in str(entry["notes"])


def test_analyze_without_history_exits_2_with_a_friendly_message(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "unused")
    result = conch("--analyze")
    assert result.code == 2
    assert "no history yet" in result.err


def test_analyze_explains_the_latest_entry_and_never_runs(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "ls /nowhere")
    conch("--yes", "list nowhere")
    # Each invocation builds its provider afresh from the config: script the analysis next.
    scripted(isolated_dirs, "The directory does not exist; check the path.")
    result = conch("--analyze")
    assert result.code == 0
    assert "does not exist" in result.out


def test_analyze_cannot_be_combined_with_other_flags(conch: Conch, isolated_dirs: Path) -> None:
    result = conch("--analyze", "--unsafe")
    assert result.code == 2
    assert "--analyze cannot be combined with --unsafe" in result.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--print", "--json", "x"), "--print and --json cannot be combined"),
        (("--print", "--yes", "x"), "--yes has no effect"),
        (("--init", "--add-prompt", "p.yaml"), "cannot be combined"),
        ((), "no request given"),
        (("--bogus",), "unrecognized arguments: --bogus"),
    ],
)
def test_bad_flag_combinations_are_one_line_usage_errors(
    conch: Conch, argv: tuple[str, ...], message: str
) -> None:
    result = conch(*argv)
    assert result.code == 2
    assert message in result.err
    assert result.err.count("\n") == 1


def test_history_entry_has_every_field(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "ls")
    conch("--print", "-s", "*.py", "list")
    entry = last_entry()
    for name in (
        "ts",
        "cwd",
        "argv",
        "exit_code",
        "generated_command",
        "unsafe_mode",
        "confirm",
        "explain",
        "scope",
        "peek_files",
        "notes",
    ):
        assert name in entry
    assert entry["scope"] == "*.py"
    assert entry["argv"] == ["conch", "--print", "-s", "*.py", "list"]
    assert str(entry["ts"]).endswith("Z")


def test_no_history_flag_writes_nothing(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "ls")
    conch("--print", "--no-history", "list")
    assert History(Paths.default().state_dir).latest() is None


@needs("bubblewrap")
def test_a_failing_command_is_replaced_by_a_candidate_that_works_here(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "sizes.txt").write_text("2M\n1K\n", encoding="utf-8")
    scripted(
        isolated_dirs,
        "sort -h -n sizes.txt",
        "sort -h sizes.txt",
        extra="generation:\n  candidates: 2\n",
        dry_run=True,
    )
    result = conch("--json", "sort sizes.txt by size", cwd=work)
    data = json.loads(result.out)
    assert data["command"] == "sort -h sizes.txt"
    outcomes = [(c["command"], c["source"], c["outcome"]) for c in data["candidates"]]
    assert outcomes == [
        ("sort -h -n sizes.txt", "greedy", "failed"),
        ("sort -h sizes.txt", "sample", "ok"),
    ]
    assert "incompatible" in data["candidates"][0]["error"]
    assert last_entry()["candidates"] == data["candidates"]
    assert (work / "sizes.txt").read_text(encoding="utf-8") == "2M\n1K\n"


def test_a_rejection_unsafe_mode_would_lift_says_so_and_others_do_not(
    conch: Conch, isolated_dirs: Path
) -> None:
    hint = "(conch --unsafe allows it, after asking you)"
    scripted(isolated_dirs, "source env.sh && ls | wc -l", "source env.sh && ls | wc -l")
    needs_shell = conch("--yes", "count files")
    scripted(isolated_dirs, "rm -rf / | wc -l")
    denylisted = conch("--yes", "count files")

    assert needs_shell.code == denylisted.code == 3
    assert hint in needs_shell.err and "'source'" in needs_shell.err
    assert hint not in denylisted.err and "Denylisted" in denylisted.err


@pytest.mark.parametrize(
    "argv",
    [
        ("",),
        ("   ",),
        ("-p", "   "),
        ("--json", ""),
        ("--", " ", "\t"),
        ("jq.yaml", "  "),
    ],
)
def test_an_empty_or_blank_request_is_a_usage_error_and_asks_no_model(
    conch: Conch, isolated_dirs: Path, argv: tuple[str, ...]
) -> None:
    from conch.providers import ScriptedProvider, register_provider

    provider = ScriptedProvider.of("ls")
    built: list[AISettings] = []

    def factory(settings: AISettings) -> ScriptedProvider:
        built.append(settings)
        return provider

    register_provider("blank-guard", factory)
    write_config(isolated_dirs, "ai:\n  provider: blank-guard\n")
    result = conch(*argv)
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert "is empty; say what you want" in result.err
    assert provider.sent == [] and built == []
    assert result.out == ""


def test_a_blank_request_after_a_prompt_file_names_the_file(conch: Conch) -> None:
    result = conch("jq.yaml", "  ")
    assert result.err.startswith("conch: the request after jq.yaml is empty;")


def test_print_shows_a_rejected_command_and_says_the_policy_rejects_it(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "source env.sh && ls | wc -l", "source env.sh && ls | wc -l")
    result = conch("-p", "count files")
    assert result.code == 3
    assert result.out == "source env.sh && ls | wc -l\n"
    assert result.err.startswith("conch: the safety policy rejects this command: ")
    assert result.err.rstrip().endswith("(conch --unsafe would allow it after asking)")
    assert "not running it" not in result.err
    assert result.err.count("\n") == 1


def test_json_rejection_is_worded_like_print(conch: Conch, isolated_dirs: Path) -> None:
    scripted(isolated_dirs, "source env.sh && ls | wc -l", "source env.sh && ls | wc -l")
    result = conch("--json", "count files")
    assert result.code == 3
    assert json.loads(result.out)["decision"] == "reject"
    assert result.err.startswith("conch: the safety policy rejects this command: ")
    assert "(conch --unsafe would allow it after asking)" in result.err
    assert "not running it" not in result.err


def test_print_of_a_denylisted_command_offers_no_unsafe_hint(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "rm -rf ~")
    result = conch("-p", "clean up my home directory")
    assert result.code == 3
    assert result.out == "rm -rf ~\n"
    assert result.err.startswith("conch: the safety policy rejects this command: ")
    assert "--unsafe" not in result.err


def test_print_of_a_command_that_would_need_a_yes_exits_0(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "rm notes.txt")
    result = conch("-p", "delete notes.txt")
    assert result.code == 0
    assert result.out == "rm notes.txt\n"
    assert result.err == ""


@needs("bubblewrap")
def test_the_confirmation_and_json_show_what_the_dry_run_saw(
    conch: Conch, isolated_dirs: Path
) -> None:
    broken = "du -sh --max-depth=1 ."  # GNU du: "summarizing conflicts with --max-depth=1"
    off = "validation:\n  enabled: false\n"
    scripted(isolated_dirs, *[broken] * 5, dry_run=True, extra=off)
    asked = conch("disk usage here", tty=True, answers="a\n")
    scripted(isolated_dirs, *[broken] * 5, dry_run=True, extra=off)
    shown = conch("--json", "disk usage here")

    assert "dry run: failed (exit 1): du: " in asked.err
    assert json.loads(shown.out)["dry_run"].startswith("failed (exit 1): du: ")


def test_without_dry_runs_the_confirmation_says_the_command_was_not_tried(
    conch: Conch, isolated_dirs: Path
) -> None:
    scripted(isolated_dirs, "ls -la")
    result = conch("list files", tty=True, answers="a\n")

    assert "dry run: not tried: dry runs are turned off" in result.err
