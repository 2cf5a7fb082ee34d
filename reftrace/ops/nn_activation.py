"""More activations: hardswish, hardsigmoid, mish, selu, celu, glu, prelu, rrelu, log_sigmoid,
hardshrink, softshrink (and their in-place forms), each recorded under its own ATen name.

The piecewise-linear ones (hardswish, hardsigmoid, the shrinks, prelu) compute in the input's
dtype in ATen's operation order, so they are bit-exact; the smooth ones go through
``activation._smooth`` (one rounding from a wider type).
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _wrap_dim, xp_of
from ._pointwise_helpers import write_inplace
from ._registry import composite, derivatives, op
from .activation import _like_input, _register_inplace, _smooth, elu, elu_, leaky_relu
from .reduction import not_implemented


def _floating(self, kernel_name):
    if not self.dtype.is_floating_point:
        raise not_implemented(kernel_name, self.dtype)
    return self._array


@op("hardswish(Tensor self) -> Tensor", variants=())
def hardswish(self):
    a = _floating(self, "hardswish_cpu")
    three, six = a.dtype.type(3), a.dtype.type(6)
    return _like_input(a * np.minimum(np.maximum(a + three, 0), six) / six, self)


derivatives(hardswish, {"self": "hardswish_backward(grad, self)"})


@op("hardsigmoid(Tensor self) -> Tensor", variants=())
def hardsigmoid(self):
    a = _floating(self, "hardsigmoid_cpu")
    three, six = a.dtype.type(3), a.dtype.type(6)
    return _like_input(np.minimum(np.maximum(a + three, 0), six) / six, self)


derivatives(hardsigmoid, {"self": "hardsigmoid_backward(grad, self)"})


@op("mish(Tensor self) -> Tensor", variants=())
def mish(self):
    return _smooth(self, "mish_cpu", lambda x: x * np.tanh(np.log1p(np.exp(x))))


derivatives(mish, {"self": "(infinitely_differentiable_mish_backward(grad, self) "
                           "if is_grad_enabled() else mish_backward(grad, self))"})

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@op("selu(Tensor self) -> Tensor")
def selu(self):
    # ATen: elu(self, alpha, scale) with SELU's constants (so its error messages say elu)
    return elu.kernel(self, _SELU_ALPHA, _SELU_SCALE, 1)


@composite(selu)
def _selu_composite(self):
    # Activation.cpp: selu is elu with SELU's constants (its grad_fn is EluBackward0)
    return elu(self, _SELU_ALPHA, _SELU_SCALE, 1)


@op("celu(Tensor self, Scalar alpha=1.0) -> Tensor")
def celu(self, alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return elu.kernel(self, alpha, 1.0, 1.0 / alpha)


derivatives(celu, {"self": "elu_backward(grad, alpha, 1, 1.0/alpha, False, self)"})


@op("glu(Tensor self, int dim=-1) -> Tensor", variants=())
def glu(self, dim):
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _wrap_dim(dim, self.ndim)
    n = self.shape_tuple[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {n}")
    a = _floating(self, "glu_cpu")
    first, second = np.split(a, 2, axis=dim) if xp_of(self) is np else xp_of(self).split(a, 2, dim)
    wide = np.float64 if a.dtype == np.float32 else a.dtype
    with np.errstate(over="ignore"):
        res = first.astype(wide) / (1 + np.exp(-second.astype(wide)))
    return _like_input(res.astype(a.dtype), _shaped_like(self, res.shape))


def _shaped_like(self, shape):
    """A contiguous stand-in carrying self's dtype and device for a result of another shape."""
    from .._tensor import _fresh
    return _fresh(np.empty(shape, dtype=self.dtype.np), self.dtype, self.device)


derivatives(glu, {"self": "glu_backward(grad, self, dim)"})


@op("prelu(Tensor self, Tensor weight) -> Tensor", variants=("function", "method"))
def prelu(self, weight):
    if weight.dtype is not self.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {self.dtype.ir_name} and "
                           f"{weight.dtype.ir_name}")
    if not self.dtype.is_floating_point:
        raise not_implemented("prelu_cpu", self.dtype)
    n = weight._array.size
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    a = self._array
    w = weight._array.reshape(-1)
    if n != 1:
        if self.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self.shape_tuple[1] if self.ndim >= 2 else 1
        if channels != n:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
        w = w.reshape((-1,) + (1,) * (self.ndim - 2)) if self.ndim >= 2 else w
    else:
        w = w.reshape(())
    return _like_input(np.where(a > 0, a, w * a), self)


