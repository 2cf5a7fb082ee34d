"""Dropout, embedding, one_hot and padding.

Recorded forms: ``F.dropout(x, p, training)`` records ``aten::dropout(x, p, train)`` (``Dropout2d``
records ``aten::feature_dropout``), flagged nondeterministic; with ``train`` False (or p == 0)
the op returns its INPUT itself, as torch's. ``F.pad`` records ``aten::pad(x, pad, mode, value)``
in torch 2.13, whatever the mode; the mode-specific ops (constant_pad_nd, reflection_pad2d ...)
are what it runs and are registered for ``torch.ops.aten`` use.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, xp_of
from .nn_conv import legacy_type_name, sizes
from .random import bernoulli_draws
from ._memory_format import like_input
from ._registry import composite, derivatives, get_packet, op


# -- dropout -------------------------------------------------------------------------------------

def _dropout(x, p, train, feature, inplace, alpha=False):
    """ATen's _dropout_impl: keep each element (feature: each (sample, channel) plane) with
    probability 1 - p. Plain dropout scales the kept ones by 1 / (1 - p); alpha dropout (for SELU
    networks) scales them by a and sets the dropped ones so that mean and variance are kept."""
    if p == 0 or not train or x._array.size == 0:
        return x
    if feature and x.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    xp = xp_of(x)
    if p == 1:
        result = x._array * xp.zeros((), dtype=x.dtype.np)
    else:
        shape = x.shape_tuple[:2] + (1,) * (x.ndim - 2) if feature else x.shape_tuple
        keep = bernoulli_draws(x.device, shape, 1 - p)
        t = x.dtype.np.type
        if alpha:
            noise, b = _alpha_noise(keep.astype(x.dtype.np), p, t)
            result = (x._array * noise + b).astype(x.dtype.np)
        else:  # the scaled mask is in x's dtype
            result = x._array * (keep.astype(x.dtype.np) / t(1 - p))
    if inplace:
        x._array[...] = result
        x._version += 1
        return x
    return _fresh(result, x.dtype, x.device)


def _alpha_noise(noise, p, t):
    """Alpha dropout's (noise * a, b) from the kept mask: kept elements scale by a, dropped ones
    become b, so that a SELU network's mean and variance are kept."""
    alpha_, a = 1.7580993408473766, 1.0 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
    b = (noise + t(-1)) * t(alpha_ * a) + t(alpha_ * a * p)
    return noise * t(a), b


@op("dropout(Tensor input, float p, bool train) -> Tensor", nondeterministic=True)
def dropout(input, p, train):
    return _dropout(input, p, train, False, False)


def _scaled_mask(x, p, feature):
    """The kept-and-scaled mask _dropout draws (the same random draws), as a tensor."""
    shape = x.shape_tuple[:2] + (1,) * (x.ndim - 2) if feature else x.shape_tuple
    keep = bernoulli_draws(x.device, shape, 1 - p)
    return _fresh(keep.astype(x.dtype.np) / x.dtype.np.type(1 - p), x.dtype, x.device)


def _dropout_composite(x, p, train, feature, inplace):
    """Dropout.cpp _dropout_impl as autograd records it: x * (mask / (1 - p)) (MulBackward0),
    x.mul_(...) in place; p == 1 multiplies by a zero."""
    if p == 0 or not train or x.numel() == 0:
        return x
    factor = _fresh(xp_of(x).zeros((), dtype=x.dtype.np), x.dtype, x.device) if p == 1 \
        else _scaled_mask(x, p, feature)
    return x.mul_(factor) if inplace else x * factor


composite(dropout)(lambda input, p, train: _dropout_composite(input, p, train, False, False))


@op("feature_dropout(Tensor input, float p, bool train) -> Tensor", nondeterministic=True)
def feature_dropout(input, p, train):
    return _dropout(input, p, train, True, False)


composite(feature_dropout)(lambda input, p, train: _dropout_composite(input, p, train, True, False))


