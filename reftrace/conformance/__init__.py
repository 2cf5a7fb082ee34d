"""The conformance runner: the same programs under real torch and under reftrace, diffed.

    python -m reftrace.conformance                 # every example of spec/*.md
    python -m reftrace.conformance my_programs.py  # a user's programs (convention: programs.py)

This package is the only place reftrace imports torch, lazily (runner.import_torch), so
``import reftrace`` and ``import reftrace.conformance`` stay torch-free.

- spec_examples.py: the spec's format: parsing a chapter, running one example (also used by
  tests/test_spec.py)
- programs.py: the program-file convention; running one program under one library
- canon.py: canonical text (source locations dropped, value names renumbered)
- compare.py: Outcome (what one library did), Verdict (how two runs compare, with diffs)
- runner.py: collecting, running, the progress display and the summary; main()
"""
from .runner import main, run

__all__ = ["main", "run"]
