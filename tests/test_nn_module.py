"""reftrace.nn.Module mechanics against torch.nn.Module: attribute routing, registration errors,
iteration order, hooks, state dicts, conversions, repr, and the containers.

Most tests build the same program with each library's ``nn`` (``build(nn)``) and compare what
comes out; tests that need no oracle check reftrace alone. Module *tracing* is tested elsewhere.
"""
import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import reftrace
from oracle import normalize_message, requires_torch, torch

rnn = reftrace.nn


def _run(fn, lib):
    try:
        return fn(lib), None
    except Exception as e:  # the error itself is compared
        return None, e


def same_outcome(fn, raises=False):
    """fn(lib) under reftrace and torch: equal results, or the same error type and message.
    raises: True (torch must raise), False (torch must not), None (either)."""
    rt, rt_err = _run(fn, reftrace)
    th, th_err = _run(fn, torch)
    if raises is not None:
        assert (th_err is not None) == raises, f"torch: {th_err!r}"
    if th_err is not None or rt_err is not None:
        assert type(rt_err).__name__ == type(th_err).__name__, (rt_err, th_err)
        # class paths name the library: reftrace.nn.modules.x.Y is torch.nn.modules.x.Y
        assert normalize_message(rt_err).replace("reftrace.", "torch.") == normalize_message(th_err)
        return rt_err
    assert rt == th, f"reftrace {rt!r} != torch {th!r}"
    return rt



def make_net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(4)
            self.body = nn.Sequential(nn.ReLU(), nn.Flatten(), nn.Linear(4 * 5 * 5, 8))
            self.shared = self.body[2]  # the same Linear under a second name
            self.heads = nn.ModuleList([nn.Linear(8, 2), nn.Linear(8, 2), nn.Tanh()])
            self.register_buffer("scale", lib.ones(2))
            self.register_buffer("cache", lib.zeros(3), persistent=False)
            self.register_parameter("unused", None)
            self.alpha = nn.Parameter(lib.tensor(0.5))

        def forward(self, x):
            h = self.body(self.bn(self.conv(x)))
            return self.heads[0](h) * self.scale + self.alpha

    return Net()


# -- attribute routing and registration -----------------------------------------------------

def test_attribute_routing():
    m = rnn.Module()
    m.w = rnn.Parameter(reftrace.ones(2))
    m.register_buffer("b", reftrace.zeros(2))
    m.sub = rnn.Linear(2, 2)
    m.k = 3
    assert list(m._parameters) == ["w"] and list(m._buffers) == ["b"]
    assert list(m._modules) == ["sub"] and m.__dict__["k"] == 3
    m.b = reftrace.ones(3)  # a registered buffer stays a buffer
    assert m._buffers["b"].shape == (3,)
    m.w = None  # a parameter slot accepts None
    assert m._parameters["w"] is None and m.w is None
    m.sub = None
    assert m._modules["sub"] is None
    m.x = rnn.Buffer(reftrace.ones(1), persistent=False)
    assert "x" in m._buffers and "x" in m._non_persistent_buffers_set
    del m.b, m.x, m.k
    assert "b" not in m._buffers and "x" not in m._non_persistent_buffers_set
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        m.nope


def test_parameter_shares_data_and_requires_grad():
    t = reftrace.zeros(3)
    p = rnn.Parameter(t)
    assert p.requires_grad and not t.requires_grad
    assert p.data_ptr() == t.data_ptr()
    with reftrace.no_grad():  # a leaf that requires grad: in place only without grad (D10)
        p.fill_(2.0)  # in place: visible through the wrapped tensor
    assert t.tolist() == [2.0, 2.0, 2.0]
    assert isinstance(p + 1, reftrace.Tensor) and not isinstance(p + 1, rnn.Parameter)
    assert not rnn.Parameter(t, requires_grad=False).requires_grad
    assert rnn.Parameter().shape == (0,)
    q = copy.deepcopy(p)
    assert isinstance(q, rnn.Parameter) and q.data_ptr() != p.data_ptr()


@requires_torch
def test_parameter_repr_matches_torch():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert repr(rnn.Parameter(reftrace.from_numpy(data.copy()))) == \
        repr(torch.nn.Parameter(torch.from_numpy(data.copy())))


