"""The autograd engine's semantics and errors, against torch: .grad accumulation, grad_fn and
next_functions, is_leaf, retain_grad, hooks, backward(inputs=), autograd.grad's options, grad
modes, detach, the version counter, in-place rules (D10, views and CopySlices), and torch's
error messages. ``both(fn)`` runs ``fn(m)`` with m = torch and m = reftrace and compares what
comes back (values as nested lists, strings, bools) or the errors raised (type and message).
"""
import warnings

import pytest

import reftrace

try:  # torch is the oracle: without it these tests skip
    import torch
except ImportError:  # pragma: no cover - torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)


def _plain(v):
    if isinstance(v, (torch.Tensor, reftrace.Tensor)):
        return ("tensor", str(v.dtype).replace("torch.", ""), v.detach().tolist())
    if isinstance(v, (list, tuple)):
        return [_plain(e) for e in v]
    if isinstance(v, dict):
        return {k: _plain(e) for k, e in v.items()}
    return v


def _run(fn, m):
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = fn(m)
        return _plain(out), None, [str(x.message) for x in w]
    except Exception as e:  # the error itself is compared
        return None, (type(e).__name__, str(e)), None


def both(fn, warns=False):
    t_out, t_err, t_w = _run(fn, torch)
    r_out, r_err, r_w = _run(fn, reftrace)
    assert r_err == t_err
    assert r_out == t_out
    if warns:
        assert r_w == t_w
    return t_out


def _leaf(m, values=(1.0, 2.0, 3.0)):
    return m.tensor(list(values), requires_grad=True)


# -- basics -------------------------------------------------------------------------------------

def test_grad_accumulates_into_leaves():
    def fn(m):
        x = _leaf(m)
        (x * x).sum().backward()
        first = x.grad.clone()
        (x * 3).sum().backward()
        return first, x.grad, x.is_leaf, x.grad.requires_grad
    both(fn)


def test_grad_fn_names_and_next_functions():
    def fn(m):
        x, w = _leaf(m), _leaf(m, (0.5, -1.0, 2.0))
        y = (x * w + 1).relu().sum()
        f = y.grad_fn
        chain = []
        while f is not None:
            chain.append((type(f).__name__, [type(n).__name__ if n is not None else None
                                             for n, _ in f.next_functions]))
            nxt = [n for n, _ in f.next_functions if n is not None and f.name() != "AccumulateGrad"]
            f = nxt[0] if nxt and type(nxt[0]).__name__ != "AccumulateGrad" else None
        return chain, y.is_leaf, x.grad_fn is None, y.grad_fn.name()
    both(fn)


def test_accumulate_grad_node_and_variable():
    def fn(m):
        x = _leaf(m)
        node = (x * 2).grad_fn.next_functions[0][0]
        return type(node).__name__, node.variable is x, node.next_functions
    both(fn)


def test_non_scalar_backward_needs_gradient():
    both(lambda m: (_leaf(m) * 2).backward())


def test_backward_of_tensor_without_grad():
    both(lambda m: m.ones(2).sum().backward())


def test_second_backward_without_retain_graph():
    def fn(m):
        x = _leaf(m)
        y = (x * x).sum()
        y.backward()
        y.backward()
    both(fn)


def test_retain_graph_allows_a_second_backward():
    def fn(m):
        x = _leaf(m)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad
    both(fn)


def test_nodes_without_saved_values_run_twice():
    def fn(m):
        x = _leaf(m)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return x.grad
    both(fn)


def test_gradient_shape_mismatch():
    both(lambda m: (_leaf(m) * 2).backward(m.ones(2)))


def test_backward_with_explicit_gradient():
    def fn(m):
        x = _leaf(m)
        (x * x).backward(m.tensor([1.0, 0.5, -1.0]))
        return x.grad
    both(fn)


def test_backward_inputs_restricts_accumulation():
    def fn(m):
        x, w = _leaf(m), _leaf(m, (4.0, 5.0, 6.0))
        (x * w).sum().backward(inputs=[w])
        return x.grad, w.grad
    both(fn)


def test_backward_empty_inputs():
    both(lambda m: (_leaf(m) * 2).sum().backward(inputs=[]))


# -- autograd.grad --------------------------------------------------------------------------------

def test_grad_returns_without_accumulating():
    def fn(m):
        x = _leaf(m)
        g, = m.autograd.grad((x ** 3).sum(), x)
        return g, x.grad
    both(fn)


def test_grad_allow_unused():
    def fn(m):
        x, y = _leaf(m), _leaf(m)
        return m.autograd.grad((x * 2).sum(), [x, y])
    both(fn)
    both(lambda m: m.autograd.grad((_leaf(m) * 2).sum(), [_leaf(m)], allow_unused=True))


def test_grad_materialize_grads():
    def fn(m):
        x, y = _leaf(m), _leaf(m)
        return m.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
    both(fn)
    both(lambda m: m.autograd.grad((_leaf(m) * 2).sum(), [_leaf(m)], allow_unused=False,
                                   materialize_grads=True))


def test_grad_of_input_that_does_not_require_grad():
    both(lambda m: m.autograd.grad((_leaf(m) * 2).sum(), [m.ones(3)]))


def test_grad_empty_inputs():
    both(lambda m: m.autograd.grad((_leaf(m) * 2).sum(), []))


def test_double_backward():
    def fn(m):
        x = _leaf(m)
        g, = m.autograd.grad((x ** 3).sum(), x, create_graph=True)
        gg, = m.autograd.grad(g.sum(), x)
        return g, gg, g.requires_grad, type(g.grad_fn).__name__
    both(fn)


