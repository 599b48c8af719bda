"""``python -m conch.daemon serve ...``: how clients start the service process."""

import sys

from conch.daemon.serve import main

sys.exit(main())