@requires_torch
@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.Module().register_buffer("a.b", None),
    lambda lib: lib.nn.Module().register_buffer("", None),
    lambda lib: lib.nn.Module().register_buffer(1, None),
    lambda lib: lib.nn.Module().register_buffer("x", 3),
    lambda lib: lib.nn.Module().register_parameter("a.b", None),
    lambda lib: lib.nn.Module().register_parameter("", None),
    lambda lib: lib.nn.Module().register_parameter("w", lib.ones(2)),
    lambda lib: lib.nn.Module().add_module("a.b", lib.nn.ReLU()),
    lambda lib: lib.nn.Module().add_module("", lib.nn.ReLU()),
    lambda lib: lib.nn.Module().add_module("x", 3),
    lambda lib: lib.nn.Linear(2, 2).register_buffer("weight", None),
    lambda lib: lib.nn.Linear(2, 2).register_parameter("training", None),
    lambda lib: setattr(lib.nn.Linear(2, 2), "weight", lib.ones(2, 2)),
    lambda lib: setattr(lib.nn.Sequential(lib.nn.ReLU()), "0", 3),
    lambda lib: lib.nn.Linear(2, 2).nope,
    lambda lib: lib.nn.Module()(lib.ones(1)),
    lambda lib: lib.nn.Module(3),
    lambda lib: lib.nn.Module(x=3),
    lambda lib: lib.nn.Linear(2, 2).train("yes"),
    lambda lib: lib.nn.Linear(2, 2).to(lib.int64),
    lambda lib: lib.nn.Sequential(lib.nn.ReLU()).get_submodule("0.x"),
    lambda lib: lib.nn.Sequential(lib.nn.ReLU()).get_parameter("0.inplace"),
], ids=lambda f: None)
def test_errors_match_torch(case):
    same_outcome(case, raises=True)


def test_register_before_init():
    class Early(rnn.Module):
        def __init__(self):
            self.w = rnn.Parameter(reftrace.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


# -- iteration order ---------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("what", [
    lambda m: [n for n, _ in m.named_parameters()],
    lambda m: [n for n, _ in m.named_parameters(remove_duplicate=False)],
    lambda m: [n for n, _ in m.named_parameters(prefix="top", recurse=False)],
    lambda m: [n for n, _ in m.named_buffers()],
    lambda m: [n for n, _ in m.named_children()],
    lambda m: [n for n, _ in m.named_modules()],
    lambda m: [n for n, _ in m.named_modules(remove_duplicate=False)],
    lambda m: [n for n, _ in m.named_modules(prefix="net")],
    lambda m: [type(c).__name__ for c in m.children()],
    lambda m: [type(c).__name__ for c in m.modules()],
    lambda m: len(list(m.parameters())),
    lambda m: list(m.state_dict()),
    lambda m: list(m.state_dict(prefix="p.")),
    lambda m: [n for n in dir(m) if n in ("conv", "scale", "alpha", "cache", "0")],
    lambda m: [n for n in dir(m.body) if n.isdigit()],
], ids=lambda f: None)
def test_iteration_matches_torch(what):
    same_outcome(lambda lib: what(make_net(lib)))


def test_shared_members_once():
    m = make_net(reftrace)
    params = list(m.parameters())
    assert len(params) == len({id(p) for p in params})
    assert m.shared is m.body[2]
    assert [n for n, _ in m.named_modules()].count("shared") == 0  # deduplicated: body.2 first


# -- hooks -------------------------------------------------------------------------------------

def _hook_log(lib):
    log = []
    lin = lib.nn.Linear(2, 2)
    lin.register_forward_pre_hook(lambda m, args: log.append("pre1"))
    lin.register_forward_pre_hook(lambda m, args: log.append("pre0"), prepend=True)
    lin.register_forward_pre_hook(
        lambda m, args, kwargs: log.append(("prekw", len(args), sorted(kwargs))), with_kwargs=True)
    lin.register_forward_hook(lambda m, args, out: log.append(("fwd", tuple(out.shape))))
    lin.register_forward_hook(lambda m, args, kwargs, out: log.append("fwdkw"), with_kwargs=True)
    h = lin.register_forward_hook(lambda m, args, out: log.append("removed"))
    h.remove()
    g = lib.nn.modules.module.register_module_forward_pre_hook(lambda m, args: log.append("global"))
    try:
        lin(lib.ones(3, 2))
    finally:
        g.remove()
    return log


