"""Module programs whose traces must equal torch 2.13's: graph, inlined_graph, submodule graphs.

Each case is source text defining ``make()`` (returning the module to trace, built against the
name ``torch``) and the example inputs, as in tracer_cases.py. Parameters are set to fixed values
so both libraries compute the same numbers. Class-type mangles (``___torch_mangle_N.``) are
process history, not trace content: they are stripped before comparing (torch's checker does
the same).
"""
import re

from tracer_cases import T, make_inputs

COMMON = """
nn = torch.nn  # (an import statement would bind the real torch here)
def fill(module):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (0.5 + 0.1 * i))
    return module
"""

CASES = {
    "nested_linear_twice": ("""
class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        return self.lin(x).relu()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Inner()
        self.b = nn.Linear(3, 2)
        self.register_buffer("scale", torch.ones(3))
    def forward(self, x):
        y = self.a(x) * self.scale
        z = self.a(y)
        return self.b(z)
def make():
    return fill(Net())
""", (T(2, 3),), {}),
    "single_linear": ("def make():\n    return fill(nn.Linear(3, 4))\n", (T(2, 3),), {}),
    "tuple_returning_submodule": ("""
class K(nn.Module):
    def forward(self, x):
        return x + 1, x * 2
class P(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = K()
    def forward(self, x):
        a, b = self.k(x)
        return a - b
def make():
    return P()
""", (T(2),), {}),
    "params_and_buffers": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
        self.register_buffer("s", torch.ones(3))
    def forward(self, x):
        return x * self.w + self.s
def make():
    return M()
""", (T(2, 3),), {}),
    "sequential_mlp": ("""
def make():
    return fill(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.Softmax(dim=1)))
""", (T(3, 4),), {}),
    "conv_block": ("""
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
    def forward(self, x):
        return self.pool(self.bn(self.conv(x)).relu()).flatten(1)
def make():
    return fill(Block()).eval()
""", (T(1, 2, 4, 4),), {}),
    "forward_hook": ("""
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.lin.register_forward_hook(lambda mod, inp, out: out * 2)
        self.lin.register_forward_pre_hook(lambda mod, inp: (inp[0] + 1,))
    def forward(self, x):
        return self.lin(x) - x
def make():
    return fill(Net())
""", (T(2, 2),), {}),
    "submodule_returns_input_and_size": ("""
class Shape(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.shape = Shape()
        self.lin = nn.Linear(6, 2)
    def forward(self, x):
        return self.lin(self.shape(x))
def make():
    return fill(Net())
""", (T(2, 2, 3),), {}),
}


MANGLE = re.compile(r"___torch_mangle_\d+\.")


def strip_mangles(text):
    return MANGLE.sub("", text)


def load_module(lib, name):
    src, spec, kw = CASES[name]
    namespace = {"torch": lib, "__name__": "module_case_" + name}
    exec(compile(COMMON + src, f"<module case {name}>", "exec"), namespace)
    return namespace["make"](), make_inputs(lib, spec)


def _submodule_graphs(traced, prefix=""):
    out = {}
    for name, child in traced.named_children():
        if child._c._has_method("forward"):
            out[prefix + name] = child.graph.str(False)
        out.update(_submodule_graphs(child, prefix + name + "."))
    return out


def trace_texts(lib, name):
    """graph, inlined_graph and every traced submodule's graph, mangles stripped."""
    module, inputs = load_module(lib, name)
    traced = lib.jit.trace(module, inputs, check_trace=False, **CASES[name][2])
    texts = {"graph": traced.graph.str(False), "inlined_graph": traced.inlined_graph.str(False),
             "repr": repr(traced)}
    texts.update({"submodule " + k: v for k, v in _submodule_graphs(traced).items()})
    return {k: strip_mangles(v) for k, v in texts.items()}
