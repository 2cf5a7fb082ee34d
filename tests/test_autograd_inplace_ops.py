"""In-place ops (and a few functionals) whose gradients torch 2.13 gives and reftrace lacked.

Each program runs under torch and reftrace (``autograd_oracle.compare_grads``): outputs, grad_fn
names, first- and second-order gradients. An in-place op runs on a clone of its leaf input (a
leaf that requires grad cannot be modified in place), so its graph is torch's ``original_self``
rule at work: the formula reads ``self`` as it was before the op. Beside the values, the graph
around the in-place node (its edges, the version counter, CopySlices through a view, the error
for a saved input modified afterwards) is compared with torch's.
"""
import re

import numpy as np
import pytest

import reftrace
from autograd_oracle import compare_grads, to_reftrace

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")


def _x(*shape, lo=-2.0, hi=2.0, seed=0):
    g = np.random.default_rng(seed)
    return torch.from_numpy(g.uniform(lo, hi, shape)).requires_grad_()


def _pos(*shape, seed=1):
    return _x(*shape, lo=0.5, hi=2.0, seed=seed)


_IDX = torch.tensor([[0, 1, 2, 0], [2, 0, 1, 1]])

# name -> (program, inputs); a program's first argument is the module (torch or reftrace)
CASES = {
    "atan2_": (lambda m, x, y: x.clone().atan2_(y), [_x(3, 4), _x(3, 4, seed=2)]),
    "hypot_": (lambda m, x, y: x.clone().hypot_(y), [_x(3, 4), _x(3, 4, seed=2)]),
    "nextafter_": (lambda m, x, y: x.clone().nextafter_(y), [_x(3, 4), _x(3, 4, seed=2)]),
    "hardswish_": (lambda m, x: m.nn.functional.hardswish(x.clone(), inplace=True), [_x(3, 4, lo=-4, hi=4)]),
    "hardsigmoid_": (lambda m, x: m.nn.functional.hardsigmoid(x.clone(), inplace=True), [_x(3, 4, lo=-4, hi=4)]),
    "mish_": (lambda m, x: m.nn.functional.mish(x.clone(), inplace=True), [_x(3, 4)]),
    "selu_": (lambda m, x: m.selu_(x.clone()), [_x(3, 4)]),
    "selu_ functional": (lambda m, x: m.nn.functional.selu(x * 1, inplace=True), [_x(3, 4)]),
    "celu_": (lambda m, x: m.celu_(x.clone(), 0.7), [_x(3, 4)]),
    "rrelu_ eval": (lambda m, x: m.rrelu_(x.clone(), 0.1, 0.3, training=False), [_x(3, 4)]),
    "square_": (lambda m, x: x.clone().square_(), [_x(3, 4)]),
    "pow_ scalar": (lambda m, x: x.clone().pow_(3), [_x(3, 4)]),
    "pow_ tensor": (lambda m, x, y: x.clone().pow_(y), [_pos(3, 4), _x(3, 4, seed=2)]),
    "addcmul_": (lambda m, x, a, b: x.clone().addcmul_(a, b, value=0.5), [_x(3, 4), _x(3, 4, seed=2), _x(4, seed=3)]),
    "addcdiv_": (lambda m, x, a, b: x.clone().addcdiv_(a, b, value=-1.5), [_x(3, 4), _x(3, 4, seed=2), _pos(4, seed=3)]),
    "scatter_add_": (lambda m, x, s: x.clone().scatter_add_(0, m.tensor([[0, 1, 2, 0], [2, 0, 1, 1]]), s),
                     [_x(3, 4), _x(2, 4, seed=2)]),
    "tril_": (lambda m, x: x.clone().tril_(-1), [_x(4, 5)]),
    "triu_": (lambda m, x: x.clone().triu_(1), [_x(4, 5)]),
    "exp2_": (lambda m, x: x.clone().exp2_(), [_x(3, 4)]),
    "erf_": (lambda m, x: x.clone().erf_(), [_x(3, 4)]),
    "erfc_": (lambda m, x: x.clone().erfc_(), [_x(3, 4)]),
    "deg2rad_": (lambda m, x: x.clone().deg2rad_(), [_x(3, 4)]),
    "rad2deg_": (lambda m, x: x.clone().rad2deg_(), [_x(3, 4)]),
    "where": (lambda m, x, y: m.where(x > 0, x, y), [_x(3, 4), _x(3, 4, seed=2)]),
    "where scalar self": (lambda m, x: m.where(x > 0, 1.5, x), [_x(3, 4)]),
    "where scalar other": (lambda m, x: m.where(x > 0, x, -0.5), [_x(3, 4)]),
    "positive": (lambda m, x: m.positive(x * 2), [_x(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch(name):
    fn, inputs = CASES[name]
    compare_grads(fn, inputs)


def _edges(t):
    return [None if f is None else type(f).__name__ for f, _ in t.grad_fn.next_functions]


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.endswith("_") or "_ " in n))
def test_inplace_graph_and_version_match_torch(name):
    """The in-place node's edges (CloneBackward0 of the modified clone first), the output is the
    modified tensor itself, and its version counter moved by one, as in torch."""
    fn, inputs = CASES[name]
    seen = []
    for m, ins in ((torch, inputs), (reftrace, to_reftrace(inputs))):
        out = fn(m, *ins)
        seen.append((type(out.grad_fn).__name__, _edges(out), out._version, out.is_leaf))
    assert seen[1] == seen[0]


def test_rrelu__training_gradient_is_its_slope():
    """rrelu_ in training: RreluWithNoiseBackward1 from the result (the draws differ between the
    libraries: the gradient is the slope that scaled each element, 1 where x > 0)."""
    names = []
    for m in (torch, reftrace):
        x = m.linspace(-2, 2, 9, dtype=m.float64).requires_grad_()
        y = m.rrelu_(x.clone(), 0.1, 0.3, training=True)
        g, = m.autograd.grad(y.sum(), x)
        slope = g.numpy()
        assert np.allclose(slope * x.detach().numpy(), y.detach().numpy())
        assert (slope[5:] == 1).all() and ((slope[:4] >= 0.1) & (slope[:4] <= 0.3)).all()
        names.append((type(y.grad_fn).__name__, _edges(y)))
    assert names[0] == names[1]


@pytest.mark.parametrize("op", ["erf_", "exp2_", "deg2rad_"])
def test_inplace_through_a_view_is_copyslices(op):
    """An in-place op on a view of a non-leaf: the base's grad_fn is CopySlices, the gradient of
    the leaf is torch's (the op's formula on the view's region, identity elsewhere)."""
    def fn(m, x):
        base = x * 1
        getattr(base[1], op)()
        return base
    compare_grads(fn, [_x(3, 4)])
    for m in (torch, reftrace):
        x = m.ones(3, 4, dtype=m.float64, requires_grad=True)
        base = x * 1
        getattr(base[1], op)()
        assert type(base.grad_fn).__name__ == "CopySlices"


def _error(m, fn):
    try:
        fn(m)
    except (RuntimeError, NotImplementedError) as e:
        return type(e).__name__, re.sub(r"0x[0-9a-f]+", "", str(e))
    return None


def test_saved_input_modified_later_raises_as_torch():
    """atan2_ saves ``other``: modifying it in place afterwards makes backward raise torch's
    version error."""
    def fn(m):
        x = m.rand(3, dtype=m.float64, requires_grad=True)
        y = m.rand(3, dtype=m.float64, requires_grad=True)
        o = y * 1
        z = x.clone().atan2_(o)
        o.add_(1)
        z.sum().backward()
    assert _error(reftrace, fn) == _error(torch, fn) is not None


# torch has no derivative for these (or declares one it does not implement): the forward records
# a node, backward raises torch's error
NOT_DIFFERENTIABLE = {
    "embedding_renorm_": lambda m, x: m.embedding_renorm_(x.clone(), m.tensor([0, 2]), 1.0, 2.0),
    "scatter.reduce": lambda m, x: x.scatter(0, m.tensor([[0, 1, 2, 0]]), x * 2, reduce="add"),
    "scatter.value_reduce": lambda m, x: x.scatter(0, m.tensor([[0, 1, 2, 0]]), 2.0, reduce="multiply"),
    "scatter_.reduce": lambda m, x: x.clone().scatter_(0, m.tensor([[0, 1, 2, 0]]), x * 2, reduce="add"),
    "scatter_.value_reduce": lambda m, x: x.clone().scatter_(0, m.tensor([[0, 1, 2, 0]]), 2.0, reduce="add"),
    "floor_divide": lambda m, x: m.floor_divide(x, x * 2 + 5),
    "floor_divide.Scalar": lambda m, x: m.floor_divide(x, 2),
    "floor_divide_": lambda m, x: x.clone().floor_divide_(x.detach() + 5),
}


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_no_derivative_node_and_error_match_torch(name):
    fn = NOT_DIFFERENTIABLE[name]
    seen = []
    for m in (torch, reftrace):
        x = m.tensor(np.linspace(-2, 2, 12).reshape(3, 4), requires_grad=True)
        out = fn(m, x)
        seen.append((type(out.grad_fn).__name__, _edges(out), out.requires_grad,
                     _error(m, lambda m: out.sum().backward())))
    assert seen[1] == seen[0]


def test_exponential__gradient_is_zero():
    """exponential_ overwrites self with draws: ExponentialBackward0 gives zeros."""
    seen = []
    for m in (torch, reftrace):
        x = m.ones(3, 4, dtype=m.float64, requires_grad=True)
        y = (x * 2).exponential_()
        g, = m.autograd.grad(y.sum(), x)
        seen.append((type(y.grad_fn).__name__, _edges(y), g.numpy().tolist()))
    assert seen[1] == seen[0]


# -- CompositeImplicitAutograd ops: the graph is that of the ops torch's decomposition calls ------

def _cube(*shape, seed=0):
    return _x(*shape, seed=seed)


COMPOSITES = {
    "max_pool3d": (lambda m, x: m.max_pool3d(x, 2, 1), [_cube(1, 2, 3, 4, 4)]),
    "F.max_pool3d": (lambda m, x: m.nn.functional.max_pool3d(x, (2, 1, 2), ceil_mode=True), [_cube(2, 3, 4, 5)]),
    "upsample_nearest3d.vec": (lambda m, x: m.nn.functional.interpolate(x, scale_factor=(2, 1, 3), mode="nearest"),
                               [_cube(1, 2, 2, 3, 2)]),
    "_upsample_nearest_exact1d.vec": (lambda m, x: m.nn.functional.interpolate(x, size=7, mode="nearest-exact"),
                                      [_cube(1, 2, 4)]),
    "_upsample_nearest_exact2d.vec": (lambda m, x: m.nn.functional.interpolate(x, size=(5, 3), mode="nearest-exact"),
                                      [_cube(1, 2, 4, 4)]),
    "_upsample_nearest_exact3d.vec": (lambda m, x: m.nn.functional.interpolate(
        x, scale_factor=1.5, mode="nearest-exact"), [_cube(1, 1, 2, 3, 4)]),
    "alpha_dropout eval": (lambda m, x: m.alpha_dropout(x * 1, 0.5, False), [_x(3, 4)]),
    "alpha_dropout p=1": (lambda m, x: m.alpha_dropout(x, 1.0, True), [_x(3, 4)]),
    "alpha_dropout_ p=1": (lambda m, x: m.alpha_dropout_(x.clone(), 1.0, True), [_x(3, 4)]),
    "feature_alpha_dropout p=1": (lambda m, x: m.feature_alpha_dropout(x, 1.0, True), [_x(2, 3, 4)]),
    "affine_grid_generator_backward": (
        lambda m, th, v: m.autograd.grad(m.nn.functional.affine_grid(th, [2, 1, 3, 4], align_corners=False),
                                         th, v, create_graph=True)[0],
        [_x(2, 2, 3), _x(2, 3, 4, 2, seed=1)]),
    "affine_grid_generator_backward 5d": (
        lambda m, th, v: m.autograd.grad(m.nn.functional.affine_grid(th, [1, 1, 2, 3, 2], align_corners=True),
                                         th, v, create_graph=True)[0],
        [_x(1, 3, 4), _x(1, 2, 3, 2, 3, seed=1)]),
    "conv_tbc": (lambda m, x, w, b: m.conv_tbc(x, w, b, 1), [_x(5, 2, 3), _x(3, 3, 4, seed=1), _x(4, seed=2)]),
    "mish": (lambda m, x: m.nn.functional.mish(x), [_x(3, 4)]),
    "weight_norm": (lambda m, v, g: m._weight_norm(v, g, 0), [_x(3, 4), _pos(3, 1)]),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composite_gradients_match_torch(name):
    fn, inputs = COMPOSITES[name]
    compare_grads(fn, inputs)


@pytest.mark.parametrize("feature, inplace", [(False, False), (True, False), (False, True), (True, True)])
def test_alpha_dropout_training_graph_is_torchs(feature, inplace):
    """Training alpha dropout: (x * noise).add_(b), AddBackward0 over MulBackward0 (draws differ
    between the libraries: the gradient is the noise, y = x * noise + b with two values of b)."""
    seen = []
    for m in (torch, reftrace):
        m.manual_seed(0)  # (each library's own stream: the check below holds for any draw)
        x = m.linspace(-2, 2, 24, dtype=m.float64).reshape(2, 3, 4).requires_grad_()
        name = ("feature_" if feature else "") + "alpha_dropout" + ("_" if inplace else "")
        y = getattr(m, name)(x.clone() if inplace else x, 0.4, True)
        g, = m.autograd.grad(y.sum(), x)
        b = (y.detach() - x.detach() * g).numpy()
        assert len(np.unique(np.round(b, 12))) <= 2
        seen.append((type(y.grad_fn).__name__, _edges(y), type(y.grad_fn.next_functions[0][0]).__name__,
                     # the noise takes two values, or one when every element (feature) was kept,
                     # or every one dropped: 6 features at p=0.4 draw that about 1 time in 20
                     len(np.unique(np.round(g.numpy(), 12))) <= 2))
    assert seen[1] == seen[0]


def _double_backward_error(m, fn, *shapes):
    xs = [m.tensor(np.cos(np.linspace(-2, 2, int(np.prod(s)))).reshape(s), requires_grad=True)
          for s in shapes]
    out = fn(m, *xs)
    gs = m.autograd.grad(out.sum(), xs, create_graph=True)
    s = sum((g * g).sum() for g in gs)
    edges = [None if f is None else type(f).__name__ for f, _ in s.grad_fn.next_functions]
    return edges, _error(m, lambda m: m.autograd.grad(s, xs))


# backward ops torch has no derivative for (CPU kernels, no yaml entry): a double backward
# reaches their NotImplemented node
DOUBLE_BACKWARD_ERRORS = {
    "hardsigmoid_backward": (lambda m, x: m.nn.functional.hardsigmoid(x), (3, 4)),
    "multi_margin_loss_backward": (lambda m, x: m.nn.functional.multi_margin_loss(x, m.tensor([0, 2, 1])), (3, 4)),
    "multilabel_margin_loss_backward": (lambda m, x: m.nn.functional.multilabel_margin_loss(
        x, m.tensor([[0, 2, -1, 0], [1, -1, 0, 0], [3, 0, -1, 1]])), (3, 4)),
    "_embedding_bag_per_sample_weights_backward": (lambda m, w, p: m.nn.functional.embedding_bag(
        m.tensor([0, 2, 1, 3]), w, m.tensor([0, 2]), mode="sum", per_sample_weights=p), (4, 3), (4,)),
    "_ctc_loss_backward": (lambda m, x: m.nn.functional.ctc_loss(
        x.log_softmax(2), m.tensor([[1, 2], [3, 1]]), [6, 5], [2, 2]), (6, 2, 4)),
    "_ctc_loss_backward.Tensor": (lambda m, x: m.nn.functional.ctc_loss(
        x.log_softmax(2), m.tensor([[1, 2], [3, 1]]), m.tensor([6, 5]), m.tensor([2, 2])), (6, 2, 4)),
}


@pytest.mark.parametrize("name", sorted(DOUBLE_BACKWARD_ERRORS))
def test_double_backward_of_undifferentiable_backward_ops_is_torchs(name):
    fn, *shapes = DOUBLE_BACKWARD_ERRORS[name]
    want = _double_backward_error(torch, fn, *shapes)
    assert want[1] is not None and name.split(".")[0] in want[1][1]
    assert _double_backward_error(reftrace, fn, *shapes) == want


def test_mish_backward_called_directly_has_no_derivative():
    """mish_backward with inputs that require grad: torch's NotImplemented node (its
    CompositeImplicit kernel is not what autograd runs)."""
    seen = []
    for m in (torch, reftrace):
        g = m.ones(3, dtype=m.float64, requires_grad=True)
        x = m.linspace(-1, 1, 3, dtype=m.float64, requires_grad=True)
        out = m.ops.aten.mish_backward(g, x)
        seen.append((type(out.grad_fn).__name__, _edges(out), _error(m, lambda m: out.sum().backward())))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("outputs", ["_weight_norm_interface", "_ctc_loss", "multilabel_margin_loss_forward"])
def test_only_the_first_output_is_differentiable_when_formula_reads_grad(outputs):
    """torchgen: an entry that reads ``grad`` (not ``grads``) and lists no output_differentiability
    makes only its first output differentiable."""
    calls = {
        "_weight_norm_interface": lambda m, x: m._weight_norm_interface(x, x[:, :1] * 1, 0),
        "_ctc_loss": lambda m, x: m._ctc_loss(x.reshape(3, 1, 4).log_softmax(2), m.tensor([[1, 2]]), [3], [2]),
        "multilabel_margin_loss_forward": lambda m, x: m.ops.aten.multilabel_margin_loss_forward(
            x, m.tensor([[0, 2, -1, 0], [1, -1, 0, 0], [3, 0, -1, 1]]), 1),
    }
    seen = []
    for m in (torch, reftrace):
        x = m.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
        res = calls[outputs](m, x)
        seen.append([(r.requires_grad, None if r.grad_fn is None else type(r.grad_fn).__name__) for r in res])
    assert seen[1] == seen[0]


def _spectrum(n_fft, hop, batch=False, onesided=True):
    sig = torch.cos(torch.linspace(0, 9, 32, dtype=torch.float64))
    if batch:
        sig = sig.reshape(1, 32).repeat(2, 1)
    w = torch.hann_window(n_fft, dtype=torch.float64)
    return torch.stft(sig, n_fft, hop, window=w, return_complex=True, onesided=onesided).detach().requires_grad_(), w


ISTFT = {
    "window": (lambda m, s, w: m.istft(s, 8, 2, window=w), lambda: list(_spectrum(8, 2))),
    "batch, length": (lambda m, s, w: m.istft(s, 8, 2, window=w, length=30), lambda: list(_spectrum(8, 2, True))),
    "no window, not centered, normalized": (
        lambda m, s: m.istft(s, 8, 2, center=False, normalized=True), lambda: _spectrum(8, 2)[:1]),
    "padded to length, window requires grad": (
        lambda m, s, w: m.istft(s, 8, 2, window=w, length=40),
        lambda: [_spectrum(8, 2)[0], _spectrum(8, 2)[1].requires_grad_()]),
    "two-sided, complex": (lambda m, s, w: m.istft(s, 8, 2, window=w, onesided=False, return_complex=True),
                           lambda: list(_spectrum(8, 2, onesided=False))),
    "win_length": (lambda m, s, w: m.istft(s, 8, 2, win_length=6, window=w[1:7]), lambda: list(_spectrum(8, 2))),
}


@pytest.mark.parametrize("name", sorted(ISTFT))
def test_istft_gradients_match_torch(name):
    """istft is CompositeImplicit in torch: view_as_real / view_as_complex, _fft_c2r (or _c2c),
    the window product, unfold_backward, slice, div, squeeze (and constant_pad_nd)."""
    fn, inputs = ISTFT[name]
    compare_grads(fn, inputs())
