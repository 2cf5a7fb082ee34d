"""Run torch 2.13's own OpInfo database (``op_db``) against reftrace.

For one OpInfo, ``check_opinfo`` runs its sample inputs (and, in the full run, its reference
inputs) under torch and under reftrace and compares what comes out: values (torch.testing's
default tolerances for the dtype), dtype, shape, strides, aliasing of the inputs, raised errors;
then it traces the first sample under ``torch.jit.trace`` and ``reftrace.jit.trace`` and compares
the graphs (``graph.str(False)``) and the traced call's outputs. It raises ``Uncovered`` with the
first difference found, which is the reason an OpInfo stays on the checked-in list
(tests/data/opinfo_uncovered.json) until it passes.

Samples holding something NumPy has no storage for (a bfloat16 or complex32 tensor, a sparse
layout) are skipped; the OpInfo is judged on the others. Inputs go over with their values, dtype, strides and storage offset (a non-contiguous sample
stays non-contiguous). The torch op is the OpInfo's ``op``; the reftrace op is the same torch
name looked up in reftrace (``linalg.det`` -> ``reftrace.linalg.det``); an OpInfo whose ``op`` is
a Python function written in torch's test suite (``lambda x: x.T``) runs that same function with
its global ``torch`` rebound to reftrace.

Only imported when torch is installed (tests/test_opinfo.py skips without it).
"""
import json
import os
import types
import warnings

import numpy as np
import torch

from reftrace._math_bits import resolved_array  # (a conjugate view compares by its values)
import reftrace
from reftrace_backends import get_backend

DATA = os.path.join(os.path.dirname(__file__), "data", "opinfo_uncovered.json")

# torch.testing.assert_close's default tolerances (rtol, atol) per dtype
TOLERANCES = {
    torch.float16: (1e-3, 1e-5), torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5), torch.complex128: (1e-7, 1e-7),
}

# dtypes reftrace has (NumPy has no bfloat16, complex32, float8 or unsigned 16/32/64 storage)
DTYPES = (torch.float32, torch.int64, torch.bool, torch.float64, torch.complex64, torch.int32,
          torch.float16, torch.complex128, torch.int16, torch.int8, torch.uint8)

# ops whose results are random or uninitialised: compared by shape, dtype, strides only
NO_VALUES = {
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "normal", "uniform",
    "multinomial", "rand_like", "randn_like", "randint_like", "randint", "randn", "rand",
    "empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided", "empty_permuted",
    "nn.functional.dropout", "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
    "nn.functional.dropout2d", "nn.functional.dropout3d",
    # a random projection (randn) picks the bases: tests/test_ops_native.py compares U S V^H
    "svd_lowrank", "pca_lowrank",
}


class Uncovered(Exception):
    """Why an OpInfo does not pass (the first difference from torch)."""


class Unrepresentable(Exception):
    """A sample reftrace cannot even hold (a bfloat16 or complex32 tensor, a sparse layout):
    skipped, since NumPy has no such storage."""


def key(opinfo):
    return opinfo.name + ("." + opinfo.variant_test_name if opinfo.variant_test_name else "")


def selected_opinfos():
    """The OpInfos outside torch.nn, in op_db order."""
    from torch.testing._internal.common_methods_invocations import op_db
    return [o for o in op_db if not o.name.startswith("nn.")]


def load_uncovered():
    with open(DATA) as f:
        return json.load(f)


# -- inputs: torch -> reftrace --------------------------------------------------------------------

_DTYPE = {getattr(torch, n): getattr(reftrace, n) for n in (
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
    "complex64", "complex128")}

# dtypes reftrace gives results in but takes no samples of (torch supports them only in part):
# uint64, hash_tensor's result; samples of it stay Unrepresentable
_RESULT_ONLY_DTYPES = (torch.uint64,)


def to_reftrace(v):
    """A torch value (tensors, dtypes, devices, containers of them) as reftrace's."""
    if isinstance(v, torch.Tensor):
        return _tensor(v)
    if isinstance(v, torch.dtype):
        if v not in _DTYPE:
            raise Unrepresentable(f"reftrace has no dtype {v}")
        return _DTYPE[v]
    if isinstance(v, torch.device):
        return reftrace.device(str(v))
    if isinstance(v, torch.memory_format):
        return getattr(reftrace, str(v).split(".")[1])
    if isinstance(v, torch.layout):
        return reftrace.strided
    if isinstance(v, torch.Size):
        return reftrace.Size(v)
    if isinstance(v, torch.Generator):
        raise Uncovered("sample passes a torch.Generator")
    if isinstance(v, (list, tuple)):
        return type(v)(to_reftrace(e) for e in v) if type(v) in (list, tuple) else \
            type(v)(*[to_reftrace(e) for e in v])
    if isinstance(v, dict):
        return {k: to_reftrace(e) for k, e in v.items()}
    return v


