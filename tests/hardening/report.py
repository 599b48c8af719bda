"""Figures the hardening tests leave behind when ``CONCH_HARDENING_REPORT`` names a
directory: one JSON file per test case, gathered by ``benchmarks/hardening/run.py``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

REPORT_ENV = "CONCH_HARDENING_REPORT"
LONG_ENV = "CONCH_HARDENING_LONG"


def long_runs() -> bool:
    """Whether the long variants run (``CONCH_HARDENING_LONG=1``)."""
    return os.environ.get(LONG_ENV, "") not in ("", "0")


def record(suite: str, case: str, **figures: Any) -> None:
    """Keep ``figures`` for ``suite``/``case`` when a report is being made."""
    directory = os.environ.get(REPORT_ENV)
    if not directory:
        return
    path = Path(directory) / suite
    path.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^\w.-]+", "_", case)
    (path / f"{name}.json").write_text(json.dumps({"case": case, **figures}), encoding="utf-8")
