"""Run every example of the executable spec (spec/*.md) under reftrace and, when installed, torch.

The format is defined in spec/README.md. In short: a rule is a heading ``### ID-N title``; each
example in it is a ```python block followed by an ```expected block (the exact stdout), a
```warns block (warnings it must emit) and/or a ```raises block (``ErrorType: message``; a
trailing ``...`` matches any rest of a message). ``python reftrace-only`` / ``python torch-only``
mark examples where the two deliberately differ; ``python continues`` runs after the chapter's
previous example, in its namespace (spec/tutorial.md builds its toy tracer that way).

Each example becomes two pytest items, ``test_spec_reftrace[chapter:RULE-N:i]`` (exec with
``torch`` bound to reftrace) and ``test_spec_torch[...]`` (the same text under real torch 2.13,
skipped without it), so the spec is checked against the oracle on every run that has torch.

Refreshing expected output from the oracle (never hand-write it):

    python tests/test_spec.py --update spec/tensors.md

rewrites every result block of the chapter with what torch 2.13 does (a reftrace-only example's
blocks are filled from reftrace once, when missing, and never overwritten).
"""
import difflib
import os
import sys

import pytest

SPEC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spec")
if __name__ == "__main__":  # run as a script (--update): reftrace from this checkout, as conftest.py does
    sys.path.insert(0, os.path.dirname(SPEC_DIR))

# the parser and the example runner live in the package, shared with the conformance runner
from reftrace.conformance.spec_examples import (  # noqa: E402
    NOISE_WARNINGS, parse_chapter, format_error, run_example, _matches, error_text)
from reftrace.conformance import spec_examples as _spec_examples  # noqa: E402


def all_examples():
    return _spec_examples.all_examples(SPEC_DIR)


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


_CONTINUED = """### AB-1 A chapter that builds code step by step

```python continues
print("no example before this one")
```
```expected
```

```python
import warnings
n = 1
print("first")
warnings.warn("from the first")
```
```expected
first
```

```python continues
n += 1
raise ValueError("written to raise")
```
```raises
ValueError: written to raise
```

### AB-2 The chain goes on across rules

```python continues
print(n + 1)
```
```expected
3
```

```python
print("fresh" if "n" not in globals() else n)
```
```expected
fresh
```
"""


def test_continues_runs_the_examples_before_it_in_one_namespace(tmp_path):
    import reftrace
    path = tmp_path / "chain.md"
    path.write_text(_CONTINUED)
    examples = parse_chapter(str(path))
    assert "needs an example before it" in format_error(examples[0])
    assert [len(ex.prelude) for ex in examples] == [0, 0, 1, 2, 0]
    for ex in examples[1:]:
        check_example(ex, reftrace, "reftrace")
    # the earlier examples' output and warnings are theirs, not the continuing example's
    out, error, _tb, warned = run_example(examples[3], reftrace)
    assert (out, error, warned) == ("3\n", None, [])
    # an earlier example's error that is not written down stops the chain, pointing at its line
    examples[2].raises = None
    out, error, tb, _ = run_example(examples[3], reftrace)
    assert isinstance(error, ValueError) and f'chain.md", line {examples[2].line + 1}' in tb


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
