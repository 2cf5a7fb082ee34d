"""What every backend provides. Kept deliberately narrow (see DESIGN.md, "Backends are narrow")."""


class Backend:
    #: device type this backend serves ('cpu', 'cuda')
    device_type = ""
    #: the array namespace kernels are written against (numpy or cupy)
    xp = None

    def to_host(self, array):
        """A NumPy array with the same contents (no copy where the data already lives on the host)."""
        raise NotImplementedError

    def from_host(self, array):
        """This backend's array holding a copy of a host (NumPy) array."""
        raise NotImplementedError

    # -- random numbers ---------------------------------------------------------------------
    # One generator per backend. Its whole state is an opaque bytes-free Python value so that
    # get_rng_state / set_rng_state can save and restore it exactly (the checker relies on it).

    def manual_seed(self, seed: int) -> None:
        raise NotImplementedError

    def get_rng_state(self):
        raise NotImplementedError

    def set_rng_state(self, state) -> None:
        raise NotImplementedError

    @property
    def rng(self):
        """The generator kernels draw from (a numpy/cupy Generator)."""
        raise NotImplementedError
