"""Programs whose ``.code`` must equal torch 2.13's, beyond the tracer and module golden cases.

Same format as tracer_cases.py (functions: source defining ``fn``, input specs, trace kwargs) and
module_cases.py (source defining ``make()``). Each case is here for one rule of python_print.cpp,
named in its comment. tests/gen_code_golden.py stores torch's ``.code`` for all of them (and for
the tracer and module cases) in tests/data/code_golden.json.
"""
from tracer_cases import T

FUNCTION_CASES = {
    # keyword-only arguments print as name=value; a default is typed: alpha=1. is not alpha=1
    "kwarg_alpha": ("def fn(x, y):\n    return torch.add(x, y, alpha=2)\n", (T(4, 3), T(4, 3)), {}),
    "kwarg_alpha_float": ("def fn(x, y):\n    return torch.add(x, y, alpha=1.0)\n", (T(4, 3), T(4, 3)), {}),
    # trailing defaults are elided; a list (never a constant) and everything before it print
    "sum_overloads": ("def fn(x):\n    return x.sum(0), x.sum([0, 1], keepdim=True), x.sum(dtype=torch.float64)\n",
                      (T(4, 3),), {}),
    # dtypes print as ints, devices as torch.device("cpu"); kwarg-only to() overload
    "to_variants": ("def fn(x):\n    return x.to(torch.float64), x.to(device='cpu', dtype=torch.float16)\n",
                    (T(4, 3),), {}),
    # aten::ScalarImplicit prints as annotate(number, ...); factory keyword arguments
    "arange_of_size": ("def fn(x):\n    return torch.arange(x.size(0)), torch.zeros(x.shape[0], 2)\n", (T(4, 3),), {}),
    "full_of_tensor": ("def fn(x):\n    return torch.full((2,), x.sum())\n", (T(4, 3),), {}),
    # indexing: select / slice / unsqueeze; a Tensor?[] list needs annotate(List[Optional[Tensor]], ...)
    "indexing": ("def fn(x):\n    return x[0], x[:, 1:], x[None, ..., 1], x[torch.tensor([0, 1])]\n", (T(4, 3),), {}),
    # ListUnpack `a, b, = ...`; a two-output node `_0, _1 = ...`; a list argument [a, b]
    "unpack_and_multi_output": ("def fn(x):\n    a, b = x.chunk(2)\n    m, i = x.max(1)\n"
                                "    return a + b, m, i, torch.cat([a, b], 1)\n", (T(4, 3),), {}),
    # an empty list is annotate(List[int], [])
    "empty_list": ("def fn(x):\n    return x.new_zeros([]), x.view(-1).expand(2, 12)\n", (T(4, 3),), {}),
    # a one-element tuple keeps its comma
    "one_tuple": ("def fn(x):\n    return (x,)\n", (T(4, 3),), {}),
    # out= arguments print by name
    "out_argument": ("def fn(x, y):\n    z = torch.empty(4, 3)\n    torch.add(x, y, out=z)\n    return z\n",
                     (T(4, 3), T(4, 3)), {}),
    # string and float constants: "tanh", 0.20000000000000001, -inf, nan
    "string_and_float_constants": ("def fn(x):\n    return (torch.nn.functional.gelu(x, approximate='tanh'), "
                                   "torch.nn.functional.gelu(x), torch.nn.functional.leaky_relu(x, 0.2), "
                                   "x.clamp(min=0.5), x.clamp(-float('inf'), float('nan')))\n", (T(4, 3),), {}),
    "defaults_elided": ("def fn(x):\n    return (torch.nn.functional.layer_norm(x, [3]), "
                        "torch.nn.functional.softmax(x, 1, dtype=torch.float64), "
                        "torch.nn.functional.dropout(x, 0.5, False), x.div(2, rounding_mode='floor'))\n",
                        (T(4, 3),), {}),
    # a dict keyed by tensors
    "dict_tensor_keys": ("def fn(x):\n    return {x: x + 1}\n", (T(4, 3),), {"strict": False}),
    # a named value used twice is never inline; a long inline expression is split out
    "long_names": ("def fn(x):\n    very_long_variable_name_for_testing_purposes = x + 1\n"
                   "    v = very_long_variable_name_for_testing_purposes\n"
                   "    return v.mul(very_long_variable_name_for_testing_purposes).sum(0, keepdim=True)\n",
                   (T(4, 3),), {}),
    # a chain of calls splits every 38 characters
    "method_chain": ("def fn(x):\n    return x.permute(1, 0).contiguous().view(-1, 2, 2).transpose(0, 1)"
                     ".reshape(6, 2).mean(0)\n", (T(4, 3),), {}),
    # splitting a long argument also splits the inline arguments to its left (evaluation order)
    "split_keeps_order": ("def fn(x):\n    return x + torch.ones(3) + torch.ones(3) + torch.full((3,), 2.)\n",
                          (T(4, 3),), {}),
    # inputs without names are argument_<i>
    "unnamed_inputs": ("def fn(*xs):\n    return xs[0] + xs[1]\n", (T(4, 3), T(4, 3)), {}),
    # reserved names (ops, _, aten) get a suffix
    "reserved_names": ("def fn(ops, _):\n    aten = ops + _\n    return aten * aten\n", (T(4, 3), T(4, 3)), {}),
    # named values stay statements, in order
    "named_statements": ("def fn(x):\n    a = x.sin()\n    b = x.cos()\n    c = x.tan()\n    return c + b + a\n",
                         (T(4, 3),), {}),
    # equal tensor constants share one CONSTANTS entry; different dtypes do not
    "constant_table": ("def fn(x):\n    return x * 2 + 2, x * 2.0, x - 2\n", (T(3),), {}),
    # a lambda is called _lambda
    "lambda_name": ("fn = lambda x, y: x * y\n", (T(2), T(2)), {}),
    # everyday ops: which arguments survive default elision
    "setitem": ("def fn(x):\n    y = x.clone()\n    y[0] = 2\n    y[:, 1] += x[:, 0]\n    return y\n",
                (T(4, 3),), {}),
    "masked_where": ("def fn(x):\n    return x.masked_fill(x > 0, 0.5), torch.where(x > 0, x, 0.), "
                     "torch.where(x > 0, x, x * 2)\n", (T(4, 3),), {}),
    "split_unbind_stack": ("def fn(x):\n    a, b = x.split([1, 3])\n    c = x.unbind(1)\n"
                           "    return torch.stack([a.sum(0), b.sum(0)]), c[0]\n", (T(4, 3),), {}),
    "conversions": ("def fn(x):\n    return x.float(), x.long(), x.double().half(), x.bool(), x.type_as(x)\n",
                    (T(4, 3),), {}),
    "keyword_reductions": ("def fn(x):\n    return torch.sum(x, dim=1), x.mean(dim=0, keepdim=True), x.std(0), "
                           "x.var(unbiased=False), torch.cumsum(x, dim=0)\n", (T(4, 3),), {}),
    "pooling": ("def fn(x):\n    F = torch.nn.functional\n    return F.max_pool2d(x, 2, return_indices=True), "
                "F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, 1)\n", (T(1, 2, 4, 4),), {}),
    "logical_and_compare": ("def fn(x, y):\n    return (x > y) & (x < 1), (x == y) | ~(x != 0), x.abs().max(), "
                            "x.argmax(1)\n", (T(4, 3), T(4, 3)), {}),
    "integer_arith": ("def fn(x):\n    return x // 2, x % 3, x.pow(2), -x, x.float() / 2, "
                      "torch.div(x, 2, rounding_mode='trunc')\n", (T(4, 3, dtype="int64"),), {}),
    "activations": ("def fn(x):\n    F = torch.nn.functional\n    return F.relu(x), F.silu(x), F.elu(x), "
                    "F.softplus(x), F.hardtanh(x), torch.sigmoid(x), torch.tanh(x), F.log_softmax(x, -1)\n",
                    (T(4, 3),), {}),
    "memory_format_defaults": ("def fn(x):\n    return x.transpose(0, 1).contiguous(memory_format="
                               "torch.contiguous_format), x.clone(memory_format=torch.preserve_format)\n",
                               (T(4, 3),), {}),
    "shape_ops": ("def fn(x):\n    return x.flatten(), x.unsqueeze(0).squeeze(0), x.squeeze(), x.expand_as(x), "
                  "x.repeat(2, 1)\n", (T(4, 3),), {}),
    "dropout_train": ("def fn(x):\n    return torch.nn.functional.dropout(x, 0.5, True)\n", (T(4, 3),), {}),
    # an argument evaluated out of order (cos before sin in the list) is not inline
    "out_of_order_argument": ("def fn(x):\n    return torch.cat([x.sin(), x.cos()][::-1])\n", (T(4, 3),), {}),
    # doubles print with 17 significant digits unless integral; -0. keeps its sign
    "float_formats": ("def fn(x):\n    return x * 1e-7 + 1e20 - 0.1, x.clamp(1e10, 1e16), "
                      "torch.nn.functional.leaky_relu(x, -0.0)\n", (T(2),), {}),
    # a multi-element captured tensor and an equal fresh one: one CONSTANTS entry
    "tensor_constants_dedup": ("c = torch.arange(20.)\ndef fn(x):\n    return x + c + c * 2 + torch.arange(20.)\n",
                               (T(20),), {}),
    # complex Scalars print as 1.5-2.j (no spaces; the real part of -1j prints as 0.)
    "complex_scalars": ("def fn(x):\n    return x + torch.full((2,), 1.5 - 2j) + torch.full((2,), -1j) "
                        "+ torch.full((2,), 0.1 + 1j)\n", (T(2),), {}),
    # containers inside containers at the output
    "dict_of_tuples": ("def fn(x):\n    return {'a': (x, x + 1), 'b': (x * 2, x)}\n", (T(2),), {"strict": False}),
    "nested_output": ("def fn(x):\n    return ((x + 1,), [x, x * 2])\n", (T(2),), {"strict": False}),
    # traced sizes used as a whole shape (reftrace cannot trace these yet; see test_python_print)
    "size_as_shape": ("def fn(x):\n    return x.reshape(x.shape[0] * x.shape[1])\n", (T(4, 3),), {}),
    "size_as_factory_arg": ("def fn(x):\n    n = x.size(0)\n    return x.view(n, -1) * n, torch.ones(n)\n",
                            (T(4, 3),), {}),
}

