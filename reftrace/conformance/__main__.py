"""``python -m reftrace.conformance [PATHS]``: see runner.py."""
import sys

from .runner import main

sys.exit(main())
