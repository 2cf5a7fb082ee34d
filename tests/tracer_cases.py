"""Programs the tracer must record exactly as torch 2.13 does.

Each case is source text defining ``fn`` against the name ``torch`` (bound to reftrace or to real
torch), the example inputs as (shape, dtype) specs or nested containers of them, and trace
keyword arguments. tests/gen_tracer_golden.py traces each under torch and stores the graph text
(source locations dropped) in tests/data/tracer_golden.json; tests/test_tracer_graphs.py checks
reftrace against that file, and against live torch when it is installed.
"""

T = lambda *shape, dtype="float32": ("tensor", shape, dtype)  # noqa: E731

CASES = {
    # A1 recording and printing
    "simple_arith": ("def fn(x, y):\n    return x * 2 + y\n", (T(2, 3), T(2, 3)), {}),
    "tuple_output": ("def fn(x, y):\n    z = x + y\n    return z, z * y, (z - 1, x)\n", (T(3), T(3)), {}),
    "reuse_value": ("def fn(x):\n    y = x + 1\n    return y * y\n", (T(4),), {}),
    "method_calls": ("def fn(x):\n    return x.add(1).mul(x).sum()\n", (T(2, 2),), {}),
    "layout_kept": ("def fn(x):\n    return x.t() + 1\n", (T(2, 3),), {}),
    "input_returned": ("def fn(x, y):\n    return x\n", (T(2), T(2)), {}),
    # A2 constants and wrapped numbers
    "wrapped_numbers": ("def fn(x):\n    x = x + 2\n    x = x - 4\n    x = x * 6\n    return x / 8\n", (T(4, 4),), {}),
    "wrapped_float_int_tensor": ("def fn(x):\n    return x * 2.5\n", (T(3, dtype="int32"),), {}),
    "captured_constant": ("c = torch.ones(3)\ndef fn(x):\n    return x + c\n", (T(3),), {}),
    "bool_scalar_compare": ("def fn(x):\n    return x == 2, x > 0.5\n", (T(3),), {}),
    # A5 traced sizes
    "view_by_sizes": ("def fn(x):\n    return x.view(x.shape[1] * 2, x.shape[0], 2)\n", (T(5, 2, 4),), {}),
    "size_method": ("def fn(x):\n    return x.view(x.size(0), -1)\n", (T(2, 3, 4),), {}),
    "numel": ("def fn(x):\n    return x.numel() * x\n", (T(2, 3),), {}),
    "size_arith": ("def fn(x, y):\n    n = x.size(0) + y.size(0)\n    return x.reshape(n // 2, -1)\n", (T(4, 6), T(2, 1)), {}),
    # A4 in-place
    "inplace_rebind": ("def fn(x, y):\n    z = x + y\n    z.add_(1)\n    return z\n", (T(2), T(2)), {}),
    "inplace_chain": ("def fn(x):\n    y = x.clone()\n    y.mul_(2).add_(1)\n    return y\n", (T(3),), {}),
    "inplace_on_input": ("def fn(x):\n    x.add_(1)\n    return x * 2\n", (T(3),), {}),
    "dead_inplace_removed": ("def fn(x):\n    t = x + 1\n    t.add_(1)\n    return x * 2\n", (T(3),), {}),
    "force_outplace": ("def fn(x):\n    y = x * 1\n    y.add_(1)\n    return y\n", (T(3),), {"_force_outplace": True}),
    # A15 names
    "records_names": ("def fn(bar, baz):\n    baz = bar + 3\n    quick_brown_fox = torch.neg(baz)\n    for _ in range(20):\n        yeet = quick_brown_fox - 3.14\n    return yeet\n", (T(3, 3), T(3, 3)), {}),
    "name_clash": ("def fn(x):\n    x = x + 1\n    x = x * 2\n    x = x - 1\n    return x\n", (T(2),), {}),
    # A10 containers
    "tuple_input": ("def fn(a, b):\n    return a[0] + a[1] * b\n", ((T(2), T(2)), T(2)), {}),
    "list_input": ("def fn(xs):\n    return xs[0] + xs[1]\n", ([T(2), T(2)],), {}),
    "dict_input": ("def fn(d):\n    return d['a'] * d['b']\n", ({"a": T(2), "b": T(2)},), {}),
    "nested_input": ("def fn(a):\n    (x, (y, z)) = a\n    return x + y + z\n", ((T(2), (T(2), T(2))),), {}),
    "list_output_nonstrict": ("def fn(x):\n    return [x, x + 1]\n", (T(2),), {"strict": False}),
    "dict_output_nonstrict": ("def fn(x):\n    return {'a': x, 'b': x + 1}\n", (T(2),), {"strict": False}),
    "repeated_input": ("def fn(x, y):\n    return x + y\n", ("same", T(2)), {}),
}

# Programs whose trace must fail, with torch's exception type and message.
ERROR_CASES = {
    "return_none": ("def fn(x):\n    x + 1\n", (T(2),), {}),
    "return_int": ("def fn(x):\n    return 3\n", (T(2),), {}),
    "tuple_with_none": ("def fn(x):\n    return x, None\n", (T(2),), {}),
    "nested_list_out": ("def fn(x):\n    return [[x]]\n", (T(2),), {}),
    "dict_out_strict": ("def fn(x):\n    return {'a': x}\n", (T(2),), {}),
    "int_input": ("def fn(x, n):\n    return x\n", (T(2), 3), {}),
    "empty_dict_input": ("def fn(d):\n    return d\n", ({},), {}),
    "empty_list_input": ("def fn(d):\n    return d\n", ([],), {}),
    "mixed_list_input": ("def fn(d):\n    return d\n", ([T(2), (T(2), T(2))],), {}),
    "mixed_dict_input": ("def fn(d):\n    return d['a']\n", ({"a": T(2), "b": [T(2)]},), {}),
    "requires_grad_constant": ("w = torch.ones(2, requires_grad=True)\ndef fn(x):\n    return x * w\n", (T(2),), {}),
}


def make_inputs(lib, spec, seed=0):
    """Build example inputs for library ``lib`` (torch or reftrace) from a case's spec."""
    import numpy as np
    rng = np.random.default_rng(seed)
    made = []

    def build(s):
        if isinstance(s, tuple) and s and s[0] == "tensor":
            _, shape, dtype = s
            arr = rng.uniform(-2, 2, shape).astype(dtype) if "float" in dtype else \
                rng.integers(-3, 4, shape).astype(dtype)
            t = lib.from_numpy(arr)
            made.append(t)
            return t
        if s == "same":
            return "same"
        if isinstance(s, tuple):
            return tuple(build(e) for e in s)
        if isinstance(s, list):
            return [build(e) for e in s]
        if isinstance(s, dict):
            return {k: build(v) for k, v in s.items()}
        return s

    out = [build(s) for s in spec]
    # "same": the same tensor object as the next input (torch gives it its own input via a view)
    for i, v in enumerate(out):
        if v == "same" if isinstance(v, str) else False:
            out[i] = out[i + 1]
    return tuple(out)


def load_fn(lib, source, name):
    namespace = {"torch": lib, "__name__": "tracer_case_" + name}
    exec(compile(source, f"<case {name}>", "exec"), namespace)
    return namespace["fn"]


def trace_case(lib, name, source, spec, kwargs):
    fn = load_fn(lib, source, name)
    inputs = make_inputs(lib, spec)
    return lib.jit.trace(fn, inputs, check_trace=False, **kwargs)
