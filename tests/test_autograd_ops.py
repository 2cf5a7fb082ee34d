"""Every differentiable op: first- and second-order gradients and grad_fn names against torch.

Inputs come from torch's OpInfo database (``op_db``: its sample inputs, in float64, with
requires_grad where the samples have it); the same program runs under torch and reftrace
(``autograd_oracle.compare_grads``): outputs, ``type(out.grad_fn).__name__``, gradients of the
outputs with respect to every input (values, dtype, shape, None-ness) and, where the OpInfo says
torch supports it, second-order gradients (create_graph=True).

By default the first sample of each op runs (the suite stays fast); ``REFTRACE_FULL=1`` runs
every sample. Ops op_db lacks, or whose reftrace binding differs from the OpInfo's callable, get
hand-picked programs (HAND below).
"""
import itertools
import os
import types

import numpy as np
import pytest

import reftrace
from autograd_oracle import compare_grads, to_reftrace

try:  # torch is the oracle: without it these tests skip
    import torch
except ImportError:  # pragma: no cover - torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)
pytestmark = pytest.mark.filterwarnings("ignore")

FULL = os.environ.get("REFTRACE_FULL") == "1"
N_SAMPLES = None if FULL else 1

# OpInfos whose sample programs cannot be compared here, each with the reason
NOT_COMPARABLE = {
    "normal": "random: torch and reftrace draw different numbers",
    "bernoulli": "random: torch and reftrace draw different numbers",
    "nn.functional.dropout": "random: torch and reftrace draw different masks",
    "nn.functional.dropout2d": "random: torch and reftrace draw different masks",
    "nn.functional.rrelu": "random: torch and reftrace draw different slopes (covered by HAND "
                           "in eval mode and by test_rrelu_training_gradient_is_its_slope)",
    "T": "a property, not a callable (covered by HAND)",
    "mT": "a property, not a callable (covered by HAND)",
    "where": "op_db's lambda reorders the arguments (covered by HAND)",
    "polygamma": "op_db's lambda reorders the arguments: torch.polygamma(n, x) (covered by HAND)",
    "special.polygamma": "op_db's lambda reorders the arguments (covered by HAND: polygamma)",
    "zero_": "op_db applies it to a leaf that requires grad: both libraries refuse (engine test)",
    "nn.functional.one_hot": "integer op (not differentiable)",
    "nn.functional.embedding": "op_db's sample lambda indexes by a float tensor (covered by HAND)",
    "istft": "op_db's istft takes complex inputs only: its float64 samples raise in torch too",
    "svd_lowrank": "random: the bases come from randn, and torch and reftrace draw different numbers",
    "pca_lowrank": "random: the bases come from randn, and torch and reftrace draw different numbers",
    "view_as_real": "op_db's float64 samples are real: torch itself refuses them (complex "
                    "gradients: tests/test_complex.py)",
    "imag": "op_db's float64 samples are real: torch itself refuses them (complex gradients: "
            "tests/test_complex.py)",
    "max_pool2d_with_indices_backward": "op_db's binding takes keyword names reftrace's schema "
                                        "does not (the op itself is covered through max_pool2d)",
}

# OpInfos whose first-order gradients are compared, not their second order, each with the reason
FIRST_ORDER_ONLY = {
    "nn.functional.ctc_loss": "torch has no derivative for _ctc_loss_backward (its OpInfo skips "
                              "gradgrad), nor has reftrace",
}

# OpInfos whose samples draw random numbers (dropout: torch and reftrace draw different masks):
# their samples run with these keyword arguments, which turn the randomness off
WITHOUT_RANDOMNESS = {
    "nn.functional.scaled_dot_product_attention": {"dropout_p": 0.0},
    # its one gradient sample has dropout 0.5 in training (graph: test_mha_dropout_graph_is_torchs)
    "nn.functional.multi_head_attention_forward": {"training": False},
}