MODULE_CASES = {
    # code_with_constants; a buffer read through self
    "buffer_and_constant": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("c", torch.arange(3.))
    def forward(self, x):
        return x + self.c + torch.ones(3) * 2
def make():
    return M()
""", (T(4, 3),), {}),
    # getattr(self, "0") for attribute names that are not identifiers
    "module_list_like": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.ReLU(), nn.Tanh())
        self.w = nn.Parameter(torch.ones(3))
    def forward(self, x, y):
        return self.layers(x * self.w), y
def make():
    return M()
""", (T(2, 3), T(2, 3)), {}),
    # forward, forward1, forward2 of one submodule; a submodule with two inputs and two outputs
    "three_calls": ("""
class A(nn.Module):
    def forward(self, x, y):
        return x * y, y
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = A()
        self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])
    def forward(self, x):
        p, q = self.a(x, x)
        p, q = self.a(p, q)
        for b in self.blocks:
            p = b(p)
        return self.a(p, q)[0]
def make():
    return fill(M())
""", (T(2, 3),), {}),
    # tuple and dict inputs of a method: unpacked in the signature's types, indexed in the body
    "tuple_dict_inputs": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, t, d):
        return self.lin(t[0]) + d["k"], t[1]
def make():
    return fill(M())
""", ((T(2, 3), T(2, 3)), {"k": T(2, 3)}), {}),
    # training-mode batch norm and dropout, a grouped convolution without bias
    "train_mode_layers": ("""
