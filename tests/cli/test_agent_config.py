"""``--config PATH`` on every command, the ``agent:`` section (flags over config over
defaults), ``--memory`` and ``--search-url``, ``--log-file`` and ``--verbose``, and
``--compress`` and ``/compress`` in ``conch chat``; with the scripted provider."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cliutil import CliResult, capture, one_line_error, step, write_config
from conch.cli.agentsetup import flag_tools, setup_from
from conch.cli.chat import build_chat_parser
from conch.cli.environment import Environment
from conch.cli.parsing import parse_anywhere
from conch.cli.sessionfile import session_path
from conch.config.paths import Paths
from conch.config.settings import Settings

Conch = Callable[..., CliResult]

# Every command that reads the config, with words that would otherwise make it work.
COMMANDS = [
    ["chat", "-p", "hi"],
    ["run", "look around"],
    ["--print", "list the files"],
    ["check", "--", "ls"],
    ["serve", "--port", "0"],
    ["mcp"],
    ["daemon", "status"],
    ["auth", "show", "openai"],
]


@pytest.mark.parametrize("argv", [*COMMANDS, ["doctor"]], ids=lambda a: a[0])
def test_a_missing_config_file_is_one_line_naming_it_for_every_command(
    conch: Conch, tmp_path: Path, argv: list[str]
) -> None:
    result = conch(argv[0], "--config", "nowhere.yaml", *argv[1:])
    error = one_line_error(result, 1)
    missing = tmp_path / "work" / "nowhere.yaml"
    assert (
        error
        == f"conch: --config nowhere.yaml: {missing} does not exist; give an existing config file\n"
    )


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_malformed_config_file_is_one_line_naming_it_for_every_command(
    conch: Conch, tmp_path: Path, argv: list[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("ai:\n  provider: [scripted\n", encoding="utf-8")
    error = one_line_error(conch(argv[0], "--config", str(bad), *argv[1:]), 1)
    assert error.startswith(f"conch: {bad}:") and "fix the YAML syntax" in error


def test_a_config_file_with_a_wrong_key_names_the_file_and_the_key(
    conch: Conch, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent:\n  max_iteration: 3\n", encoding="utf-8")
    result = conch("run", "x", "--config", str(bad))
    assert result.code == 1 and "Traceback" not in result.err
    assert f"{bad}:2: agent.max_iteration: unknown key" in result.err


def test_the_config_flag_wins_over_the_user_config_and_conch_config(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    capture(isolated_dirs, "cfg-user", "from the user config")
    named = capture(isolated_dirs, "cfg-flag", "from the --config file")
    write_config(isolated_dirs, "ai:\n  provider: cfg-user\n")
    other = tmp_path / "other.yaml"
    other.write_text("ai:\n  provider: cfg-user\n", encoding="utf-8")
    monkeypatch.setenv("CONCH_CONFIG", str(other))
    chosen = tmp_path / "work" / "mine.yaml"
    chosen.write_text("ai:\n  provider: cfg-flag\n", encoding="utf-8")
    result = conch("chat", "-p", "hi", "--config", "mine.yaml")
    assert result.code == 0, result.err
    assert result.out == "from the --config file\n"
    assert named.sent


def test_doctor_reports_a_config_file_that_is_not_valid(conch: Conch, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("ai:\n  temprature: 1\n", encoding="utf-8")
    result = conch("doctor", "--config", str(bad))
    assert result.code == 1 and "Traceback" not in result.err
    assert str(bad) in result.out


def test_init_writes_the_starter_to_the_config_flag_s_file(conch: Conch, tmp_path: Path) -> None:
    result = conch("--init", "--config", "fresh.yaml")
    assert result.code == 0, result.err
    assert (tmp_path / "work" / "fresh.yaml").read_text(encoding="utf-8").startswith("# conch")


# -- the agent: section ---------------------------------------------------------------------


def _options(config: str, *flags: str, cwd: Path) -> tuple[object, object]:
    settings = Settings.model_validate(json.loads(config)) if config else Settings()
    args = parse_anywhere(build_chat_parser(), list(flags))
    env = Environment(environ={}, cwd=cwd)
    setup = setup_from(args, env, "interactive")
    return flag_tools(args, setup, settings), setup.iterations(settings)


def test_the_terminal_limits_come_from_flags_then_config_then_defaults(tmp_path: Path) -> None:
    options, iterations = _options("", cwd=tmp_path)
    assert (options.command_timeout, options.max_stdout, options.max_stderr) == (
        30.0,
        1024 * 1024,
        256 * 1024,
    )
    assert iterations == 10
    config = json.dumps(
        {
            "agent": {
                "max_iterations": 4,
                "terminal": {
                    "timeout_seconds": 12,
                    "max_stdout_bytes": 4096,
                    "max_stderr_bytes": 2048,
                },
            }
        }
    )
    options, iterations = _options(config, cwd=tmp_path)
    assert (options.command_timeout, options.max_stdout, options.max_stderr) == (12, 4096, 2048)
    assert iterations == 4
    flags = ("--command-timeout", "5", "--max-iterations", "7")
    options, iterations = _options(config, *flags, cwd=tmp_path)
    assert (options.command_timeout, iterations) == (5.0, 7)


def test_the_terminal_limits_reach_the_bash_tool(conch: Conch, isolated_dirs: Path) -> None:
    provider = capture(isolated_dirs, "cfg-bash", step("bash", command="seq 1 3000"), "done")
    write_config(
        isolated_dirs,
        "ai:\n  provider: cfg-bash\nagent:\n  terminal:\n    max_stdout_bytes: 1024\n",
    )
    result = conch("run", "--allow-dangerous", "--no-act", "count")
    assert result.code == 0, result.err
    seen = provider.sent[1].messages[-1].content
    assert "1\n2\n3\n" in seen and "2999" not in seen


def test_the_iteration_limit_of_the_config_holds_unless_the_flag_says(
    conch: Conch, isolated_dirs: Path
) -> None:
    capture(isolated_dirs, "cfg-iter", step("fs_list", path="."), step("fs_glob", pattern="*"))
    write_config(isolated_dirs, "ai:\n  provider: cfg-iter\nagent:\n  max_iterations: 1\n")
    result = conch("run", "look around")
    assert result.code == 6
    assert "after 1 model replies" in result.err


def test_memory_and_web_search_from_flags_and_config(tmp_path: Path, isolated_dirs: Path) -> None:
    options, _ = _options("", cwd=tmp_path)
    assert options.memory_dir is None and not options.web and options.web_search is None
    options, _ = _options("", "--memory", cwd=tmp_path)
    assert options.memory_dir == Paths.default().state_dir / "memory"
    options, _ = _options("", "--memory-dir", "notes", cwd=tmp_path)
    assert options.memory_dir == (tmp_path / "notes").resolve()
    options, _ = _options("", "--search-url", "http://127.0.0.1:8888/search", cwd=tmp_path)
    assert options.web and options.web_search is not None
    config = json.dumps(
        {
            "agent": {
                "memory": True,
                "memory_dir": str(tmp_path / "kept"),
                "web": True,
                "search_url": "http://127.0.0.1:8888/search",
            }
        }
    )
    options, _ = _options(config, cwd=tmp_path)
    assert options.memory_dir == tmp_path / "kept"
    assert options.web and options.web_search is not None


def test_memory_and_web_flags_offer_their_tools(conch: Conch, isolated_dirs: Path) -> None:
    capture(isolated_dirs, "cfg-tools")
    plain = conch("chat", "--show-system-prompt")
    offered = conch(
        "chat", "--show-system-prompt", "--memory", "--search-url", "http://127.0.0.1:9/s"
    )
    assert offered.code == 0, offered.err
    for name in ("- memory:", "- web_search:", "- web_fetch:"):
        assert name not in plain.out and name in offered.out


def test_a_command_timeout_that_is_not_positive_is_a_usage_error(conch: Conch) -> None:
    error = one_line_error(conch("run", "x", "--command-timeout", "0"), 2)
    assert "--command-timeout must be more than 0 seconds" in error


# -- --log-file and --verbose ---------------------------------------------------------------


def test_log_file_gets_a_line_per_reply_tool_call_and_turn(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    (tmp_path / "work" / "a.txt").write_text("hello\n", encoding="utf-8")
    capture(isolated_dirs, "cfg-log", step("fs_read", path="a.txt"), "It says hello.")
    result = conch("run", "read a.txt", "--log-file", "run.log")
    assert result.code == 0, result.err
    assert result.out == "It says hello.\n"
    lines = (tmp_path / "work" / "run.log").read_text(encoding="utf-8").splitlines()
    texts = [line.split(" ", 1)[1] for line in lines]
    assert texts[0].startswith("model: cfg-log; context window: 4096 tokens (the default")
    assert texts[1] == "turn: read a.txt"
    assert texts[2].startswith("step 1: ") and " completion tokens" in texts[2]
    assert texts[3].startswith("tool fs_read: ok, ")
    assert texts[4].startswith("step 2: ")
    assert texts[5].startswith("turn done: 2 model replies, 1 tool call, ")
    assert "[step 1:" not in result.err  # only --verbose shows them


def test_verbose_shows_the_lines_on_stderr(conch: Conch, isolated_dirs: Path) -> None:
    capture(isolated_dirs, "cfg-verbose", "Hi.")
    result = conch("chat", "-p", "hi", "--verbose")
    assert result.code == 0, result.err
    assert result.out == "Hi.\n"
    assert "  [model: cfg-verbose; context window: 4096 tokens" in result.err
    assert "  [step 1: " in result.err and "  [turn done: 1 model reply, 0 tool calls" in result.err


def test_a_log_file_that_cannot_be_written_is_a_usage_error(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(isolated_dirs, "cfg-badlog", "Hi.")
    (tmp_path / "work" / "dir").mkdir()
    error = one_line_error(conch("chat", "-p", "hi", "--log-file", "dir"), 2)
    assert "--log-file " in error and "cannot write there" in error


# -- --compress and /compress ---------------------------------------------------------------


def test_compress_resumes_the_saved_chat_as_a_recap(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    capture(isolated_dirs, "cfg-compress-1", "Hello Ada.")
    assert conch("chat", "-p", "my name is Ada").code == 0
    provider = capture(isolated_dirs, "cfg-compress-2", "The user is Ada.", "You are Ada.")
    result = conch("chat", "--compress", "-p", "who am I")
    assert result.code == 0, result.err
    assert result.out == "You are Ada.\n"
    assert "recap: The user is Ada." in result.err
    assert "replaced by this recap" in result.err
    recap_request = provider.sent[0].messages[-1].content
    assert "User: my name is Ada" in recap_request and "Assistant: Hello Ada." in recap_request
    after = [m.content for m in provider.sent[1].messages[1:]]
    assert after[1:] == ["The user is Ada.", "who am I"]
    saved = json.loads(
        session_path(Paths.default().state_dir, (tmp_path / "work").resolve()).read_text(
            encoding="utf-8"
        )
    )
    assert [m["content"] for m in saved["messages"]][1:] == [
        "The user is Ada.",
        "who am I",
        "You are Ada.",
    ]


def test_the_repl_s_compress_command_replaces_the_conversation(
    conch: Conch, isolated_dirs: Path
) -> None:
    provider = capture(isolated_dirs, "cfg-repl", "Hello!", "We said hello.", "Still here.")
    stdin = "/compress\nhello\n/compress\nagain\n"
    result = conch("chat", stdin=stdin, tty=True)
    assert result.code == 0, result.err
    assert "conch: nothing to compress yet" in result.err
    assert "We said hello." in result.out
    assert "replaced by this recap" in result.err
    last = [m.content for m in provider.sent[-1].messages[1:]]
    assert last[1:] == ["We said hello.", "again"]
