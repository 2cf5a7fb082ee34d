"""Shape and view ops against torch: values, dtype, strides, aliasing and error texts.

Every view op must return torch's strides and share its input's storage (``check`` compares
both); in-place ops through views must show up in the base (``check`` compares the inputs after
the call too).
"""
import numpy as np
import pytest

from oracle import check, sample

A = sample((3, 4))
B3 = sample((2, 3, 4), seed=1)
Z = np.array(1.5, np.float32)  # a 0-dim input


def test_view_reshape():
    check(lambda m, x: x.view(4, 3), A)
    check(lambda m, x: x.view(-1), A)
    check(lambda m, x: x.view(2, -1, 2), A)
    check(lambda m, x: x.view(1, 3, 1, 4, 1), A)
    check(lambda m, x: x.view([12]), A)
    check(lambda m, x: x.t().view(2, 2, 3), A)                 # splits a dim of a transpose
    check(lambda m, x: x.t().view(12), A)                      # not viewable: torch's error
    check(lambda m, x: x[:, ::2].view(6), A)
    check(lambda m, x: x.unsqueeze(1).view(3, 4), A)
    check(lambda m, x: x[1:, 1:].view(6), A)
    check(lambda m, x: x.view(-1, -1), A)
    check(lambda m, x: x.view(5), A)
    check(lambda m, x: x.view(-2, 6), A)
    check(lambda m, x: x.view(0, -1), np.zeros((0, 3), np.float32))
    check(lambda m, x: x.view(3, 0), np.zeros((0, 9), np.float32))
    check(lambda m, x: x.view(()), np.ones((1, 1), np.float32))
    check(lambda m, x: x.view(1, 1), Z)
    check(lambda m, x, y: x.view_as(y), A, sample((6, 2)))
    check(lambda m, x: x.reshape(2, 6), A)
    check(lambda m, x: x.t().reshape(12), A)                   # copy
    check(lambda m, x: x.t().reshape(4, 3), A)                 # view
    check(lambda m, x: m.reshape(x[:, 1:3], (-1,)), A)
    check(lambda m, x: x.reshape(5), A)
    check(lambda m, x, y: x.t().reshape_as(y), A, sample((2, 6)))


def test_view_writes_reach_base():
    check(lambda m, x: x.view(12).mul_(2), A)
    check(lambda m, x: x.t().reshape(4, 3).add_(1), A)
    check(lambda m, x: x.expand(2, 3, 4)[1].mul_(3), A)


def test_view_dtype():
    check(lambda m, x: x.view(m.int32), A)
    check(lambda m, x: x.view(m.float64), A)
    check(lambda m, x: x.view(m.int16), A)
    check(lambda m, x: x.t().view(m.float64), A)
    check(lambda m, x: x.view(m.float64), sample((3, 3)))
    check(lambda m, x: x.view(m.float64), Z)
    check(lambda m, x: x[:, 2:].view(m.float64), A)


def test_flatten_unflatten():
    check(lambda m, x: x.flatten(), B3)
    check(lambda m, x: x.flatten(1), B3)
    check(lambda m, x: m.flatten(x, 0, 1), B3)
    check(lambda m, x: x.flatten(1, 1), B3)
    check(lambda m, x: x.transpose(0, 1).flatten(1), B3)
    check(lambda m, x: x.flatten(), Z)
    check(lambda m, x: x.flatten(2, 1), B3)
    check(lambda m, x: x.flatten(0, 3), B3)
    check(lambda m, x: x.unflatten(1, (2, 2)), A)
    check(lambda m, x: x.unflatten(-1, (-1, 2)), A)
    check(lambda m, x: x.unflatten(1, (3, 2)), A)
    check(lambda m, x: x.t().unflatten(0, (2, 2)), A)
    check(lambda m, x: x.t().unflatten(1, (3, 1)), A)
    check(lambda m, x: m.unflatten(x, 0, (1, 3)), A)


