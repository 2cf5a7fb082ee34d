"""torch.return_types: the named tuples that ops with named returns give (``x.max(0)`` is a
``torch.return_types.max`` with ``values`` and ``indices``).

In torch they are C++ PyStructSequence types (torch/csrc/utils/structseq.cpp); here they are
named tuples with structseq's repr, one type per op name, shared by its overloads (``max.dim``
and ``max.dim_max`` both give ``max``). The repr names them ``torch.return_types.<name>`` as
torch does, like dtypes print as ``torch.float32``: reftrace's printed output is torch's.
"""
from collections import namedtuple

__all__ = []   # filled as ops register: one name per op with named returns


def _structseq_repr(self):
    """structseq.cpp's returned_structseq_repr: one ``field=repr`` per line."""
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{fields})"


def make(name, fields):
    """The return type of op ``name`` (its base name, no overload) with these field names."""
    existing = globals().get(name)
    if existing is not None and existing._fields == tuple(fields):
        return existing
    cls = type(name, (namedtuple(name, fields),), {
        "__slots__": (), "__module__": __name__,
        "__repr__": _structseq_repr, "__str__": _structseq_repr,
        # structseq's counts (torch.return_types.max.n_fields == 2)
        "n_fields": len(fields), "n_sequence_fields": len(fields), "n_unnamed_fields": 0})
    if existing is None:
        globals()[name] = cls
        __all__.append(name)
    return cls
