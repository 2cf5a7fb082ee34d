"""torch.autograd.gradcheck / gradgradcheck (torch/autograd/gradcheck.py), slow mode.

gradcheck compares, for every output and every input that requires grad, the Jacobian the
engine computes (one backward per output element, torch's "analytical" Jacobian) with central
finite differences of ``func`` ("numerical"), within ``atol + rtol * |numerical|``. A mismatch
raises ``GradcheckError`` with torch's message (``Jacobian mismatch for output i with respect to
input j,\\nnumerical:...\\nanalytical:...``), or returns False with ``raise_exception=False``.
gradgradcheck runs gradcheck on the function that returns the first-order gradients
(create_graph=True), i.e. checks double backward.

Not modelled: fast_mode, forward-mode AD checks, batched-grad checks, sparse and masked inputs
(their flags are accepted; asking for one that changes what is checked raises
NotImplementedError).
"""
import warnings

import numpy as np



class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _tensor_type():
    from .._tensor import Tensor
    return Tensor


def _as_tuple(x):
    if isinstance(x, _tensor_type()):
        return (x,)
    return tuple(x)


def _iter_tensors(values, only_requiring_grad=False):
    Tensor = _tensor_type()
    for v in values:
        if isinstance(v, Tensor):
            if not only_requiring_grad or v.requires_grad:
                yield v
        elif isinstance(v, (list, tuple)):
            yield from _iter_tensors(v, only_requiring_grad)


def _check_inputs(inputs):
    any_requiring_grad = False
    for idx, inp in enumerate(inputs):
        if isinstance(inp, _tensor_type()) and inp.requires_grad:
            if inp.dtype.name not in ("float64", "complex128"):
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating point "
                    "or complex. This check will likely fail if all the inputs are not of double "
                    "precision floating point or complex. ", stacklevel=3)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape_tuple)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical gradients "
                    "correctly. You should call .contiguous on the input before passing it to "
                    "gradcheck.")
            any_requiring_grad = True
    if not any_requiring_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


def _outputs(func, inputs):
    out = func(*inputs)
    return tuple(_iter_tensors(_as_tuple(out)))


def _numerical_jacobians(func, inputs, diff_inputs, outputs, eps):
    """For each (input, output): a (numel(input), numel(output)) array of central differences."""
    # (grad mode stays as it is: gradgradcheck's function calls autograd.grad itself; the
    # inputs are perturbed in their arrays, below autograd)
    jac = [[np.zeros((x.numel(), max(o.numel(), 0))) for o in outputs] for x in diff_inputs]
    for i, x in enumerate(diff_inputs):
        flat = x._array.reshape(-1) if x.is_contiguous() else None
        if flat is None or not np.shares_memory(flat, x._array):
            raise NotImplementedError("gradcheck: non-contiguous inputs are not supported")
        for k in range(x.numel()):
            orig = flat[k].copy()
            flat[k] = orig - eps
            before = [o._array.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
            flat[k] = orig + eps
            after = [o._array.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
            flat[k] = orig
            for j, (a, b) in enumerate(zip(after, before)):
                jac[i][j][k] = (a - b) / (2 * eps)
    return jac


def _analytical_jacobians(diff_inputs, outputs):
    """One backward per output element: rows of d output / d input."""
    from . import grad as autograd_grad
    import reftrace
    jac = [[np.zeros((x.numel(), o.numel())) for o in outputs] for x in diff_inputs]
    for j, o in enumerate(outputs):
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            v = np.zeros(o.numel(), dtype=o._array.dtype)
            v[k] = 1
            grads = autograd_grad(o, diff_inputs, reftrace.from_numpy(v.reshape(o.shape_tuple)),
                                  retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    jac[i][j][:, k] = g._array.astype(np.float64).reshape(-1)
    return jac


def _format(arr):
    import reftrace
    return str(reftrace.from_numpy(np.ascontiguousarray(arr)))


def gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against finite differences (torch's
    signature). Returns True, or raises GradcheckError (False with raise_exception=False)."""
    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: forward-mode and batched checks are not modelled")
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    diff_inputs = list(_iter_tensors(inputs, True))
    outputs = _outputs(func, inputs)
    if not check_backward_ad:
        return True
    try:
        numerical = _numerical_jacobians(func, inputs, diff_inputs, outputs, eps)
        analytical = _analytical_jacobians(diff_inputs, outputs)
        for j in range(len(outputs)):
            for i in range(len(diff_inputs)):
                n, a = numerical[i][j], analytical[i][j]
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise GradcheckError(
                        f"Jacobian mismatch for output {j:d} with respect to input {i:d},\n"
                        f"numerical:{_format(n)}\nanalytical:{_format(a)}\n")
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the first-order gradients of ``func`` (double backward), torch's signature.
    Without ``grad_outputs``, random ones (double precision, requiring grad) are used."""
    import reftrace
    from . import grad as autograd_grad
    inputs = _as_tuple(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            reftrace.from_numpy(rng.standard_normal(o.shape_tuple).astype(o._array.dtype))
            .requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_order(*all_args):
        ins, gos = all_args[:n_in], all_args[n_in:]
        outs = _outputs(func, ins)
        diff = list(_iter_tensors(ins, True))
        pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
        grads = autograd_grad([o for o, _ in pairs], diff, [g for _, g in pairs],
                              create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     fast_mode=fast_mode)