def make():
    return fill(nn.Sequential(nn.Conv2d(2, 2, 3, groups=2, bias=False), nn.BatchNorm2d(2), nn.Dropout(0.1)))
""", (T(1, 2, 5, 5),), {}),
    # a parameter used twice is one GetAttr bound to a name
    "param_twice": ("""
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
    def forward(self, x):
        return x * self.w + self.w
def make():
    return M()
""", (T(2, 3),), {}),
    "nested_sequential": ("""
def make():
    return fill(nn.Sequential(nn.Sequential(nn.Linear(3, 4), nn.GELU()), nn.LayerNorm(4), nn.Flatten(0)))
""", (T(2, 3),), {}),
}


# -- shared by the golden generator and the tests ---------------------------------------------------

def all_function_cases():
    """tracer_cases.CASES (prefixed 'tracer/') and FUNCTION_CASES."""
    import tracer_cases
    cases = {"tracer/" + k: v for k, v in tracer_cases.CASES.items()}
    cases.update(FUNCTION_CASES)
    return cases


def all_module_cases():
    """module_cases.CASES (prefixed 'module/') and MODULE_CASES, as full sources."""
    import module_cases
    cases = {"module/" + k: (module_cases.COMMON + src, spec, kw)
             for k, (src, spec, kw) in module_cases.CASES.items()}
    cases.update({k: (module_cases.COMMON + src, spec, kw) for k, (src, spec, kw) in MODULE_CASES.items()})
    return cases


def function_code(lib, case):
    from tracer_cases import trace_case
    src, spec, kw = case
    return trace_case(lib, "code", src, spec, kw).code


def module_codes(lib, case):
    """{'code': ..., 'constants': [names in code_with_constants], 'submodule a.lin': ...}."""
    from module_cases import strip_mangles
    from tracer_cases import make_inputs
    src, spec, kw = case
    namespace = {"torch": lib, "__name__": "code_case"}
    exec(compile(src, "<code case>", "exec"), namespace)
    traced = lib.jit.trace(namespace["make"](), make_inputs(lib, spec), check_trace=False, **kw)
    code, constants = traced.code_with_constants
    out = {"code": traced.code, "code_with_constants": code,
           "constants": sorted(vars(constants)["const_mapping"])}
    for name, child in traced.named_modules():
        if name and child._c._has_method("forward"):
            out["submodule " + name] = child.code
    return {k: strip_mangles(v) if isinstance(v, str) else v for k, v in out.items()}
