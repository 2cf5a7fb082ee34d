"""Random ops: rand randn randint randperm normal bernoulli multinomial, the *_like factories and
the in-place samplers (uniform_, normal_, bernoulli_).

Every one is registered ``nondeterministic=True`` (torch's list in ir.cpp,
``Node::isNondeterministic``): a trace checker must not compare their outputs across runs.
Draws come from the tensor's device backend generator (``backend.rng``: NumPy PCG64 on cpu), or
from an explicit ``generator=`` (a ``reftrace.random.Generator``). Same seed -> same draws within
reftrace; the draws are NOT torch's (torch uses MT19937 with its own transforms).

The Python-level wrappers torch.rand & co. (which fill in device="cpu" and pin_memory=False, as
torch's bindings do, and take requires_grad=) live in ``reftrace/random.py``.
"""
import math

import numpy as np

from .. import _dtype as D
from .._device import CPU
from .._tensor import _fresh, _strided, xp_of
from ._iter import broadcast_shapes, is_non_overlapping_and_dense
from ._registry import derivatives, op
from reftrace_backends import get_backend

_RANDOM = dict(nondeterministic=True)
# *_like and multinomial results never require grad (torch has no derivative for them)
_NO_GRAD = dict(nondeterministic=True, differentiable=False)


def _rng(device, generator=None):
    if generator is None:
        return get_backend(device.type).rng
    rng = getattr(generator, "rng", None)
    if rng is None:  # a wrong object as the generator: a type error, as torch's binding gives
        raise TypeError(f"expected a torch.Generator as 'generator', but got {type(generator).__name__}")
    return rng


def _dtype(dtype, default=None):
    return dtype if dtype is not None else default or D.get_default_dtype()


def _float_only(dtype, kernel_name, complex_ok=False):
    if not (dtype.is_floating_point or (complex_ok and dtype.is_complex)):
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{dtype.ir_name}'")


def _on(device, draws):
    """Draws (host NumPy, or already on the device from the device's own generator) on ``device``."""
    if device.type != "cpu" and isinstance(draws, np.ndarray):
        return get_backend(device.type).from_host(draws)
    return draws


def _new(draws, dtype, device):
    """A fresh contiguous tensor on ``device`` holding ``draws``."""
    device = device or CPU
    return _fresh(_on(device, draws).astype(dtype.np, copy=False), dtype, device)


def _like(self, draws, dtype):
    """*_like results keep self's strides when self is dense (empty_like's preserve_format)."""
    xp = xp_of(self)
    arr = _on(self.device, draws).astype(dtype.np, copy=False)
    stride = self.stride()
    if self.is_contiguous() or not is_non_overlapping_and_dense(self.shape_tuple, stride):
        return _fresh(arr, dtype, self.device)
    order = sorted(range(arr.ndim), key=lambda d: -stride[d])
    laid = xp.ascontiguousarray(arr.transpose(order)).transpose(np.argsort(order))
    return _strided(laid, dtype, self.device, stride)


def _uniform(rng, shape, dtype, low=0.0, high=1.0):
    if dtype.is_complex:  # uniform_impl_: the real and imaginary parts (view_as_real) each
        return _as_complex(_uniform(rng, tuple(shape) + (2,), _real_of(dtype), low, high), dtype)
    wide = np.float64 if dtype is D.float64 else np.float32
    u = rng.random(tuple(shape), dtype=wide)
    return u if (low, high) == (0.0, 1.0) else low + (high - low) * u


def _normal(rng, shape, dtype, mean=0.0, std=1.0):
    if dtype.is_complex:  # normal_impl_: both parts of view_as_real, with std / sqrt(2)
        return _as_complex(_normal(rng, tuple(shape) + (2,), _real_of(dtype), mean, std / math.sqrt(2)), dtype)
    z = rng.standard_normal(tuple(shape), dtype=np.float64 if dtype is D.float64 else np.float32)
    return z if (mean, std) == (0.0, 1.0) else mean + std * z


def _real_of(dtype):
    return D.float64 if dtype is D.complex128 else D.float32


def _as_complex(parts, dtype):
    """(..., 2) real draws as complex numbers (view_as_complex)."""
    return np.ascontiguousarray(parts, _real_of(dtype).np).view(dtype.np)[..., 0]


def _integers(rng, low, high, shape):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return rng.integers(low, high, size=tuple(shape), dtype=np.int64)


# -- factories -------------------------------------------------------------------------------

def _rand(size, dtype, layout, device, pin_memory, generator=None):
    dt = _dtype(dtype)
    _float_only(dt, "check_uniform_bounds", complex_ok=True)
    return _new(_uniform(_rng(device or CPU, generator), size, dt), dt, device)


def _randn(size, dtype, layout, device, pin_memory, generator=None):
    dt = _dtype(dtype)
    _float_only(dt, "normal_kernel_cpu", complex_ok=True)
    return _new(_normal(_rng(device or CPU, generator), size, dt), dt, device)