@op("dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)", nondeterministic=True)
def dropout_(self, p, train):
    return _dropout(self, p, train, False, True)


composite(dropout_)(lambda self, p, train: _dropout_composite(self, p, train, False, True))


@op("feature_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)", nondeterministic=True)
def feature_dropout_(self, p, train):
    return _dropout(self, p, train, True, True)


composite(feature_dropout_)(lambda self, p, train: _dropout_composite(self, p, train, True, True))


@op("alpha_dropout(Tensor input, float p, bool train) -> Tensor", nondeterministic=True)
def alpha_dropout(input, p, train):
    return _dropout(input, p, train, False, False, alpha=True)


@op("feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor", nondeterministic=True)
def feature_alpha_dropout(input, p, train):
    return _dropout(input, p, train, True, False, alpha=True)


@op("alpha_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)", nondeterministic=True)
def alpha_dropout_(self, p, train):
    return _dropout(self, p, train, False, True, alpha=True)


@op("feature_alpha_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
    nondeterministic=True)
def feature_alpha_dropout_(self, p, train):
    return _dropout(self, p, train, True, True, alpha=True)


def _alpha_dropout_composite(x, p, train, feature, inplace):
    """Dropout.cpp _dropout_impl for alpha dropout as autograd records it: (x * noise).add_(b)
    (MulBackward0 under AddBackward0), x.mul_(noise).add_(b) in place; p == 1 multiplies by a
    zero. The noise and b are the kernel's (the same random draws)."""
    if p == 0 or not train or x.numel() == 0:
        return x
    if p == 1:
        zero = _fresh(xp_of(x).zeros((), dtype=x.dtype.np), x.dtype, x.device)
        return x.mul_(zero) if inplace else x * zero
    if feature and x.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = x.shape_tuple[:2] + (1,) * (x.ndim - 2) if feature else x.shape_tuple
    keep = bernoulli_draws(x.device, shape, 1 - p)
    noise, b = _alpha_noise(keep.astype(x.dtype.np), p, x.dtype.np.type)
    noise, b = (_fresh(v, x.dtype, x.device) for v in (noise, b))
    return (x.mul_(noise) if inplace else x * noise).add_(b)


composite(alpha_dropout)(lambda input, p, train: _alpha_dropout_composite(input, p, train, False, False))
composite(feature_alpha_dropout)(
    lambda input, p, train: _alpha_dropout_composite(input, p, train, True, False))
composite(alpha_dropout_)(lambda self, p, train: _alpha_dropout_composite(self, p, train, False, True))
composite(feature_alpha_dropout_)(
    lambda self, p, train: _alpha_dropout_composite(self, p, train, True, True))


# -- embedding, one_hot ----------------------------------------------------------------------------

@op("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
    "bool sparse=False) -> Tensor")
def embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse):
    # padding_idx / scale_grad_by_freq / sparse only change the backward pass
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices.dtype not in (D.int64, D.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {legacy_type_name(indices)} instead (while checking arguments for "
            "embedding)")
    w, idx = weight._array, indices._array
    if idx.size and type(idx) is np.ndarray and type(w) is np.ndarray:
        # take's own bounds check finds the indices past the end (negative ones it would wrap)
        try:
            rows = w.take(idx, 0) if np.minimum.reduce(idx, axis=None) >= 0 else None
        except IndexError:
            rows = None
        if rows is None:
            raise IndexError("index out of range in self")
        return _fresh(rows, weight.dtype, weight.device, True)
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape_tuple[0]):
        raise IndexError("index out of range in self")
    return _fresh(w[idx], weight.dtype, weight.device)


derivatives(embedding, {"weight": "embedding_backward(grad, indices, weight.shape[0], padding_idx, "
                                      "scale_grad_by_freq, sparse)",
                        "indices": "non_differentiable"})


@op("embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) "
    "-> Tensor(a!)")