def test_squeeze_unsqueeze():
    s = sample((1, 3, 1, 2))
    check(lambda m, x: x.squeeze(), s)
    check(lambda m, x: x.squeeze(0), s)
    check(lambda m, x: x.squeeze(1), s)
    check(lambda m, x: x.squeeze(-2), s)
    check(lambda m, x: x.squeeze((0, 2)), s)
    check(lambda m, x: m.squeeze(x, (0, 0)), s)
    check(lambda m, x: x.squeeze(4), s)
    check(lambda m, x: x.squeeze(), Z)
    check(lambda m, x: x.squeeze(0), Z)
    check(lambda m, x: x.permute(2, 0, 3, 1).squeeze(), s)
    for d in (0, 1, 2, -1, -3):
        check(lambda m, x: x.unsqueeze(d), A)
        check(lambda m, x: x.t().unsqueeze(d), A)
        check(lambda m, x: x[:, ::2].unsqueeze(d), A)
    check(lambda m, x: x.unsqueeze(3), A)
    check(lambda m, x: x.unsqueeze(0), Z)
    check(lambda m, x: x.squeeze_(), s)
    check(lambda m, x: x.squeeze_(0), s)
    check(lambda m, x: x.unsqueeze_(1), A)
    check(lambda m, x: x.t().unsqueeze_(-1), A)


def test_transpose_permute_t():
    check(lambda m, x: x.transpose(0, 2), B3)
    check(lambda m, x: m.transpose(x, -1, 0), B3)
    check(lambda m, x: x.transpose(0, 3), B3)
    check(lambda m, x: x.t(), A)
    check(lambda m, x: x.t(), sample((4,)))
    check(lambda m, x: x.t(), B3)
    check(lambda m, x: x.T, A)
    check(lambda m, x: x.mT, B3)
    check(lambda m, x: x.t_(), A)
    check(lambda m, x: x.t_(), B3)
    check(lambda m, x: x.transpose_(0, 1), B3)
    check(lambda m, x: x.permute(2, 0, 1), B3)
    check(lambda m, x: x.permute((1, -1, 0)), B3)
    check(lambda m, x: m.permute(x, (1, 0)).permute(1, 0), A)
    check(lambda m, x: x.permute(0, 1, 2), A)
    check(lambda m, x: x.permute(0, 0), A)
    check(lambda m, x: x.permute(0, 2), A)
    check(lambda m, x: x.movedim(0, 2), B3)
    check(lambda m, x: x.movedim((0, 1), (2, 0)), B3)
    check(lambda m, x: m.movedim(x, (0, 0), (1, 2)), B3)
    check(lambda m, x: x.movedim((0, 1), (1,)), B3)
    check(lambda m, x: x.swapaxes(0, 2), B3)
    check(lambda m, x: m.swapdims(x, 1, 2), B3)


def test_expand_repeat():
    check(lambda m, x: x.expand(2, 3, 4), A)
    check(lambda m, x: x.expand(-1, 4), sample((3, 1)))
    check(lambda m, x: x.expand(2, -1, 5), sample((3, 1)))
    check(lambda m, x: x.expand(3, 4), A)
    check(lambda m, x: x.t().expand(2, 4, 3), A)
    check(lambda m, x: x.expand([2, 3]), Z)
    check(lambda m, x, y: x.expand_as(y), sample((1, 4)), A)
    check(lambda m, x: x.expand(3, 5), A)
    check(lambda m, x: x.expand(4), A)
    check(lambda m, x: x.expand(-1, 3, 4), A)
    check(lambda m, x: x.expand(2, -2, 4), A)
    check(lambda m, x: x.repeat(2, 1), A)
    check(lambda m, x: x.repeat(2, 1, 3), A)
    check(lambda m, x: x.t().repeat(1, 2), A)
    check(lambda m, x: x.repeat(2), A)
    check(lambda m, x: x.repeat(2, -1), A)
    check(lambda m, x: x.repeat(3), Z)


