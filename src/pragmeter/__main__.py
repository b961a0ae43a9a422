"""``python -m pragmeter`` is the ``pragmeter`` command."""

import sys

from pragmeter.cli import main

sys.exit(main())