def _tensor(t):
    if t.layout != torch.strided:
        raise Unrepresentable(f"sample is a {t.layout} tensor")
    if t.dtype not in _DTYPE:
        raise Unrepresentable(f"reftrace has no dtype {t.dtype}")
    t = t.detach().resolve_conj().resolve_neg()
    n = t.untyped_storage().nbytes() // t.element_size()
    storage = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), 0, (n,), (1,))
    base = reftrace.from_numpy(storage.numpy().copy())
    # (as_strided, not from_numpy: NumPy's strides of an empty array are not torch's)
    return base.as_strided(list(t.shape), list(t.stride()), t.storage_offset())


def tensors_of(v):
    if isinstance(v, (torch.Tensor, reftrace.Tensor)):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for e in v for t in tensors_of(e)]
    if isinstance(v, dict):
        return [t for e in v.values() for t in tensors_of(e)]
    return []


# -- the op under reftrace ------------------------------------------------------------------------

class _TorchAsReftrace(types.ModuleType):
    """The ``torch`` a test-suite lambda sees when run under reftrace: reftrace, with torch's
    dtypes mapped (``torch.float32`` inside a lambda means reftrace's)."""

    def __getattr__(self, name):
        return getattr(reftrace, name)


_SHIM = _TorchAsReftrace("torch")


def reftrace_op(opinfo):
    """The reftrace callable for ``opinfo.op``; raises Uncovered when reftrace lacks it."""
    op = opinfo.op
    if isinstance(op, types.FunctionType) and op.__module__.startswith("torch.testing"):
        # a function from torch's test suite (lambda x: x.T): run it with torch -> reftrace
        glob = dict(op.__globals__)
        glob["torch"] = _SHIM
        return types.FunctionType(op.__code__, glob, op.__name__, op.__defaults__, op.__closure__)
    aten = _aten_op(op)
    if aten is not None:
        return aten
    target = reftrace
    for part in opinfo.name.split("."):
        target = getattr(target, part, None)
        if target is None:
            break
    if target is None and getattr(op, "__qualname__", "").startswith("Tensor.") \
            and hasattr(reftrace.Tensor, op.__name__):
        # torch._tensor's Python operators (Tensor.__rmod__), called unbound as OpInfo does:
        # their self may be a Python number
        return getattr(reftrace.Tensor, op.__name__)
    if isinstance(target, reftrace.dtype):  # torch.cfloat is a dtype: the op is Tensor.cfloat
        target = None
    if target is None and opinfo.method_variant is not None:
        name = opinfo.name
        if not hasattr(reftrace.Tensor, name):
            raise Uncovered(f"reftrace lacks Tensor.{name}")
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    if target is None:
        raise Uncovered(f"reftrace lacks torch.{opinfo.name}")
    return target


def _aten_op(op):
    """``torch.ops.aten.X[.overload]`` (and torch._C._nn builtins, which torch exposes nowhere
    else) as reftrace.ops.aten's; None for other callables."""
    import torch._ops
    if isinstance(op, torch._ops.OpOverloadPacket):
        name, overload = op._qualified_op_name.split("::")[1], ""
    elif isinstance(op, torch._ops.OpOverload):
        name, overload = op._schema.name.split("::")[1], op._overloadname
    elif getattr(op, "__module__", None) == "torch._C._nn":
        name, overload = op.__name__, ""
    else:
        return None
    packet = getattr(reftrace.ops.aten, name, None)
    if packet is None:
        raise Uncovered(f"reftrace lacks torch.ops.aten.{name}")
    return getattr(packet, overload) if overload else packet


# -- comparing ------------------------------------------------------------------------------------

def _message(e):
    import re
    msg = str(e).split("\nException raised from")[0]
    return re.sub(r"\s+", " ", msg).strip()


