"""Complex gradients against torch (first and second order): the conjugates of torch's CPU
backward kernels (tanh_backward, sigmoid_backward: a * conj(...)) and FunctionsManual's
sgn_backward. The OpInfo gradient sweep (test_autograd_ops.py) runs float64 samples only."""
import numpy as np
import pytest

import reftrace

torch = pytest.importorskip("torch")

FNS = {
    "tanh": lambda m, z: m.tanh(z),
    "sigmoid": lambda m, z: m.sigmoid(z),
    "tanh then sigmoid": lambda m, z: z.tanh().sigmoid(),
    "sgn": lambda m, z: m.sgn(z),
    "abs": lambda m, z: m.abs(z),
    "pow tensor": lambda m, z: m.pow(z, m.tensor(np.array([1.5 - 0.5j, 2.0, 2.0]))),
    "pow scalar exponent": lambda m, z: z ** 2.5,
    "pow scalar base": lambda m, z: m.pow(2.0, z),
    "pow zero base": lambda m, z: m.pow(0.0, z + 1),
    "float_power": lambda m, z: m.float_power(z, z),
    # (dtype.to_real() is a method, as torch's: det/renorm's backwards call it)
    "det": lambda m, z: m.linalg.det(m.stack([z, z.flip(0) * 2, z * z]).T @ m.stack([z, z, z + 1])),
    "renorm": lambda m, z: m.renorm(m.stack([z, z * 3]), 2, 0, 1.5),
}


def _grads(m, name):
    z = m.tensor(np.array([0.3 + 0.8j, -1.2 + 0.5j, 0.0 + 0.0j]), requires_grad=True)
    w = m.tensor(np.array([0.7 - 0.2j, 0.1 + 0.4j, 1.0 + 1.0j]))
    y = FNS[name](m, z)
    (g,) = m.autograd.grad(m.real((y * w).sum()), [z], create_graph=True)
    (gg,) = m.autograd.grad(m.real((g * w).sum()), [z])
    return g.detach().numpy(), gg.numpy()


@pytest.mark.parametrize("name", list(FNS))
def test_complex_gradients_match_torch(name):
    for got, want in zip(_grads(reftrace, name), _grads(torch, name)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