# Known gaps: these run and are expected to fail until implemented (keyed by test id: the
# OpInfo name, with its variant_test_name after a dot where the gap is one variant's)
KNOWN_GAPS = {
    "linalg.eig": "its samples differentiate (L, V) as they are (op_db's output_process_fn_grad, "
                  "(L, |V|), is not applied here): torch itself refuses the phase-dependent "
                  "complex loss, and LAPACK builds pick different phases (real input: signs) for V "
                  "(covered by HAND: linalg.eig_abs_vectors)",
    "chalf": "reftrace has no complex32 (NumPy has no complex32 dtype)",
    "linalg.eigh": "forward: reftrace's eigenvector signs differ from LAPACK's syevd (the gradient formula is ported)",
}


# Complex gradients (complex128 samples) that are not torch's yet, beyond KNOWN_GAPS
KNOWN_COMPLEX_GAPS = {
}


def _op_infos():
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    except Exception:  # pragma: no cover - torch without its testing package
        return []
    return [info for info in op_db if info.supports_autograd and _resolve(info.name) is not None]


def _resolve(name):
    obj = reftrace
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is None or isinstance(obj, reftrace.dtype):
        method = getattr(reftrace.Tensor, name, None)
        if method is None:
            return None
        if isinstance(method, property):  # x.T, x.H ...: attributes, as on torch's Tensor
            return lambda x: method.fget(x)
        return lambda x, *a, **k: method(x, *a, **k)
    return obj


def _is_wrapper(op):
    return isinstance(op, types.FunctionType) and op.__module__.startswith("torch.testing")


def _params(gaps, complex_=False):
    out = []
    for info in _op_infos():
        if complex_ and torch.complex128 not in info.supported_backward_dtypes("cpu"):
            continue
        # the test id names the OpInfo variant (norm.nuc, nn.functional.pad.circular): a gap is
        # keyed by that id, or by the OpInfo name when every variant has it
        test_id = f"{info.name}.{info.variant_test_name}" if info.variant_test_name else info.name
        reason = gaps.get(test_id, gaps.get(info.name))
        marks = [pytest.mark.xfail(reason=reason)] if reason else []
        out.append(pytest.param(info, marks=marks, id=test_id))
    return out


@pytest.mark.parametrize("info", _params(KNOWN_GAPS))
def test_op_gradients_match_torch(info):
    _check_gradients(info, torch.float64)


@pytest.mark.parametrize("info", _params({**KNOWN_GAPS, **KNOWN_COMPLEX_GAPS}, complex_=True))
def test_op_complex_gradients_match_torch(info):
    """As torch's test_ops gradcheck does, the complex128 samples too (complex outputs: complex
    random grad_outputs; the second order differentiates Re(sum(g * u)))."""
    _check_gradients(info, torch.complex128)


def _check_gradients(info, dtype):
    if info.name in NOT_COMPARABLE:
        pytest.skip(NOT_COMPARABLE[info.name])
    # op_db's own wrappers (linalg.pinv.singular: `lambda a, b: pinv(a @ b.mT)`) run as written,
    # with torch -> reftrace; other OpInfos call reftrace's op of the same name
    from opinfo_support import reftrace_op  # (imports torch: only where torch is)
    fn_rt = reftrace_op(info) if _is_wrapper(info.op) else _resolve(info.name)
    samples = info.sample_inputs("cpu", dtype, requires_grad=True)
    for sample in itertools.islice(samples, N_SAMPLES):
        kwargs = {**sample.kwargs, **WITHOUT_RANDOMNESS.get(info.name, {})}

        def program(m, inp, *args):
            if m is torch:
                return info.op(inp, *args, **kwargs)
            return fn_rt(inp, *args, **to_reftrace(kwargs))
        compare_grads(program, [sample.input, *sample.args],
                      second_order=info.supports_gradgrad and info.name not in FIRST_ORDER_ONLY)


def _t(*shape, seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.uniform(low, high, shape)).requires_grad_()


def _c(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).requires_grad_()


def _eig_abs(m, x):
    # linalg.eig's OpInfo differentiates (L, |V|): V is defined up to a phase per column (its
    # loss must not depend on it), and LAPACK builds differ in the phase they pick
    L, V = m.linalg.eig(x)
    return L, V.abs()


