"""The executable spec's examples (spec/*.md): parsing a chapter and running one example.

Shared by the test suite (tests/test_spec.py turns each example into pytest items) and the
conformance runner (reftrace.conformance runs each under torch and reftrace and diffs them).
The format is defined in spec/README.md. In short: a rule is a heading ``### ID-N title``; each
example in it is a ```python block followed by an ```expected block (the exact stdout), a
```warns block (warnings it must emit) and/or a ```raises block (``ErrorType: message``; a
trailing ``...`` matches any rest of a message). ``python reftrace-only`` / ``python torch-only``
mark examples where the two deliberately differ; ``python continues`` runs an example after
the chapter's previous one, in its namespace (a tutorial that builds code step by step).

Nothing here imports torch: ``run_example`` is handed the module to bind to the name ``torch``.
"""
import contextlib
import io
import os
import re
import traceback
import warnings
from dataclasses import dataclass, field

# spec/ of the checkout this package sits in (reftrace/conformance/ -> the repository root)
SPEC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "spec")

RULE_RE = re.compile(r"^#{2,4}\s+([A-Z][A-Z0-9]*-\d+)\b")   # '### TEN-1 Title'
FENCE_RE = re.compile(r"^(`{3,}|~{3,})\s*(.*)$")             # '```python reftrace-only'
ONLY_FLAGS = ("reftrace-only", "torch-only")
CONTINUES = "continues"   # the example runs after the previous one, sharing its names
RESULT_KINDS = ("expected", "warns", "raises")   # the blocks after an example, in canonical order
# torch deprecates APIs reftrace keeps (torch.jit.trace itself warns so in 2.13): not behaviour
# the spec pins down, so they are left out of refreshed warns blocks
NOISE_WARNINGS = ("DeprecationWarning", "FutureWarning")


@dataclass
class Example:
    chapter: str                  # 'tensors'
    rule: str                     # 'TEN-1'
    index: int                    # position within the rule, from 0
    path: str
    line: int                     # 1-based line of the first code line
    code: str
    only: str = ""                # '', 'reftrace-only' or 'torch-only'
    expected: str = None          # exact stdout, or None when not given
    raises: str = None            # 'RuntimeError: message', or None
    warns: list = None            # ['TracerWarning: message', ...], or None
    # where each result block sits (for --update): kind -> (first content line, closing fence)
    blocks: dict = field(default_factory=dict)
    code_end: int = 0             # line index of the python block's closing fence
    error: str = ""               # a format error found while parsing
    # the examples a ``continues`` example runs first, in order, in the same namespace
    prelude: list = field(default_factory=list)

    @property
    def id(self):
        return f"{self.chapter}:{self.rule}:{self.index}"


def _closes(line, fence):
    # a closing fence: only the fence character, at least as many as the opening one
    s = line.strip()
    return len(s) >= len(fence) and set(s) == {fence[0]}


def _fenced_blocks(lines):
    """Yield (opening fence index, info string, first content line index, closing fence index)."""
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        j = i + 1
        while j < len(lines) and not _closes(lines[j], fence):
            j += 1
        yield i, info, i + 1, j
        i = j + 1


def parse_chapter(path):
    """All examples of one chapter, in file order. Format errors become examples that fail."""
    chapter = os.path.splitext(os.path.basename(path))[0]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")

    # rule headings by line, so each block knows the rule it belongs to
    rule_at = []
    for n, text in enumerate(lines):
        m = RULE_RE.match(text)
        if m:
            rule_at.append((n, m.group(1)))

    def rule_of(n):
        current = None
        for start, rule in rule_at:
            if start > n:
                break
            current = rule
        return current

    examples, counts, pending, previous = [], {}, None, None
    for start, info, first, end in _fenced_blocks(lines):
        words = info.split()
        lang = words[0] if words else ""
        body = "\n".join(lines[first:end])
        if lang == "python":
            rule = rule_of(start) or "NO-RULE"
            ex = Example(chapter, rule, counts.get(rule, 0), path, first + 1, body, code_end=end)
            counts[rule] = ex.index + 1
            flags = [w for w in words[1:] if w in ONLY_FLAGS]
            unknown = [w for w in words[1:] if w not in ONLY_FLAGS + (CONTINUES,)]
            if len(flags) > 1 or unknown:
                ex.error = (f"line {start + 1}: unknown or conflicting flags {words[1:]} (allowed: "
                            f"one of {ONLY_FLAGS}, and {CONTINUES!r})")
            ex.only = flags[0] if flags else ""
            if CONTINUES in words[1:]:
                if previous is None:
                    ex.error = f"line {start + 1}: a '{CONTINUES}' example needs an example before it"
                else:
                    ex.prelude = previous.prelude + [previous]
            previous = ex
            if rule == "NO-RULE":
                ex.error = f"line {start + 1}: example outside any rule (put it under a '### ID-N' heading)"
            if re.search(r"^\s*(import torch\b|from torch\b)", body, re.M):
                ex.error = (f"line {start + 1}: examples must not import torch: the runner binds the "
                            "name `torch` (to reftrace or to real torch)")
            examples.append(ex)
            pending = ex
        elif lang in RESULT_KINDS:
            if pending is None or lang in pending.blocks:
                examples.append(Example(chapter, rule_of(start) or "NO-RULE", -1, path, first + 1, "",
                                        error=f"line {start + 1}: ```{lang} block without a python example before it"))
                continue
            pending.blocks[lang] = (first, end)
            if lang == "expected":
                # each line of the block is one printed line; an empty block means no output
                pending.expected = body + "\n" if end > first else ""
            elif lang == "warns":
                pending.warns = [w.strip() for w in body.split("\n") if w.strip()]
            else:
                pending.raises = body.strip()
        else:
            pending = None  # other blocks (```text, ```console) end an example's result blocks
    return examples