@requires_torch
def test_hook_order_matches_torch():
    assert same_outcome(_hook_log) == ["global", "pre0", "pre1", ("prekw", 1, []), ("fwd", (3, 2)),
                                       "fwdkw"]


@requires_torch
def test_hooks_replace_args_and_output():
    def run(lib):
        lin = lib.nn.Identity()
        lin.register_forward_pre_hook(lambda m, args: args[0] * 2)  # a non-tuple is wrapped
        lin.register_forward_hook(lambda m, args, out: out + 1)
        return lin(lib.ones(2)).tolist()
    assert same_outcome(run) == [3.0, 3.0]


@requires_torch
def test_always_call_hook_runs_when_forward_raises():
    def run(lib):
        log = []
        m = lib.nn.Linear(2, 2)
        m.register_forward_hook(lambda mod, args, out: log.append(out), always_call=True)
        try:
            m(lib.ones(3))
        except RuntimeError:
            log.append("raised")
        return log
    assert same_outcome(run) == [None, "raised"]


@requires_torch
def test_pre_hook_bad_return_matches_torch():
    def run(lib):
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        return m(lib.ones(1))
    same_outcome(run, raises=True)


def test_backward_hooks_are_stored():
    m = rnn.Linear(2, 2)
    h = m.register_full_backward_hook(lambda mod, gi, go: None)
    assert len(m._backward_hooks) == 1 and m._is_full_backward_hook is True
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        m.register_backward_hook(lambda mod, gi, go: None)
    h.remove()
    assert not m._backward_hooks
    m(reftrace.ones(1, 2))  # stored hooks do not disturb forward


# -- state dicts ------------------------------------------------------------------------------

def test_state_dict_round_trip():
    a, b = make_net(reftrace), make_net(reftrace)
    sd = a.state_dict()
    assert "cache" not in sd and "unused" not in sd  # non-persistent buffer, None parameter
    assert not sd["conv.weight"].requires_grad and sd["conv.weight"].data_ptr() == a.conv.weight.data_ptr()
    assert a.state_dict(keep_vars=True)["alpha"] is a.alpha
    result = b.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    for k, v in b.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), sd[k].numpy())
    assert isinstance(b.alpha, rnn.Parameter) and b.alpha.requires_grad  # copied in place


def test_load_state_dict_assign():
    m = rnn.Linear(2, 3)
    w = reftrace.ones(3, 2)
    m.load_state_dict({"weight": w, "bias": reftrace.zeros(3)}, assign=True)
    assert isinstance(m.weight, rnn.Parameter) and m.weight.data_ptr() == w.data_ptr()


@requires_torch
@pytest.mark.parametrize("edit", [
    lambda sd, lib: sd.pop("heads.1.bias"),
    lambda sd, lib: sd.update({"extra": lib.ones(1), "heads.7.weight": lib.ones(1)}),
    lambda sd, lib: sd.update({"bn.weight": lib.ones(5)}),
    lambda sd, lib: sd.update({"alpha": lib.ones(1)}),  # 0-dim parameter takes a [1] entry
    lambda sd, lib: sd.update({"conv.weight": "nope"}),
    lambda sd, lib: (sd.pop("scale"), sd.update({"body.5.x": lib.ones(1)}), sd.pop("bn.bias")),
    lambda sd, lib: sd.pop("bn.num_batches_tracked"),  # filled in: no metadata means version < 2
], ids=lambda f: None)
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_errors_match_torch(edit, strict):
    def run(lib):
        m = make_net(lib)
        sd = dict(m.state_dict())  # a plain dict: no _metadata on either side
        edit(sd, lib)
        r = m.load_state_dict(sd, strict=strict)
        return (list(r.missing_keys), list(r.unexpected_keys), repr(r), type(r).__name__)
    same_outcome(run, raises=None)