def compare(rt, th, *, inputs=((), ()), values=True, path="result"):
    """Raise Uncovered at the first difference between a reftrace and a torch result."""
    if isinstance(th, torch.Tensor):
        if not isinstance(rt, reftrace.Tensor):
            raise Uncovered(f"{path}: torch gives a Tensor, reftrace {type(rt).__name__}")
        if tuple(rt.shape) != tuple(th.shape):
            raise Uncovered(f"{path}: shape {tuple(rt.shape)}, torch {tuple(th.shape)}")
        if str(rt.dtype) != str(th.dtype):
            raise Uncovered(f"{path}: dtype {rt.dtype}, torch {th.dtype}")
        if th.layout == torch.strided and rt.stride() != th.stride():
            raise Uncovered(f"{path}: strides {rt.stride()}, torch {th.stride()}")
        rt_in, th_in = inputs
        ptr = th.untyped_storage().data_ptr()
        a = [] if not ptr else [i for i, x in enumerate(rt_in) if _shares(rt, x)]
        b = [i for i, x in enumerate(th_in) if ptr and ptr == x.untyped_storage().data_ptr()]
        if a != b:
            raise Uncovered(f"{path}: aliases inputs {a}, torch {b}")
        if values:
            if th.dtype not in _DTYPE and th.dtype not in _RESULT_ONLY_DTYPES:
                raise Uncovered(f"{path}: reftrace has no dtype {th.dtype}")
            expected = th.detach().resolve_conj().resolve_neg().numpy()
            actual = np.asarray(get_backend(rt.device.type).to_host(resolved_array(rt)))
            if th.dtype.is_floating_point or th.dtype.is_complex:
                rtol, atol = TOLERANCES[th.dtype]
                close = np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
                if not close.all():
                    i = np.argwhere(~close)[0]
                    raise Uncovered(f"{path}: values differ ({(~close).sum()} of {close.size}; "
                                    f"at {tuple(i)}: {actual[tuple(i)]} vs torch {expected[tuple(i)]})")
            elif not np.array_equal(actual, expected):
                raise Uncovered(f"{path}: values differ")
        return
    if isinstance(th, (tuple, list)):
        if not isinstance(rt, (tuple, list)) or len(rt) != len(th):
            raise Uncovered(f"{path}: torch gives {type(th).__name__} of {len(th)}, reftrace {rt!r:.60}")
        for i, (r, t) in enumerate(zip(rt, th)):
            compare(r, t, inputs=inputs, values=values, path=f"{path}[{i}]")
        return
    if isinstance(th, torch.dtype):
        if str(rt) != str(th):
            raise Uncovered(f"{path}: {rt}, torch {th}")
        return
    if isinstance(th, float) and isinstance(rt, float):
        if not (rt == th or np.isclose(rt, th, rtol=1.3e-6, atol=1e-5, equal_nan=True)):
            raise Uncovered(f"{path}: {rt}, torch {th}")
        return
    if type(rt) is not type(th) or rt != th:
        raise Uncovered(f"{path}: {rt!r:.60}, torch {th!r:.60}")


def _shares(rt, x):
    try:
        return rt.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    except Exception:
        return False


