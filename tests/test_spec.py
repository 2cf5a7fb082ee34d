"""Run every example of the executable spec (spec/*.md) under reftrace and, when installed, torch.

The format is defined in spec/README.md. In short: a rule is a heading ``### ID-N title``; each
example in it is a ```python block followed by an ```expected block (the exact stdout), a
```warns block (warnings it must emit) and/or a ```raises block (``ErrorType: message``; a
trailing ``...`` matches any rest of a message). ``python reftrace-only`` / ``python torch-only``
mark examples where the two deliberately differ.

Each example becomes two pytest items, ``test_spec_reftrace[chapter:RULE-N:i]`` (exec with
``torch`` bound to reftrace) and ``test_spec_torch[...]`` (the same text under real torch 2.13,
skipped without it), so the spec is checked against the oracle on every run that has torch.

Refreshing expected output from the oracle (never hand-write it):

    python tests/test_spec.py --update spec/tensors.md

rewrites every result block of the chapter with what torch 2.13 does (a reftrace-only example's
blocks are filled from reftrace once, when missing, and never overwritten).
"""
import contextlib
import difflib
import io
import os
import re
import sys
import traceback
import warnings
from dataclasses import dataclass, field

import pytest

SPEC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spec")

RULE_RE = re.compile(r"^#{2,4}\s+([A-Z][A-Z0-9]*-\d+)\b")   # '### TEN-1 Title'
FENCE_RE = re.compile(r"^(`{3,}|~{3,})\s*(.*)$")             # '```python reftrace-only'
ONLY_FLAGS = ("reftrace-only", "torch-only")
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

    examples, counts, pending = [], {}, None
    for start, info, first, end in _fenced_blocks(lines):
        words = info.split()
        lang = words[0] if words else ""
        body = "\n".join(lines[first:end])
        if lang == "python":
            rule = rule_of(start) or "NO-RULE"
            ex = Example(chapter, rule, counts.get(rule, 0), path, first + 1, body, code_end=end)
            counts[rule] = ex.index + 1
            flags = [w for w in words[1:] if w in ONLY_FLAGS]
            unknown = [w for w in words[1:] if w not in ONLY_FLAGS]
            if len(flags) > 1 or unknown:
                ex.error = f"line {start + 1}: unknown or conflicting flags {words[1:]} (allowed: one of {ONLY_FLAGS})"
            ex.only = flags[0] if flags else ""
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


def all_examples():
    if not os.path.isdir(SPEC_DIR):
        return []
    found = []
    for name in sorted(os.listdir(SPEC_DIR)):
        if name.endswith(".md") and name != "README.md":
            found.extend(parse_chapter(os.path.join(SPEC_DIR, name)))
    return found


# -- running an example -----------------------------------------------------------------------

def run_example(ex, module):
    """exec the example with ``torch`` bound to ``module``.

    Returns (stdout, exception or None, its traceback, the warnings emitted as 'Type: message').
    The code is compiled under the chapter's path, padded so line numbers in tracebacks are
    the Markdown file's own. The default dtype is restored afterwards whatever the example did.
    """
    code = compile("\n" * (ex.line - 1) + ex.code + "\n", ex.path, "exec")
    namespace = {"torch": module, "__name__": "__spec__"}
    out = io.StringIO()
    saved_dtype = module.get_default_dtype()
    error, tb = None, ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # every warning, not once per location
        try:
            with contextlib.redirect_stdout(out):
                exec(code, namespace)
        except Exception as e:  # the error is part of what the example shows
            # drop the runner's own frame: the traceback starts in the chapter
            error, tb = e, "".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next))
        finally:
            module.set_default_dtype(saved_dtype)
    # one line per warning (a warns block holds one per line): the message's first line
    warned = [f"{w.category.__name__}: {str(w.message).splitlines()[0] if str(w.message) else ''}"
              for w in caught]
    return out.getvalue(), error, tb, warned