def test_grad_of_non_leaf_input_and_grad_outputs():
    def fn(m):
        x = _leaf(m)
        h = x * 2
        y = h.exp()
        return m.autograd.grad(y, h, grad_outputs=m.tensor([1.0, 0.0, 2.0]))
    both(fn)


def test_is_grads_batched():
    def fn(m):
        x = _leaf(m)
        y = x * m.tensor([1.0, 2.0, 3.0])
        return m.autograd.grad(y, x, grad_outputs=m.eye(3), is_grads_batched=True)
    both(fn)


# -- retain_grad, hooks ---------------------------------------------------------------------------

def test_retain_grad():
    def fn(m):
        x = _leaf(m)
        h = x * 2
        h.retain_grad()
        (h * h).sum().backward()
        return h.grad, h.retains_grad, x.retains_grad, x.grad
    both(fn)


def test_non_leaf_grad_warns():
    def fn(m):
        return (_leaf(m) * 2).grad
    both(fn, warns=True)


def test_tensor_hooks_change_the_gradient():
    def fn(m):
        x = _leaf(m)
        seen = []
        x.register_hook(lambda g: seen.append(g.tolist()))
        h = x * 2
        h.register_hook(lambda g: g * 10)
        h.sum().backward()
        return x.grad, seen
    both(fn)


def test_hook_handle_remove():
    def fn(m):
        x = _leaf(m)
        handle = x.register_hook(lambda g: g * 0)
        handle.remove()
        (x * 2).sum().backward()
        return x.grad
    both(fn)


def test_register_hook_on_tensor_without_grad():
    both(lambda m: m.ones(2).register_hook(lambda g: g))


def test_node_hooks():
    def fn(m):
        x = _leaf(m)
        y = x * 2
        calls = []
        y.grad_fn.register_prehook(lambda go: calls.append(("pre", [g.tolist() for g in go])))
        y.grad_fn.register_hook(lambda gi, go: calls.append(("post", len(gi), len(go))))
        y.sum().backward()
        return calls
    both(fn)


# -- grad modes, detach, requires_grad -------------------------------------------------------------

def test_no_grad_and_enable_grad():
    def fn(m):
        x = _leaf(m)
        with m.no_grad():
            a = x * 2
            with m.enable_grad():
                b = x * 2
        with m.set_grad_enabled(False):
            c = x * 2
        with m.inference_mode():
            d = x * 2
        return a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, \
            m.is_grad_enabled(), b.grad_fn is not None
    both(fn)


def test_no_grad_decorator():
    def fn(m):
        @m.no_grad()
        def f(x):
            return x * 2
        return f(_leaf(m)).requires_grad
    both(fn)


def test_detach_and_detach_():
    def fn(m):
        x = _leaf(m)
        h = x * 2
        d = h.detach()
        h2 = x * 3
        h2.detach_()
        return d.requires_grad, d.grad_fn is None, h2.requires_grad, h2.is_leaf, d._version == h._version
    both(fn)


def test_requires_grad_on_non_leaf():
    both(lambda m: (_leaf(m) * 2).requires_grad_(False))


def test_requires_grad_on_integers():
    both(lambda m: m.ones(2, dtype=m.int64).requires_grad_())


def test_views_keep_requires_grad_under_no_grad():
    def fn(m):
        x = _leaf(m)
        with m.no_grad():
            v = x.view(3)
        return v.requires_grad, v.grad_fn is None, v.is_leaf
    both(fn)


# -- in place, versions ---------------------------------------------------------------------------

def test_inplace_on_leaf_requiring_grad_d10():
    both(lambda m: _leaf(m).add_(1))


def test_inplace_on_view_of_leaf():
    both(lambda m: _leaf(m)[0].add_(1))


def test_inplace_on_view_made_under_no_grad():
    def fn(m):
        h = _leaf(m) * 1
        with m.no_grad():
            v = h[:2]
        v.mul_(2)
    both(fn)


def test_modified_saved_output_error():
    def fn(m):
        x = _leaf(m)
        y = x.exp()
        y.add_(1)
        y.sum().backward()
    both(fn)


def test_modified_saved_input_error():
    def fn(m):
        x = _leaf(m)
        h = x * 1
        y = h * x
        h.add_(1)
        y.sum().backward()
    both(fn)


def test_modified_leaf_input_error():
    def fn(m):
        x = _leaf(m)
        w = m.tensor([1.0, 2.0, 3.0])
        y = x * w
        w.add_(1)
        y.sum().backward()
    both(fn)


def test_version_counter_shared_with_views():
    def fn(m):
        x = m.zeros(3)
        v = x[1:]
        v.add_(1)
        return x._version, v._version
    both(fn)


def test_inplace_on_view_rebases_to_copyslices():
    def fn(m):
        x = _leaf(m)
        h = x * 1
        v = h[1:]
        v.mul_(2)
        names = type(h.grad_fn).__name__, type(v.grad_fn).__name__
        h.sum().backward()
        return names, x.grad
    both(fn)


def test_setitem_on_tensor_without_grad():
    def fn(m):
        w = _leaf(m, (1.0, 2.0))
        out = m.zeros(3)
        out[1:] = w * 2
        out.sum().backward()
        return type(out.grad_fn).__name__, out.is_leaf, w.grad
    both(fn)


def test_inplace_makes_tensor_require_grad():
    def fn(m):
        x = _leaf(m)
        y = m.zeros(3)
        y.add_(x)
        y.sum().backward()
        return type(y.grad_fn).__name__, x.grad
    both(fn)


# -- scale -----------------------------------------------------------------------------------------

def test_long_chain_backpropagates_iteratively():
    x = reftrace.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]