def _randint(low, high, size, dtype, layout, device, pin_memory, generator=None):
    dt = _dtype(dtype, D.int64)
    return _new(_integers(_rng(device or CPU, generator), low, high, size), dt, device)


def _randperm(n, dtype, layout, device, pin_memory, generator=None):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = _dtype(dtype, D.int64)
    return _new(_rng(device or CPU, generator).permutation(n), dt, device)


# the keyword-only tail shared by the factory schemas (dtype default: None, or 4 = int64)
_FACTORY = ("*, ScalarType? dtype={}, Layout? layout=None, Device? device=None, "
            "bool? pin_memory=None) -> Tensor")
_GEN = "*, Generator? generator, " + _FACTORY[3:]

op("rand(SymInt[] size, " + _FACTORY.format("None"), **_RANDOM)(_rand)
op("rand.generator(SymInt[] size, " + _GEN.format("None"), **_RANDOM)(
    lambda size, generator, *rest: _rand(size, *rest, generator=generator))
op("randn(SymInt[] size, " + _FACTORY.format("None"), **_RANDOM)(_randn)
op("randn.generator(SymInt[] size, " + _GEN.format("None"), **_RANDOM)(
    lambda size, generator, *rest: _randn(size, *rest, generator=generator))
op("randint(SymInt high, SymInt[] size, " + _FACTORY.format(4), **_RANDOM)(
    lambda high, size, *rest: _randint(0, high, size, *rest))
op("randint.generator(SymInt high, SymInt[] size, " + _GEN.format(4), **_RANDOM)(
    lambda high, size, generator, *rest: _randint(0, high, size, *rest, generator=generator))
op("randint.low(SymInt low, SymInt high, SymInt[] size, " + _FACTORY.format(4), **_RANDOM)(_randint)
op("randint.low_generator(SymInt low, SymInt high, SymInt[] size, " + _GEN.format(4), **_RANDOM)(
    lambda low, high, size, generator, *rest: _randint(low, high, size, *rest, generator=generator))
op("randperm(SymInt n, " + _FACTORY.format(4), **_RANDOM)(_randperm)
op("randperm.generator(SymInt n, " + _GEN.format(4), **_RANDOM)(
    lambda n, generator, *rest: _randperm(n, *rest, generator=generator))


# -- *_like ------------------------------------------------------------------------------------

_LIKE = ("*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
         "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor")


@op("rand_like(Tensor self, " + _LIKE, **_NO_GRAD)
def rand_like(self, dtype, layout, device, pin_memory, memory_format):
    dt = _dtype(dtype, self.dtype)
    _float_only(dt, "check_uniform_bounds", complex_ok=True)
    return _like(self, _uniform(_rng(self.device), self.shape_tuple, dt), dt)


@op("randn_like(Tensor self, " + _LIKE, **_NO_GRAD)
def randn_like(self, dtype, layout, device, pin_memory, memory_format):
    dt = _dtype(dtype, self.dtype)
    _float_only(dt, "normal_kernel_cpu", complex_ok=True)
    return _like(self, _normal(_rng(self.device), self.shape_tuple, dt), dt)


@op("randint_like(Tensor self, SymInt high, " + _LIKE, **_NO_GRAD)
def randint_like(self, high, dtype, layout, device, pin_memory, memory_format):
    return randint_like_low.kernel(self, 0, high, dtype, layout, device, pin_memory, memory_format)


@op("randint_like.low_dtype(Tensor self, SymInt low, SymInt high, " + _LIKE, **_NO_GRAD)
def randint_like_low(self, low, high, dtype, layout, device, pin_memory, memory_format):
    dt = _dtype(dtype, self.dtype)
    return _like(self, _integers(_rng(self.device), low, high, self.shape_tuple), dt)


# -- distributions parameterised by tensors ----------------------------------------------------

def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _normal_from(mean, std, shape, dtype, device, generator):
    xp = np if device.type == "cpu" else get_backend(device.type).xp
    draws = _on(device, _normal(_rng(device, generator), shape, dtype))
    res = xp.asarray(mean) + xp.asarray(std) * draws
    return _fresh(res.astype(dtype.np), dtype, device)


@op("normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor",
    **_RANDOM)
