"""The traced programs whose archives are compared with torch's (tests/test_jit_save.py,
tests/gen_archive_golden.py): every function and module case of code_cases.all_function_cases /
all_module_cases, the models of examples/ (mlp, lenet, attention, control_flow) and the
programs of examples/programs.py, and trace_module programs (several methods, traced callees)
written here. Each is built against ``lib`` (reftrace or torch) by ``trace(lib)``.
"""
import os
import re

import code_cases
from tracer_cases import make_inputs, trace_case

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")

# programs whose outputs are random (dropout in training mode): only their code is compared
RANDOM = {"dropout_train", "module/train_mode_layers", "train_mode_layers"}
# programs torch cannot trace (its error is another test's business)
UNTRACEABLE = {"out_argument"}


class Program:
    def __init__(self, name, trace, deterministic=True):
        self.name, self.trace, self.deterministic = name, trace, deterministic


def _function(name, case):
    src, spec, kw = case
    return lambda lib: (trace_case(lib, name, src, spec, kw), make_inputs(lib, spec))


def _module(case):
    src, spec, kw = case

    def trace(lib):
        namespace = {"torch": lib, "__name__": "archive_case"}
        exec(compile(src, "<module case>", "exec"), namespace)
        inputs = make_inputs(lib, spec)
        return lib.jit.trace(namespace["make"](), inputs, check_trace=False, **kw), inputs
    return trace


def _example(filename):
    """An examples/ model, its `import reftrace as torch` bound to ``lib``."""
    with open(os.path.join(EXAMPLES, filename)) as f:
        src = f.read()

    def trace(lib):
        text = src if lib.__name__ == "reftrace" else re.sub(r"\breftrace\b", "torch", src)
        namespace = {"__name__": "example_" + filename[:-3]}
        exec(compile(text, filename, "exec"), namespace)
        inputs = namespace["EXAMPLE_INPUTS"]
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        return lib.jit.trace(namespace["model"], inputs, check_trace=False), inputs
    return trace


def _conformance_program(name):
    """A ``program_<name>()`` of examples/programs.py (written against the name ``torch``)."""
    with open(os.path.join(EXAMPLES, "programs.py")) as f:
        src = f.read()

    def trace(lib):
        namespace = {"torch": lib, "__name__": "programs"}
        exec(compile(src, "programs.py", "exec"), namespace)
        fn, inputs, *kwargs = namespace["program_" + name]()
        kwargs = dict(kwargs[0]) if kwargs else {}
        kwargs["check_trace"] = False
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        return lib.jit.trace(fn, inputs, **kwargs), inputs
    return trace


def _conformance_names():
    with open(os.path.join(EXAMPLES, "programs.py")) as f:
        return re.findall(r"^def program_(\w+)\(", f.read(), re.M)


TRACE_MODULE = """
def inner(x):
    return x.sin() * 2
traced_inner = torch.jit.trace(inner, torch.ones(3), check_trace=False)
class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.linspace(-1, 1, 3))
    def forward(self, x):
        return x * self.w
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Sub()
        self.b = Sub()
        self.seq = nn.Sequential(nn.ReLU(), nn.Tanh())
        self.lin = fill(nn.Linear(3, 3))
        self.register_buffer("buf", torch.arange(3.))
    def forward(self, x):
        return self.lin(self.seq(self.b(self.a(x)))) + self.buf
    def other(self, x):
        return self.a(x) - traced_inner(x) / 3
def make():
    return Net().eval()
"""

CALLEE = """
def inner(x):
    return x.sin() * 2
traced_inner = torch.jit.trace(inner, torch.ones(3), check_trace=False)
def fn(x, y):
    return traced_inner(x) / y, traced_inner(y)
"""


def _trace_module(lib):
    from module_cases import COMMON
    namespace = {"torch": lib, "__name__": "__main__"}
    exec(compile(COMMON + TRACE_MODULE, "<trace_module>", "exec"), namespace)
    inputs = make_inputs(lib, (("tensor", (3,), "float32"),))
    traced = lib.jit.trace_module(namespace["make"](), {"forward": inputs, "other": inputs},
                                  check_trace=False)
    return traced, inputs


def _callee(module_name):
    """A traced function calling a traced function; the callee is qualified by the module
    that defines it (``__torch__.inner``, ``__torch__.helpers.ops.inner``)."""
    def trace(lib):
        namespace = {"torch": lib, "__name__": module_name}
        exec(compile(CALLEE, "<callee>", "exec"), namespace)
        inputs = make_inputs(lib, (("tensor", (3,), "float32"), ("tensor", (3,), "float32")))
        return lib.jit.trace(namespace["fn"], inputs, check_trace=False), inputs
    return trace


def all_programs():
    out = {}
    for name, case in code_cases.all_function_cases().items():
        if name not in UNTRACEABLE:
            out[name] = Program(name, _function(name, case), name not in RANDOM)
    for name, case in code_cases.all_module_cases().items():
        out[name] = Program(name, _module(case), name not in RANDOM)
    for filename in ("mlp.py", "lenet.py", "attention.py", "control_flow.py"):
        out["examples/" + filename] = Program("examples/" + filename, _example(filename))
    for name in _conformance_names():
        out["examples/programs.py:" + name] = Program(name, _conformance_program(name))
    out["trace_module/methods_and_callee"] = Program("trace_module", _trace_module)
    out["callee/function"] = Program("callee", _callee("__main__"))
    out["callee/other_module"] = Program("callee", _callee("helpers.ops"))
    return out


# the archives tests/gen_archive_golden.py writes with torch into tests/data/archives/<key>.pt
GOLDEN = {
    "simple_arith": "tracer/simple_arith",
    "tuple_output": "tracer/tuple_output",
    "string_and_float_constants": "string_and_float_constants",
    "nested_linear_twice": "module/nested_linear_twice",
    "nested_sequential": "nested_sequential",
    "methods_and_callee": "trace_module/methods_and_callee",
    "callee": "callee/function",
    "mlp": "examples/mlp.py",
}


# -- torch.save / reftrace.save objects (tests/test_serialization.py) ------------------------------

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128")


def saved_object(lib):
    """A deterministic object of everything torch.save's weights-only format holds: views sharing
    one storage (transposed, sliced with an offset), every dtype, a Linear's state dict
    (OrderedDict with _metadata), a parameter, a tensor requiring grad, nested containers and
    Python scalars, a dtype, a device and a Size."""
    x = lib.arange(12.).view(3, 4)
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.arange(6.).view(2, 3) / 4)
        lin.bias.copy_(lib.tensor([0.5, -0.5]))
    return {
        "x": x, "t": x.t(), "sl": x[1:, 2:], "row": x[2],
        "dtypes": {d: (lib.arange(-2, 2) * 3).to(getattr(lib, d)) for d in DTYPES},
        "linear": lin.state_dict(),
        "param": lib.nn.Parameter(lib.ones(2)),
        "grad": lib.ones(3).requires_grad_(),
        "empty": lib.zeros(0, 3),
        "scalar": lib.tensor(7, dtype=lib.int64),
        "nested": [1, 2.5, "s", None, (True, -3, 1 << 40), {"k": [lib.ones(1)]}],
        "complex": 1 + 2j, "bytes": b"\x00\xff", "dtype": lib.float16, "device": lib.device("cpu"),
        "size": lib.Size([2, 3]),
    }