def _idx(*values):
    return torch.tensor(values)


# hand-picked programs: ops op_db has no sample for, bindings it calls differently, in-place ops
HAND = {
    "T": (lambda m, x: x.T, [_t(3, 4)]),
    "mT": (lambda m, x: x.mT, [_t(2, 3, 4)]),
    "where": (lambda m, x, y: m.where(x > 0, x, y), [_t(3, 4), _t(3, 4, seed=1)]),
    "where_scalar": (lambda m, x: m.where(x > 0, x, 0.5), [_t(3, 4)]),
    "polygamma_1": (lambda m, x: m.polygamma(1, x), [_t(3, 4, low=0.5, high=2.0)]),
    "polygamma_3": (lambda m, x: m.special.polygamma(3, x), [_t(3, 4, low=0.5, high=2.0)]),
    # igamma / igammac: differentiable in other only (op_db's OpInfos run no gradient)
    "igamma_other": (lambda m, a, x: m.igamma(a, x), [_t(3, 4, low=0.5, high=3.0).detach(),
                                                      _t(3, 4, seed=1, low=0.1, high=4.0)]),
    "igammac_other": (lambda m, a, x: m.special.gammaincc(a, x), [_t(3, 4, low=0.5, high=3.0).detach(),
                                                                  _t(3, 4, seed=1, low=0.1, high=4.0)]),
    "embedding": (lambda m, w: m.nn.functional.embedding(m.tensor([[0, 2], [1, 0]]), w), [_t(4, 3)]),
    "embedding_padding": (lambda m, w: m.nn.functional.embedding(m.tensor([0, 2, 0]), w,
                                                                 padding_idx=0), [_t(4, 3)]),
    "linear_3d": (lambda m, x, w, b: m.nn.functional.linear(x, w, b),
                  [_t(2, 3, 4), _t(5, 4, seed=1), _t(5, seed=2)]),
    "matmul_batched": (lambda m, x, y: x @ y, [_t(2, 3, 4), _t(2, 4, 5, seed=1)]),
    "matmul_fold": (lambda m, x, y: x @ y, [_t(2, 3, 4), _t(4, 5, seed=1)]),
    "matmul_vec_mat": (lambda m, x, y: x @ y, [_t(4), _t(4, 5, seed=1)]),
    "getitem_int": (lambda m, x: x[1], [_t(3, 4)]),
    "getitem_slice": (lambda m, x: x[:, 1::2], [_t(3, 4)]),
    "getitem_tensor": (lambda m, x: x[m.tensor([0, 2, 0])], [_t(3, 4)]),
    "getitem_mask": (lambda m, x: x[x > 0], [_t(3, 4)]),
    "setitem_slice": (lambda m, x, v: _setitem(m, x, (slice(None), 1), v), [_t(3, 4), _t(3, seed=1)]),
    "setitem_index": (lambda m, x, v: _setitem(m, x, m.tensor([0, 2]), v), [_t(3, 4), _t(4, seed=1)]),
    "inplace_mul": (lambda m, x, y: (x * 1).mul_(y), [_t(3, 4), _t(3, 4, seed=1)]),
    "inplace_view_add": (lambda m, x, y: _view_add(x, y), [_t(3, 4), _t(4, seed=1)]),
    "masked_fill_": (lambda m, x: (x * 1).masked_fill_(x > 0, 2.0), [_t(3, 4)]),
    "index_put_": (lambda m, x, v: (x * 1).index_put_((m.tensor([0, 2]),), v), [_t(3, 4), _t(2, 4, seed=1)]),
    "copy_": (lambda m, x, y: (x * 1).copy_(y), [_t(3, 4), _t(4, seed=1)]),
    "relu_": (lambda m, x: (x * 1).relu_(), [_t(3, 4)]),
    "softmax_dtype": (lambda m, x: x.softmax(1, dtype=m.float32), [_t(3, 4)]),
    "batch_norm_train": (lambda m, x, w, b: m.nn.functional.batch_norm(
        x, m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64), w, b, True),
        [_t(4, 3, 2), _t(3, seed=1), _t(3, seed=2)]),
    "batch_norm_eval": (lambda m, x, w, b: m.nn.functional.batch_norm(
        x, m.zeros(3, dtype=m.float64) + 0.1, m.ones(3, dtype=m.float64) * 2, w, b, False),
        [_t(4, 3, 2), _t(3, seed=1), _t(3, seed=2)]),
    "group_norm": (lambda m, x, w, b: m.nn.functional.group_norm(x, 2, w, b),
                   [_t(2, 4, 3), _t(4, seed=1), _t(4, seed=2)]),
    "cross_entropy": (lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([0, 2, 1])), [_t(3, 4)]),
    "cross_entropy_probs": (lambda m, x, p: m.nn.functional.cross_entropy(x, p.softmax(1)),
                            [_t(3, 4), _t(3, 4, seed=1)]),
    "nll_loss_2d": (lambda m, x: m.nn.functional.nll_loss(x, m.tensor([[[0, 1], [2, 0]]])), [_t(1, 3, 2, 2)]),
    "adaptive_avg_pool2d_1": (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 1), [_t(1, 2, 4, 4)]),
    "adaptive_avg_pool2d_3": (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 3), [_t(1, 2, 5, 4)]),
    "max_pool2d_stride": (lambda m, x: m.nn.functional.max_pool2d(x, 2, 1, 1), [_t(1, 2, 4, 4)]),
    "reflection_pad": (lambda m, x: m.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect"), [_t(1, 1, 4, 4)]),
    "replication_pad": (lambda m, x: m.nn.functional.pad(x, (1, 2), mode="replicate"), [_t(1, 2, 4)]),
    "var_dim": (lambda m, x: x.var(1), [_t(3, 4)]),
    "std_all": (lambda m, x: x.std(), [_t(3, 4)]),
    "max_other": (lambda m, x, y: m.max(x, y), [_t(3, 4), _t(3, 4, seed=1)]),
    "true_divide": (lambda m, x, y: m.true_divide(x, y), [_t(3, 4), _t(3, 4, seed=1, low=1, high=2)]),
    "interpolate_nearest": (lambda m, x: m.nn.functional.interpolate(x, size=(5, 7)), [_t(1, 2, 3, 4)]),
    "interpolate_nearest_1d": (lambda m, x: m.nn.functional.interpolate(x, scale_factor=3), [_t(1, 2, 5)]),
    "interpolate_bilinear": (lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
                             [_t(1, 2, 3, 4)]),
    "interpolate_bilinear_corners": (lambda m, x: m.nn.functional.interpolate(
        x, size=(4, 3), mode="bilinear", align_corners=True), [_t(1, 2, 3, 4)]),
    "inverse": (lambda m, x: m.inverse(x + 3 * m.eye(3, dtype=m.float64)), [_t(3, 3)]),
    "dropout_eval": (lambda m, x: m.nn.functional.dropout(x, 0.5, training=False) * 2, [_t(3, 4)]),
    "rrelu_eval": (lambda m, x: m.nn.functional.rrelu(x, 0.1, 0.3), [_t(3, 4)]),
    # scaled_dot_product_attention's CPU backends (op_db's samples: no bool mask, no GQA)
    "sdpa_flash_bool_mask": (lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=m.tensor([[True, False, True, True]] * 3)),
        [_t(2, 2, 3, 4), _t(2, 2, 4, 4, seed=1), _t(2, 2, 4, 4, seed=2)]),
    "sdpa_flash_gqa_causal": (lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=True, enable_gqa=True, scale=0.7),
        [_t(2, 4, 3, 4), _t(2, 2, 5, 4, seed=1), _t(2, 2, 5, 4, seed=2)]),
    "sdpa_math_gqa": (lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(
        q, k, v, enable_gqa=True), [_t(4, 3, 4), _t(2, 5, 4, seed=1), _t(2, 5, 4, seed=2)]),
    "sdpa_math_bool_mask_negative_scale": (lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=m.tensor([[True, False, True, True]] * 3), scale=-0.4),
        [_t(2, 3, 4), _t(2, 4, 4, seed=1), _t(2, 4, 4, seed=2)]),
    "sdpa_math_head_dims_differ": (lambda m, q, k, v: m.nn.functional.scaled_dot_product_attention(
        q, k, v), [_t(1, 2, 3, 4), _t(1, 2, 5, 4, seed=1), _t(1, 2, 5, 6, seed=2)]),
    # MultiheadAttention without weights runs scaled_dot_product_attention (the flash kernel)
    "mha_no_weights": (lambda m, x, w, b, ow, ob: m.nn.functional.multi_head_attention_forward(
        x, x, x, 4, 2, w, b, None, None, False, 0.0, ow, ob, need_weights=False)[0],
        [_t(3, 2, 4), _t(12, 4, seed=1), _t(12, seed=2), _t(4, 4, seed=3), _t(4, seed=4)]),
    "linalg.eig_abs_vectors": (_eig_abs, [_t(4, 4)]),
    "linalg.eig_abs_vectors_complex": (_eig_abs, [_c(4, 4)]),
}


