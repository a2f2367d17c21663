"""``python -m paraamr``."""

import sys

from paraamr.cli import main

sys.exit(main())