def normal_tensor_tensor(mean, std, generator):
    if (std._array < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    dt = mean.dtype  # the output is mean's dtype, whatever std's
    _float_only(dt, "normal_kernel_cpu")
    shape = broadcast_shapes(mean.shape_tuple, std.shape_tuple)
    return _normal_from(mean._array, std._array, shape, dt, mean.device, generator)


derivatives(normal_tensor_tensor, {"mean": "zeros(mean.shape, dtype=grad.dtype)", "std": "zeros(std.shape, dtype=grad.dtype)"})


@op("normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None) -> Tensor",
    **_RANDOM)
def normal_tensor_float(mean, std, generator):
    _check_std(std)
    _float_only(mean.dtype, "normal_kernel_cpu")
    return _normal_from(mean._array, std, mean.shape_tuple, mean.dtype, mean.device, generator)


derivatives(normal_tensor_float, {"mean": "zeros(mean.shape, dtype=grad.dtype)"})


@op("normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor",
    **_RANDOM)
def normal_float_tensor(mean, std, generator):
    if (std._array < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    return _normal_from(mean, std._array, std.shape_tuple, std.dtype, std.device, generator)


derivatives(normal_float_tensor, {"std": "zeros(std.shape, dtype=grad.dtype)"})


@op("normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, "
    "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) "
    "-> Tensor", **_RANDOM)
def normal_float_float(mean, std, size, generator, dtype, layout, device, pin_memory):
    _check_std(std)
    return _normal_from(mean, std, size, _dtype(dtype), device or CPU, generator)


def _check_probabilities(p):
    if ((p < 0) | (p > 1)).any():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")


def bernoulli_draws(device, shape, p, generator=None):
    """Booleans of ``shape`` on ``device``: True with probability p (a number, or an array that
    broadcasts to ``shape``). Shared with dropout."""
    return _on(device, _rng(device, generator).random(tuple(shape))) < p


@op("bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", variants=("function", "method"),
    **_RANDOM)
def bernoulli(self, generator):
    _float_only(self.dtype, "bernoulli_tensor_cpu_p_")
    _check_probabilities(self._array)
    draws = bernoulli_draws(self.device, self.shape_tuple, self._array, generator)
    return _fresh(draws.astype(self.dtype.np), self.dtype, self.device)


derivatives(bernoulli, {"self": "zeros_like(grad)"})


def _check_p(p, name):
    if not 0 <= p <= 1:
        raise RuntimeError(f"{name} expects p to be in [0, 1], but got p={p:g}")


@op("bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
    variants=("function", "method"), **_RANDOM)
def bernoulli_p(self, p, generator):
    _check_p(p, "bernoulli_")
    draws = bernoulli_draws(self.device, self.shape_tuple, p, generator)
    return _fresh(draws.astype(self.dtype.np), self.dtype, self.device)


@op("multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, "
    "Generator? generator=None) -> Tensor", variants=("function", "method"), **_NO_GRAD)
def multinomial(self, num_samples, replacement, generator):
    if self.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{self.dtype.ir_name}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = self.shape_tuple[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    probs = np.asarray(get_backend(self.device.type).to_host(self._array), dtype=np.float64)
    rows = probs.reshape(-1, n)
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = rows.sum(axis=1)
    if (sums <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rng(self.device, generator)
    # without replacement a zero-probability category is only drawn once the others run out
    picks = [rng.choice(n, num_samples, replace=replacement, p=row / s)
             if replacement or np.count_nonzero(row) >= num_samples
             else np.concatenate([rng.choice(n, np.count_nonzero(row), replace=False, p=row / s),
                                  rng.permutation(np.flatnonzero(row == 0))])[:num_samples]
             for row, s in zip(rows, sums)]
    host = np.stack(picks).reshape(self.shape_tuple[:-1] + (num_samples,))
    return _new(host, D.int64, self.device)


# -- in-place samplers -------------------------------------------------------------------------

def _fill(self, draws):
    """Write draws into self through its array (views see them) and bump the version."""
    self._array[...] = _on(self.device, draws).astype(self.dtype.np, copy=False)
    self._version += 1
    return self


@op("uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) "
    "-> Tensor(a!)", variants=("method",), **_RANDOM)
def uniform_(self, low, high, generator):
    _float_only(self.dtype, "check_uniform_bounds", complex_ok=True)
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low:g} "
                           f"> to={high:g}")
    return _fill(self, _uniform(_rng(self.device, generator), self.shape_tuple, self.dtype, low, high))


derivatives(uniform_, {"self": "zeros_like(grad)"})


@op("normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) "
    "-> Tensor(a!)", variants=("method",), **_RANDOM)
def normal_(self, mean, std, generator):
    _float_only(self.dtype, "normal_kernel_cpu", complex_ok=True)
    _check_std(std)
    return _fill(self, _normal(_rng(self.device, generator), self.shape_tuple, self.dtype, mean, std))


derivatives(normal_, {"self": "zeros_like(grad)"})


@op("bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> Tensor(a!)",
    variants=("method",), **_RANDOM)
def bernoulli__tensor(self, p, generator):
    _check_probabilities(p._array)
    p = xp_of(self).asarray(p._array)
    return _fill(self, bernoulli_draws(self.device, self.shape_tuple, p, generator))


derivatives(bernoulli__tensor, {"self": "zeros_like(grad)", "p": "zeros_like(p)"})


@op("bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
    variants=("method",), **_RANDOM)
def bernoulli__float(self, p, generator):
    _check_p(p, "bernoulli_")
    return _fill(self, _rng(self.device, generator).random(self.shape_tuple) < p)


derivatives(bernoulli__float, {"self": "zeros_like(grad)"})
