"""What every row's command shares: its options, where its report goes, the lines that say how
to reproduce it, conch at its default settings with a private model service, and the headline.

A row's report is ``benchmarks/results/<report>.md`` and ``.json``; a partial run (fewer tasks,
fewer rounds) writes under ``benchmarks/.work/partial/`` instead, so a smoke run never stands in
for the published figure. A run of every task for some of the row's tools only is whole for
those tools: its header says which ran, and it too goes there unless ``--out`` names a place,
so it never overwrites the report that holds the other tools' figures.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.measured import Row, find

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
WORK = ROOT / "benchmarks" / ".work"


def parser(name: str, description: str | None) -> argparse.ArgumentParser:
    """The argument parser of row ``name``, with the ``--out`` every row takes."""
    row = find(name)
    assert row is not None, name
    made = argparse.ArgumentParser(
        prog=f"python -m benchmarks {name}",
        description=(description or row.summary).strip().split("\n\n")[0],
        epilog=f"Takes {row.duration}. Writes benchmarks/results/{row.report}.md and .json "
        "(a partial run: under benchmarks/.work/partial/).",
    )
    made.add_argument("--out", type=Path, default=None, metavar="STEM", help="write STEM.md/.json")
    return made


@dataclass(frozen=True, slots=True)
class Publication:
    """One run of a row: where its report goes and how to reproduce it."""

    row: Row
    stem: Path
    partial: bool
    reproduce: dict[str, Any]
    only: str = ""

    @property
    def markdown_path(self) -> Path:
        return self.stem.with_name(self.stem.name + ".md")

    @property
    def json_path(self) -> Path:
        return self.stem.with_name(self.stem.name + ".json")

    def header(self) -> str:
        """The report's first lines: the command, the date and the commit it was made at."""
        r = self.reproduce
        if self.partial:
            partial = " **A partial run: not the published figure.**"
        elif self.only:
            partial = (
                f" Every task, for {self.only} only: the other tools' figures are in the row's "
                "report that ran them all."
            )
        else:
            partial = ""
        return (
            f"Reproduce: `{r['command']}`; made {r['date']} at commit {r['commit']} on "
            f"{r['machine']} (load average {r['load_average']} at the start).{partial}\n\n"
        )

    def write(self, markdown: str, data: dict[str, Any]) -> None:
        """The report: ``markdown`` after the header, ``data`` after the reproduce fields."""
        self.stem.parent.mkdir(parents=True, exist_ok=True)
        self.markdown_path.write_text(self.header() + markdown.rstrip() + "\n", encoding="utf-8")
        whole = {"reproduce": self.reproduce, **data}
        text = json.dumps(whole, indent=1, ensure_ascii=False) + "\n"
        self.json_path.write_text(text, encoding="utf-8")

    def stamp(self) -> None:
        """Add the header to a report a runner wrote itself at ``stem``."""
        markdown = self.markdown_path.read_text(encoding="utf-8")
        data: Any = json.loads(self.json_path.read_text(encoding="utf-8"))
        self.write(markdown, data if isinstance(data, dict) else {"rows": data})

    def finish(self, headline: list[str]) -> int:
        """Print the headline, where the report is and, after a full run, the reports it
        supersedes."""
        for line in headline:
            print(line)
        print(f"report: {_shown(self.markdown_path)} (and .json)")
        if self.partial:
            print("a partial run: the published report was left alone")
        elif self.only:
            print(f"{self.only} only: the report of every tool was left alone")
        else:
            for old in self.row.replaces:
                if (RESULTS / old).exists():
                    print(f"supersedes benchmarks/results/{old}: remove it, link the new report")
        return 0


def begin(
    name: str, argv: list[str] | None, out: Path | None, partial: bool, only: str = ""
) -> Publication:
    """Where row ``name``'s report goes (``out``, else the results or, for a partial run or one
    of ``only`` some tools, the work directory) and the reproduce fields of a run started now
    with ``argv``."""
    row = find(name)
    assert row is not None, name
    given = sys.argv[1:] if argv is None else argv
    if out is not None:
        stem = out
    elif partial or only:
        stem = WORK / "partial" / row.report
    else:
        stem = RESULTS / row.report
    return Publication(row, stem, partial, provenance(name, list(given)), only)


def provenance(name: str, argv: list[str]) -> dict[str, Any]:
    """The command (``python -m benchmarks NAME ...``), the date, the commit, the machine."""
    return {
        "command": shlex.join(["python", "-m", "benchmarks", name, *argv]),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
        "machine": f"{os.cpu_count()} CPUs, {os.uname().machine}",
        "load_average": round(os.getloadavg()[0], 2),
    }


def commit() -> str:
    """The commit checked out, with a note when src/ or benchmarks/ differ from it."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30, check=False
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return "unknown (not a git checkout)"
    changed = git("status", "--porcelain", "--untracked-files=no", "--", "src", "benchmarks")
    return head + (" with uncommitted changes" if changed else "")


def _shown(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.relative_to(ROOT))
    return str(path)


def conch_binary() -> str:
    """The ``conch`` of this interpreter's environment."""
    return shutil.which("conch", path=str(Path(sys.executable).parent)) or "conch"


@contextlib.contextmanager
def defaults() -> Iterator[Path]:
    """conch at its default settings for the block: no user configuration and no ``CONCH_*``
    variables, and a private model service (its own runtime directory), stopped at the end.
    Yields an empty configuration file, for runners that take one."""
    saved = dict(os.environ)
    scratch = Path(tempfile.mkdtemp(prefix="conch-bench-"))
    try:
        for key in [k for k in os.environ if k.startswith("CONCH_")]:
            del os.environ[key]
        for key, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state")):
            os.environ[key] = str(scratch / sub)
            (scratch / sub).mkdir()
        runtime = scratch / "run"
        runtime.mkdir(mode=0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        empty = scratch / "defaults.yaml"
        empty.write_text("{}\n", encoding="utf-8")
        yield empty
    finally:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                [conch_binary(), "daemon", "stop"], capture_output=True, timeout=60, check=False
            )
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def runner_argv(argv: list[str]) -> Iterator[None]:
    """``sys.argv`` as if the runner called in the block had been started with ``argv``: the
    runners record their command line from it in their own report."""
    saved = sys.argv
    sys.argv = [saved[0], *argv]
    try:
        yield
    finally:
        sys.argv = saved


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
