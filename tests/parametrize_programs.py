"""Programs for torch.nn.utils' weight_norm and spectral_norm, both kinds (parametrizations and
the old forward-pre-hooks), and torch.nn.utils.parametrize: run under torch 2.13 and reftrace,
their printed output (graphs, inlined graphs, code, state_dict keys and values, errors,
warnings) must be identical. tests/gen_parametrize_golden.py writes torch's output to
tests/data/parametrize_golden.json, so machines without torch check it too.

Each program is source text run with ``torch`` bound to the library. Parameters are filled with
fixed values before a norm is applied, and spectral_norm's random vectors u, v are overwritten
with fixed ones, because the two libraries draw different random numbers.
"""
import contextlib
import io
import re
import warnings

COMMON = """
import numpy as np
nn = torch.nn
P = torch.nn.utils.parametrize
def fill(module):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (0.5 + 0.1 * i) + 0.05)
    return module
def fill_full_rank(module):  # (orthogonal: the QR of a rank-deficient matrix is rounding noise)
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.cos(torch.linspace(0, 7 + i, p.numel()) ** 2).reshape(p.shape))
    return module
def fix_uv(*vectors):
    with torch.no_grad():
        for i, t in enumerate(vectors):
            t.copy_(torch.nn.functional.normalize(torch.linspace(0.5, 1.5 + i, t.numel()), dim=0))
def show(traced, *names):
    print(traced.graph.str(False))
    print(traced.inlined_graph.str(False))
    print(traced.code)
    for name in names:
        print(name, traced.get_submodule(name).graph.str(False))
def values(t, decimals=5):
    # (+ 0.0: a rounding-noise value prints 0.0 whatever its sign, which BLAS builds differ on)
    return (np.round(t.detach().numpy().astype(np.float64), decimals) + 0.0).tolist()
def show_state(module):
    for k, v in module.state_dict().items():
        print(k, tuple(v.shape), values(v))
"""