def embedding_renorm_(self, indices, max_norm, norm_type):
    # F.embedding(max_norm=...): rows that will be looked up are scaled, in place, to norm <= max
    if self.ndim != 2:
        raise RuntimeError("'self' must be 2-D")
    if indices.dtype not in (D.int64, D.int32):
        raise RuntimeError(
            "Expected tensor for argument #2 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {legacy_type_name(indices)} instead (while checking arguments for "
            "embedding_renorm_)")
    w = self._array
    for i in sorted({int(v) for v in indices._array.reshape(-1).tolist()}):
        norm = float(np.linalg.norm(w[i], ord=norm_type))
        if norm > max_norm:
            w[i] *= w.dtype.type(max_norm / (norm + 1e-7))
    self._version += 1
    return self


# derivatives.yaml declares it without a formula: backward raises torch's not_implemented
derivatives(embedding_renorm_, {"self": "not_implemented('embedding_renorm')", "indices": "non_differentiable"})


@op("one_hot(Tensor self, int num_classes=-1) -> Tensor", variants=())
def one_hot(self, num_classes):
    if self.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = xp_of(self)
    a = self._array
    if a.size == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(a.max()) + 1
        elif a.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    res = (a[..., None] == xp.arange(num_classes)).astype(np.int64)
    return _fresh(res, D.int64, self.device)


# -- padding ---------------------------------------------------------------------------------------