def test_select_slice_narrow():
    check(lambda m, x: x.select(0, 1), A)
    check(lambda m, x: x.select(1, -1), A)
    check(lambda m, x: m.select(x.t(), 0, 2), A)
    check(lambda m, x: x.select(0, 5), A)
    check(lambda m, x: x.select(1, -5), A)
    check(lambda m, x: x.select(-1, -5), A)
    check(lambda m, x: x.select(0, 0), Z)
    sl = lambda *a: (lambda m, x: m.ops.aten.slice(x, *a) if m.__name__ == "torch" else m.slice(x, *a))
    for args in [(0, 1), (1, 1, 3), (1, None, None, 2), (0, -2), (0, -100, 2), (1, 2, 100),
                 (1, 3, 1), (0, 5), (1, -1, -3), (0, 2**63 - 1), (1, 0, 2**63 - 1, 3), (-1, 1, -1)]:
        check(sl(*args), A)
        check(lambda m, x: sl(*args)(m, x.t()), A)
    check(sl(0, 0, 1, 0), A)
    check(sl(0, 0, 1), Z)
    check(lambda m, x: x.narrow(0, 1, 2), A)
    check(lambda m, x: m.narrow(x, 1, -2, 2), A)
    check(lambda m, x: x.narrow(0, 5, 1), A)
    check(lambda m, x: x.narrow(0, 2, 3), A)
    check(lambda m, x: x.narrow(0, 0, -1), A)
    check(lambda m, x: x.narrow(0, 0, 1), Z)
    check(lambda m, x, s: x.narrow(1, s, 2), A, np.array(1, np.int64))
    check(lambda m, x, s: x.narrow(1, s, 2), A, Z)
    check(lambda m, x: x.select(0, 1).mul_(0), A)
    check(lambda m, x: x.narrow(1, 1, 2).add_(5), A)


def test_unbind_split_chunk():
    check(lambda m, x: x.unbind(), A)
    check(lambda m, x: m.unbind(x, 1), A)
    check(lambda m, x: x.t().unbind(-1), A)
    check(lambda m, x: x.unbind(), Z)
    check(lambda m, x: x.split(2), A)
    check(lambda m, x: x.split(3, 1), A)
    check(lambda m, x: x.split(10), A)
    check(lambda m, x: x.split([1, 2]), A)
    check(lambda m, x: m.split(x, [1, 3], dim=1), A)
    check(lambda m, x: m.split(x, 2, -1), A)
    check(lambda m, x: x.split_with_sizes([2, 2], 1), A)
    check(lambda m, x: x.split(-1), A)
    check(lambda m, x: x.split(0), A)
    check(lambda m, x: x.split(0), np.zeros((0, 2), np.float32))
    check(lambda m, x: x.split([1, 1]), A)
    check(lambda m, x: x.split([4, -1]), A)
    check(lambda m, x: x.split(1), Z)
    check(lambda m, x: x.chunk(2), A)
    check(lambda m, x: x.chunk(3, 1), A)
    check(lambda m, x: m.chunk(x, 5, 1), A)
    check(lambda m, x: x.chunk(3), np.zeros((0, 2), np.float32))
    check(lambda m, x: x.chunk(0), A)
    check(lambda m, x: x.chunk(1), Z)
    check(lambda m, x: x.split(2)[1].mul_(2), A)