@requires_torch
def test_state_dict_hooks_match_torch():
    def run(lib):
        log = []
        m = lib.nn.Sequential(lib.nn.Linear(2, 2))
        m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", prefix)))

        def post(mod, sd, prefix, meta):
            sd[prefix + "extra"] = lib.ones(1)

        def load_pre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            log.append(("load_pre", type(mod).__name__, prefix))
            sd.pop(prefix + "extra", None)

        m[0].register_state_dict_post_hook(post)
        keys = list(m.state_dict())
        m[0].register_load_state_dict_pre_hook(load_pre)
        m.register_load_state_dict_post_hook(lambda mod, k: log.append(("post", list(k.missing_keys))))
        result = m.load_state_dict(m.state_dict())
        m[0].register_state_dict_post_hook(lambda *a: 1)
        try:
            m.state_dict()
        except RuntimeError as e:
            log.append(str(e))
        return keys, log, repr(result)
    same_outcome(run)


@requires_torch
def test_load_state_dict_not_a_mapping():
    same_outcome(lambda lib: lib.nn.Linear(1, 1).load_state_dict([1]), raises=True)


# -- modes and conversions --------------------------------------------------------------------

def test_train_eval_apply():
    m = make_net(reftrace)
    assert m.eval() is m
    assert not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    order = []
    m.apply(lambda mod: order.append(type(mod).__name__))
    assert order[-1] == "Net" and order[:2] == ["Conv2d", "BatchNorm2d"]  # children first


def test_conversions_keep_parameter_identity():
    m = make_net(reftrace)
    w = m.conv.weight
    assert m.double() is m
    assert m.conv.weight is w and w.dtype == reftrace.float64 and isinstance(w, rnn.Parameter)
    assert m.bn.running_mean.dtype == reftrace.float64
    assert m.bn.num_batches_tracked.dtype == reftrace.int64  # integral buffers keep their dtype
    m.to(reftrace.float32)
    assert w.dtype == reftrace.float32 and m.scale.dtype == reftrace.float32
    m.half().float()
    assert w.dtype == reftrace.float32 and w.requires_grad
    m.to("cpu")
    m.to(reftrace.zeros(1, dtype=reftrace.float64))
    assert w.dtype == reftrace.float64
    m.cpu()
    m(reftrace.ones(2, 3, 5, 5, dtype=reftrace.float64))


def test_requires_grad_and_zero_grad():
    m = rnn.Linear(2, 2)
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.weight.grad = reftrace.ones(2, 2)
    m.zero_grad(set_to_none=False)
    assert m.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    m.zero_grad()
    assert m.weight.grad is None


# -- repr ----------------------------------------------------------------------------------------

def _all_layers(lib):
    nn = lib.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(OrderedDict([
                ("conv", nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)),
                ("conv_same", nn.Conv2d(8, 8, (3, 5), padding="same", dilation=2, groups=2,
                                        padding_mode="reflect")),
                ("bn", nn.BatchNorm2d(8, momentum=None)),
                ("act", nn.ReLU(inplace=True)),
                ("pool", nn.MaxPool2d(2)),
                ("avg", nn.AvgPool2d((2, 3), stride=1, padding=1)),
                ("gap", nn.AdaptiveAvgPool2d((1, None))),
            ]))
            self.seq1d = nn.Sequential(nn.Conv1d(4, 4, 3, padding_mode="circular", padding=1),
                                       nn.BatchNorm1d(4, affine=False, track_running_stats=False))
            self.embed = nn.Embedding(10, 4, padding_idx=-1, max_norm=1.0, norm_type=1.0)
            self.embed2 = nn.Embedding(10, 4, sparse=True, scale_grad_by_freq=True)
            self.norms = nn.ModuleDict({"ln": nn.LayerNorm([4, 4], elementwise_affine=False),
                                        "gn": nn.GroupNorm(2, 8, bias=False)})
            self.acts = nn.ModuleList([nn.GELU(approximate="tanh"), nn.SiLU(), nn.LeakyReLU(0.2),
                                       nn.ELU(alpha=0.5, inplace=True), nn.Sigmoid(), nn.Tanh(),
                                       nn.Softmax(dim=1), nn.LogSoftmax(-1), nn.Identity(3)])
            self.reps = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)] + [nn.Linear(4, 4, bias=False)])
            self.empty = nn.ModuleList()
            self.bil = nn.Bilinear(2, 3, 4)
            self.flat = nn.Flatten(0, 2)
            self.drop = nn.Dropout(0.25)
            self.plist = nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(4)])
            self.pdict = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(1, 1))})

    return Model()