def _pairs(pad, ndim):
    """F.pad's flat list (last dim first: left, right, top, bottom, ...) as numpy pad pairs."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return pairs


@op("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor")
def constant_pad_nd(self, pad, value):
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * self.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of "
                           f"the input. Pad length is {len(pad)} while the input has {self.ndim} "
                           "dimensions.")
    pairs = _pairs(pad, self.ndim)
    shape = self.shape_tuple
    for d, (b, e) in enumerate(pairs):
        # negative pads are applied first as narrow() crops, with narrow's check
        if shape[d] + min(b, 0) < 0 or shape[d] + min(b, 0) + min(e, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if shape[d] + b + e < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {b} and {e} resulted "
                               f"in a negative output size, which is invalid. Check dimension {d} of "
                               "your input.")
    xp = xp_of(self)
    out = xp.full(tuple(s + b + e for s, (b, e) in zip(shape, pairs)), value, dtype=self.dtype.np)
    # negative padding crops: copy the overlap of input and output windows
    src = tuple(slice(max(-b, 0), s - max(-e, 0)) for s, (b, e) in zip(shape, pairs))
    dst = tuple(slice(max(b, 0), max(b, 0) + (sl.stop - sl.start))
                for sl, (b, e) in zip(src, pairs))
    out[dst] = self._array[src]
    return like_input(_fresh(out, self.dtype, self.device), self)


derivatives(constant_pad_nd, {"self": "constant_pad_nd_backward(grad, pad)"})


def _np_pad(self, pad, mode, dims):
    """reflection/replication/circular padding of the last ``dims`` dims."""
    shape = self.shape_tuple
    if mode != "circular" and (self.ndim not in (dims + 1, dims + 2)
                               or 0 in shape[self.ndim - dims - 1:]):
        raise RuntimeError(f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{sizes(shape)}")
    pairs = _pairs(pad, self.ndim)
    if mode == "reflect":
        # checked from the last dim back; torch numbers the pad arguments #4, #6, #8
        for j, d in enumerate(range(self.ndim - 1, self.ndim - 1 - dims, -1)):
            b, e = pairs[d]
            if b >= shape[d] or e >= shape[d]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * j}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({b}, {e}) at dimension {d} of input "
                    f"{sizes(shape)}")
    _check_negative_padding(self, pairs, mode, dims)
    xp = xp_of(self)
    a = self._array
    # one gather per padded dim with ATen's index arithmetic, which also covers negative padding
    # (a crop on that side): reflect mirrors about the ORIGINAL edges, replicate clamps to them,
    # circular wraps within what is left after cropping
    for d in range(self.ndim - dims, self.ndim):
        b, e = pairs[d]
        if (b, e) == (0, 0):
            continue
        L = shape[d]
        out = L + b + e
        j = np.arange(out) - b
        if mode == "reflect":
            j = np.abs(j)
            j = np.where(j >= L, 2 * (L - 1) - j, j)
        elif mode == "replicate":
            j = np.clip(j, 0, L - 1)
        else:
            lo, core = max(-b, 0), L - max(-b, 0) - max(-e, 0)
            j = lo + np.mod(j + b - max(b, 0), core) if core > 0 else j
        a = xp.take(a, xp.asarray(j), axis=d)
    return like_input(_fresh(xp.ascontiguousarray(a), self.dtype, self.device), self)


def _check_negative_padding(self, pairs, mode, dims):
    """What ATen says when negative padding leaves too little (each kernel its own words)."""
    shape = self.shape_tuple
    spatial = list(range(self.ndim - dims, self.ndim))
    out = {d: shape[d] + pairs[d][0] + pairs[d][1] for d in spatial}
    if mode == "circular":
        if any(o < 0 for o in out.values()):
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        return
    names = "DHW"[3 - dims:]
    if dims < 3 and all(o < 1 for o in out.values()):
        comma = "" if mode == "replicate" and dims == 2 else ","
        ins = ", ".join(f"{n}: {shape[d]}" for n, d in zip(names, spatial))
        if comma == "":
            ins = ins + " "
        outs = " ".join(f"{n}: {out[d]}" for n, d in zip(names, spatial))
        raise RuntimeError(f"input ({ins}) is too small. Calculated output {outs}")
    if any(o < 0 for o in out.values()):
        if mode == "reflect" and dims == 2:
            raise RuntimeError("numel: integer multiplication overflow")
        full = [out.get(d, shape[d]) for d in range(self.ndim)]
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out.values())}: {sizes(full)}")


def _register_pad(mode, aten, dims):
    n = 2 * dims
    padded = op(f"{aten}{dims}d(Tensor self, SymInt[{n}] padding) -> Tensor", variants=())(
        lambda self, padding: _np_pad(self, padding, mode, dims))
    # torch's formula calls {aten}{dims}d_backward; written with ops (padding_backward)
    derivatives(padded, {"self": f'padding_backward(grad, self, padding, "{mode}")'})


for _dims in (1, 2, 3):
    _register_pad("reflect", "reflection_pad", _dims)
    _register_pad("replicate", "replication_pad", _dims)

@op('pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor', variants=())
def pad(self, pad, mode, value):
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * self.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{self.ndim}")
    if mode == "constant":
        return constant_pad_nd.kernel(self, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    dims = len(pad) // 2
    if not (1 <= dims <= 3 and self.ndim in (dims + 1, dims + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {self.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        for d, (b, e) in enumerate(_pairs(pad, self.ndim)):
            if b > self.shape_tuple[d] or e > self.shape_tuple[d]:
                raise RuntimeError("Padding value causes wrapping around more than once.")
    return _np_pad(self, pad, mode, dims)


# -- embedding_bag (EmbeddingBag.cpp) --------------------------------------------------------------

def _bag_checks(weight, indices, offsets, mode, per_sample_weights):
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t.dtype not in (D.int64, D.int32):
            raise RuntimeError(
                f"Expected tensor for argument #1 '{name}' to have one of the following scalar "
                f"types: Long, Int; but got {legacy_type_name(t)} instead (while checking "
                "arguments for embedding_bag)")
    if indices.dtype is not offsets.dtype:
        raise RuntimeError("expected scalar type " + indices.dtype.ir_name + " but found "
                           + offsets.dtype.ir_name)
    if weight.dtype.category != 2:
        raise RuntimeError(f"expected weight to be a floating point tensor, got {weight.dtype}")
    off = offsets._array
    if off.size and off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has "
                           f"to start from position 0. However, got {int(off[0])}")
    if off.size and off[-1] > indices._array.shape[0]:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                           f"({indices._array.shape[0]}), but got offsets[-1] of {int(off[-1])}")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")


def _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights, include_last_offset,
                        padding_idx):
    """The bags' sums / means / maxima, and ATen's three auxiliary results (offset2bag, bag_size,
    max_indices) with its shapes: offset2bag is empty on the 'sum' fast path (float weight, no
    padding_idx); bag_size and max_indices have the offsets' shape for 'sum'."""
    _bag_checks(weight, indices, offsets, mode, per_sample_weights)
    w, idx, off = weight._array, indices._array.astype(np.int64), offsets._array.astype(np.int64)
    n, dim = idx.shape[0], w.shape[1]
    if idx.size and (idx.min() < 0 or idx.max() >= w.shape[0]):
        raise IndexError("index out of range in self")
    bags = off.shape[0] - (1 if include_last_offset else 0)
    ends = np.concatenate([off[1:bags + 1] if include_last_offset else off[1:], [n]])[:bags]
    out = np.zeros((bags, dim), dtype=w.dtype)
    counts = np.zeros(bags, dtype=np.int64)
    max_idx = np.zeros((bags, dim), dtype=np.int64)
    bag_of = np.zeros(n, dtype=np.int64)
    psw = None if per_sample_weights is None else per_sample_weights._array
    for b in range(bags):
        lo, hi = off[b], ends[b]
        bag_of[lo:hi] = b
        rows = [i for i in range(lo, hi) if idx[i] != padding_idx]
        counts[b] = len(rows)
        if not rows:
            continue
        vals = w[idx[rows]]
        if mode == 2:
            arg = vals.argmax(0)
            out[b] = vals[arg, np.arange(dim)]
            max_idx[b] = idx[rows][arg]
        else:
            if psw is not None:
                vals = vals * psw[rows][:, None].astype(w.dtype)
            out[b] = vals.sum(0)
            if mode == 1:
                out[b] /= w.dtype.type(len(rows))
    fast_sum = mode == 0 and weight.dtype in (D.float32, D.float16) and padding_idx < 0
    offset2bag = np.zeros(0, np.int64) if fast_sum else bag_of
    if mode == 0:
        bag_size = max_indices = np.zeros(off.shape, np.int64)
    else:
        bag_size = counts
        max_indices = max_idx if mode == 2 else counts.copy()
    long = offsets.dtype
    dev = weight.device
    return (_fresh(out, weight.dtype, dev), _fresh(offset2bag.astype(long.np), long, dev),
            _fresh(bag_size.astype(long.np), long, dev), _fresh(max_indices.astype(long.np), long, dev))


