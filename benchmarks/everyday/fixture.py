"""A directory like a user's, for the README's "Using it" examples: logs, an access log in
common log format, JSON, nested directories with files of several sizes, old and new
temporary files, empty directories, photos, a build script. Each example's effect is
checked against what this tree holds (``tests/e2e/test_readme_examples.py``, ``benchmarks/everyday/run.py``)."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

DAY = 24 * 3600

# Top-level files and their sizes: the five largest are not the five largest of the tree.
TOP_FILES = {
    "backup.tar": 700_000,
    "report.pdf": 180_000,
    "notes.txt": 2_000,
    "todo.md": 600,
    "photo1.jpeg": 95_000,
    "holiday photo.jpeg": 120_000,
    "error.log": 0,  # written below
    "build.sh": 0,
    "Makefile": 0,
    "access.log": 0,
    "users.json": 0,
}

# Nested files (larger ones too, so "the largest files here" differs by depth).
NESTED_FILES = {
    "data/measurements.csv": 2_400_000,
    "data/archive/2025.bin": 1_500_000,
    "data/readme.txt": 300,
    "src/main.c": 4_200,
    "src/util.c": 2_100,
    "logs/worker.log": 0,
    "logs/app.log": 0,
    "logs/old/2026-10.log": 0,
}

EMPTY_DIRS = ("empty-dir", "build/out", "cache/empty")

# (path, age in days)
TMP_FILES = {
    "cache/session.tmp": 12,
    "cache/render.tmp": 9,
    "scratch.tmp": 30,
    "fresh.tmp": 0,
    "cache/today.tmp": 1,
}

IPS = {"203.0.113.7": 9, "198.51.100.23": 5, "192.0.2.44": 3, "10.1.2.3": 2, "172.16.0.9": 1}

USERS = [
    {"name": "ada", "age": 36, "email": "ada@example.org", "team": "core"},
    {"name": "bob", "age": 25, "email": "bob@example.org", "team": "web"},
    {"name": "carol", "age": 41, "email": "carol@example.org", "team": "core"},
    {"name": "dave", "age": 30, "email": "dave@example.org", "team": "ops"},
    {"name": "erin", "age": 52, "email": "erin@example.org", "team": "web"},
]
OLDER_THAN_30 = ["ada", "carol", "erin"]


def _sized(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Not all zeros: a compressor would shrink them to nothing.
    chunk = bytes(range(256)) * 64
    with path.open("wb") as out:
        left = size
        while left > 0:
            out.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)


def access_log_lines() -> list[str]:
    """Common log format, IPs interleaved so that nothing is sorted already."""
    order = [ip for ip, n in IPS.items() for _ in range(n)]
    order = order[::3] + order[1::3] + order[2::3]
    pages = ["/", "/index.html", "/api/items", "/login", "/static/app.js"]
    lines = []
    for i, ip in enumerate(order):
        minute, status = 10 + i, (200, 200, 304, 404)[i % 4]
        lines.append(
            f'{ip} - - [24/Nov/2026:13:{minute:02d}:07 +0000] "GET {pages[i % 5]} HTTP/1.1" '
            f"{status} {512 + 37 * i}"
        )
    return lines


def app_log_lines() -> list[str]:
    levels = ["INFO", "INFO", "DEBUG", "WARN", "INFO", "ERROR"]
    return [
        f"2026-11-24 13:{i:02d}:00 {levels[i % 6]} worker-{i % 3} step {i} done" for i in range(40)
    ]


def build(root: Path) -> Path:
    """Write the tree under ``root`` (which must not exist yet or be empty); returns it."""
    root.mkdir(parents=True, exist_ok=True)
    for name, size in {**TOP_FILES, **NESTED_FILES}.items():
        if size:
            _sized(root / name, size)
    for name in EMPTY_DIRS:
        (root / name).mkdir(parents=True, exist_ok=True)
    (root / "logs" / "old").mkdir(parents=True, exist_ok=True)
    (root / "logs" / "app.log").write_text("\n".join(app_log_lines()) + "\n", encoding="utf-8")
    (root / "logs" / "worker.log").write_text("worker started\nworker stopped\n", encoding="utf-8")
    (root / "logs" / "old" / "2026-10.log").write_text("old entries\n" * 20, encoding="utf-8")
    (root / "access.log").write_text("\n".join(access_log_lines()) + "\n", encoding="utf-8")
    (root / "users.json").write_text(json.dumps(USERS, indent=2) + "\n", encoding="utf-8")
    (root / "error.log").write_text(
        "Traceback (most recent call last):\n"
        '  File "/srv/app/main.py", line 12, in <module>\n'
        '    config = load("config.yaml")\n'
        '  File "/srv/app/settings.py", line 40, in load\n'
        "    with open(path) as f:\n"
        "FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'\n",
        encoding="utf-8",
    )
    build_sh = root / "build.sh"
    build_sh.write_text(
        "#!/bin/sh\n# Build the project: compile the sources and link the binary.\n"
        "set -e\nmake all\n",
        encoding="utf-8",
    )
    build_sh.chmod(0o755)
    (root / "Makefile").write_text(
        "all: app\n\napp: src/main.c src/util.c\n\tcc -o app src/main.c src/util.c\n",
        encoding="utf-8",
    )
    now = time.time()
    for name, age in TMP_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"temporary {name}\n", encoding="utf-8")
        os.utime(path, (now - age * DAY - 3600, now - age * DAY - 3600))
    return root


def largest(root: Path, recursive: bool, n: int = 5) -> list[str]:
    """The ``n`` largest regular files, top level only or the whole tree, as paths from
    ``root``."""
    files = root.rglob("*") if recursive else root.iterdir()
    sized = [(p.stat().st_size, p) for p in files if p.is_file() and not p.is_symlink()]
    sized.sort(key=lambda pair: -pair[0])
    return [p.relative_to(root).as_posix() for _, p in sized[:n]]


def top_dirs(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def ip_counts() -> Counter[str]:
    return Counter(IPS)