@op("_prelu_kernel(Tensor self, Tensor weight) -> Tensor", variants=())
def _prelu_kernel(self, weight):
    # ATen's kernel: self > 0 ? self : weight * self, weight broadcast (prelu reshaped it)
    a = _floating(self, "prelu_cpu")
    return _like_input(np.where(a > 0, a, weight._array * a), self)


derivatives(_prelu_kernel, {"self, weight": "(_prelu_kernel_backward(grad, self, weight) if grad "
                                            "is not None else (None, None))"})


@composite(prelu)
def _prelu_composite(self, weight):
    # Activation.cpp prelu: the weight reshaped to broadcast over self, then _prelu_kernel
    prelu.kernel(self, weight)  # its checks and messages
    self_dim = self.dim()
    if self_dim != weight.dim():
        dim_w = [1] * self_dim
        if self_dim > 1:
            dim_w[1] = weight.numel()
        weight = weight.reshape(dim_w)
    return _prelu_kernel(self, weight)


@op("rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "
    "Generator? generator=None) -> Tensor", nondeterministic=True)
def rrelu(self, lower, upper, training, generator):
    return rrelu_with_noise.kernel(self, _rrelu_noise(self, lower, upper), lower, upper, training,
                                   generator)


def _rrelu_noise(self, lower, upper):
    """RReLU's fresh noise tensor, after its bounds check (Activation.cpp rrelu / rrelu_)."""
    if upper < lower:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    return _shaped_like(self, self.shape_tuple)


@composite(rrelu)
def _rrelu_composite(self, lower, upper, training, generator):
    # RReLU: rrelu_with_noise on a fresh noise tensor (its grad_fn RreluWithNoiseBackward0)
    return rrelu_with_noise(self, _rrelu_noise(self, lower, upper), lower, upper, training, generator)


@op("rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, "
    "Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> Tensor",
    variants=(), nondeterministic=True)
def rrelu_with_noise(self, noise, lower, upper, training, generator):
    """In training, each x <= 0 is scaled by a slope drawn from U(lower, upper), which ``noise``
    keeps (1 elsewhere): the backward reads it. Else leaky_relu with the mean slope."""
    if not training:  # ATen writes leaky_relu into a contiguous result
        return _contiguous(leaky_relu.kernel(self, (lower + upper) / 2))
    a = _floating(self, "rrelu_with_noise_out_cpu")
    from .random import uniform_
    drawn = _shaped_like(self, a.shape)
    uniform_.kernel(drawn, lower, upper, generator)
    slope = drawn._array
    noise._array[...] = np.where(a <= 0, slope, 1)
    return _contiguous(_like_input(np.where(a <= 0, a * slope, a), self))


derivatives(rrelu_with_noise, {
    "self": "rrelu_with_noise_backward(grad, self, noise, lower, upper, training, False)"})


@op("rrelu_with_noise_backward(Tensor grad_output, Tensor self, Tensor noise, Scalar lower, "
    "Scalar upper, bool training, bool self_is_result) -> Tensor", variants=())
def rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training, self_is_result):
    if training:  # noise * grad_output
        from .arithmetic import mul
        return mul.kernel(noise, grad_output)
    from .backward import leaky_relu_backward
    return leaky_relu_backward.kernel(grad_output, self, (lower + upper) / 2, self_is_result)


derivatives(rrelu_with_noise_backward, {
    "grad_output": "rrelu_with_noise_backward(grad, self, noise, lower, upper, training, False)",
    "self": "zeros_like(grad)"})


@op("log_sigmoid(Tensor self) -> Tensor", variants=())
def log_sigmoid(self):
    # ATen: min(x, 0) - log1p(exp(-|x|)), which never overflows; a contiguous result (what
    # log_sigmoid_forward allocates)
    return _contiguous(_smooth(self, "log_sigmoid_cpu",
                               lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))))


@op("log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)", variants=())
def log_sigmoid_forward(self):
    # ATen's CPU kernel: output as log_sigmoid, buffer = exp(-|x|), which the backward reads
    a = _floating(self, "log_sigmoid_cpu")
    return log_sigmoid.kernel(self), _contiguous(_like_input(np.exp(-np.abs(a)), self))


