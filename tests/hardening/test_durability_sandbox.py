"""Dry runs and ``evaluate`` never change a file outside their scratch space: the tree is
hashed before and after commands and code that try to write, delete, move and chmod."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pytest
from report import record

from conch.agent.evaluate import Evaluator
from conch.execute.dryrun import SandboxDryRunner
from requires import needs

pytestmark = needs("bubblewrap")

WRITERS = [
    "touch new.txt",
    "rm -rf ./*",
    "rm -f a.txt",
    "find . -delete",
    "echo x > a.txt",
    "echo x >> a.txt",
    "mv a.txt b.txt",
    "cp a.txt c.txt",
    "mkdir d",
    "chmod 000 a.txt",
    "ln -s a.txt link",
    "truncate -s 0 a.txt",
    "sed -i s/alpha/omega/ a.txt",
    "dd if=/dev/zero of=a.txt bs=1 count=3",
    "sh -c 'echo x > sub/b.txt'",
    'touch "$HOME/pwned"',
    "touch {outside}/pwned",
    "rm -rf {outside}",
    "python3 -c \"open('a.txt', 'w').write('x')\"",
]
CODE = [
    "open('a.txt', 'w').write('x')",
    "import os; os.remove('a.txt')",
    "import shutil; shutil.rmtree('sub')",
    "import os; os.rename('a.txt', 'z.txt')",
    "open({home!r} + '/pwned', 'w').write('x')",
    "open({outside!r} + '/pwned', 'w').write('x')",
    "import os; os.chmod('a.txt', 0)",
    "import subprocess; subprocess.run(['rm', '-rf', '.'])",
]


def tree_hash(*roots: Path) -> str:
    """One hash over every path, type, mode and content under ``roots``."""
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted([root, *root.rglob("*")]):
            info = path.lstat()
            digest.update(f"{path}\0{info.st_mode}\0".encode())
            if path.is_symlink():
                digest.update(os.readlink(path).encode())
            elif path.is_file():
                digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def trees(tmp_path: Path, isolated_dirs: Path) -> tuple[Path, Path, Path]:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "a.txt").write_text("alpha\n", encoding="utf-8")
    (work / "sub" / "b.txt").write_text("beta\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n", encoding="utf-8")
    return work, isolated_dirs, outside


def test_dry_runs_change_nothing_outside_their_scratch_copy(
    trees: tuple[Path, Path, Path],
) -> None:
    work, home, outside = trees
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    runner = SandboxDryRunner(work, "/bin/sh", env, timeout=5.0)
    assert runner.available
    temp = Path(tempfile.gettempdir())
    copies_before = set(temp.glob("conch-dryrun-*"))
    before = tree_hash(work, home, outside)
    tried = 0
    for command in WRITERS:
        run = runner(command.format(outside=outside))
        tried += run is not None
        assert tree_hash(work, home, outside) == before, command
    left = set(temp.glob("conch-dryrun-*")) - copies_before
    record(
        "sandbox", "dry-run", commands=len(WRITERS), tried=tried, changed=0, copies_left=len(left)
    )
    assert tried == len(WRITERS) and not left


def test_evaluate_changes_nothing_outside_its_sandbox(trees: tuple[Path, Path, Path]) -> None:
    work, home, outside = trees
    evaluator = Evaluator(work)
    before = tree_hash(work, home, outside)
    refused = 0
    for code in CODE:
        text = evaluator.run(code.format(home=str(home), outside=str(outside)))
        refused += "Error" in text or "exit code" in text
        assert tree_hash(work, home, outside) == before, code
    record("sandbox", "evaluate", programs=len(CODE), changed=0, failed_visibly=refused)
    assert refused >= len(CODE) - 1  # ``rm -rf .`` may fail quietly; nothing changed anyway
