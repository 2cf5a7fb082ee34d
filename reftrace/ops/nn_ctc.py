"""CTC loss: aten/src/ATen/native/LossCTC.cpp (Graves et al., ICML 2006, eqs. 6-16), in NumPy.

``F.ctc_loss`` calls ``torch.ctc_loss`` (one recorded op, ``aten::ctc_loss``). ctc_loss is
CompositeImplicitAutograd: it runs ``_ctc_loss`` (the alpha recursion, with the
``_ctc_loss_backward`` beta recursion as its derivative: ``CtcLossBackward0``), then
``where(res == inf, 0, res)`` for ``zero_infinity``, and ``(res / target_lengths.clamp_min(1)).mean()``
or ``res.sum()`` for the reductions. The ``.Tensor`` overload converts the lengths to int lists
and takes the same path (so its node is ``CtcLossBackward0`` too).

The recursions are LossCTC.cpp's, step for step, in the input's dtype: per batch item, over time
(sequential), vectorised over the extended-target states ``s`` (each time step depends only on
the previous one). The "log+=" collection of alpha*beta per character keeps the kernel's order
(``s`` descending), vectorised over time instead.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh
from ._registry import composite, derivatives, get_packet, op

_C = "ctc_loss_allocate_outputs"


def _lengths(t, name):
    """ctc_loss.Tensor: integral lengths, as an int list (``.to(kCPU, kLong)``)."""
    if t.dtype.category != 1:  # integral, bool excluded
        raise RuntimeError(f"{name} must be integral")
    return [int(v) for v in t._array.reshape(-1).tolist()]


def _layout(log_probs, targets, input_lengths, target_lengths, blank):
    """ctc_loss_allocate_outputs's checks; returns each batch item's target label lists."""
    if targets.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #2 'targets' to have one of the following "
                           f"scalar types: Long, Int; but got {targets.dtype} instead "
                           f"(while checking arguments for {_C})")
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional "
                           f"tensor for argument #1 'log_probs' (while checking arguments for {_C})")
    if not 1 <= targets.ndim < 3:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor "
                           f"for argument #2 'targets' (while checking arguments for {_C})")
    max_input_length, batch_size, num_labels = log_probs.shape_tuple
    if not 0 <= blank < num_labels:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch_size:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch_size:
        raise RuntimeError("target_lengths must be of size batch_size")
    for i, n in enumerate(target_lengths):
        if n < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                               f"{n} (while checking arguments for {_C})")
    tg = targets._array.astype(np.int64)
    if targets.ndim == 1:  # concatenated targets
        offsets = np.concatenate([[0], np.cumsum(target_lengths, dtype=np.int64)])
        if targets.shape_tuple[0] != offsets[-1]:
            raise RuntimeError(f"Expected tensor to have size {offsets[-1]} at dimension 0, but got "
                               f"size {targets.shape_tuple[0]} for argument #2 'targets' (while "
                               f"checking arguments for {_C})")
        labels = [tg[offsets[b]:offsets[b + 1]] for b in range(batch_size)]
    else:  # batch x max_target_length
        if targets.shape_tuple[0] != batch_size:
            raise RuntimeError(f"Expected tensor to have size {batch_size} at dimension 0, but got "
                               f"size {targets.shape_tuple[0]} for argument #2 'targets' (while "
                               f"checking arguments for {_C})")
        longest = max(target_lengths, default=0)
        if targets.shape_tuple[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                               f"but got size {targets.shape_tuple[1]} for argument #2 'targets' "
                               f"(while checking arguments for {_C})")
        labels = [tg[b, :target_lengths[b]] for b in range(batch_size)]
    used = np.concatenate(labels) if labels else tg[:0]
    if used.size and (used.min() < 0 or used.max() >= num_labels):
        # torch's CPU kernel reads outside log_probs here (an undefined result): refused instead
        bad = used[(used < 0) | (used >= num_labels)][0]
        raise RuntimeError(f"ctc_loss: target label {bad} is out of range [0, {num_labels}) of "
                           f"log_probs' last dimension; targets must be class indices")
    for n in input_lengths:
        if n < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{n} (while checking arguments for {_C})")
        if n > max_input_length:
            raise RuntimeError(f"Expected input_lengths to have value at most {max_input_length}, "
                               f"but got value {n} (while checking arguments for {_C})")
    return labels


def _check_dtype(log_probs, name):
    if log_probs.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"{name}\" not implemented for '{log_probs.dtype.ir_name}'")


def _primes(labels, blank):
    """get_target_prime for every s: blank at even s, the (s // 2)-th label at odd s."""
    primes = np.full(2 * len(labels) + 1, blank, dtype=np.int64)
    primes[1::2] = labels
    return primes


def _logsumexp3(a1, a2, a3):
    """log(exp(a1-m)+exp(a2-m)+exp(a3-m))+m with m the max, 0 when all are -inf (the kernel's)."""
    m = np.maximum(np.maximum(a1, a2), a3)
    m = np.where(m == -np.inf, m.dtype.type(0), m)
    return np.log(np.exp(a1 - m) + np.exp(a2 - m) + np.exp(a3 - m)) + m


def _alpha(lp, primes, input_length, log_alpha):
    """Eqs. (6)-(8) for one batch item: fills log_alpha[:input_length, :2L+1], returns -log p."""
    neginf = lp.dtype.type(-np.inf)
    n_states = len(primes)
    target_length = n_states // 2
    if input_length == 0:
        return lp.dtype.type(0) if target_length == 0 else -neginf
    log_alpha[0, 0] = lp[0, primes[0]]  # target'[0] is the blank
    if target_length > 0:
        log_alpha[0, 1] = lp[0, primes[1]]
    skip = np.zeros(n_states, dtype=bool)  # s > 1 and target'[s-2] != target'[s]
    skip[2:] = primes[:-2] != primes[2:]
    for t in range(1, input_length):
        prev = log_alpha[t - 1, :n_states]
        la2 = np.concatenate([[neginf], prev[:-1]])
        la3 = np.where(skip, np.concatenate([[neginf, neginf], prev[:-2]])[:n_states], neginf)
        log_alpha[t, :n_states] = _logsumexp3(prev, la2, la3) + lp[t, primes]
    if target_length == 0:  # no preceding blank state: no path to merge
        return -log_alpha[input_length - 1, 0]
    l1 = log_alpha[input_length - 1, 2 * target_length]
    l2 = log_alpha[input_length - 1, 2 * target_length - 1]
    m = max(l1, l2)
    m = lp.dtype.type(0) if m == neginf else m
    return -(np.log(np.exp(l1 - m) + np.exp(l2 - m)) + m)


def _ctc_forward(log_probs, targets, input_lengths, target_lengths, blank):
    _check_dtype(log_probs, "ctc_loss_cpu")
    labels = _layout(log_probs, targets, input_lengths, target_lengths, blank)
    lp = log_probs._array
    dt = lp.dtype
    batch_size = lp.shape[1]
    max_target_length = max(target_lengths, default=0)
    # torch allocates log_alpha empty and fills row t=0 with -inf; the unread rest is -inf here
    log_alpha = np.full((batch_size, lp.shape[0], 2 * max_target_length + 1), -np.inf, dtype=dt)
    nll = np.empty(batch_size, dtype=dt)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for b in range(batch_size):
            nll[b] = _alpha(lp[:, b, :], _primes(labels[b], blank), input_lengths[b],
                            log_alpha[b])
    return (_fresh(nll, log_probs.dtype, log_probs.device),
            _fresh(log_alpha, log_probs.dtype, log_probs.device))


@op("_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "
    "int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)")
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    return _ctc_forward(log_probs, targets, input_lengths, target_lengths, blank)


derivatives(_ctc_loss, {"log_probs": "_ctc_loss_backward(grad, log_probs, targets, input_lengths, "
                                     "target_lengths, result0, result1, blank, zero_infinity)"})


@op("_ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, "
    "Tensor target_lengths, int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)")
def _ctc_loss_tensor(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    return _ctc_forward(log_probs, targets, _lengths(input_lengths, "input_lengths"),
                        _lengths(target_lengths, "target_lengths"), blank)


derivatives(_ctc_loss_tensor, {"log_probs": "_ctc_loss_backward(grad, log_probs, targets, "
                                            "input_lengths, target_lengths, result0, result1, "
                                            "blank, zero_infinity)"})


def _beta_collect(lp, la, primes, input_length, nll, gr, grad):
    """Eqs. (10)-(16) for one batch item: grad[t, c] for t < input_length (grad starts at -inf)."""
    neginf = lp.dtype.type(-np.inf)
    n_states = len(primes)
    target_length = n_states // 2
    lb = np.full((max(input_length, 1), n_states), neginf, dtype=lp.dtype)
    if input_length > 0:
        T = input_length - 1
        lb[T, 2 * target_length] = lp[T, primes[0]]
        grad[T, primes[0]] = la[T, 2 * target_length] + lb[T, 2 * target_length]
        if target_length > 0:
            c = primes[2 * target_length - 1]
            lb[T, 2 * target_length - 1] = lp[T, c]
            # a blank and a non-blank: different characters, no "log+" needed
            grad[T, c] = la[T, 2 * target_length - 1] + lb[T, 2 * target_length - 1]
    skip = np.zeros(n_states, dtype=bool)  # s < 2L-1 and target'[s+2] != target'[s]
    skip[:-2] = primes[2:] != primes[:-2]
    for t in range(input_length - 2, -1, -1):
        nxt = lb[t + 1]
        lb2 = np.concatenate([nxt[1:], [neginf]])
        lb3 = np.where(skip, np.concatenate([nxt[2:], [neginf, neginf]])[:n_states], neginf)
        lb[t] = _logsumexp3(nxt, lb2, lb3) + lp[t, primes]
    if input_length > 1:
        # collected[t, target'[s]] "log+=" alpha[t, s] + beta[t, s], s descending, for t < T
        rows = slice(0, input_length - 1)
        for s in range(n_states - 1, -1, -1):
            c = primes[s]
            ab = la[rows, s] + lb[rows, s]
            lcab = grad[rows, c]
            m = np.maximum(lcab, ab)
            with np.errstate(invalid="ignore"):
                summed = np.log(np.exp(lcab - m) + np.exp(ab - m)) + m
            grad[rows, c] = np.where(lcab == neginf, ab, summed)
    rows = grad[:input_length]
    lpt = lp[:input_length]
    grad[:input_length] = (np.exp(lpt) - np.exp(rows + nll - lpt)) * gr
    grad[input_length:] = 0


def _ctc_backward(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
                  log_alpha, blank, zero_infinity):
    _check_dtype(log_probs, "ctc_loss_backward_cpu")
    labels = _layout(log_probs, targets, input_lengths, target_lengths, blank)
    lp = log_probs._array
    dt = lp.dtype
    out = np.full(lp.shape, -np.inf, dtype=dt)
    nlls = neg_log_likelihood._array.astype(dt)
    grs = np.broadcast_to(grad._array.astype(dt), (lp.shape[1],))
    la = log_alpha._array
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for b in range(lp.shape[1]):
            if zero_infinity and nlls[b] == np.inf:
                out[:, b, :] = 0
                continue
            _beta_collect(lp[:, b, :], la[b], _primes(labels[b], blank), input_lengths[b],
                          nlls[b], grs[b], out[:, b, :])
    return _fresh(out, log_probs.dtype, log_probs.device)


@op("_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, "
    "int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, "
    "bool zero_infinity=False) -> Tensor")
def _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths,
                       neg_log_likelihood, log_alpha, blank, zero_infinity):
    return _ctc_backward(grad, log_probs, targets, input_lengths, target_lengths,
                         neg_log_likelihood, log_alpha, blank, zero_infinity)


@op("_ctc_loss_backward.Tensor(Tensor grad, Tensor log_probs, Tensor targets, "
    "Tensor input_lengths, Tensor target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, "
    "int blank, bool zero_infinity=False) -> Tensor")
def _ctc_loss_backward_tensor(grad, log_probs, targets, input_lengths, target_lengths,
                              neg_log_likelihood, log_alpha, blank, zero_infinity):
    return _ctc_backward(grad, log_probs, targets, _lengths(input_lengths, "input_lengths"),
                         _lengths(target_lengths, "target_lengths"), neg_log_likelihood,
                         log_alpha, blank, zero_infinity)


# -- ctc_loss: the composite (LossCTC.cpp ctc_loss_impl) -------------------------------------------

def _impl(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity,
          ops):
    """ctc_loss_impl, over ``ops`` (kernels for the eager result, recorded ops for autograd)."""
    batched = log_probs.ndim == 3
    lp = log_probs if batched else ops.unsqueeze(log_probs, 1)
    res = ops.ctc(lp, ops.to_long(targets), input_lengths, target_lengths, blank, zero_infinity)
    if zero_infinity:
        res = ops.zero_inf(res)
    if reduction == 1:  # Mean
        lengths = ops.tensor(target_lengths, res)
        return ops.mean(ops.div(res, lengths))
    if reduction == 2:  # Sum
        return ops.sum(res)
    return res if batched else ops.squeeze(res, 0)


class _Recorded:
    """The ops ctc_loss calls, recorded (autograd builds CtcLossBackward0 -> Where/Div/Mean)."""
    @staticmethod
    def unsqueeze(x, d):
        return x.unsqueeze(d)

    @staticmethod
    def squeeze(x, d):
        return x.squeeze(d)

    @staticmethod
    def to_long(t):
        return t.to(D.int64)

    @staticmethod
    def ctc(*args):
        return _ctc_loss(*args)[0]

    @staticmethod
    def zero_inf(res):
        return get_packet("where")(res == float("inf"), res.new_zeros(()), res)

    @staticmethod
    def tensor(values, like):
        from .._creation import tensor
        return tensor(values, dtype=like.dtype).clamp_min(1)

    @staticmethod
    def div(a, b):
        return a / b

    @staticmethod
    def mean(a):
        return a.mean()

    @staticmethod
    def sum(a):
        return a.sum()


def _kernel_impl(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                 zero_infinity):
    """The eager result: the same steps on arrays, rounded in the input dtype as torch's are."""
    batched = log_probs.ndim == 3
    lp = log_probs if batched else _fresh(log_probs._array[:, None, :], log_probs.dtype,
                                           log_probs.device)
    _check_dtype(lp, "ctc_loss_cpu")
    res = _ctc_forward(lp, targets, input_lengths, target_lengths, blank)[0]._array
    dt = res.dtype
    if zero_infinity:
        res = np.where(res == np.inf, dt.type(0), res)
    if reduction == 1:
        lengths = np.maximum(np.asarray(target_lengths, dtype=dt), dt.type(1))
        out = (res / lengths).astype(dt)
        value = np.add.reduce(out.astype(np.float64)) / max(out.size, 1) if out.size else np.nan
        res = np.asarray(value, dtype=dt)
    elif reduction == 2:
        res = np.asarray(np.add.reduce(res.astype(np.float64)), dtype=dt)
    elif not batched:
        res = res[0]
    return _fresh(np.asarray(res, dtype=dt), log_probs.dtype, log_probs.device)


@op("ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "
    "int blank=0, int reduction=Mean, bool zero_infinity=False) -> Tensor", variants=("function",))
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    return _kernel_impl(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                        zero_infinity)


@composite(ctc_loss)
def _ctc_loss_composite(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                        zero_infinity):
    return _impl(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                 zero_infinity, _Recorded)


@op("ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
    "int blank=0, int reduction=Mean, bool zero_infinity=False) -> Tensor", variants=("function",))
def ctc_loss_tensor(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                    zero_infinity):
    return _kernel_impl(log_probs, targets, _lengths(input_lengths, "input_lengths"),
                        _lengths(target_lengths, "target_lengths"), blank, reduction,
                        zero_infinity)


@composite(ctc_loss_tensor)
def _ctc_loss_tensor_composite(log_probs, targets, input_lengths, target_lengths, blank,
                               reduction, zero_infinity):
    return _impl(log_probs, targets, _lengths(input_lengths, "input_lengths"),
                 _lengths(target_lengths, "target_lengths"), blank, reduction, zero_infinity,
                 _Recorded)
