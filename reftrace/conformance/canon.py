"""Canonical text: what two runs of one program (torch's and reftrace's) can be compared on.

Text from torch and from reftrace differs in ways that say nothing about tracing:
- source locations: a node's ``# file:line:col`` points into torch's or reftrace's own sources
  when the op was called from library code (nn layers), and torch's checker prints Python
  stacks where reftrace prints ``file:line:col``;
- value names (``%x.3``, ``%27``): the numbers depend on how many values the library created
  and dropped on the way (canonicalised only where asked: the spec pins names down on purpose);
- class-type mangles (``___torch_mangle_1.Linear``): a per-process counter;
- the random numbers in torch.testing's assert_close report (``Greatest absolute difference``);
- the library's own name in messages (``module 'reftrace.nn' has no attribute ...``): reftrace
  answers to the name ``torch``, so messages are compared with ``reftrace`` read as ``torch``.

Each helper takes and returns text, so it works on either library's output.
"""
import re

# ' # /path/to/file.py:12:0' at the end of a graph line (torch and reftrace print the same form)
_LOCATION = re.compile(r" # \S.*:\d+:\d+$", re.M)
_VALUE = re.compile(r"%[A-Za-z0-9_.]+")
_MANGLE = re.compile(r"___torch_mangle_\d+\.")
# headings under which torch's checker prints a Python stack, one '\t\t' line per frame
_STACK_HEADINGS = ("Source Location:", "Trace source location:", "Check source location:")
# the numbers of an assert_close report: random data makes them differ from run to run
_CLOSENESS = re.compile(r"^(\s*(?:Mismatched elements|Greatest absolute difference|Greatest relative "
                        r"difference|Expected|Absolute difference|Relative difference)).*$", re.M)


def drop_locations(text):
    """Graph text without source locations (what ``graph.str(False)`` prints)."""
    return _LOCATION.sub("", text)


def canonical_names(text):
    """Every ``%value`` renumbered ``%0, %1, ...`` in order of first appearance."""
    names = {}
    return _VALUE.sub(lambda m: names.setdefault(m.group(0), f"%{len(names)}"), text)


def canonical_graph(text):
    """Graph text as the conformance runner compares it: locations dropped, values renumbered,
    class-type mangles stripped."""
    return canonical_names(_MANGLE.sub("", drop_locations(text)))


def drop_stacks(text):
    """A TracingCheckError message less its source-location stacks (torch prints Python frames,
    reftrace ``file:line:col``): the heading stays, the frame lines under it go."""
    out, skipping = [], False
    for line in text.split("\n"):
        if skipping and line.startswith("\t\t"):
            continue
        skipping = line.strip() in _STACK_HEADINGS
        out.append(line)
    return "\n".join(out)


_OWN_NAME = re.compile(r"\breftrace\b")


def canonical_message(text):
    """A warning or error message as compared: locations, stacks and assert_close's numbers
    dropped, graph lines inside it (the checker quotes nodes) with mangles stripped, and
    ``reftrace`` read as ``torch``."""
    text = _TRIGGERED.sub("", drop_stacks(drop_locations(text)))
    text = _MANGLE.sub("", _CLOSENESS.sub(lambda m: m.group(1) + ": <numbers>", text))
    return _OWN_NAME.sub("torch", text)


# C++ warnings end with where in torch's sources they fired: a build artifact, not behaviour
_TRIGGERED = re.compile(r" \(Triggered internally at [^)]*\)")
