"""``python -m conch.execute PLAN_JSON CWD``: run a checked plan on this process's stdin,
stdout and stderr, and exit with its status (how a captured run carries out a plan)."""

import json
import sys
from pathlib import Path

from conch.execute.stages import run_plan
from conch.messages import Plan

if __name__ == "__main__":
    status, _ = run_plan(Plan.from_json(json.loads(sys.argv[1])), Path(sys.argv[2]))
    sys.exit(status)
