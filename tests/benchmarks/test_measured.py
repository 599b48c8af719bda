"""`python -m benchmarks`: one name per row of the README's "Measured" table, each a module
with a --help, each row's section in docs/benchmarks.md, and reports that say how to
reproduce them. Nothing here runs a measurement."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.__main__ import main as dispatch
from benchmarks.measured import ROWS, publish

ROOT = Path(__file__).resolve().parents[2]


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def measured_links() -> list[str]:
    """The first link of every row of the README's "Measured" table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("\n## Measured", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| [")]
    return [re.search(r"\]\(([^)]+)\)", line).group(1) for line in rows]  # type: ignore[union-attr]


def test_python_m_benchmarks_lists_every_name_with_how_long_it_takes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for row in ROWS:
        assert re.search(rf"^  {re.escape(row.name)} +{re.escape(row.summary)}$", done.stdout, re.M)
        assert f"takes {row.duration}" in done.stdout


def test_an_unknown_name_fails_and_lists_the_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert dispatch(["speed"]) == 2
    err = capsys.readouterr().err
    assert "no benchmark called 'speed'" in err
    assert all(row.name in err for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_each_name_has_a_module_with_a_help(
    row: object, capsys: pytest.CaptureFixture[str]
) -> None:
    name = row.name  # type: ignore[attr-defined]
    module = importlib.import_module(row.module)  # type: ignore[attr-defined]
    with pytest.raises(SystemExit) as exited:
        module.main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: python -m benchmarks {name} ")
    assert f"benchmarks/results/{row.report}.md" in " ".join(out.split())  # type: ignore[attr-defined]


def test_the_dispatcher_hands_the_options_to_the_row(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        dispatch(["containment", "--help"])
    assert "--rounds" in capsys.readouterr().out


def test_each_row_of_the_readme_table_links_the_section_of_one_name() -> None:
    assert measured_links() == [f"docs/benchmarks.md#{row.anchor}" for row in ROWS]


def sections(path: Path) -> dict[str, str]:
    """Each ``##`` section of a Markdown page by its anchor, with its subsections."""
    found: dict[str, str] = {}
    for part in ("\n" + path.read_text(encoding="utf-8")).split("\n## ")[1:]:
        heading, _, body = part.partition("\n")
        found[slug(heading)] = body
    return found


def test_each_name_has_its_section_in_docs_benchmarks_with_its_command() -> None:
    found = sections(ROOT / "docs" / "benchmarks.md")
    for row in ROWS:
        assert row.anchor in found, row.name
        assert f"python -m benchmarks {row.name}" in found[row.anchor], row.name


def test_a_partial_run_writes_beside_the_published_report_not_over_it() -> None:
    full = publish.begin("accuracy", [], None, partial=False)
    smoke = publish.begin("accuracy", ["--limit", "3"], None, partial=True)
    assert full.stem == publish.RESULTS / "accuracy"
    assert smoke.stem == publish.WORK / "partial" / "accuracy"
    assert smoke.reproduce["command"] == "python -m benchmarks accuracy --limit 3"


def test_a_report_starts_with_the_command_that_reproduces_it(tmp_path: Path) -> None:
    run = publish.begin("containment", ["--rounds", "30"], tmp_path / "c", partial=False)
    run.write("# Containment\n\nbody", {"rows": [1]})
    first = (tmp_path / "c.md").read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("Reproduce: `python -m benchmarks containment --rounds 30`; made ")
    assert " at commit " in first
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert data["reproduce"]["command"] == "python -m benchmarks containment --rounds 30"
    assert data["rows"] == [1]


def test_a_runners_own_report_is_stamped_in_place(tmp_path: Path) -> None:
    run = publish.begin("policy", [], tmp_path / "policy", partial=False)
    (tmp_path / "policy.md").write_text("# Policy\n", encoding="utf-8")
    (tmp_path / "policy.json").write_text(json.dumps({"goals": []}), encoding="utf-8")
    run.stamp()
    assert (tmp_path / "policy.md").read_text(encoding="utf-8").startswith("Reproduce: ")
    data = json.loads((tmp_path / "policy.json").read_text(encoding="utf-8"))
    assert list(data) == ["reproduce", "goals"]


def test_the_defaults_hide_the_users_settings_and_restore_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONCH_MODEL", "mine")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/nowhere/config")
    with publish.defaults() as empty:
        assert "CONCH_MODEL" not in os.environ
        assert os.environ["XDG_CONFIG_HOME"] != "/nowhere/config"
        assert Path(os.environ["XDG_RUNTIME_DIR"]).stat().st_mode & 0o777 == 0o700
        assert empty.read_text(encoding="utf-8") == "{}\n"
    assert os.environ["CONCH_MODEL"] == "mine"
    assert os.environ["XDG_CONFIG_HOME"] == "/nowhere/config"


def test_every_task_for_some_tools_is_labelled_whole_for_them_and_kept_apart(
    tmp_path: Path,
) -> None:
    some = publish.begin("agent", ["--agents", "conch"], None, partial=False, only="conch")
    assert some.stem == publish.WORK / "partial" / "agent"
    run = publish.begin("agent", ["--agents", "conch"], tmp_path / "a", False, only="conch")
    run.write("# Agent\n", {"rows": []})
    first = (tmp_path / "a.md").read_text(encoding="utf-8").splitlines()[0]
    assert "Every task, for conch only" in first
    assert "partial" not in first
