"""The cpu backend: NumPy arrays and a PCG64 generator."""
import numpy

from .base import Backend

DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val, so initial_seed() reads the same


class NumpyBackend(Backend):
    device_type = "cpu"
    xp = numpy

    def __init__(self):
        self.initial_seed = DEFAULT_SEED
        self._rng = numpy.random.Generator(numpy.random.PCG64(DEFAULT_SEED))

    def to_host(self, array):
        return array

    def from_host(self, array):
        return numpy.array(array, copy=True)

    def manual_seed(self, seed: int) -> None:
        self.initial_seed = int(seed)
        self._rng = numpy.random.Generator(numpy.random.PCG64(int(seed) & ((1 << 64) - 1)))

    def get_rng_state(self):
        return self._rng.bit_generator.state

    def set_rng_state(self, state) -> None:
        self._rng.bit_generator.state = state

    @property
    def rng(self):
        return self._rng