derivatives(log_sigmoid_forward, {"self": "log_sigmoid_backward(grad, self, buffer)"},
            output_differentiability=[True, False])


@composite(log_sigmoid)
def _log_sigmoid_composite(self):
    # Activation.cpp log_sigmoid: log_sigmoid_forward's output (its grad_fn LogSigmoidBackward0)
    return log_sigmoid_forward(self)[0]


def _contiguous(t):
    from .._tensor import _fresh
    return _fresh(xp_of(t).array(t._array, copy=True, order="C"), t.dtype, t.device)


@op("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", variants=("function", "method"))
def hardshrink(self, lambd):
    if self.dtype is D.bool or self.dtype.is_complex or not self.dtype.is_floating_point:
        raise not_implemented("hardshrink_cpu", self.dtype)
    a = self._array
    lam = a.dtype.type(lambd)
    return _like_input(np.where((a >= -lam) & (a <= lam), a.dtype.type(0), a), self)


derivatives(hardshrink, {"self": "hardshrink_backward(grad, self, lambd)"})


@op("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", variants=())
def softshrink(self, lambd):
    if not self.dtype.is_floating_point:
        raise not_implemented("softshrink_check", self.dtype)
    top = float(np.finfo(self.dtype.np).max)
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{self.dtype.ir_name}, but found {lambd}")
    a = self._array
    lam = a.dtype.type(lambd)
    res = np.where(a > lam, a - lam, np.where(a < -lam, a + lam, a * 0))  # (NaN and -0 kept)
    return _like_input(res, self)


derivatives(softshrink, {"self": "softshrink_backward(grad, self, lambd)"})


hardswish_ = _register_inplace("hardswish_(Tensor(a!) self) -> Tensor(a!)", hardswish)
hardsigmoid_ = _register_inplace("hardsigmoid_(Tensor(a!) self) -> Tensor(a!)", hardsigmoid)
mish_ = _register_inplace("mish_(Tensor(a!) self) -> Tensor(a!)", mish)
selu_ = _register_inplace("selu_(Tensor(a!) self) -> Tensor(a!)", selu, ("function",))
celu_ = _register_inplace("celu_(Tensor(a!) self, Scalar alpha=1.0) -> Tensor(a!)", celu,
                          ("function",))
# derivatives.yaml: hardswish_ / hardsigmoid_ / mish_ reuse their functional's entry (self saved
# as it was before the op); celu_ has its own (CeluBackward1), from the result
derivatives(hardswish_, hardswish.derivatives)
derivatives(hardsigmoid_, hardsigmoid.derivatives)
derivatives(mish_, mish.derivatives)
derivatives(celu_, {"self": "elu_backward(grad, alpha, 1, 1.0/alpha, True, result)"})


@composite(selu_)
def _selu__composite(self):
    # Activation.cpp: selu_ is elu_ with SELU's constants (its grad_fn is EluBackward1)
    return elu_(self, _SELU_ALPHA, _SELU_SCALE, 1)



@op("rrelu_(Tensor(a!) self, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
    "bool training=False, Generator? generator=None) -> Tensor(a!)", nondeterministic=True)
def rrelu_(self, lower, upper, training, generator):
    return write_inplace(self, rrelu.kernel(self, lower, upper, training, generator))


@op("rrelu_with_noise_(Tensor(a!) self, Tensor(b!) noise, Scalar lower=0.125, "
    "Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> Tensor(a!)",
    variants=(), nondeterministic=True)
def rrelu_with_noise_(self, noise, lower, upper, training, generator):
    return write_inplace(self, rrelu_with_noise.kernel(self, noise, lower, upper, training, generator))


derivatives(rrelu_with_noise_, {
    "self": "rrelu_with_noise_backward(grad, result, noise, lower, upper, training, True)"})


@composite(rrelu_)
def _rrelu__composite(self, lower, upper, training, generator):
    # Activation.cpp: rrelu_ is rrelu_with_noise_ on a fresh noise tensor (RreluWithNoiseBackward1)
    return rrelu_with_noise_(self, _rrelu_noise(self, lower, upper), lower, upper, training, generator)