def _call(fn, inp, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(inp, *args, **kwargs), None
        except Exception as e:
            return None, e


def check_sample(opinfo, rt_fn, sample, values):
    th_in = tensors_of([sample.input, sample.args, sample.kwargs])
    rt_inp, rt_args, rt_kwargs = to_reftrace([sample.input, list(sample.args), sample.kwargs])
    rt_in = tensors_of([rt_inp, rt_args, rt_kwargs])
    th, th_err = _call(opinfo.op, sample.input, sample.args, sample.kwargs)
    rt, rt_err = _call(rt_fn, rt_inp, rt_args, rt_kwargs)
    if th_err is not None:
        if rt_err is None:
            raise Uncovered(f"torch raises {type(th_err).__name__}: {_message(th_err)[:100]}; reftrace returns")
        if type(rt_err).__name__ != type(th_err).__name__ or _message(rt_err) != _message(th_err):
            raise Uncovered(f"error {type(rt_err).__name__}: {_message(rt_err)[:100]}; "
                            f"torch {type(th_err).__name__}: {_message(th_err)[:100]}")
        return
    if rt_err is not None:
        raise Uncovered(f"reftrace raises {type(rt_err).__name__}: {_message(rt_err)[:160]}")
    compare(rt, th, inputs=(rt_in, th_in), values=values)
    # the inputs after the call (in-place and out= ops write them)
    compare(rt_in, th_in, values=values, path="inputs after the call")


def check_trace(opinfo, rt_fn, sample, values):
    """Trace the sample under both libraries: same graph, and the traced call gives eager's."""
    th_leaves = tensors_of([sample.input, sample.args, sample.kwargs])
    if not th_leaves:
        return
    structure = [sample.input, list(sample.args), dict(sample.kwargs)]

    def rebuild(v, it):
        if isinstance(v, (torch.Tensor, reftrace.Tensor)):
            return next(it)
        if isinstance(v, (list, tuple)):
            items = [rebuild(e, it) for e in v]
            return type(v)(items) if type(v) in (list, tuple) else type(v)(*items)
        if isinstance(v, dict):
            return {k: rebuild(e, it) for k, e in v.items()}
        return v

    def make(fn, conv, n):
        struct = conv(structure) if conv else structure

        def call(leaves):
            inp, args, kwargs = rebuild(struct, iter(leaves))
            return fn(inp, *args, **kwargs)
        # explicit parameters (t0, t1, ...): both tracers name graph inputs after them
        params = ", ".join(f"t{i}" for i in range(n))
        scope = {"call": call, "__name__": __name__}
        exec(f"def traced_fn({params}):\n    return call([{params}])\n", scope)
        return scope["traced_fn"]

    rt_leaves = [to_reftrace(t).clone() for t in th_leaves]
    th_leaves = [t.clone() for t in th_leaves]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            th_tr = torch.jit.trace(make(opinfo.op, None, len(th_leaves)), tuple(th_leaves), check_trace=False)
            th_err = None
        except Exception as e:
            th_tr, th_err = None, e
        try:
            rt_tr = reftrace.jit.trace(make(rt_fn, to_reftrace, len(rt_leaves)), tuple(rt_leaves), check_trace=False)
            rt_err = None
        except Exception as e:
            rt_tr, rt_err = None, e
    if th_err is not None:
        if rt_err is None:
            raise Uncovered(f"trace: torch raises {type(th_err).__name__}: {_message(th_err)[:100]}")
        if type(rt_err).__name__ != type(th_err).__name__:
            raise Uncovered(f"trace: reftrace raises {type(rt_err).__name__}, torch {type(th_err).__name__}")
        return
    if rt_err is not None:
        raise Uncovered(f"trace: reftrace raises {type(rt_err).__name__}: {_message(rt_err)[:160]}")
    g_th, g_rt = th_tr.graph.str(False), rt_tr.graph.str(False)
    if g_th != g_rt:
        import difflib
        diff = [ln for ln in difflib.unified_diff(g_th.splitlines(), g_rt.splitlines(), lineterm="", n=0)
                if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
        raise Uncovered("trace: graph differs: " + " | ".join(diff[:2])[:200])
    th_out, th_err = _call(th_tr, th_leaves[0].clone(), [t.clone() for t in th_leaves[1:]], {})
    rt_out, rt_err = _call(rt_tr, rt_leaves[0].clone(), [t.clone() for t in rt_leaves[1:]], {})
    if (th_err is None) != (rt_err is None):
        raise Uncovered(f"traced call: torch {th_err!r:.80}, reftrace {rt_err!r:.80}")
    if th_err is None:
        compare(rt_out, th_out, values=values, path="traced call")


def _dtype_for(opinfo, full):
    supported = opinfo.supported_dtypes("cpu")
    ours = [d for d in DTYPES if d in supported]
    if not ours:
        raise Uncovered("no dtype reftrace has: " + ", ".join(sorted(str(d) for d in supported))[:120])
    return ours if full else ours[:1]


def check_opinfo(opinfo, full=False):
    """Raise Uncovered with the first difference from torch; None when every sample matches.
    Default: the first sample of the first dtype reftrace has; ``full``: every dtype, every
    reference input."""
    rt_fn = reftrace_op(opinfo)
    values = opinfo.name not in NO_VALUES
    for i, dtype in enumerate(_dtype_for(opinfo, full)):
        torch.manual_seed(0)
        samples = (opinfo.reference_inputs if full else opinfo.sample_inputs)("cpu", dtype, requires_grad=False)
        checked = 0
        for j, sample in enumerate(samples):
            try:
                check_sample(opinfo, rt_fn, sample, values)
                if checked == 0 and i == 0:
                    check_trace(opinfo, rt_fn, sample, values)
            except Unrepresentable:
                continue  # (NumPy has no such storage: not a difference from torch)
            except Uncovered as e:
                raise Uncovered(f"{str(dtype)[6:]} sample {j}: {e}") from None
            checked += 1
            if not full:
                break