PROGRAMS = {
    "weight_norm_linear": """
m = nn.utils.parametrizations.weight_norm(fill(nn.Linear(3, 4)))
print(m)
print(type(m).__name__, P.type_before_parametrizations(m).__name__, P.is_parametrized(m, "weight"))
print([n for n, _ in m.named_parameters()])
show_state(m)
x = torch.linspace(-2, 2, 6).reshape(2, 3)
print(values(m.weight), values(m(x)))
traced = torch.jit.trace(m, x)
show(traced, "parametrizations.weight")
print(values(traced(torch.ones(5, 3))), values(m(torch.ones(5, 3))))
""",
    "weight_norm_dims": """
for dim in (0, 1, 3, -1, None):
    m = nn.utils.parametrizations.weight_norm(fill(nn.Conv2d(2, 3, 2)), dim=dim)
    g = m.parametrizations.weight.original0
    x = torch.linspace(-1, 1, 2 * 2 * 3 * 3).reshape(2, 2, 3, 3)
    print(dim, tuple(g.shape), values(g), values(m(x).sum((2, 3))))
traced = torch.jit.trace(m, x)
print(traced.inlined_graph.str(False))
""",
    "weight_norm_old_hook": """
m = nn.utils.weight_norm(fill(nn.Linear(3, 2)))
print(m, [n for n, _ in m.named_parameters()])
show_state(m)
x = torch.linspace(-2, 2, 6).reshape(2, 3)
print(values(m(x)))
traced = torch.jit.trace(m, x)
show(traced)
m = nn.utils.remove_weight_norm(m)
print([n for n, _ in m.named_parameters()], values(m.weight))
try:
    nn.utils.remove_weight_norm(m)
except ValueError as e:
    print("ValueError:", str(e).splitlines()[0])
m = nn.utils.weight_norm(fill(nn.Linear(3, 2)), dim=None)
print(tuple(m.weight_g.shape), values(m.weight_g))
try:
    nn.utils.weight_norm(m)
except RuntimeError as e:
    print("RuntimeError:", e)
""",
    "weight_norm_in_a_network": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.utils.weight_norm(fill(nn.Conv1d(2, 4, 3)))
        self.lin = nn.utils.parametrizations.weight_norm(fill(nn.Linear(4, 2)), dim=1)
    def forward(self, x):
        return self.lin(self.conv(x).relu().mean(2))
net = Net()
x = torch.linspace(-1, 1, 2 * 2 * 5).reshape(2, 2, 5)
traced = torch.jit.trace(net, x)
show(traced, "conv", "lin")
print(values(traced(x)), values(net(x)))
print(list(net.state_dict()))
""",
    "weight_norm_state_dicts": """
old = nn.utils.weight_norm(fill(nn.Linear(3, 2)))
new = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
print(new.load_state_dict(old.state_dict()))
print(values(new.weight), values(old(torch.ones(1, 3))), values(new(torch.ones(1, 3))))
new.weight = torch.full((2, 3), 2.0)
show_state(new)
P.remove_parametrizations(new, "weight")
print(type(new).__name__, [n for n, _ in new.named_parameters()], values(new.weight))
try:
    P.remove_parametrizations(new, "weight")
except ValueError as e:
    print("ValueError:", str(e).splitlines()[-1])
""",
    "weight_norm_gradients": """
m = nn.utils.parametrizations.weight_norm(fill(nn.Linear(3, 2)))
x = torch.linspace(-2, 2, 6).reshape(2, 3)
m(x).pow(2).sum().backward()
for n, p in m.named_parameters():
    print(n, values(p.grad, 3))   # float32 sums: the last digits are the kernel's
print(type(m.weight.grad_fn).__name__)
old = nn.utils.weight_norm(fill(nn.Conv1d(2, 2, 2)), dim=1)
old(torch.linspace(-1, 1, 12).reshape(2, 2, 3)).sum().backward()
print(values(old.weight_g.grad, 3), values(old.weight_v.grad, 3), type(old.weight.grad_fn).__name__)
""",
    "spectral_norm_parametrization": """
m = nn.utils.parametrizations.spectral_norm(fill(nn.Linear(3, 4)))
fix_uv(m.parametrizations.weight[0]._u, m.parametrizations.weight[0]._v)
print(m)
show_state(m)
x = torch.linspace(-2, 2, 6).reshape(2, 3)
print(values(m(x)))
show_state(m)
traced = torch.jit.trace(m, x, check_trace=False)
show(traced, "parametrizations.weight")
m.eval()
fix_uv(m.parametrizations.weight[0]._u, m.parametrizations.weight[0]._v)
traced = torch.jit.trace(m, x)
print(traced.inlined_graph.str(False))
# (4 decimals: -2.401875 lies on a 5-decimal rounding boundary, on which MKL builds disagree)
print(values(traced(torch.ones(3, 3)), 4), values(m(torch.ones(3, 3)), 4))
m.weight = torch.full((4, 3), 0.5)
print(values(m.parametrizations.weight.original))
""",
    "spectral_norm_dims": """
for layer in (nn.Conv2d(2, 3, 2), nn.ConvTranspose2d(2, 3, 2)):
    m = nn.utils.parametrizations.spectral_norm(fill(layer))
    sn = m.parametrizations.weight[0]
    fix_uv(sn._u, sn._v)
    m.eval()
    print(sn.dim, tuple(sn._u.shape), tuple(sn._v.shape), values(m.weight.flatten()[:6]))
m = nn.utils.parametrizations.spectral_norm(fill(nn.Linear(3, 4)), dim=1, n_power_iterations=3)
fix_uv(m.parametrizations.weight[0]._u, m.parametrizations.weight[0]._v)
print(values(m.weight))
for bad in ({"dim": 2}, {"n_power_iterations": 0}):
    try:
        nn.utils.parametrizations.spectral_norm(nn.Linear(3, 4), **bad)
    except (IndexError, ValueError) as e:
        print(type(e).__name__ + ":", e)
""",
    "spectral_norm_old_hook": """
m = nn.utils.spectral_norm(fill(nn.Linear(3, 2)))
fix_uv(m.weight_u, m.weight_v)
print(m, [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()])
x = torch.linspace(-2, 2, 6).reshape(2, 3)
print(values(m(x)))
show_state(m)
traced = torch.jit.trace(m, x, check_trace=False)
show(traced)
m.eval()
traced = torch.jit.trace(m, x)
print(traced.graph.str(False))
m = nn.utils.remove_spectral_norm(m)
print([n for n, _ in m.named_parameters()], list(m.state_dict()), values(m.weight))
m = nn.utils.spectral_norm(fill(nn.ConvTranspose1d(2, 3, 2)))
print(tuple(m.weight_u.shape), tuple(m.weight_v.shape))
""",
    "parametrize_custom": """
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)
class Scale(nn.Module):
    def forward(self, X):
        return X * 2
    def right_inverse(self, X):
        return X / 2
m = fill(nn.Linear(3, 3))
P.register_parametrization(m, "weight", Symmetric())
P.register_parametrization(m, "weight", Scale())
print(m)
print(values(m.weight))
show_state(m)
traced = torch.jit.trace(m, torch.ones(2, 3))
show(traced, "parametrizations.weight")
with P.cached():
    print(m.weight is m.weight)
    try:
        torch.jit.trace(m, torch.ones(2, 3))
    except RuntimeError as e:
        print("RuntimeError:", e)