def _matches(got, want):
    """Exact, or a prefix match when the spec's text ends in '...'."""
    return got.startswith(want[:-3].rstrip()) if want.endswith("...") else got == want


def error_text(e):
    """How a raised error is written in a ```raises block: 'Type: first paragraph of the message'."""
    msg = str(e).split("\nException raised from")[0].rstrip()
    return f"{type(e).__name__}: {msg}"


def _diff(expected, actual, label):
    lines = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                      "expected", label, lineterm="", n=2))
    if not lines:  # only line endings differ: show them
        return f"  expected: {expected!r}\n  {label + ':':9} {actual!r}"
    return "\n".join(lines)


def check_example(ex, module, label):
    """Run ``ex`` under ``module`` and fail with a readable message when the output differs."""
    where = f"{os.path.relpath(ex.path)}:{ex.line} ({ex.rule}, example {ex.index})"
    out, error, tb, warned = run_example(ex, module)
    problems = []
    if ex.expected is not None and out != ex.expected:
        problems.append(f"stdout differs from the spec:\n{_diff(ex.expected, out, label)}")
    missing = [w for w in ex.warns or () if not any(_matches(g, w) for g in warned)]
    if missing:
        problems.append("missing warnings:\n" + "\n".join("  " + w for w in missing) +
                        f"\n{label} warned:\n" + ("\n".join("  " + g for g in warned) or "  nothing"))
    if ex.raises is None and error is not None:
        problems.append(f"the example raised, the spec expects no error:\n{tb}")
    elif ex.raises is not None:
        if error is None:
            problems.append(f"the spec expects\n  {ex.raises}\nbut {label} raised nothing")
        else:
            got = error_text(error)
            if not _matches(got, ex.raises):
                problems.append(f"wrong error:\n  expected: {ex.raises}\n  {label + ':':9} {got}\n\n{tb}")
    if problems:
        pytest.fail(f"{where} under {label}\n" + "\n\n".join(problems), pytrace=False)


EXAMPLES = all_examples()
_IDS = [ex.id if ex.index >= 0 else f"{ex.chapter}:{ex.rule}:format-error-line-{ex.line}" for ex in EXAMPLES]


def test_spec_has_examples():
    # an empty or unparsable spec/ must not pass silently
    assert EXAMPLES, f"no examples found in {SPEC_DIR}"


@pytest.mark.parametrize("ex", EXAMPLES, ids=_IDS)
def test_spec_reftrace(ex):
    if format_error(ex):
        pytest.fail(f"{os.path.relpath(ex.path)}: {format_error(ex)}", pytrace=False)
    if ex.only == "torch-only":
        pytest.skip("torch-only example: reftrace deliberately differs (see the rule)")
    import reftrace
    check_example(ex, reftrace, "reftrace")


@pytest.mark.parametrize("ex", EXAMPLES, ids=_IDS)
def test_spec_torch(ex):
    if format_error(ex):
        pytest.skip("format error (reported by test_spec_reftrace)")
    if ex.only == "reftrace-only":
        pytest.skip("reftrace-only example: torch deliberately differs (see the rule)")
    try:
        import torch
    except ImportError:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    check_example(ex, torch, "torch")


# -- the runner's own tests (torch-free) ---------------------------------------------------------

_SAMPLE = """# A chapter

```python
print("outside any rule")
```
```expected
outside any rule
```

### AB-1 A rule

````markdown
```python
print("inside a 4-backtick fence: prose, not an example")
```
````

```python
print("a")
print("b")
```

Prose may sit between an example and its result.

```expected
a
b
```

```python reftrace-only
print(1)
```
```expected
1
```

```python
import torch
```
```expected
```

### AB-2 Another rule

~~~python
import warnings
print("before")
warnings.warn("careful: details follow")
raise RuntimeError("a long message")
~~~
~~~expected
before
~~~
~~~warns
UserWarning: careful: ...
~~~
~~~raises
RuntimeError: a long ...
~~~

```python
print(2)
```

```text
any other block ends the example: what follows is not its result
```

```expected
stray
```
"""


