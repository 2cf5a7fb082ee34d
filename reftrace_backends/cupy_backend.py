"""The cuda backend: CuPy arrays. Differs from the NumPy backend in namespace, RNG and transfers only."""
import cupy  # ImportError here means "no CUDA backend"; get_backend reports it

from .base import Backend
from .numpy_backend import DEFAULT_SEED

if cupy.cuda.runtime.getDeviceCount() < 1:  # pragma: no cover - needs a GPU-less CuPy install
    raise RuntimeError("CuPy is installed but no CUDA device is visible")


class CupyBackend(Backend):
    device_type = "cuda"
    xp = cupy

    def __init__(self):
        self.initial_seed = DEFAULT_SEED
        self._rng = cupy.random.Generator(cupy.random.XORWOW(DEFAULT_SEED))

    def to_host(self, array):
        return cupy.asnumpy(array)

    def from_host(self, array):
        return cupy.asarray(array)

    def manual_seed(self, seed: int) -> None:
        self.initial_seed = int(seed)
        self._rng = cupy.random.Generator(cupy.random.XORWOW(int(seed) & ((1 << 64) - 1)))

    def get_rng_state(self):
        # XORWOW's state lives on the device; a copy of the whole generator is the exact state.
        import copy
        return copy.deepcopy(self._rng)

    def set_rng_state(self, state) -> None:
        import copy
        self._rng = copy.deepcopy(state)

    @property
    def rng(self):
        return self._rng
