"""torch/nn/utils/rnn.py: PackedSequence and pack/pad helpers, as torch traces them.

``pack_padded_sequence`` records ``aten::_pack_padded_sequence(input, lengths, batch_first)``
(plus ``aten::sort``/``index_select`` when ``enforce_sorted=False``); ``pad_packed_sequence``
records ``aten::_pad_packed_sequence(data, batch_sizes, batch_first, padding_value,
total_length)`` with the length read from ``batch_sizes.size(0)`` (a traced size);
``pad_sequence`` records ``aten::pad_sequence``. The lengths are values, not sizes: a traced
graph bakes them in where they were Python ints (torch warns, and so does this code).
"""
import warnings
from collections import namedtuple
from collections.abc import Iterable

from ... import _factories
from ..._creation import as_tensor
from ..._device import contiguous_format
from ..._dtype import int64
from ..._dispatch import STATE
from ...ops import get_packet

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

PackedSequence_ = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices",
                                                 "unsorted_indices"])


class PackedSequence(PackedSequence_):
    """Data and batch sizes of a packed batch of variable-length sequences (a 4-tuple, as
    torch's NamedTuple: a traced function may return it)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices,
                                                                 unsorted_indices))

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def double(self):
        return self.to(dtype=_dtype("float64"))

    def float(self):
        return self.to(dtype=_dtype("float32"))

    def half(self):
        return self.to(dtype=_dtype("float16"))

    def long(self):
        return self.to(dtype=_dtype("int64"))

    def int(self):
        return self.to(dtype=_dtype("int32"))

    @property
    def is_cuda(self):
        return self.data.is_cuda


def _dtype(name):
    from ... import _dtype as D
    return D.BY_NAME[name]


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                "created manually. They should be instantiated by functions like pack_sequence and "
                "pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def _packed_sequence_init(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    return PackedSequence(*_packed_sequence_init_args(data, batch_sizes, sorted_indices,
                                                      unsorted_indices))


def invert_permutation(permutation):
    if permutation is None:
        return None
    output = _factories.empty_like(permutation, memory_format=contiguous_format)  # legacy_contiguous
    output.scatter_(0, permutation, _factories.arange(0, permutation.numel(),
                                                      device=permutation.device))
    return output


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    if not isinstance(lengths, type(input)):
        if STATE.tracer is not None:
            warnings.warn(
                "pack_padded_sequence has been called with a Python list of sequence lengths. The "
                "tracer cannot track the data flow of Python values, and it will treat them as "
                "constants, likely rendering the trace incorrect for any other combination of "
                "lengths.", stacklevel=2)
        lengths = as_tensor(lengths, dtype=int64, device="cpu")
    else:
        lengths = lengths.to(dtype=int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = get_packet("sort")(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        batch_dim = 0 if batch_first else 1
        input = input.index_select(batch_dim, sorted_indices)
    data, batch_sizes = get_packet("_pack_padded_sequence")(input, lengths, batch_first)
    return _packed_sequence_init(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}")
        max_seq_length = total_length
    padded_output, lengths = get_packet("_pad_packed_sequence")(
        sequence.data, sequence.batch_sizes, batch_first, padding_value, max_seq_length)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return padded_output.index_select(batch_dim, unsorted_indices), lengths[unsorted_indices.cpu()]
    return padded_output, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    if STATE.tracer is None:
        if not isinstance(sequences, Iterable):
            raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                               f"of type: {type(sequences)}")
        sequences = tuple(sequences)
    elif isinstance(sequences, type(_factories.empty(0))):
        sequences = sequences.unbind(0)
    return get_packet("pad_sequence")(sequences, batch_first, padding_value, padding_side)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    unpadded_sequences = []
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    max_length = padded_sequences.shape[1]
    idx = _factories.arange(max_length, device=lengths.device)
    for seq, length in zip(padded_sequences, lengths):
        mask = idx < length
        unpadded_sequences.append(seq[mask])
    return unpadded_sequences


def pack_sequence(sequences, enforce_sorted=True):
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
