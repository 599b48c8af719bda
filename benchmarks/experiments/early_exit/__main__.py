"""``python -m benchmarks.experiments.early_exit REPORT.json``: see the package's docstring."""

import sys

from benchmarks.experiments.early_exit.report import main

sys.exit(main())
