"""Peer tools under test: shell-gpt and llm-cmd, each run from its own PyPI package.

Both run as subprocesses from a separate virtual env (see ``setup_peers.sh``), in a throwaway
HOME and config directory, pointed at the same OpenAI-compatible server and model as conch. They
propose a command; nothing here executes it. See ``PEERS.md`` for how each one is driven and what
that means for fairness.

``base_url`` is the OpenAI base URL including ``/v1`` (the same value as conch's ``ai.base_url``),
``model`` the model name sent in each request.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
import weakref
from pathlib import Path

from benchmarks.accuracy.candidate import Candidate, Task, looks_refused

TIMEOUT_SECONDS = 120.0
# Where setup_peers.sh puts the peers' venv by default.
DEFAULT_VENV = Path(__file__).resolve().parents[1] / ".work" / "peers-venv"
DUMMY_KEY = "sk-bench-dummy"

# Colour codes a terminal printer may add around the text; never part of the command itself.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


class _Peer:
    """Shared plumbing: a private scratch dir, a scrubbed environment, one timed subprocess."""

    name: str
    PROGRAMS: tuple[str, ...] = ()

    def __init__(
        self,
        base_url: str,
        model: str,
        venv: Path = DEFAULT_VENV,
        timeout: float = TIMEOUT_SECONDS,
    ):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.venv = Path(venv).resolve()
        self.timeout = timeout
        for program in self.PROGRAMS:
            self._bin(program)  # fail now, not on every task, if the venv is missing
        self._scratch = Path(tempfile.mkdtemp(prefix=f"bench-{self.name}-"))
        self._cleanup = weakref.finalize(self, _remove_tree, self._scratch)
        self.home = self._scratch / "home"
        self.tmp = self._scratch / "tmp"
        self.work = self._scratch / "work"
        for folder in (self.home, self.tmp, self.work):
            folder.mkdir(parents=True)
        self._configure()

    def _configure(self) -> None:
        raise NotImplementedError

    def _bin(self, program: str) -> str:
        path = self.venv / "bin" / program
        if not path.exists():
            raise FileNotFoundError(f"{path} not found: run benchmarks/accuracy/setup_peers.sh")
        return str(path)

    def _env(self) -> dict[str, str]:
        """A clean environment: nothing from the caller's (keys, base URLs, config paths) leaks in."""
        return {
            "PATH": f"{self.venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "TMPDIR": str(self.tmp),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "SHELL": "/bin/bash",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "VIRTUAL_ENV": str(self.venv),
        }

    def _run(self, argv: list[str], env: dict[str, str]) -> tuple[int | None, str, str]:
        """Run with stdin closed and no controlling terminal; (None, ...) on timeout."""
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.work,
            env=env,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return None, out, err
        return proc.returncode, out, err

    def _judge(self, text: str, raw: str, seconds: float) -> Candidate:
        """Turn the text the tool would run into a Candidate (surrounding whitespace only)."""
        command = text.strip()
        if not command:
            return Candidate(command=None, raw=raw, seconds=seconds, error="empty output")
        if looks_refused(command):
            return Candidate(command=None, raw=raw, seconds=seconds, refused=True)
        return Candidate(command=command, raw=raw, seconds=seconds)

    def close(self) -> None:
        """Remove the scratch dir (also done when the generator is garbage-collected)."""
        self._cleanup()

    def __enter__(self) -> _Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _failure(rc: int | None, err: str, raw: str, seconds: float, timeout: float) -> Candidate:
    if rc is None:
        return Candidate(
            command=None, raw=raw, seconds=seconds, error=f"timeout after {timeout:g}s"
        )
    tail = err.strip().splitlines()[-1] if err.strip() else ""
    return Candidate(command=None, raw=raw, seconds=seconds, error=f"exit {rc}: {tail}"[:500])


class SgptGenerator(_Peer):
    """shell-gpt: ``sgpt --shell --no-interaction --temperature 0 --no-cache REQUEST``.

    Configured only through its own ``~/.config/shell_gpt/.sgptrc`` in the throwaway HOME. Its
    stdout is the command (it streams the reply verbatim, then a newline).
    """

    name = "sgpt"
    PROGRAMS = ("sgpt",)

    def _configure(self) -> None:
        config_dir = self.home / ".config" / "shell_gpt"
        config_dir.mkdir(parents=True)
        settings = {
            "OPENAI_API_KEY": DUMMY_KEY,
            "API_BASE_URL": self.base_url,
            "DEFAULT_MODEL": self.model,
            "REQUEST_TIMEOUT": str(int(self.timeout)),
            "CHAT_CACHE_PATH": str(self._scratch / "chat_cache"),
            "CACHE_PATH": str(self._scratch / "cache"),
            "CHAT_CACHE_LENGTH": "100",
            "CACHE_LENGTH": "100",
            "DEFAULT_COLOR": "magenta",
            "ROLE_STORAGE_PATH": str(config_dir / "roles"),
            "DEFAULT_EXECUTE_SHELL_CMD": "false",
            "DISABLE_STREAMING": "false",
            "CODE_THEME": "dracula",
            "OPENAI_FUNCTIONS_PATH": str(config_dir / "functions"),
            "OPENAI_USE_FUNCTIONS": "false",
            "SHOW_FUNCTIONS_OUTPUT": "false",
            "PRETTIFY_MARKDOWN": "false",
            "USE_LITELLM": "false",
            "SHELL_INTERACTION": "false",
            "OS_NAME": "auto",
            "SHELL_NAME": "auto",
        }
        text = "".join(f"{key}={value}\n" for key, value in settings.items())
        (config_dir / ".sgptrc").write_text(text, encoding="utf-8")

    def generate(self, task: Task) -> Candidate:
        argv = [
            self._bin("sgpt"),
            "--shell",
            "--no-interaction",
            "--temperature",
            "0",
            "--no-cache",
            "--",
            task.nl,
        ]
        start = time.perf_counter()
        try:
            rc, out, err = self._run(argv, self._env())
        except OSError as exc:
            return Candidate(command=None, raw="", seconds=0.0, error=f"cannot start sgpt: {exc}")
        seconds = time.perf_counter() - start
        raw = _ANSI.sub("", out)
        if rc != 0:
            return _failure(rc, err, raw, seconds, self.timeout)
        # sgpt prints the streamed completion and then one newline; what it would run is the
        # completion itself.
        return self._judge(raw.removesuffix("\n"), raw, seconds)


