"""Which Python frames the tracer treats as "the caller" of an op.

torch's tracer takes source locations and value names from the innermost Python frame that
called into C++. For ops torch implements in Python (``Tensor.__floordiv__``, ``__rsub__``,
``torch.norm``, ``Tensor.split`` ... in torch/_tensor.py and torch/functional.py) that frame is
torch's own function, whose locals are ``self`` and ``other``: so ``n // 2`` leaves ``n``
unnamed. reftrace's equivalents are marked with ``@python_level`` so the tracer stops at their
frames too; every other reftrace frame is machinery and is skipped.
"""
import os
import sys
from typing import Any, Callable, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

PYTHON_LEVEL_CODES = set()


def python_level(fn: _F) -> _F:
    """Mark a function that mirrors one torch implements in Python."""
    PYTHON_LEVEL_CODES.add(fn.__code__)
    return fn


_REFTRACE_DIR = os.path.dirname(os.path.abspath(__file__))
# Frames in these directories are reftrace's machinery, never the caller. reftrace/nn and
# reftrace/masked are not among them: like torch/nn/functional.py and torch/masked/_ops.py,
# their frames name values and give source locations.
_PYTHON_DIRS = tuple(os.path.join(_REFTRACE_DIR, d) + os.sep for d in ("nn", "masked"))


def _is_internal(filename):
    # a trace's generated code (jit/codegen.py names it '<reftrace-codegen-N:name>') is
    # machinery too: a warning raised in a traced call points at the caller's line, as torch's do
    return (filename.startswith(_REFTRACE_DIR) and not filename.startswith(_PYTHON_DIRS)) or \
        filename.startswith("<reftrace-codegen")


# filename -> _is_internal(filename), for files on disk (a trace's generated code has a new
# '<reftrace-codegen-N>' name per graph: those are not kept). The tracer asks once per op and
# per named value, usually about the same few files.
_INTERNAL_FILES = {}


def _internal_file(filename):
    internal = _is_internal(filename)
    if not filename.startswith("<"):
        _INTERNAL_FILES[filename] = internal
    return internal


def _outside_machinery(f):
    """``f`` or the first frame out from it that is not reftrace's machinery."""
    while f is not None:
        code = f.f_code
        internal = _INTERNAL_FILES.get(code.co_filename)
        if internal is None:
            internal = _internal_file(code.co_filename)
        if not internal or code in PYTHON_LEVEL_CODES:
            return f
        f = f.f_back
    return None


def user_frame():
    """The innermost Python frame outside reftrace's machinery (torch: the innermost Python
    frame, the one that called into C++): where names are looked up and locations and warnings
    point. Functions marked @python_level count as callers."""
    return _outside_machinery(sys._getframe(2))


def python_caller(f):
    """The frame that called the @python_level function running in ``f`` (the frame a warning
    torch raises there with ``stacklevel=2`` points at): its caller, machinery skipped."""
    return _outside_machinery(f.f_back)


def warning_frame(stacklevel=1):
    """The frame a warning raised here points at (see warn_at_caller)."""
    f = user_frame()
    if stacklevel == 2 and f is not None and f.f_code in PYTHON_LEVEL_CODES:
        f = python_caller(f)
    return f


def warn_at_caller(message, category=UserWarning, stacklevel=1):
    """warnings.warn attributed to the user's frame, as torch's C++ warnings are. torch's own
    Python functions warn with ``stacklevel=2``: pass it for their reftrace equivalents (marked
    @python_level), and the warning points at their caller."""
    import warnings
    f = warning_frame(stacklevel)
    if f is None:
        warnings.warn(message, category)
        return
    warnings.warn_explicit(message, category, f.f_code.co_filename, f.f_lineno,
                           module=f.f_globals.get("__name__", ""),
                           registry=f.f_globals.setdefault("__warningregistry__", {}))