def format_error(ex):
    """What is wrong with how the example is written ('' when nothing)."""
    if ex.error:
        return ex.error
    if not ex.blocks:
        return (f"line {ex.line - 1}: python example without an ```expected, ```warns or ```raises "
                "block after it (fill it in with: python tests/test_spec.py --update <chapter>)")
    return ""


def chapters(spec_dir=SPEC_DIR):
    """The chapter files of ``spec_dir`` (every .md but README.md), sorted."""
    if not os.path.isdir(spec_dir):
        return []
    return [os.path.join(spec_dir, name) for name in sorted(os.listdir(spec_dir))
            if name.endswith(".md") and name != "README.md"]


def all_examples(spec_dir=SPEC_DIR):
    found = []
    for path in chapters(spec_dir):
        found.extend(parse_chapter(path))
    return found


# -- running an example -----------------------------------------------------------------------

def execute(ex, module):
    """exec the example with ``torch`` bound to ``module``.

    Returns (stdout, exception or None, its traceback, the warnings as warnings.WarningMessage).
    The code is compiled under the chapter's path, padded so line numbers in tracebacks are
    the Markdown file's own. The default dtype is restored afterwards whatever the example did.
    A ``continues`` example first runs the examples it continues, in the same namespace; their
    output and warnings are theirs (checked by their own items), not this one's, and an error
    one of them is written to raise does not stop the ones after it.
    """
    namespace = {"torch": module, "__name__": "__spec__"}
    out = io.StringIO()
    saved_dtype = module.get_default_dtype()
    error, tb, before = None, "", 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # every warning, not once per location
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                for earlier in ex.prelude:
                    try:
                        exec(_compiled(earlier), namespace)
                    except Exception:
                        if earlier.raises is None:
                            raise
            before = len(caught)
            with contextlib.redirect_stdout(out):
                exec(_compiled(ex), namespace)
        except Exception as e:  # the error is part of what the example shows
            # drop the runner's own frame: the traceback starts in the chapter
            error, tb = e, "".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next))
        finally:
            module.set_default_dtype(saved_dtype)
    return out.getvalue(), error, tb, list(caught[before:])


def _compiled(ex):
    # padded with blank lines so a traceback's line numbers are the chapter's own
    return compile("\n" * (ex.line - 1) + ex.code + "\n", ex.path, "exec")


def warning_line(w):
    """A warning as a ```warns block holds it: 'Type: first line of the message'."""
    text = str(w.message)
    return f"{w.category.__name__}: {text.splitlines()[0] if text else ''}"


def run_example(ex, module):
    """``execute``, with the warnings as 'Type: message' lines (a warns block's form)."""
    out, error, tb, caught = execute(ex, module)
    return out, error, tb, [warning_line(w) for w in caught]


def matches(got, want):
    """Exact, or a prefix match when the spec's text ends in '...'."""
    return got.startswith(want[:-3].rstrip()) if want.endswith("...") else got == want


def error_text(e):
    """How a raised error is written in a ```raises block: 'Type: first paragraph of the message'."""
    msg = str(e).split("\nException raised from")[0].rstrip()
    return f"{type(e).__name__}: {msg}"


_matches = matches  # the name tests/test_spec.py has always used
