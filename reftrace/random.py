"""torch.random: seeding and saving the random state.

Each device's default generator is its backend's (``reftrace_backends``: NumPy PCG64 on cpu,
CuPy XORWOW on cuda); ``manual_seed`` reseeds every loaded backend, as torch seeds cpu and all
cuda devices. Identical seeds give identical draws within reftrace; they are not torch's draws.

The state: ``get_rng_state()`` returns a 1-D ``uint8`` tensor, like torch's (whose 5056 bytes are
MT19937's state; reftrace's are PCG64's, see ``_STATE_LAYOUT``), so the usual
``s = get_rng_state(); ...; set_rng_state(s)`` round trip works unchanged. Only a tensor obtained
from reftrace's ``get_rng_state`` can be restored; a torch state tensor cannot (different
generator). ``fork_rng`` saves and restores the cpu state (and the listed cuda devices' states).
"""
import contextlib
import os
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence, Union

import numpy as np

from . import _dtype as D
from ._device import CPU, as_device
from ._tensor import Tensor, _fresh
from .ops import get_packet
from reftrace_backends import get_backend
from reftrace_backends.numpy_backend import DEFAULT_SEED

_MASK64 = (1 << 64) - 1
# PCG64's complete state as bytes, little endian: state (16), inc (16), has_uint32 (1), uinteger (4)
_STATE_LAYOUT = (("state", 16), ("inc", 16), ("has_uint32", 1), ("uinteger", 4))


def _seed_value(seed):
    seed = int(seed)
    if not -(1 << 63) <= seed <= _MASK64:
        raise RuntimeError("Overflow when unpacking long")
    return seed & _MASK64  # torch reads negative seeds as their uint64 bit pattern


def _encode(state):
    if state.get("bit_generator") != "PCG64":  # e.g. a cuda generator: stays an opaque object
        return state
    inner = dict(state["state"], has_uint32=state["has_uint32"], uinteger=state["uinteger"])
    raw = b"".join(int(inner[k]).to_bytes(n, "little") for k, n in _STATE_LAYOUT)
    return _fresh(np.frombuffer(raw, dtype=np.uint8).copy(), D.uint8)


def _decode(new_state):
    if not isinstance(new_state, Tensor):
        return new_state
    if new_state.dtype is not D.uint8:
        raise TypeError(f"expected a torch.ByteTensor, but got {new_state.dtype}")
    raw = bytes(np.asarray(new_state._array, dtype=np.uint8).reshape(-1))
    if len(raw) != sum(n for _, n in _STATE_LAYOUT):
        raise RuntimeError(f"Expected a reftrace RNG state of size {sum(n for _, n in _STATE_LAYOUT)} "
                           f"(PCG64) but found the input RNG state size to be {len(raw)}")
    fields, pos = {}, 0
    for k, n in _STATE_LAYOUT:
        fields[k] = int.from_bytes(raw[pos:pos + n], "little")
        pos += n
    return {"bit_generator": "PCG64", "state": {"state": fields["state"], "inc": fields["inc"]},
            "has_uint32": fields["has_uint32"], "uinteger": fields["uinteger"]}


class Generator:
    """torch.Generator: an independent stream of draws for ``generator=`` arguments."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self.manual_seed(DEFAULT_SEED)  # a new torch.Generator starts from torch's default seed

    def manual_seed(self, seed):
        self._initial_seed = _seed_value(seed)
        self.rng = np.random.Generator(np.random.PCG64(self._initial_seed))
        return self

    def seed(self):
        s = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._initial_seed

    def get_state(self):
        return _encode(self.rng.bit_generator.state)

    def set_state(self, new_state):
        self.rng.bit_generator.state = _decode(new_state)
        return self


class _DefaultGenerator(Generator):
    """The default generator of a device: its backend's, so ops without ``generator=`` share it."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)

    @property
    def _backend(self):
        return get_backend(self.device.type)

    @property
    def rng(self):
        return self._backend.rng

    def manual_seed(self, seed):
        self._backend.manual_seed(_seed_value(seed))
        return self

    def initial_seed(self):
        return self._backend.initial_seed

    def get_state(self):
        return _encode(self._backend.get_rng_state())

    def set_state(self, new_state):
        self._backend.set_rng_state(_decode(new_state))
        return self


default_generator = _DefaultGenerator("cpu")


def manual_seed(seed: int) -> "Generator":
    """Seed every device's default generator; returns the cpu one (as torch does)."""
    seed = _seed_value(seed)
    from reftrace_backends import _BACKENDS  # only the backends already loaded: never load CuPy here
    for backend in list(_BACKENDS.values()):
        backend.manual_seed(seed)
    return default_generator


def seed() -> int:
    """Seed from OS entropy; returns the seed (a non-negative 63-bit int, as torch)."""
    s = int.from_bytes(os.urandom(8), "little") >> 1
    manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


# -- the random factories as torch's Python bindings present them ------------------------------

def _factory(name, default_device):
    """torch.<name>: the binding fills TensorOptions before the ATen call (a trace records
    device="cpu" and pin_memory=False for factories, pin_memory=False for *_like) and takes
    requires_grad=, which is no schema argument (as reftrace/_factories.py does for zeros & co.)."""
    packet = get_packet(name)

    def factory(*args, requires_grad=False, device=None, pin_memory=False, **kwargs):
        device = as_device(device) if device is not None else default_device
        t = packet(*args, device=device, pin_memory=pin_memory, **kwargs)
        if requires_grad:  # the binding's own check, capitalised unlike Tensor.requires_grad_'s
            if not (t.dtype.is_floating_point or t.dtype.is_complex):
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients")
            t.requires_grad = True
        return t
    factory.__name__ = factory.__qualname__ = name
    return factory


_FACTORIES = ("rand", "randn", "randint", "randperm")
_LIKES = ("rand_like", "randn_like", "randint_like")
if TYPE_CHECKING:  # their signatures: the schema's plus requires_grad= (tests/gen_stubs.py)
    from ._variable_functions import (rand, rand_like, randint, randint_like, randn, randn_like,
                                      randperm)
else:
    rand, randn, randint, randperm = (_factory(n, CPU) for n in _FACTORIES)
    rand_like, randn_like, randint_like = (_factory(n, None) for n in _LIKES)
_normal_sizes = _factory("normal", CPU)


def normal(*args: Any, **kwargs: Any) -> Tensor:
    """torch.normal: only the (float mean, float std, size) form is a factory with options."""
    given = list(args[:2]) + [kwargs.get("mean"), kwargs.get("std")]
    if any(isinstance(a, Tensor) for a in given):
        return get_packet("normal")(*args, **kwargs)
    return _normal_sizes(*args, **kwargs)


@contextlib.contextmanager
def fork_rng(devices: Optional[Sequence[Union[int, str]]] = None, enabled: bool = True,
             _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda") -> Iterator[None]:
    """Run a block with the random state saved on entry and restored on exit (also on errors)."""
    if not enabled:
        yield
        return
    gens = [default_generator] + [
        _DefaultGenerator(f"{device_type}:{d}" if isinstance(d, int) else d) for d in devices or ()]
    saved = [g.get_state() for g in gens]
    try:
        yield
    finally:
        for g, s in zip(gens, saved):
            g.set_state(s)


# what `import reftrace as torch` puts at top level (fork_rng stays torch.random.fork_rng)
__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "rand", "randn", "randint", "randperm", "normal", "rand_like",
           "randn_like", "randint_like"]
