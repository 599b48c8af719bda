"""``python -m conch``."""

import sys

from conch.cli.main import main

sys.exit(main())
