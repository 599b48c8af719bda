"""``conch shell`` in this process, its lines read from a stream and its questions answered
from another, with a scripted model whose requests the tests read: what reaches the model,
suggested commands and their confirmation, the meta commands, sessions, autonomous mode."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cliutil import CliResult, capture, one_line_error, step, write_config
from conch.config.paths import Paths
from conch.providers import ScriptedProvider, register_provider
from conch.shell.sessions import SavedSession

Conch = Callable[..., CliResult]


def focused(home: Path, name: str, *replies: str) -> ScriptedProvider:
    """``capture``, with neither the session's summary at the end nor a plan before a goal:
    for tests about something else (their own requests only reach the model)."""
    provider = capture(home, name, *replies)
    write_config(home, f"ai:\n  provider: {name}\nshell:\n  memory: false\n  preplan: false\n")
    return provider


def session_records(kind: str | None = None) -> list[dict[str, object]]:
    session = SavedSession.last(Paths.default().state_dir)
    assert session is not None
    return [r for r in session.records() if kind is None or r["type"] == kind]


def test_a_typed_command_s_output_opens_the_next_model_turn(
    conch: Conch, isolated_dirs: Path
) -> None:
    provider = capture(isolated_dirs, "shell-exec", "It printed a marker.")
    result = conch("shell", stdin="echo hello-marker\nwhat did that print\n:quit\n")
    assert result.code == 0, result.err
    assert "hello-marker" in result.out and "It printed a marker." in result.out
    sent = provider.sent[0].messages
    assert sent[0].role == "system" and "CMD: " in sent[0].content
    assert sent[-1].content == (
        "[exec output]\n$ echo hello-marker\nexit code: 0\nhello-marker\n\nwhat did that print"
    )


def test_cd_and_export_persist_between_lines(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(isolated_dirs, "shell-cd")
    (tmp_path / "work" / "sub").mkdir()
    result = conch("shell", stdin="cd sub\nexport GREETING=hi\npwd\necho $GREETING-there\n")
    assert result.code == 0, result.err
    assert f"{tmp_path / 'work' / 'sub'}\r\n" in result.out
    assert "hi-there" in result.out
    assert "sub [conch:shell-cd]$ " in result.err


def test_a_suggested_command_runs_after_yes_and_reaches_the_next_turn(
    conch: Conch, isolated_dirs: Path
) -> None:
    provider = capture(isolated_dirs, "shell-yes", "Try this:\nCMD: echo suggested-ran", "Done.")
    result = conch("shell", stdin="> greet me\nand now?\n", answers="y\n")
    assert result.code == 0, result.err
    assert "the model suggests:\n  echo suggested-ran\n  risk: read-only\n" in result.err
    assert "Run it? [y]es, [e]dit, [n]o [n] " in result.err
    assert "suggested-ran" in result.out
    assert "[exec output]\n$ echo suggested-ran\nexit code: 0\nsuggested-ran" in (
        provider.sent[1].messages[-1].content
    )
    assert session_records("exec")[0]["source"] == "suggested"


def test_a_suggestion_left_with_no_does_not_run(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(isolated_dirs, "shell-no", "touch should-not-exist")  # the one-shot's command
    result = conch("shell", stdin="please create a file\n", answers="\n")
    assert result.code == 0, result.err
    assert "risk: writes" in result.err
    assert not (tmp_path / "work" / "should-not-exist").exists()
    assert session_records("exec") == []


def test_an_edited_suggestion_runs_as_the_user_typed_it(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(isolated_dirs, "shell-edit", "echo first-draft")  # the one-shot's command
    result = conch("shell", stdin="say something\necho edited-ran\n", answers="e\n")
    assert result.code == 0, result.err
    assert "edit (an empty line keeps it): echo first-draft" in result.err
    assert "edited-ran\r\n" in result.out and "first-draft\r\n" not in result.out
    ran = session_records("exec")[0]
    assert (ran["command"], ran["source"], ran["exit_code"]) == ("echo edited-ran", "edited", 0)


def test_suggestions_that_ran_leave_audit_lines_and_typed_lines_do_not(
    conch: Conch, isolated_dirs: Path
) -> None:
    # "say something" asks for a command (the one-shot), "and again" goes on talking.
    capture(isolated_dirs, "shell-audit", "echo first-draft", "CMD: echo as-suggested")
    stdin = "say something\necho edited-ran\necho typed-by-hand\nand again\n"
    result = conch("shell", stdin=stdin, answers="e\ny\n")
    assert result.code == 0, result.err
    audit = (Paths.default().state_dir / "audit.log").read_text(encoding="utf-8").splitlines()
    ran = [line.split(" | ")[2:4] for line in audit]
    assert ran == [["echo edited-ran", "exit:0"], ["echo as-suggested", "exit:0"]], audit


def test_an_edit_the_policy_rejects_never_runs(conch: Conch, isolated_dirs: Path) -> None:
    capture(isolated_dirs, "shell-edit-bad", "ls")
    result = conch("shell", stdin="list\nrm -rf /\n", answers="e\n")
    assert result.code == 0, result.err
    assert "conch: not running it: Denylisted" in result.err
    assert session_records("exec") == []


def test_a_suggestion_the_policy_rejects_is_shown_with_the_reason_and_never_asked_about(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "shell-reject", "rm -rf ~")
    result = conch("shell", stdin="free some space\n", answers="y\n")
    assert result.code == 0, result.err
    assert "  rm -rf ~\n  risk: destructive\n" in result.err
    assert "conch: not running it: Denylisted" in result.err
    assert "Run it?" not in result.err
    assert session_records("exec") == []


def test_read_only_suggestions_run_without_a_question_when_confirm_cmd_is_off(
    conch: Conch, isolated_dirs: Path
) -> None:
    register_provider("shell-noconfirm", lambda s: ScriptedProvider.of("echo ran-at-once"))
    write_config(isolated_dirs, "ai:\n  provider: shell-noconfirm\nshell:\n  confirm_cmd: false\n")
    result = conch("shell", stdin="show me\n")
    assert result.code == 0, result.err
    assert "ran-at-once" in result.out and "Run it?" not in result.err


def test_accepted_suggestions_go_to_the_shell_history_file_when_asked(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    histfile = tmp_path / "histfile"
    monkeypatch.setenv("HISTFILE", str(histfile))
    register_provider("shell-hist", lambda s: ScriptedProvider.of("echo into-history"))
    write_config(isolated_dirs, "ai:\n  provider: shell-hist\nshell:\n  append_history: true\n")
    result = conch("shell", stdin="echo typed-line\ngo on\n", answers="y\n")
    assert result.code == 0, result.err
    assert histfile.read_text(encoding="utf-8") == "echo into-history\n"


def test_without_capture_output_the_model_does_not_see_command_output(
    conch: Conch, isolated_dirs: Path
) -> None:
    provider = ScriptedProvider.of("Nothing to see.")
    register_provider("shell-nocapture", lambda s: provider)
    write_config(
        isolated_dirs, "ai:\n  provider: shell-nocapture\nshell:\n  capture_output: false\n"
    )
    assert conch("shell", stdin="echo secret-output\nwhat happened\n").code == 0
    assert provider.sent[0].messages[-1].content == "what happened"


def test_a_missing_command_offers_to_ask_the_model_instead(
    conch: Conch, isolated_dirs: Path
) -> None:
    provider = capture(isolated_dirs, "shell-127", "There is no such script here.")
    result = conch("shell", stdin="./missing-script.sh --now\n", answers="y\n")
    assert result.code == 0, result.err
    assert "ask the model about this line instead? [y/N]" in result.err
    asked = provider.sent[0].messages[-1].content
    assert "exit code: 127" in asked and asked.endswith("\n\n./missing-script.sh --now")


def test_forced_routes_and_alt_enter_targets(conch: Conch, isolated_dirs: Path) -> None:
    provider = focused(isolated_dirs, "shell-forced", "one", "two")
    script = "$ echo forced-shell\n:exec echo exec-shell\n> ls the files\n:ask pwd\n:exec\n"
    result = conch("shell", stdin=script)
    assert result.code == 0, result.err
    assert "forced-shell" in result.out and "exec-shell" in result.out
    assert [r.messages[-1].content.rsplit("\n\n", 1)[-1] for r in provider.sent] == [
        "ls the files",
        "pwd",
    ]
    assert "conch: nothing after ':exec'" in result.err


def test_model_switches_by_name_and_an_unknown_name_is_one_line(
    conch: Conch, isolated_dirs: Path
) -> None:
    write_config(
        isolated_dirs,
        "ai:\n  provider: scripted\n  script: [from-default]\n"
        "models:\n  fast:\n    provider: scripted\n    script: [from-fast]\n",
    )
    result = conch("shell", stdin=":model nope\n:model fast\nhello there\n:models\n:model\n")
    assert result.code == 0, result.err
    assert "conch: :model nope: no such model; known models: fast\n" in result.err
    assert "from-fast" in result.out and "from-default" not in result.out
    assert "* fast      scripted  (models:)" in result.out
    assert "[conch:fast]$ " in result.err
    assert "conch: the model answering is fast" in result.err


def test_model_flag_picks_a_named_model(conch: Conch, isolated_dirs: Path) -> None:
    write_config(
        isolated_dirs,
        "ai:\n  provider: scripted\nmodels:\n  fast:\n    provider: scripted\n"
        "    script: [quick answer]\n",
    )
    result = conch("shell", "--model", "fast", stdin="hello there\n")
    assert result.code == 0, result.err
    assert "quick answer" in result.out and "[conch:fast]$ " in result.err


def test_an_unknown_model_flag_is_a_usage_error_naming_the_known_models(
    conch: Conch, isolated_dirs: Path
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\nmodels:\n  fast: {}\n  deep: {}\n")
    err = one_line_error(conch("shell", "--model", "nope"), 2)
    assert err == "conch: --model nope: no such model; known models: deep, fast\n"


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["shell", "list", "files"], "`conch shell` takes no words"),
        (["shell", "--max-steps", "0"], "--max-steps must be 1 or more, not 0"),
        (["shell", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_flags_are_one_line_usage_errors(
    conch: Conch, isolated_dirs: Path, argv: list[str], text: str
) -> None:
    capture(isolated_dirs, "shell-flags")
    assert text in one_line_error(conch(*argv), 2)


def test_quit_exits_0_and_meta_errors_are_one_line(conch: Conch, isolated_dirs: Path) -> None:
    capture(isolated_dirs, "shell-meta")
    result = conch("shell", stdin=":frob\n:help\n:mcp\n:quit\necho never-run\n")
    assert result.code == 0
    assert "conch: unknown meta command :frob; :help lists them\n" in result.err
    assert ":config show [SECTION]" in result.out and ":auto GOAL" in result.out
    assert "no MCP servers configured" in result.out
    assert "never-run" not in result.out


def test_cost_counts_tokens_per_turn_and_warns_past_the_threshold(
    conch: Conch, isolated_dirs: Path
) -> None:
    register_provider("shell-cost", lambda s: ScriptedProvider.of("one two three", "four"))
    write_config(
        isolated_dirs,
        "ai:\n  provider: shell-cost\nshell:\n  cost_warning: 0.0001\n  prices:\n"
        "    shell-cost:\n      input_per_million: 10\n      output_per_million: 30\n",
    )
    result = conch("shell", stdin="why is the sky blue?\nwhy not green?\n:cost\n")
    assert result.code == 0, result.err
    assert result.err.count("past the warning at $0.0001 (shell.cost_warning)") == 1
    report = result.out[result.out.index("#  model") :]
    assert report.splitlines()[1].split()[:3] == ["1", "shell-cost", "ask"]
    assert "session: 2 turns, " in report and "no price" not in report


def test_config_show_says_where_values_came_from(conch: Conch, isolated_dirs: Path) -> None:
    config = write_config(isolated_dirs, "ai:\n  provider: scripted\nshell:\n  max_turns: 8\n")
    result = conch("shell", stdin=":config show shell\n")
    assert result.code == 0, result.err
    assert f"shell.max_turns = 8  (user config {config})\n" in result.out
    assert "shell.confirm_cmd = true  (default)\n" in result.out


def test_an_untrusted_project_overlay_is_asked_about_once_at_start(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(isolated_dirs, "shell-trust")
    overlay = tmp_path / "work" / ".conch.yaml"
    overlay.write_text("shell:\n  max_turns: 6\n", encoding="utf-8")
    first = conch("shell", stdin=":config show shell\n", answers="y\n")
    assert first.code == 0, first.err
    assert f"Trust project config {overlay}? [y/N] " in first.err
    assert f"shell.max_turns = 6  (project overlay {overlay})" in first.out
    second = conch("shell", stdin=":config show shell\n", answers="")
    assert "Trust project config" not in second.err
    assert f"shell.max_turns = 6  (project overlay {overlay})" in second.out


def test_every_turn_is_saved_and_continue_takes_the_session_up_again(
    conch: Conch, isolated_dirs: Path
) -> None:
    focused(isolated_dirs, "shell-save-1", "Hello Ada.")
    assert conch("shell", stdin="echo typed\nmy name is Ada\n").code == 0
    kinds = [r["type"] for r in session_records()]
    assert kinds == ["start", "exec", "turn", "turn"]
    second = capture(isolated_dirs, "shell-save-2", "Your name is Ada.")
    result = conch("shell", "--continue", stdin="> what is my name\n:history\n")
    assert result.code == 0, result.err
    assert "conch: resumed the shell session" in result.err
    contents = [m.content.rsplit("\n\n", 1)[-1] for m in second.sent[0].messages[1:]]
    assert contents == ["my name is Ada", "Hello Ada.", "what is my name"]
    assert "  $ echo typed  [exit 0]\nyou: my name is Ada\nmodel: Hello Ada.\n" in result.out
    assert "you: what is my name\nmodel: Your name is Ada.\n" in result.out


def test_reset_forgets_the_conversation_for_the_model_and_for_continue(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "shell-reset-1", "Hello Ada.", "Hello again.")
    assert conch("shell", stdin="my name is Ada\n:reset\nhi\n").code == 0
    second = capture(isolated_dirs, "shell-reset-2", "Who knows.")
    assert conch("shell", "--continue", stdin="> what is my name\n").code == 0
    contents = [m.content for m in second.sent[0].messages[1:]]
    assert contents == ["hi", "Hello again.", "what is my name"]


def test_continue_with_nothing_saved_starts_a_new_session(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "shell-fresh")
    result = conch("shell", "--continue", stdin="")
    assert result.code == 0
    assert "no saved shell session yet; starting a new one" in result.err
    assert [r["type"] for r in session_records()] == ["start"]


def test_save_writes_a_transcript(conch: Conch, isolated_dirs: Path, tmp_path: Path) -> None:
    capture(isolated_dirs, "shell-transcript", "An answer.")
    result = conch("shell", stdin="why do tests fail?\n:save notes.md\n")
    assert result.code == 0, result.err
    text = (tmp_path / "work" / "notes.md").read_text(encoding="utf-8")
    assert "## You\n\nwhy do tests fail?\n" in text and "## Model\n\nAn answer.\n" in text
    assert "every turn is saved as it happens" in result.err


def test_auto_halts_a_destructive_step_until_yes_is_typed(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "work" / "victim"
    victim.mkdir()
    focused(
        isolated_dirs,
        "shell-auto-halt",
        step("bash", command="rm -r victim"),
        "I left it alone.",
    )
    result = conch("shell", stdin=":auto remove the victim directory\n", answers="y\n")
    assert result.code == 0, result.err
    assert "HALT: the agent wants to run a destructive command:" in result.err
    assert "Type yes to run it; anything else refuses it: " in result.err
    assert victim.is_dir()
    assert "I left it alone." in result.out


def test_auto_runs_a_destructive_step_after_a_typed_yes_and_the_model_sees_it(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "work" / "victim"
    victim.mkdir()
    provider = focused(
        isolated_dirs,
        "shell-auto-yes",
        step("bash", command="ls"),
        step("bash", command="rm -r victim"),
        "Removed it.",
        "You removed victim.",
    )
    result = conch(
        "shell", stdin=":auto remove the victim directory\nwhat did you do\n", answers="yes\n"
    )
    assert result.code == 0, result.err
    assert not victim.exists()
    assert result.err.count("HALT") == 1  # the read-only ls ran without a question
    last = provider.sent[-1].messages
    assert [m.role for m in last[-3:]] == ["user", "assistant", "user"]
    assert last[-3].content.endswith("[auto] remove the victim directory")
    assert "$ rm -r victim\nexit code: 0" in last[-3].content
    assert [r["source"] for r in session_records("exec")] == ["auto", "auto"]


def test_auto_gives_the_model_a_failed_step_with_its_own_exit_code(
    conch: Conch, isolated_dirs: Path
) -> None:
    provider = focused(
        isolated_dirs,
        "shell-auto-exit",
        step("bash", command="grep -c needle nowhere.txt"),
        "There is no such file.",
        "It failed.",
    )
    result = conch("shell", stdin=":auto count the needles\nhow did it go\n")
    assert result.code == 0, result.err
    asked = provider.sent[-1].messages[-3].content
    assert "$ grep -c needle nowhere.txt\nexit code: 2\n" in asked
    assert "No such file" in asked and "[exit code" not in asked
    (record,) = session_records("exec")
    assert (record["command"], record["exit_code"]) == ("grep -c needle nowhere.txt", 2)


def test_auto_mode_turns_plain_language_into_goals_with_a_badge(
    conch: Conch, isolated_dirs: Path
) -> None:
    focused(isolated_dirs, "shell-auto-on", "Nothing to do.")
    result = conch("shell", stdin=":auto\ntidy up please\n:auto off\n")
    assert result.code == 0, result.err
    assert "[conch:shell-auto-on ⚡]$ " in result.err
    assert "conch: working toward: tidy up please" in result.err
    assert "Nothing to do." in result.out
    assert result.err.rstrip().endswith("[conch:shell-auto-on]$")


def test_a_refused_step_is_not_run_when_the_agent_proposes_it_again(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    focused(
        isolated_dirs,
        "shell-auto-again",
        step("bash", command="touch made"),
        step("bash", command="touch made"),
        "Gave up.",
    )
    result = conch("shell", stdin=":auto create a file\n", answers="n\n")
    assert result.code == 0, result.err
    assert result.err.count("Run it? [y/N/a]") == 1
    assert not (tmp_path / "work" / "made").exists()
    assert "2 commands of the agent's did not run" in result.err


def test_saved_session_records_are_json_lines(conch: Conch, isolated_dirs: Path) -> None:
    capture(isolated_dirs, "shell-jsonl", "ok")
    assert conch("shell", stdin="hello\n").code == 0
    session = SavedSession.last(Paths.default().state_dir)
    assert session is not None
    for line in session.path.read_text(encoding="utf-8").splitlines():
        assert isinstance(json.loads(line), dict)


def test_leaving_with_ctrl_d_remembers_the_session_for_the_next_one(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "shell-memory-1", "Because the cache is cold.", "- asked why it is slow")
    result = conch("shell", stdin="> why is it slow\n")
    assert result.code == 0, result.err
    assert "conch: remembered this session as #1 (:history show 1)" in result.err
    second = capture(isolated_dirs, "shell-memory-2", "It was slow.")
    result = conch("shell", stdin=":history list\n> what did I ask last time\n")
    assert result.code == 0, result.err
    assert "conch: the model remembers an earlier session here (:history list)" in result.err
    assert "- asked why it is slow" in result.out
    assert "- asked why it is slow" in second.sent[0].messages[0].content


def test_config_names_the_file_the_shell_reads(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    provider = ScriptedProvider.of("From the other config.")
    register_provider("shell-other-config", lambda settings: provider)
    other = tmp_path / "other.yaml"
    other.write_text("ai:\n  provider: shell-other-config\nshell:\n  memory: false\n")
    result = conch("shell", "--config", str(other), stdin="> hello there\n")
    assert result.code == 0, result.err
    assert "From the other config." in result.out
    missing = conch("shell", "--config", str(tmp_path / "nope.yaml"), stdin="")
    assert missing.code != 0 and "nope.yaml" in missing.err and "does not exist" in missing.err