@op("embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
    "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) "
    "-> (Tensor, Tensor, Tensor, Tensor)")
def embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                  include_last_offset):
    return _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights,
                               include_last_offset, -1)


@op("embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, "
    "int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) "
    "-> (Tensor, Tensor, Tensor, Tensor)")
def embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                              per_sample_weights, include_last_offset, padding_idx):
    return _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights,
                               include_last_offset, _wrap_padding_idx(weight, padding_idx))


def _wrap_padding_idx(weight, padding_idx):
    """EmbeddingBag.cpp embedding_bag: a negative padding_idx counts from the last row."""
    if padding_idx is None:
        return -1
    num_embeddings = weight.shape_tuple[0]
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, "
                           f"-{num_embeddings} through {num_embeddings - 1}, but got {padding_idx}")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


@composite(embedding_bag)
def _embedding_bag_composite(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                             per_sample_weights, include_last_offset):
    return _embedding_bag_padding_idx_composite(weight, indices, offsets, scale_grad_by_freq, mode,
                                                sparse, per_sample_weights, include_last_offset,
                                                None)


@composite(embedding_bag_padding_idx)
def _embedding_bag_padding_idx_composite(weight, indices, offsets, scale_grad_by_freq, mode,
                                         sparse, per_sample_weights, include_last_offset,
                                         padding_idx):
    # EmbeddingBag.cpp embedding_bag: _embedding_bag (EmbeddingBagBackward0) on contiguous
    # indices and offsets, padding_idx wrapped
    embedding_bag_padding_idx.kernel(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                                     per_sample_weights, include_last_offset, padding_idx)  # checks
    return _embedding_bag(weight, indices.contiguous(), offsets.contiguous(), scale_grad_by_freq,
                          mode, sparse, per_sample_weights, include_last_offset,
                          _wrap_padding_idx(weight, padding_idx))
