"""``python -m bench <part>``: see bench/cli.py and bench/README.md."""

import sys

from bench.cli import main

sys.exit(main())