# Run with the peer venv's python. Loads llm with its plugins exactly as the `llm` executable
# does and invokes `llm cmd` through llm's own CLI, so llm-cmd's option handling, model
# resolution, SYSTEM_PROMPT and `str(model.prompt(...))` all run unchanged. Only its last step,
# interactive_exec() (prefill an editable prompt_toolkit line, run it on Enter), is replaced by
# writing the exact string it would have prefilled to a file. Optionally every prompt carries a
# temperature, which `llm cmd` has no flag for.
_LLM_CMD_DRIVER = """\
import json
import os
import sys

import llm
import llm_cmd
from llm.cli import cli

OUT = os.environ["BENCH_LLM_CMD_OUT"]
TEMPERATURE = os.environ.get("BENCH_LLM_CMD_TEMPERATURE")


def capture(command):
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"command": command}, f)


llm_cmd.interactive_exec = capture

if TEMPERATURE:
    _get_model = llm.get_model

    def get_model(*args, **kwargs):
        model = _get_model(*args, **kwargs)
        prompt = model.prompt

        def prompt_with_temperature(*a, **kw):
            kw.setdefault("temperature", float(TEMPERATURE))
            return prompt(*a, **kw)

        model.prompt = prompt_with_temperature
        return model

    llm.get_model = get_model

cli.main(args=sys.argv[1:], prog_name="llm")
"""


class LlmCmdGenerator(_Peer):
    """llm + llm-cmd: ``llm cmd -m bench REQUEST``, with the command captured, never run.

    The server is registered as llm's OpenAI-compatible model ``bench`` in
    ``extra-openai-models.yaml`` under a throwaway ``LLM_USER_PATH``. ``temperature`` is sent
    with each prompt (``llm cmd`` has no option for it); None leaves llm's request as is.
    """

    name = "llm-cmd"
    PROGRAMS = ("python", "llm")
    MODEL_ID = "bench"

    def __init__(
        self,
        base_url: str,
        model: str,
        venv: Path = DEFAULT_VENV,
        timeout: float = TIMEOUT_SECONDS,
        temperature: float | None = 0.0,
    ):
        self.temperature = temperature
        super().__init__(base_url, model, venv, timeout)

    def _configure(self) -> None:
        self.user_dir = self._scratch / "llm"
        self.user_dir.mkdir()
        # JSON strings are valid YAML scalars, so no YAML library is needed here.
        entry = (
            f"- model_id: {self.MODEL_ID}\n"
            f"  model_name: {json.dumps(self.model)}\n"
            f"  api_base: {json.dumps(self.base_url)}\n"
        )
        (self.user_dir / "extra-openai-models.yaml").write_text(entry, encoding="utf-8")
        self.driver = self._scratch / "llm_cmd_driver.py"
        self.driver.write_text(_LLM_CMD_DRIVER, encoding="utf-8")

    def generate(self, task: Task) -> Candidate:
        # One file per call, so concurrent calls on one generator cannot mix answers up.
        out_file = self.tmp / f"llm-cmd-{uuid.uuid4().hex}.json"
        env = self._env()
        env["LLM_USER_PATH"] = str(self.user_dir)
        env["BENCH_LLM_CMD_OUT"] = str(out_file)
        if self.temperature is not None:
            env["BENCH_LLM_CMD_TEMPERATURE"] = repr(float(self.temperature))
        argv = [self._bin("python"), str(self.driver), "cmd", "-m", self.MODEL_ID, "--", task.nl]
        start = time.perf_counter()
        try:
            rc, out, err = self._run(argv, env)
        except OSError as exc:
            return Candidate(command=None, raw="", seconds=0.0, error=f"cannot start llm: {exc}")
        seconds = time.perf_counter() - start
        if rc != 0:
            return _failure(rc, err, out, seconds, self.timeout)
        try:
            text = json.loads(out_file.read_text(encoding="utf-8"))["command"]
        except (OSError, ValueError, KeyError) as exc:
            return Candidate(
                command=None, raw=out, seconds=seconds, error=f"no command captured: {exc}"
            )
        finally:
            out_file.unlink(missing_ok=True)
        return self._judge(text, text, seconds)