# (aten::embedding_bag is CompositeImplicitAutograd: it calls _embedding_bag, whose entry follows)


@op("_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
    "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, "
    "int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)")
def _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                   include_last_offset, padding_idx):
    return _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights,
                               include_last_offset, padding_idx)


derivatives(_embedding_bag, {
    "indices": "non_differentiable",
    "offsets": "non_differentiable",
    "weight": "_embedding_bag_backward(grads[0], indices, offsets, result1, result2, result3, "
              "weight.shape[0], scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx)",
    "per_sample_weights": "_embedding_bag_per_sample_weights_backward(grads[0], weight, indices, offsets, "
                          "result1, mode, padding_idx)"})
@composite(pad)
def _pad_composite(self, pad_, mode, value):
    # PadNd.cpp pad: constant mode is constant_pad_nd (ConstantPadNdBackward0)
    if mode == "constant" and len(pad_) % 2 == 0 and len(pad_) <= 2 * self.ndim:
        return constant_pad_nd(self, pad_, 0.0 if value is None else value)
    pad.kernel(self, pad_, mode, value)  # its checks and errors
    dims = len(pad_) // 2
    if mode in ("reflect", "replicate"):
        aten = "reflection_pad" if mode == "reflect" else "replication_pad"
        return get_packet(f"{aten}{dims}d")(self, pad_)
    return _pad_circular(self, pad_)


def _pad_circular(self, padding):
    """PadNd.cpp _pad_circular_symint: the input copied into the middle of a new tensor, then
    each padded side copied from the opposite end (in place through slices: CopySlices)."""
    in_shape = list(self.shape_tuple)
    self_ndim = len(in_shape)
    ndim_padded = len(padding) // 2
    ndim_nonpadded = self_ndim - ndim_padded
    out_shape = in_shape[:ndim_nonpadded] + [0] * ndim_padded
    for i in range(ndim_padded):
        pad_l = padding[2 * (ndim_padded - i - 1) + 0]
        pad_r = padding[2 * (ndim_padded - i - 1) + 1]
        out_shape[ndim_nonpadded + i] = in_shape[ndim_nonpadded + i] + pad_l + pad_r
    out = self.new_empty(out_shape)
    # put the original array into the padded array
    out_slice, in_slice = out, self
    for i in range(ndim_padded):
        dim = ndim_padded - i + ndim_nonpadded - 1
        pad_l, pad_r = padding[2 * i], padding[2 * i + 1]
        out_slice = out_slice.slice(dim, max(pad_l, 0), out_shape[dim] - max(pad_r, 0))
        in_slice = in_slice.slice(dim, max(-pad_l, 0), in_shape[dim] - max(-pad_r, 0))
    out_slice.copy_(in_slice)
    # pad the beginning of each dimension, then its end (corners are written more than once)
    for i in range(ndim_padded):
        dim = ndim_padded - i + ndim_nonpadded - 1
        pad_l, pad_r = padding[2 * i], padding[2 * i + 1]
        if pad_l > 0:
            out_slice = out.slice(dim, 0, pad_l)
            in_slice = out.slice(dim, out_shape[dim] - pad_l - max(pad_r, 0),
                                 out_shape[dim] - max(pad_r, 0))
            out_slice.copy_(in_slice)
        if pad_r > 0:
            out_slice = out.slice(dim, out_shape[dim] - pad_r, out_shape[dim])
            in_slice = out.slice(dim, max(pad_l, 0), max(pad_l, 0) + pad_r)
            out_slice.copy_(in_slice)
    return out