def test_cat_stack():
    check(lambda m, x, y: m.cat([x, y]), A, sample((2, 4)))
    check(lambda m, x, y: m.cat((x, y), 1), A, sample((3, 2)))
    check(lambda m, x, y: m.cat([x, y], -1), A, sample((3, 2)))
    check(lambda m, x: m.cat([x.t(), x.t()]), A)
    check(lambda m, x: m.cat([x.t(), x.t()], 1), A)
    check(lambda m, x: m.cat([x.t()]), A)
    check(lambda m, x, y: m.cat([x, y]), A, sample((1, 4), "int64"))
    check(lambda m, x, y: m.cat([x, y]), sample((2,), "int32"), sample((2,), "bool"))
    check(lambda m, x, y: m.cat([x, y], 1), A, np.zeros((0,), np.float32))
    check(lambda m, x, y: m.cat([x, y]), np.zeros((0, 4), np.float32), A)
    check(lambda m: m.cat([]))
    check(lambda m, x, y: m.cat([x, y], 1), A, sample((2, 3)))
    check(lambda m, x, y: m.cat([x, y]), A, sample((4,)))
    check(lambda m, x: m.cat([x, x]), Z)
    check(lambda m, x: m.cat([x, x], 2), A)
    c = sample((2, 3, 4, 5))
    check(lambda m, x: m.cat([x.permute(0, 3, 1, 2), x.permute(0, 3, 1, 2)], 1), c)
    check(lambda m, x: m.cat([x.permute(0, 3, 1, 2), x.permute(0, 3, 1, 2).contiguous()], 1), c)
    check(lambda m, x, y: m.stack([x, y]), A, A)
    check(lambda m, x: m.stack([x.t(), x.t()], 2), A)
    check(lambda m, x: m.stack([x.t(), x.t()], 1), A)
    check(lambda m, x, y: m.stack([x, y], -1), A, sample((3, 4), "int64"))
    check(lambda m: m.stack([]))
    check(lambda m, x, y: m.stack([x, y]), A, sample((3,)))
    check(lambda m, x, y: m.stack([x, y], 2), A, sample((3,)))
    check(lambda m, x: m.stack([x, x], 3), A)
    check(lambda m, x: m.stack([x, x]), Z)


def test_flip_contiguous_as_strided_alias():
    check(lambda m, x: x.flip(0), A)
    check(lambda m, x: m.flip(x, (0, 1)), A)
    check(lambda m, x: x.t().flip(0), A)
    check(lambda m, x: x[:, ::2].flip(0), A)
    check(lambda m, x: x[0:1].expand(3, 4).flip(0), A)
    check(lambda m, x: x.flip(0, 0), A)
    check(lambda m, x: x.flip(()), A)
    check(lambda m, x: x.contiguous(), A)
    check(lambda m, x: x.t().contiguous(), A)
    check(lambda m, x: x[:, 1:].contiguous(), A)
    check(lambda m, x: x.view(1, 3, 2, 2).contiguous(memory_format=m.channels_last), A)
    check(lambda m, x: x.view(3, 1, 2, 2).contiguous(memory_format=m.channels_last), A)
    check(lambda m, x: x.contiguous(memory_format=m.channels_last), A)
    check(lambda m, x: x.as_strided((2, 2), (1, 2)), A)
    check(lambda m, x: x.as_strided((2, 3), (4, 1), 1), A)
    check(lambda m, x: x[1:].as_strided((2,), (2,)), A)
    check(lambda m, x: m.as_strided(x.t(), (4,), (3,)), A)
    check(lambda m, x: x.as_strided((2,), (-1,)), A)
    check(lambda m, x: x.as_strided((4, 4), (4, 1)), A)
    check(lambda m, x: x.as_strided((2, 2), (1, 2)).mul_(0), A)
    check(lambda m, x: m.ops.aten.alias(x) if m.__name__ == "torch" else m.alias(x), A)


@pytest.mark.parametrize("dt", ["float64", "int32", "int64", "uint8", "bool", "complex64", "float16"])
def test_dtypes(dt):
    a = sample((2, 3, 4), dt)
    check(lambda m, x: x.transpose(0, 1).reshape(3, 8), a)
    check(lambda m, x: x[:, 1].unsqueeze(0).expand(2, 2, 4), a)
    check(lambda m, x: m.cat([x, x.flip(1)], 2), a)
    check(lambda m, x: m.stack(x.unbind(1)), a)