def test_rrelu_training_gradient_is_its_slope():
    """rrelu in training draws a slope per negative element (the draws differ between the
    libraries): the gradient is that slope (1 for x > 0), its node names are torch's, and the
    double backward (RreluWithNoiseBackwardBackward0) gives zero."""
    names = []
    for m in (torch, reftrace):
        x = m.linspace(-2, 2, 9, dtype=m.float64).requires_grad_()
        y = m.nn.functional.rrelu(x, 0.1, 0.3, training=True)
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        gg, = m.autograd.grad(g.sum(), x, allow_unused=True)
        slope = g.detach().numpy()
        assert np.allclose(slope * x.detach().numpy(), y.detach().numpy())
        assert (slope[5:] == 1).all() and ((slope[:4] >= 0.1) & (slope[:4] <= 0.3)).all()
        names.append((type(y.grad_fn).__name__, type(g.grad_fn).__name__,
                      None if gg is None else float(gg.abs().sum())))
    assert names[0] == names[1], names


def _graph(out):
    """The names of the nodes reachable from ``out.grad_fn``, depth first, each with its edges."""
    seen, names, stack = set(), [], [out.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        nexts = [f for f, _ in fn.next_functions]
        names.append((type(fn).__name__, tuple(type(f).__name__ for f in nexts)))
        stack.extend(reversed(nexts))
    return names


def test_mha_dropout_graph_is_torchs():
    """multi_head_attention_forward's one gradient sample drops attention weights out (p=0.5,
    training): the masks differ between the libraries (the values are compared with training off
    in test_op_gradients_match_torch), but the recorded graph is torch's node for node."""
    from torch.testing._internal.common_methods_invocations import op_db
    from opinfo_support import reftrace_op
    info = next(i for i in op_db if i.name == "nn.functional.multi_head_attention_forward")
    sample = next(iter(info.sample_inputs("cpu", torch.float64, requires_grad=True)))
    assert sample.kwargs["training"] and sample.args[9] > 0  # (dropout_p: it is still random)
    args = [sample.input, *sample.args]
    t_out = info.op(*args, **sample.kwargs)
    r_out = reftrace_op(info)(*to_reftrace(args), **to_reftrace(sample.kwargs))
    for r, t in zip(r_out, t_out):
        assert _graph(r) == _graph(t)


def _setitem(m, x, index, v):
    y = x * 1
    y[index] = v
    return y


def _view_add(x, y):
    z = x * 1
    z[1].add_(y)  # in place through a view: the base's grad_fn becomes CopySlices
    return z


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_picked_gradients_match_torch(name):
    fn, inputs = HAND[name]
    compare_grads(fn, [t.detach().clone().requires_grad_(t.requires_grad) for t in inputs])