@requires_torch
def test_repr_matches_torch():
    rt, th = repr(_all_layers(reftrace)), repr(_all_layers(torch))
    assert rt == th, "\n" + rt + "\n----- torch:\n" + th


@requires_torch
def test_iteration_of_all_layers_matches_torch():
    same_outcome(lambda lib: [(k, tuple(v.shape), str(v.dtype)) for k, v in
                              _all_layers(lib).state_dict().items()])


# -- containers --------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("op", [
    lambda s, nn: [type(m).__name__ for m in s],
    lambda s, nn: len(s),
    lambda s, nn: repr(s[1:]),
    lambda s, nn: repr(s[-1]),
    lambda s, nn: s[5],
    lambda s, nn: repr(s.append(nn.Tanh())),
    lambda s, nn: (s.__delitem__(0), list(s._modules))[1],
    lambda s, nn: (s.__delitem__(slice(0, 2)), repr(s))[1],
    lambda s, nn: (s.insert(1, nn.Sigmoid()), list(s._modules), repr(s))[1:],
    lambda s, nn: (s.__setitem__(-1, nn.Sigmoid()), repr(s))[1],
    lambda s, nn: repr(s + s),
    lambda s, nn: repr(s * 2),
    lambda s, nn: (s.pop(1), repr(s))[1],
    lambda s, nn: (s.extend([nn.ReLU()]), len(s))[1],
    lambda s, nn: s + 1,
    lambda s, nn: s * 0,
], ids=lambda f: None)
def test_sequential_matches_torch(op):
    same_outcome(lambda lib: op(lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(),
                                                  lib.nn.Linear(3, 1)), lib.nn), raises=None)


def test_sequential_forward_and_named():
    s = rnn.Sequential(OrderedDict([("a", rnn.Linear(2, 3)), ("b", rnn.ReLU())]))
    assert s(reftrace.ones(4, 2)).shape == (4, 3)
    assert s.a is s[0] and list(s.state_dict()) == ["a.weight", "a.bias"]


@requires_torch
@pytest.mark.parametrize("op", [
    lambda l, nn: repr(l),
    lambda l, nn: repr(l[1:]),
    lambda l, nn: (l.__delitem__(1), list(l._modules))[1],
    lambda l, nn: (l.insert(0, nn.ReLU()), repr(l))[1],
    lambda l, nn: repr(l + [nn.ReLU()]),
    lambda l, nn: l[9],
    lambda l, nn: l.extend(3),
    lambda l, nn: (l.pop(0), len(l))[1],
], ids=lambda f: None)
def test_module_list_matches_torch(op):
    same_outcome(lambda lib: op(lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.ReLU(), lib.nn.Tanh()]),
                                lib.nn), raises=None)


@requires_torch
@pytest.mark.parametrize("op", [
    lambda d, nn: (list(d), list(d.keys()), "a" in d, len(d)),
    lambda d, nn: (d.update([("c", nn.ReLU())]), repr(d))[1],
    lambda d, nn: (d.pop("a"), repr(d))[1],
    lambda d, nn: d.update([("c",)]),
    lambda d, nn: d.update(3),
    lambda d, nn: (d.clear(), repr(d))[1],
], ids=lambda f: None)
def test_module_dict_matches_torch(op):
    same_outcome(lambda lib: op(lib.nn.ModuleDict(OrderedDict([("b", lib.nn.Tanh()),
                                                               ("a", lib.nn.Linear(1, 1))])), lib.nn),
                 raises=None)


@requires_torch
def test_parameter_containers_match_torch():
    def run(lib):
        pl = lib.nn.ParameterList([lib.ones(2), lib.nn.Parameter(lib.zeros(3, 1))])
        pl.append(lib.ones(1))
        pd = lib.nn.ParameterDict({"z": lib.ones(1), "y": lib.ones(2)})
        pd["x"] = lib.zeros(2, 2)
        return (repr(pl), repr(pd), [n for n, _ in pl.named_parameters()], list(pd.keys()),
                all(isinstance(p, lib.nn.Parameter) for p in pl), len(pl), len(pd), "x" in pd)
    same_outcome(run)


def test_parameter_list_not_callable():
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        rnn.ParameterList()(1)
