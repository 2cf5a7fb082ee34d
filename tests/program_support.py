"""Programs run under torch 2.13 and under reftrace, compared by what they observe (shared by
test_autograd_function.py and test_backward_hooks.py).

A program is a function ``prog_<name>(lib)`` written against a library bound to ``lib``; it
returns a list of observations, made comparable with ``seen`` (tensors by shape, dtype,
requires_grad, grad_fn class and rounded values) and ``error`` (an error's type and message).
``Programs(globals())`` collects a test file's programs; its ``tests()`` are the file's two
tests: ``test_matches_torch[name]`` (both libraries, every observation equal; skipped without
torch) and ``test_runs_without_torch[name]`` (reftrace alone).
"""
import warnings

import numpy as np
import pytest

import reftrace

try:  # torch is only the oracle; reftrace never imports it
    import torch as _torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    _torch = None


def seen(v):
    """A comparable picture of a result: tensors by metadata and values, recursively."""
    if hasattr(v, "requires_grad") and hasattr(v, "dtype") and hasattr(v, "shape"):
        fn = v.grad_fn
        return ("tensor", tuple(v.shape), str(v.dtype), v.requires_grad,
                None if fn is None else type(fn).__name__,
                np.round(np.asarray(v.detach().numpy(), dtype=np.float64), 5).tolist())
    if isinstance(v, (tuple, list)):
        return type(v).__name__, [seen(e) for e in v]
    return v


def error(fn):
    """The error ``fn`` raises, as (type name, message); None if it raises nothing."""
    try:
        fn()
    except Exception as e:  # the error itself is what is compared
        return type(e).__name__, str(e)
    return None


class Programs:
    def __init__(self, namespace):
        self.programs = {name[len("prog_"):]: fn for name, fn in sorted(namespace.items())
                         if name.startswith("prog_")}

    def names(self):
        return sorted(self.programs)

    def run(self, lib, name):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch deprecates jit.trace
            return self.programs[name](lib)

    def compare(self, name):
        expected = self.run(_torch, name)
        got = self.run(reftrace, name)
        assert len(got) == len(expected)
        for i, (g, e) in enumerate(zip(got, expected)):
            assert g == e, f"item {i} differs:\n{g}\n---- torch 2.13:\n{e}"

    def tests(self):
        @pytest.mark.skipif(_torch is None, reason="torch 2.13 (the oracle) is not installed")
        @pytest.mark.parametrize("name", self.names())
        def test_matches_torch(name):
            self.compare(name)

        @pytest.mark.parametrize("name", self.names())
        def test_runs_without_torch(name):
            assert self.run(reftrace, name) is not None

        return test_matches_torch, test_runs_without_torch
