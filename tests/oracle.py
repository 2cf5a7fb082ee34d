"""Run the same program under torch 2.13 and reftrace and compare what comes out.

    check(lambda m, x, y: m.add(x, y, alpha=2), arr_a, arr_b)

``m`` is the module (torch or reftrace); NumPy-array arguments become tensors of each library
(same dtype, contiguous; call ``.t()`` etc. inside the lambda for other layouts); other
arguments pass through unchanged. Compared, recursively through tuples/lists: tensor shape,
dtype, strides, requires_grad, values (exact for integral/bool, tolerances for floats, NaNs
equal), which input's storage each output shares (aliasing), Python numbers/bools, and raised
errors (type and message). The torch side is skipped cleanly when torch is not installed.
"""
import re

import numpy as np
import pytest

import reftrace
from reftrace._math_bits import resolved_array  # (a conjugate view compares by its values)
from reftrace_backends import get_backend

try:  # torch is only the oracle; reftrace never imports it
    import torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    torch = None

requires_torch = pytest.mark.skipif(torch is None, reason="torch 2.13 (the oracle) is not installed")


def _convert(module, value):
    if isinstance(value, np.ndarray):
        if module is reftrace:
            return reftrace.from_numpy(value.copy())
        return torch.from_numpy(value.copy())
    if isinstance(value, (list, tuple)) and value and any(isinstance(v, np.ndarray) for v in value):
        return type(value)(_convert(module, v) for v in value)
    return value


def _run(module, fn, args, kwargs):
    conv_args = [_convert(module, a) for a in args]
    conv_kwargs = {k: _convert(module, v) for k, v in kwargs.items()}
    try:
        return fn(module, *conv_args, **conv_kwargs), None, conv_args
    except Exception as e:  # the error itself is compared
        return None, e, conv_args


def _storage_of(t):
    return t.untyped_storage().data_ptr()


def _alias_index(t, inputs, is_torch):
    """Which input tensor's storage ``t`` shares (-1: none)."""
    for i, a in enumerate(inputs):
        if (torch is not None and is_torch and isinstance(a, torch.Tensor)) or \
                (not is_torch and isinstance(a, reftrace.Tensor)):
            if _storage_of(a) == _storage_of(t):
                return i
    return -1


def assert_same(rt, th, *, atol=1e-5, rtol=1.3e-6, rt_inputs=(), th_inputs=(), path="result",
                check_stride=True, check_values=True):
    """Assert a reftrace result equals a torch result (see module docstring)."""
    if torch is not None and isinstance(th, torch.Tensor):
        assert isinstance(rt, reftrace.Tensor), f"{path}: torch gave a Tensor, reftrace {type(rt).__name__}"
        assert tuple(rt.shape) == tuple(th.shape), f"{path}: shape {tuple(rt.shape)} != torch {tuple(th.shape)}"
        assert str(rt.dtype) == str(th.dtype), f"{path}: dtype {rt.dtype} != torch {th.dtype}"
        if check_stride:
            assert rt.stride() == th.stride(), f"{path}: strides {rt.stride()} != torch {th.stride()}"
        assert rt.requires_grad == th.requires_grad, f"{path}: requires_grad {rt.requires_grad} != torch {th.requires_grad}"
        if rt_inputs:
            a, b = _alias_index(rt, rt_inputs, False), _alias_index(th, th_inputs, True)
            assert a == b, f"{path}: aliases input {a}, torch's aliases input {b}"
        if check_values:
            expected = th.detach().resolve_conj().resolve_neg().numpy()
            actual = np.asarray(get_backend(rt.device.type).to_host(resolved_array(rt)))
            if th.dtype.is_floating_point or th.dtype.is_complex:
                np.testing.assert_allclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True,
                                           err_msg=path)
            else:
                np.testing.assert_array_equal(actual, expected, err_msg=path)
        return
    if isinstance(th, (tuple, list)):
        assert isinstance(rt, (tuple, list)), f"{path}: torch gave {type(th).__name__}, reftrace {type(rt).__name__}"
        assert len(rt) == len(th), f"{path}: {len(rt)} items, torch {len(th)}"
        for i, (r, t) in enumerate(zip(rt, th)):
            assert_same(r, t, atol=atol, rtol=rtol, rt_inputs=rt_inputs, th_inputs=th_inputs,
                        path=f"{path}[{i}]", check_stride=check_stride, check_values=check_values)
        if hasattr(th, "_fields"):
            assert getattr(rt, "_fields", None) == th._fields, f"{path}: named fields differ"
        return
    if torch is not None and isinstance(th, torch.dtype):
        assert str(rt) == str(th), f"{path}: {rt} != torch {th}"
        return
    if isinstance(th, float) and isinstance(rt, float):
        assert rt == pytest.approx(th, rel=rtol, abs=atol, nan_ok=True), f"{path}: {rt} != torch {th}"
        return
    assert type(rt) is type(th) or (isinstance(th, tuple) and isinstance(rt, tuple)), \
        f"{path}: type {type(rt).__name__} != torch {type(th).__name__}"
    assert rt == th, f"{path}: {rt!r} != torch {th!r}"


def normalize_message(msg):
    """Drop what legitimately differs between the two libraries' error texts (C++ frames, hints)."""
    msg = str(msg).split("\nException raised from")[0]
    return re.sub(r"\s+", " ", msg).strip()


def check(fn, *args, atol=1e-5, rtol=1.3e-6, check_stride=True, check_values=True,
          check_message=True, **kwargs):
    """Run ``fn(module, *args)`` under torch and reftrace; assert identical results or errors.
    Without torch the calling test is skipped (a mark on a helper would do nothing)."""
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    th, th_err, th_inputs = _run(torch, fn, args, kwargs)
    rt, rt_err, rt_inputs = _run(reftrace, fn, args, kwargs)
    if th_err is not None:
        assert rt_err is not None, f"torch raised {type(th_err).__name__}: {th_err}; reftrace returned {rt!r}"
        assert type(rt_err).__name__ == type(th_err).__name__ or \
            isinstance(rt_err, type(th_err)), \
            f"error type {type(rt_err).__name__} != torch {type(th_err).__name__} ({th_err})"
        if check_message:
            assert normalize_message(rt_err) == normalize_message(th_err), \
                f"message:\n  reftrace: {normalize_message(rt_err)}\n  torch:    {normalize_message(th_err)}"
        return
    if rt_err is not None:
        raise AssertionError(f"reftrace raised but torch did not: {type(rt_err).__name__}: {rt_err}") from rt_err
    assert_same(rt, th, atol=atol, rtol=rtol, rt_inputs=rt_inputs, th_inputs=th_inputs,
                check_stride=check_stride, check_values=check_values)
    # in-place ops: the inputs themselves must have changed identically
    for i, (r, t) in enumerate(zip(rt_inputs, th_inputs)):
        if isinstance(r, reftrace.Tensor):
            assert_same(r, t, atol=atol, rtol=rtol, path=f"input {i} after the call",
                        check_stride=check_stride, check_values=check_values)


def sample(shape, dtype="float32", low=-3, high=3, seed=0):
    """A deterministic NumPy array for op tests (bools and ints drawn in range)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        lo = 0 if np.dtype(dtype).kind == "u" else low
        return rng.integers(lo, high + 1, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)
