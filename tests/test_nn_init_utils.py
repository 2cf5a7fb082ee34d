"""nn.init (the rest of it) and nn.utils (parameters_to_vector / vector_to_parameters,
clip_grad_norm_ / clip_grad_value_ on .grad, fuse_conv_bn_eval / fuse_linear_bn_eval) against
torch; random initialisers are checked for their distribution's defining property."""
import warnings

import numpy as np
import pytest

import reftrace
from nn_support import twin
from oracle import requires_torch, sample, torch

I = reftrace.nn.init


@requires_torch
@pytest.mark.parametrize("shape, groups", [((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((6, 3, 1, 3, 2), 3)])
def test_dirac_matches_torch(shape, groups):
    a = I.dirac_(reftrace.empty(*shape), groups).numpy()
    b = torch.nn.init.dirac_(torch.empty(*shape), groups).numpy()
    np.testing.assert_array_equal(a, b)


@requires_torch
def test_eye_and_errors_match_torch():
    np.testing.assert_array_equal(I.eye_(reftrace.empty(3, 5)).numpy(),
                                  torch.nn.init.eye_(torch.empty(3, 5)).numpy())
    for fn in ("eye_", "dirac_", "orthogonal_"):
        with pytest.raises(ValueError) as e1:
            getattr(I, fn)(reftrace.empty(3))
        with pytest.raises(ValueError) as e2:
            getattr(torch.nn.init, fn)(torch.empty(3))
        assert str(e1.value) == str(e2.value)


@pytest.mark.parametrize("shape", [(3, 7), (7, 3), (4, 2, 3)])
def test_orthogonal(shape):
    w = I.orthogonal_(reftrace.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1)
    small = w @ w.T if shape[0] <= w.shape[1] else w.T @ w
    np.testing.assert_allclose(small, 4 * np.eye(small.shape[0]), atol=1e-5)


@pytest.mark.parametrize("a, b", [(-2.0, 2.0), (-1.0, 0.5), (2.0, 2.5)])
def test_trunc_normal_stays_in_range(a, b):
    x = I.trunc_normal_(reftrace.empty(20000), a=a, b=b).numpy()
    assert x.min() >= a and x.max() <= b and np.unique(x).size > 19000


def test_sparse_zeros_per_column():
    reftrace.manual_seed(0)
    w = I.sparse_(reftrace.empty(10, 6), 0.3).numpy()
    assert ((w == 0).sum(0) == 3).all()
    reftrace.manual_seed(0)
    np.testing.assert_array_equal(w, I.sparse_(reftrace.empty(10, 6), 0.3).numpy())


@requires_torch
@pytest.mark.parametrize("name", ["uniform", "normal", "xavier_uniform", "kaiming_normal", "eye"])
def test_deprecated_aliases_warn_like_torch(name):
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(lib.nn.init, name)(lib.empty(3, 4))
        return [(m.category.__name__, str(m.message)) for m in w]
    assert run(reftrace) == run(torch)


@requires_torch
def test_parameters_to_vector_and_back():
    rt, th = twin(lambda nn: nn.Sequential(nn.Linear(3, 4), nn.Conv1d(4, 2, 2)))
    v_rt = reftrace.nn.utils.parameters_to_vector(rt.parameters())
    v_th = torch.nn.utils.parameters_to_vector(th.parameters())
    np.testing.assert_array_equal(v_rt.detach().numpy(), v_th.detach().numpy())
    new = np.arange(v_th.numel(), dtype="float32")
    reftrace.nn.utils.vector_to_parameters(reftrace.from_numpy(new.copy()), rt.parameters())
    torch.nn.utils.vector_to_parameters(torch.from_numpy(new.copy()), th.parameters())
    for (k, a), (_, b) in zip(rt.state_dict().items(), th.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        reftrace.nn.utils.vector_to_parameters([1.0], rt.parameters())


@requires_torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_and_value(norm_type):
    rt, th = twin(lambda nn: nn.Linear(4, 3))
    for mod in (rt, th):
        lib = reftrace if mod is rt else torch
        for i, p in enumerate(mod.parameters()):
            p.grad = lib.from_numpy(sample(tuple(p.shape), seed=i) * 3)
    total_rt = reftrace.nn.utils.clip_grad_norm_(rt.parameters(), 1.5, norm_type)
    total_th = torch.nn.utils.clip_grad_norm_(th.parameters(), 1.5, norm_type)
    np.testing.assert_allclose(total_rt.numpy(), total_th.numpy(), rtol=1e-5)
    for a, b in zip(rt.parameters(), th.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
    reftrace.nn.utils.clip_grad_value_(rt.parameters(), 0.05)
    torch.nn.utils.clip_grad_value_(th.parameters(), 0.05)
    for a, b in zip(rt.parameters(), th.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


@requires_torch
@pytest.mark.parametrize("make, shape, transpose", [
    (lambda nn: nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)), (2, 3, 5, 5), False),
    (lambda nn: nn.Sequential(nn.ConvTranspose2d(3, 4, 2, bias=False), nn.BatchNorm2d(4)),
     (2, 3, 4, 4), True),
    (lambda nn: nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)), (5, 3), None),
], ids=["conv", "conv-transpose", "linear"])
def test_fusion(make, shape, transpose):
    rt, th = twin(make)
    with torch.no_grad():
        th[1].running_mean.normal_()
        th[1].running_var.uniform_(0.5, 2)
    rt.load_state_dict({k: reftrace.from_numpy(v.numpy().copy()) for k, v in th.state_dict().items()})
    rt.eval()
    th.eval()
    if transpose is None:
        f_rt = reftrace.nn.utils.fuse_linear_bn_eval(rt[0], rt[1])
        f_th = torch.nn.utils.fuse_linear_bn_eval(th[0], th[1])
    else:
        f_rt = reftrace.nn.utils.fuse_conv_bn_eval(rt[0], rt[1], transpose)
        f_th = torch.nn.utils.fuse_conv_bn_eval(th[0], th[1], transpose)
    for k, v in f_th.state_dict().items():
        np.testing.assert_allclose(f_rt.state_dict()[k].detach().numpy(), v.numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=k)
    x = sample(shape)
    np.testing.assert_allclose(f_rt(reftrace.from_numpy(x.copy())).detach().numpy(),
                               th(torch.from_numpy(x.copy())).detach().numpy(), atol=1e-5)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        reftrace.nn.utils.fuse_conv_bn_eval(rt[0].train(), rt[1])