def test_requires_grad_through_views():
    def f(m, x):
        x = x.requires_grad_()
        return x.view(12), x.t(), x[1:], x.unbind(), x.expand(2, 3, 4), m.cat([x, x])
    check(f, A)


def test_stack_of_3d_keeps_cats_layout():
    check(lambda m, x: m.stack([x.permute(1, 2, 0), x.permute(1, 2, 0)], 0), sample((3, 4, 5)))
    check(lambda m, x: m.stack([x.permute(1, 2, 0)] * 2, 3), sample((3, 4, 5)))


# -- traced graphs: reftrace.jit.trace against torch.jit.trace -------------------------------------

def _graph_text(graph):
    import re
    return "\n".join(re.sub(r" # .*$", "", line) for line in str(graph).strip().splitlines())


GRAPHS = [
    ("view/reshape/flatten", lambda m, x: (x.view(12), x.t().reshape(12), x.flatten(), x.view_as(x),
                                           x.reshape(-1, 2).unflatten(0, (2, 3)))),
    ("split int", lambda m, x: x.split(2, 1)),
    ("split list", lambda m, x: x.split([1, 2])),
    ("torch.split", lambda m, x: m.split(x, [2, 2], dim=1)),
    ("chunk/unbind", lambda m, x: (x.chunk(2, 1), x.unbind(1))),
    ("cat/stack", lambda m, x: (m.cat([x, x], 1), m.stack([x, x.t().t()]))),
    ("expand/repeat", lambda m, x: (x[None].expand(2, 3, 4), x.expand_as(x), x.repeat(1, 2))),
    ("permute/transpose/t", lambda m, x: (x.permute(1, 0), x.transpose(0, 1), x.t(), m.movedim(x, 0, 1))),
    ("squeeze/unsqueeze", lambda m, x: (x.unsqueeze(1).squeeze(1), x.unsqueeze(0).squeeze(),
                                        x.unsqueeze(-1).squeeze((0, 2)))),
    ("select/narrow/slice", lambda m, x: (x.select(1, -1), x.narrow(0, 1, 2), x.flip(0))),
    ("in-place views", lambda m, x: x.clone().unsqueeze_(0).transpose_(0, 2).squeeze_().t_()),
    ("contiguous/as_strided", lambda m, x: (x.t().contiguous(), x.contiguous(), x.as_strided((2, 2), (1, 2)))),
]


