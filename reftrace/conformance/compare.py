"""What one library did with one program (an Outcome), and how two are compared (a Verdict).

An Outcome holds text sections (stdout, graph, outputs, warnings, error) already canonicalised
(canon.py), plus the output arrays for a tolerant numeric comparison. Two outcomes agree when
every section does; each section that does not becomes a unified diff in the Verdict.
"""
import difflib
from dataclasses import dataclass, field

import numpy as np

from .canon import canonical_message

# torch 2.13 deprecates torch.jit.trace itself with a DeprecationWarning on every call; that is
# not tracing behaviour, so no comparison looks at it
IGNORED_WARNINGS = ("DeprecationWarning",)
# outputs are compared as assert_close compares float32 by default
RTOL, ATOL = 1.3e-6, 1e-5


@dataclass
class Outcome:
    stdout: str = None            # spec examples: what the example printed
    graph: str = None             # programs: the traced graph, canonical (canon.canonical_graph)
    outputs: str = None           # programs: the traced call's outputs, described (for the diff)
    kinds: list = None            # ... each output's 'dtype shape' (or a non-tensor's repr)
    arrays: list = None           # ... and the tensors' values, for the numeric comparison
    warnings: list = field(default_factory=list)   # 'Category: message', canonical
    error: str = None             # 'Type: message', canonical, or None


@dataclass
class Verdict:
    id: str
    status: str = "ok"            # 'ok', 'differs' or 'skipped'
    reason: str = ""              # why skipped, or which sections differ
    diffs: list = field(default_factory=list)   # (section, unified diff text)

    def add(self, section, diff):
        self.status = "differs"
        self.diffs.append((section, diff))
        self.reason = ", ".join(s for s, _ in self.diffs)


def warning_texts(caught):
    """Recorded warnings (warnings.WarningMessage) as compared: 'Category: message', canonical,
    DeprecationWarnings dropped."""
    return [f"{w.category.__name__}: {canonical_message(str(w.message))}" for w in caught
            if w.category.__name__ not in IGNORED_WARNINGS]


def error_message(e):
    """An exception as compared: 'Type: message', C++ backtrace and source stacks dropped."""
    if e is None:
        return None
    msg = str(e).split("\nException raised from")[0].rstrip()
    return f"{type(e).__name__}: {canonical_message(msg)}"


def unified(expected, actual, from_label, to_label):
    """A unified diff of two texts; a repr of both when only whitespace at line ends differs."""
    lines = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), from_label,
                                      to_label, lineterm="", n=2))
    if not lines:
        return f"--- {from_label}: {expected!r}\n+++ {to_label}: {actual!r}"
    return "\n".join(lines)


def _close(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))
    return bool((a == b).all())


def compare(theirs, ours, verdict, their_label="torch", our_label="reftrace"):
    """Add a diff to ``verdict`` for each section where ``ours`` differs from ``theirs``."""
    for section in ("stdout", "graph", "error"):
        a, b = getattr(theirs, section), getattr(ours, section)
        if a != b:
            verdict.add(section, unified(a or "(none)\n", b or "(none)\n", their_label, our_label))
    # outputs agree on kinds exactly and on values within assert_close's float32 tolerance
    if theirs.kinds != ours.kinds or not _arrays_agree(theirs.arrays, ours.arrays):
        verdict.add("outputs", unified(theirs.outputs or "(none)\n", ours.outputs or "(none)\n",
                                       their_label, our_label))
    if theirs.warnings != ours.warnings:
        verdict.add("warnings", unified("\n".join(theirs.warnings) or "(none)",
                                        "\n".join(ours.warnings) or "(none)", their_label, our_label))
    return verdict


def _arrays_agree(a, b):
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
