"""Run one program text under torch 2.13 and under reftrace and compare what comes out.

A program is Python source with ``torch`` (and ``F``, ``nn``) bound to the library under test;
it sets ``r`` to what is compared. ``outcome`` returns ('ok', text) or ('error', type name,
first line of the message), with what legitimately differs between the two libraries removed
(object addresses, file names and line numbers, the Tensor class's module).
"""
import re
import traceback
import warnings

import reftrace

try:  # torch is only the oracle
    import torch
except ImportError:  # pragma: no cover - torch-free machines
    torch = None

LIBS = (("torch", torch), ("reftrace", reftrace))
# exceptions that, raised from inside reftrace, are its internals showing (unless torch raises
# the same type for the same input)
INTERNAL = (AttributeError, IndexError, KeyError, ZeroDivisionError, UnboundLocalError, NameError,
            RecursionError, AssertionError)


def normalize(text):
    text = re.sub(r"0x[0-9a-f]+", "0x?", str(text))
    text = re.sub(r" # [^\n]*", "", text)                      # source locations in graphs
    text = re.sub(r"___torch_mangle_\d+\.", "", text)
    text = text.replace("reftrace._tensor.Tensor", "torch.Tensor")
    return text.strip()


def run(lib, src):
    """The program's result ``r`` (or the exception it raised)."""
    g = {"__name__": "__main__", "torch": lib, "F": lib.nn.functional, "nn": lib.nn}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(src, "<program>", "exec"), g)
    return g.get("r")


def outcome(lib, src):
    try:
        r = run(lib, src)
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return ("error", type(e).__name__, normalize(str(e).split("\n")[0]), e)
    return ("ok", normalize(r if isinstance(r, str) else repr(r)))


def raised_inside_reftrace(e):
    """Whether the innermost frame of ``e``'s traceback is reftrace's (or NumPy's) code."""
    frames = traceback.extract_tb(e.__traceback__)
    return bool(frames) and ("/reftrace/" in frames[-1].filename or "/numpy/" in frames[-1].filename)


def is_internal_error(rt, th=None):
    """reftrace's outcome shows its internals: an AttributeError/IndexError/... (or a NumPy error)
    from its own code, where torch did not raise that same type."""
    if rt[0] != "error":
        return False
    e = rt[3]
    if th is not None and th[0] == "error" and th[1] == rt[1]:
        return False
    if type(e).__name__ == "NotImplementedInReftrace":
        return False  # the missing-feature error: it names the torch function reftrace lacks
    if isinstance(e, AssertionError) and str(e) == "Torch not compiled with CUDA enabled":
        return False  # torch's own type and words for CUDA on a CPU-only build
    numpy_error = type(e).__module__.startswith("numpy") or "/numpy/" in \
        (traceback.extract_tb(e.__traceback__)[-1].filename if e.__traceback__ else "")
    return numpy_error or (isinstance(e, INTERNAL) and raised_inside_reftrace(e))


def graph(g):
    """Graph text without source locations and class-name mangles."""
    return normalize("\n".join(l.split(" # ")[0].rstrip() for l in str(g).splitlines()))


# Python's own words for a failure inside code (not an argument check): seen from reftrace's
# internals they mean an unchecked input reached an implementation detail
_PYTHON_INTERNAL_WORDS = ("index out of range", "object is not iterable", "object is not subscriptable",
                          "unsupported operand type", "has no len()", "object is not callable",
                          "has no attribute", "argument must be", "cannot unpack", "not supported between")


def looks_internal(e):
    """Without torch to compare with: is ``e`` reftrace's internals showing? AttributeError,
    KeyError ... raised in reftrace, NumPy's errors, or an IndexError/TypeError/ValueError in
    Python's own words raised in reftrace (torch raises IndexError 'Dimension out of range' and
    TypeErrors of its own, which are fine)."""
    if not is_internal_error(("error", type(e).__name__, str(e), e)):
        return isinstance(e, (TypeError, ValueError)) and raised_inside_reftrace(e) and \
            any(w in str(e) for w in _PYTHON_INTERNAL_WORDS)
    if isinstance(e, (AttributeError, IndexError)):  # torch raises these too, in its own words
        return any(w in str(e) for w in _PYTHON_INTERNAL_WORDS)
    return True