@pytest.mark.parametrize("label,fn", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_traced_graphs(label, fn):
    import warnings
    import reftrace
    from oracle import torch
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.jit.trace(lambda x: fn(torch, x), (torch.from_numpy(A.copy()),), check_trace=False).graph
        got = reftrace.jit.trace(lambda x: fn(reftrace, x), (reftrace.from_numpy(A.copy()),),
                                 check_trace=False).graph
    assert _graph_text(got) == _graph_text(want)


def test_list_results_are_tuples_and_views_keep_requires_grad():
    import reftrace
    from oracle import torch
    for m in filter(None, (reftrace, torch)):
        x = m.ones(2, 3, requires_grad=True)
        assert type(x.unbind()) is tuple and type(x.split(1)) is tuple and type(m.chunk(x, 2)) is tuple
        assert type(m.split(x, [1, 1])) is tuple
        with m.no_grad():
            assert x.view(6).requires_grad and x[0].requires_grad and x.split(1)[0].requires_grad
            assert not m.cat([x, x]).requires_grad


# -- random layouts: views of permuted / sliced / expanded tensors ---------------------------------

def _random_layout(rng, m, x):
    """x permuted, sliced with steps and maybe expanded along a new dim: a random strided view."""
    x = x.permute(*rng.permutation(x.dim()).tolist())
    for d in range(x.dim()):
        if rng.random() < 0.3 and x.shape[d] > 1:
            x = x.narrow(d, 1, x.shape[d] - 1) if rng.random() < 0.5 else x[(slice(None),) * d + (slice(None, None, 2),)]
    if rng.random() < 0.3:
        x = x.unsqueeze(int(rng.integers(0, x.dim() + 1)))
    return x


def _factorings(shape, rng):
    """A few shapes with the same number of elements (split/merge neighbouring dims, add 1s)."""
    out = [(-1,), tuple(shape)[::-1]]
    merged = list(shape)
    if len(merged) > 1:
        i = int(rng.integers(0, len(merged) - 1))
        merged[i:i + 2] = [merged[i] * merged[i + 1]]
        out.append(tuple(merged))
    ones = list(shape)
    ones.insert(int(rng.integers(0, len(ones) + 1)), 1)
    out.append(tuple(ones))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_views(seed):
    rng = np.random.default_rng(seed)
    x = sample(tuple(int(s) for s in rng.integers(1, 5, size=int(rng.integers(1, 5)))), seed=seed)
    layout_seed = int(rng.integers(1 << 30))

    def base(m, x):
        return _random_layout(np.random.default_rng(layout_seed), m, x)
    import reftrace
    shape = tuple(base(reftrace, reftrace.from_numpy(x.copy())).shape)
    for target in _factorings(shape, rng):
        check(lambda m, x: base(m, x).view(target), x)        # a view or torch's error
        check(lambda m, x: base(m, x).reshape(target), x)     # a view when possible, else a copy
    check(lambda m, x: base(m, x).flatten(), x)
    check(lambda m, x: base(m, x).squeeze(), x)
    check(lambda m, x: base(m, x).contiguous(), x)
    check(lambda m, x: base(m, x).flip(0), x)
    check(lambda m, x: m.cat([base(m, x), base(m, x)], -1), x)
    check(lambda m, x: base(m, x).unsqueeze(-1).expand(*shape, 2), x)
    check(lambda m, x: base(m, x).view(target).mul_(2) if base(m, x).is_contiguous() else x.mul_(2), x)


def test_channels_last_3d():
    v = sample((2, 3, 2, 2, 2))
    check(lambda m, x: x.contiguous(memory_format=m.channels_last_3d), v)
    check(lambda m, x: x.permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3)
          .contiguous(memory_format=m.channels_last_3d), v)
    check(lambda m, x: x.contiguous(memory_format=m.channels_last_3d), A)
    check(lambda m, x: m.cat([x.contiguous(memory_format=m.channels_last_3d)] * 2, 1), v)
    check(lambda m, x: m.stack([x[0].contiguous(memory_format=m.channels_last)] * 2, 1), v)
    check(lambda m, x: m.stack([x[0].contiguous(memory_format=m.channels_last)] * 2, 4), v)
    check(lambda m, x: m.stack([x[0, 0]] * 2, 1), v)


def test_int_varargs_binding_matches_search():
    """A packet called as (tensor, ints...) binds without the overload search when the types
    decide it (OpPacket._int_varargs): the same overload and arguments as the search's bind."""
    import reftrace
    from reftrace.ops._registry import PACKETS, NoMatch
    x = reftrace.ones(2, 3)
    for packet in PACKETS.values():
        for n in range(2, 6):
            fast = packet._int_varargs(n)
            if fast is None:
                continue
            for ints in [(1,) * (n - 1), (-1,) + (2,) * (n - 2), (0,) * (n - 1)]:
                args = (x,) + ints
                for ov in packet.overloads:  # the search of OpPacket.__call__
                    if ov.python_hidden or (n > ov.n_positional and ov.varargs_index is None):
                        continue
                    try:
                        bound = ov.bind(args, {})
                    except NoMatch:
                        continue
                    break
                assert ov is fast[0], (packet.name, ints)
                assert bound == [x, list(ints), *fast[1]], (packet.name, ints)
