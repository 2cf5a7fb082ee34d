"""The array seam: one Backend object per device type.

A backend owns the array namespace (``xp``: numpy on cpu, cupy on cuda), the random generator
and the host<->device transfers. It knows nothing of tracing or of torch semantics: kernels in
``reftrace.ops`` are written once against ``backend.xp``.
"""
from .base import Backend
from .numpy_backend import NumpyBackend

_BACKENDS = {"cpu": NumpyBackend()}


def get_backend(device_type: str) -> Backend:
    """The backend for a device type ('cpu' or 'cuda'); cuda loads CuPy on first use."""
    backend = _BACKENDS.get(device_type)
    if backend is None:
        if device_type != "cuda":
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {device_type}")
        from .cupy_backend import CupyBackend  # imported lazily: CuPy is optional
        backend = _BACKENDS["cuda"] = CupyBackend()
    return backend


def cuda_is_available() -> bool:
    try:
        get_backend("cuda")
    except Exception:  # no CuPy, no driver, or no device: all mean "no CUDA here"
        return False
    return True


__all__ = ["Backend", "get_backend", "cuda_is_available"]