def test_parser_on_every_form(tmp_path):
    path = tmp_path / "sample.md"
    path.write_text(_SAMPLE)
    got = [(ex.id, ex.only, ex.expected, ex.warns, ex.raises, bool(format_error(ex)))
           for ex in parse_chapter(str(path))]
    assert got == [
        ("sample:NO-RULE:0", "", "outside any rule\n", None, None, True),   # outside any rule
        ("sample:AB-1:0", "", "a\nb\n", None, None, False),
        ("sample:AB-1:1", "reftrace-only", "1\n", None, None, False),
        ("sample:AB-1:2", "", "", None, None, True),                        # imports torch
        ("sample:AB-2:0", "", "before\n", ["UserWarning: careful: ..."], "RuntimeError: a long ...", False),
        ("sample:AB-2:1", "", None, None, None, True),                      # no result block
        ("sample:AB-2:-1", "", None, None, None, True),                     # result without example
    ]


def test_failures_show_a_diff_and_match_message_prefixes(tmp_path):
    import reftrace
    path = tmp_path / "sample.md"
    path.write_text(_SAMPLE.replace("a\nb\n```", "a\nB\n```"))
    examples = {ex.id: ex for ex in parse_chapter(str(path))}
    with pytest.raises(pytest.fail.Exception) as info:
        check_example(examples["sample:AB-1:0"], reftrace, "reftrace")
    assert "-B\n+b" in str(info.value) and "AB-1, example 0" in str(info.value)
    check_example(examples["sample:AB-2:0"], reftrace, "reftrace")  # '...' matches the rest
    silent = examples["sample:AB-2:0"]
    silent.code = silent.code.replace("warnings.warn", "str")
    with pytest.raises(pytest.fail.Exception, match="missing warnings"):
        check_example(silent, reftrace, "reftrace")


# -- refreshing expected output from torch --------------------------------------------------------

def update_chapter(path):
    """Rewrite the expected/raises blocks of ``path`` with torch's actual output.

    reftrace-only examples have no oracle: their result block is filled from reftrace once,
    when missing, and never overwritten (review it: it states what reftrace does on purpose).
    """
    import torch
    import reftrace
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    edits = []  # (first line index, end line index, replacement lines)
    for ex in parse_chapter(path):
        if ex.error:
            sys.exit(f"{path}: {ex.error}")
        module = torch
        if ex.only == "reftrace-only":
            if ex.blocks:
                continue
            module = reftrace
        out, error, tb, warned = run_example(ex, module)
        new = []
        if out or error is None:
            # one block line per printed line (an example that prints nothing gets an empty block)
            printed = out[:-1] if out.endswith("\n") else out
            new += ["```expected"] + (printed.split("\n") if out else []) + ["```"]
        if ex.warns is not None:  # warns blocks are opt-in: refreshed where a rule has one
            new += ["```warns"] + [w for w in warned if w.split(":")[0] not in NOISE_WARNINGS] + ["```"]
        if error is not None:
            new += ["```raises", error_text(error), "```"]
            print(f"{ex.id}: raises {error_text(error).splitlines()[0]}")
        spans = sorted(ex.blocks.values())
        # replace from the first result block's opening fence to the last one's closing fence;
        # with no result block yet, insert right after the python block's closing fence
        if spans:
            edits.append((spans[0][0] - 1, spans[-1][1] + 1, new))
        else:
            edits.append((ex.code_end + 1, ex.code_end + 1, new))
    for lo, hi, new in sorted(edits, reverse=True):
        lines[lo:hi] = new
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(SPEC_DIR))  # reftrace from this checkout, as conftest.py does
    if len(sys.argv) < 3 or sys.argv[1] != "--update":
        sys.exit("usage: python tests/test_spec.py --update spec/<chapter>.md ...")
    for p in sys.argv[2:]:
        update_chapter(p)
        print(f"updated {p}")