print(m.weight is m.weight)
import copy, pickle
twin = copy.deepcopy(m)
print(type(twin).__name__, values(twin.weight), twin.weight is not m.weight)
try:
    pickle.dumps(m)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
try:
    P.register_parametrization(m, "nothing", Scale())
except ValueError as e:
    print("ValueError:", e)
class Wrong(nn.Module):
    def forward(self, X):
        return X[0]
try:
    P.register_parametrization(fill(nn.Linear(3, 3)), "weight", Wrong())
except ValueError as e:
    print("ValueError:", e)
try:
    P.register_parametrization(m, "weight", Wrong())
except ValueError as e:
    print("ValueError:", e)
P.remove_parametrizations(m, "weight", leave_parametrized=False)
print(type(m).__name__, values(m.weight))
print(hasattr(torch.nn.utils.parametrizations, "spectral_norm"), hasattr(torch.nn.utils, "weight_norm"))
""",
    "orthogonal_maps": """
fill = fill_full_rank
# square weights: matrix_exp (the default), cayley, householder; their state, values, traces
O = torch.nn.utils.parametrizations.orthogonal
for kind in (None, "cayley", "householder"):
    m = O(fill(nn.Linear(3, 3)), orthogonal_map=kind)
    print(kind, m.parametrizations.weight[0].orthogonal_map)
    show_state(m)
    w = m.weight
    print(values(w, 4), torch.allclose(w.T @ w, torch.eye(3), atol=1e-5))
    x = torch.linspace(-2, 2, 6).reshape(2, 3)
    traced = torch.jit.trace(m, x)
    show(traced, "parametrizations.weight")
    loss = m(x).square().sum()
    loss.backward()
    print(values(m.parametrizations.weight.original.grad, 4))
print(m)
""",
    "orthogonal_rectangular_and_errors": """
fill = fill_full_rank
O = torch.nn.utils.parametrizations.orthogonal
# no trivialization: the householder reflectors are the stored original (geqrf of the weight)
for shape in ((5, 3), (3, 5)):
    m = O(fill(nn.Linear(shape[1], shape[0])), use_trivialization=False)
    print(shape, m.parametrizations.weight[0].orthogonal_map, hasattr(m.parametrizations.weight[0], "base"))
    show_state(m)
    w = m.weight
    print(values(w, 4))
    m(torch.linspace(-1, 1, 2 * shape[1]).reshape(2, shape[1])).square().sum().backward()
    print(values(m.parametrizations.weight.original.grad, 4))
    traced = torch.jit.trace(m, torch.ones(2, shape[1]))
    show(traced, "parametrizations.weight")
# a batch of square matrices (a plain module holding a 3-d parameter)
class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.cos(torch.linspace(0, 9, 18) ** 2).reshape(2, 3, 3))
h = O(Holder(), orthogonal_map="cayley")
print(values(h.weight, 4))
for call in (lambda: O(nn.Linear(3, 3), name="nothing"),
             lambda: O(nn.BatchNorm1d(3)),
             lambda: O(nn.Linear(3, 3), orthogonal_map="qr"),
             lambda: O(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False),
             lambda: setattr(O(fill(nn.Linear(3, 3))), "weight", torch.ones(2, 2))):
    try:
        call()
    except (ValueError, NotImplementedError) as e:
        print(type(e).__name__ + ":", e)
""",
    "set_storage": """
# Tensor.set_: what parametrize uses to store a new value into an existing original
a, b = torch.ones(2), torch.zeros(3)
version = a._version
print(a.set_(b) is a, a.shape, a.stride(), a._version - version)
b.add_(1)
print(values(a))
a.set_(torch.zeros(4, 4)[:, 1])
print(a.shape, a.stride())
for dtype in (torch.int64, torch.float64, torch.bool):
    try:
        torch.ones(2).set_(torch.zeros(2, dtype=dtype))
    except RuntimeError as e:
        print("RuntimeError:", e)
""",
}

MANGLE = re.compile(r"___torch_mangle_\d+\.")


def run(lib, name):
    """The program's stdout (mangles stripped), then its warnings other than deprecations of
    torch.jit.trace, one 'warning: Type: first line' each."""
    namespace = {"torch": lib, "__name__": "parametrize_program_" + name}
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        lib.manual_seed(0)
        exec(compile(COMMON + PROGRAMS[name], f"<parametrize program {name}>", "exec"), namespace)
    lines = [f"warning: {w.category.__name__}: {str(w.message).splitlines()[0]}" for w in caught
             if w.category is not DeprecationWarning and "torch.jit.trace" not in str(w.message)]
    return MANGLE.sub("", out.getvalue()) + "".join(line + "\n" for line in lines)
