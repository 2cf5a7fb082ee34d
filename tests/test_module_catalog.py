"""PyTorch's test/jit/test_tracer.py, ported: the module tests (catalog area A11, and the module
parts of A1 and A10, the module tests of A14 and the save/load round trips of A13;
/work/shared/reference/tracer-tests-catalog.md) that need neither torch.jit.script (A16) nor CUDA,
with their assertions (checkTrace's gradient half and its export/import copy included).

Each ``test_<name>(torch)`` is the original test's body, run against the library bound to
``torch``: the ``torch`` fixture gives reftrace (torch-free). ``test_matches_torch[<name>]`` (only
when torch 2.13, the oracle, is installed) runs the same body under real torch first (so every
assertion here holds on live torch 2.13) and then under reftrace, and compares what each run
``keep()``s: graph texts (source locations dropped, class-type mangles ``___torch_mangle_N.``
stripped: they are process history), inlined graphs, submodule graphs, and error/warning texts.

JitTestCase helpers are replaced by small ones with the same meaning (tests/catalog_support.py) (``check_trace_``:
checkTrace, outputs and first- and second-order input gradients, with its export/import copy;
``FileCheck``: ordered substring
checks; ``trace_deco``: the ``_trace`` decorator). torch 2.13 emits a DeprecationWarning on every
``torch.jit.trace`` call (catalog 5.3); warning checks drop DeprecationWarnings (reftrace emits
none).

Markers: ``@lacks`` skips a port whose original needs something reftrace does not have;
``@jit_bug`` / ``@missing_api`` are strict xfails for a reftrace.jit bug / a missing jit API
(diagnosed in the port report); ``@save_load_half`` adds the port's ``_export_import`` twin (checkTrace's
save/load round trip); ``@parity_bug`` makes only the ``test_matches_torch`` case a
strict xfail (the assertions pass, but reftrace's graph or message text differs from torch's).
"""
import copy
import io
import textwrap
import warnings
from itertools import chain
from typing import Dict, List, Tuple

import pytest


from catalog_support import (  # noqa: F401  (torch is the fixture)
    Catalog, FileCheck, MANGLE, _torch, anon, assert_equal, assert_not_equal, check_trace_,
    function_from_graph, get_trace_graph, gtext, is_torch, requires_torch, run_dce, torch,
    trace_deco)

catalog = Catalog()
keep, lacks, parity_bug = catalog.keep, catalog.lacks, catalog.parity_bug
jit_bug = missing_api = catalog.xfail
save_load_half = catalog.save_load_half






# -- JitTestCase / torch.testing stand-ins ------------------------------------------------------

















def assert_graph(g, expected):
    """The graph's text (gtext) is exactly ``expected`` (torch 2.13's, indentation stripped)."""
    expected = textwrap.dedent(expected).lstrip("\n")
    got = gtext(g)
    assert got == expected, f"graph differs from torch 2.13's:\n{got}\nexpected:\n{expected}"




def method_names(traced):
    """The traced methods of a traced module, in definition order (``_c._method_names()``;
    reftrace has no _method_names yet: its class type's method table is read instead)."""
    c = traced._c
    if hasattr(c, "_method_names"):
        return list(c._method_names())
    return list(traced._type.methods)


def mtexts(traced):
    """A traced module's graph, inlined_graph and each traced submodule's graph."""
    out = [gtext(traced.graph), MANGLE.sub("", traced.inlined_graph.str(False))]

    def walk(m, prefix):
        for name, child in m.named_children():
            for method in method_names(child):
                graph = child._c._get_method(method).graph
                out.append(f"{prefix}{name}.{method}: {gtext(graph)}")
            walk(child, prefix + name + ".")

    walk(traced, "")
    return out






class dont_inline_everything:
    """@_tmp_donotuse_dont_inline_everything (torch's default in 2.13 already; reftrace has no
    inline-everything mode and never inlines calls of traced functions/modules)."""

    def __init__(self, torch):
        self.torch = torch

    def __enter__(self):
        if is_torch(self.torch):
            self.old = _torch._C._jit_get_inline_everything_mode()
            _torch._C._jit_set_inline_everything_mode(False)

    def __exit__(self, *exc):
        if is_torch(self.torch):
            _torch._C._jit_set_inline_everything_mode(self.old)


def raises_text(exc_type, fn, match=None):
    """assertRaises(Regex): run fn, return the message of the expected exception."""
    with pytest.raises(exc_type, match=match) as info:
        fn()
    return str(info.value)

















def trace_module(torch):
    """torch.jit.trace_module."""
    return torch.jit.trace_module








# == modules: parameters, buffers, hierarchy ========================================================

def test_large_nbr_kernel_args(torch):
    """Port of TestTracer.test_large_nbr_kernel_args (test/jit/test_tracer.py).

    ADAPT (catalog): CUDA-only in torch; run on CPU as a stress test of a 130-step unrolled loop
    whose traced sizes feed view()."""
    nn = torch.nn

    class Recurrence(nn.Module):
        def __init__(self, seq_len):
            super().__init__()
            self.seq_len = seq_len

        def forward(self, input):
            input = input.transpose(0, 1)
            output = []
            for i in range(self.seq_len):
                b = input[i] * 2
                output.append(b)
            output = torch.cat(output, 0).view(input.size(0), *output[0].size())
            output = output.transpose(0, 1)
            return output

    input_size, batch_size, seq_len = 8, 2, 130
    rec = Recurrence(seq_len)
    input = torch.rand(batch_size, seq_len, input_size)
    traced_rec = torch.jit.trace(rec, (input))
    # (the original only traces, with the checker on) the trace reruns like eager
    assert_equal(traced_rec(input), rec(input))
    keep(*mtexts(traced_rec))


def test_trace_legacy_ctor(torch):
    """Port of TestTracer.test_trace_legacy_ctor (test/jit/test_tracer.py)."""
    nn = torch.nn

    class MyModule(nn.Module):
        def forward(self, x):
            return (x + 1, torch.FloatTensor([0]))

    traced_rec = torch.jit.trace(MyModule(), torch.randn(2, 2))
    keep(*mtexts(traced_rec))


def test_trace_checking_with_global_name(torch):
    """Port of TestTracer.test_trace_checking_with_global_name (test/jit/test_tracer.py)."""
    class MyClass(torch.nn.Module):
        def forward(self, xs: List[torch.Tensor]):
            y = torch.cat(xs, dim=0)
            return y

    model = MyClass()
    # the inputs live in module globals, as in a script's top level
    global input1, input2
    input1 = torch.ones(2, 2)
    input2 = torch.ones(2, 2)
    m2 = torch.jit.trace(model, ((input1, input2),))
    # (the original only traces + checks) tuple input -> TupleUnpack -> ListConstruct -> cat
    F22 = "Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu)"
    assert_graph(m2, f"""
        graph(%self : __torch__.test_module_catalog.MyClass,
              %xs : ({F22}, {F22})):
          %4 : {F22}, %5 : {F22} = prim::TupleUnpack(%xs)
          %6 : Tensor[] = prim::ListConstruct(%4, %5)
          %7 : int = prim::Constant[value=0]()
          %8 : Float(4, 2, strides=[2, 1], requires_grad=0, device=cpu) = aten::cat(%6, %7)
          return (%8)
        """)
    keep(*mtexts(m2))


def test_trace_aliased_parameter(torch):
    """Port of TestTracer.test_trace_aliased_parameter (test/jit/test_tracer.py)."""
    nn = torch.nn

    class M(nn.Module):
        def __init__(self, x):
            super().__init__()
            self.x = nn.Parameter(x)

        def forward(self, y):
            return self.x + y

    m = M(torch.rand(3, 4))
    r = torch.jit.trace(m, m.x)
    t2 = torch.rand(3, 4)
    assert_equal(r(t2), m.x + t2)
    keep(*mtexts(r))


def test_trace_topk(torch):
    """Port of TestTracer.test_trace_topk (test/jit/test_tracer.py)."""
    class M(torch.nn.Module):
        def forward(self, x, y):
            return x.topk(y, dim=1)[1]

    mod = M()
    inputs = (torch.randint(0, 10, (20, 20)), torch.tensor(17))
    traced_func = torch.jit.trace(mod, inputs)

    for test_inputs in ((torch.randint(0, 9, (9, 9)), torch.tensor(8)),
                        (torch.randint(0, 50, (50, 50)), torch.tensor(12))):
        eager_out = mod(*test_inputs)
        traced_out = traced_func(*test_inputs)
        # assertNotWarn(..., "Shouldn't throw slicing related warn here"): no warning at all
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            traced_func(*test_inputs)
        assert [str(x.message) for x in w] == [], "Shouldn't throw slicing related warn here"
        assert_equal(eager_out, traced_out)
    FileCheck().check("aten::Int(%y)").check("aten::topk").run(gtext(traced_func))
    keep(*mtexts(traced_func))


def test_input_dict_remembers_keys(torch):
    """Port of TestTracer.test_input_dict_remembers_keys (test/jit/test_tracer.py)."""
    class TestModule(torch.nn.Module):
        def forward(self, dict_input):
            return dict_input["x"]

    input_1 = {"x": torch.tensor(1)}
    m = TestModule()
    m_traced = torch.jit.trace(m, (input_1,))
    assert_equal(m_traced(input_1), torch.tensor(1))

    input_same_key_different_value = {"x": torch.tensor(2)}
    assert_equal(m_traced(input_same_key_different_value), torch.tensor(2))

    input_different_key = {"y": torch.tensor(3)}
    msg = raises_text(RuntimeError, lambda: m_traced(input_different_key))
    assert "KeyError: x" in msg  # torch: torch.jit.Error ending "RuntimeError: KeyError: x"

    input_additional_key = {"x": torch.tensor(4), "y": torch.tensor(3)}
    assert_equal(m_traced(input_additional_key), torch.tensor(4))
    # catalog: one aten::__getitem__ per key seen at trace time (torch 2.13's graph)
    assert_graph(m_traced, """
        graph(%self : __torch__.test_module_catalog.TestModule,
              %dict_input : Dict(str, Tensor)):
          %4 : str = prim::Constant[value="x"]()
          %5 : Long(requires_grad=0, device=cpu) = aten::__getitem__(%dict_input, %4)
          return (%5)
        """)
    keep(*mtexts(m_traced))


def test_input_dict_insertion_order(torch):
    """Port of TestTracer.test_input_dict_insertion_order (test/jit/test_tracer.py)."""
    class TestModule(torch.nn.Module):
        def forward(self, dict_input):
            return dict_input["x"], dict_input["y"]

    input_x_then_y = {}
    input_x_then_y["x"] = torch.tensor(1)
    input_x_then_y["y"] = torch.tensor(2)
    m = TestModule()
    m_traced = torch.jit.trace(m, (input_x_then_y,))
    assert_equal(m_traced(input_x_then_y), (torch.tensor(1), torch.tensor(2)))

    input_y_then_x = {}
    input_y_then_x["y"] = torch.tensor(4)
    input_y_then_x["x"] = torch.tensor(3)
    assert_equal(m_traced(input_y_then_x), (torch.tensor(3), torch.tensor(4)))
    keep(*mtexts(m_traced))


def test_input_dict_recursive(torch):
    """Port of TestTracer.test_input_dict_recursive (test/jit/test_tracer.py)."""
    class TestModule(torch.nn.Module):
        def forward(self, dict_input):
            return dict_input["x"][1]

    input_1 = {"x": {1: torch.tensor(1)}}
    m = TestModule()
    m_traced = torch.jit.trace(m, (input_1,))
    input_2 = {"x": {1: torch.tensor(2)}}
    assert_equal(m_traced(input_2), torch.tensor(2))
    # graph input type Dict(str, Dict(int, Tensor)) (catalog; torch 2.13's graph)
    assert_graph(m_traced, """
        graph(%self : __torch__.test_module_catalog.TestModule,
              %dict_input : Dict(str, Dict(int, Tensor))):
          %4 : str = prim::Constant[value="x"]()
          %5 : Dict(int, Tensor) = aten::__getitem__(%dict_input, %4)
          %6 : int = prim::Constant[value=1]()
          %7 : Long(requires_grad=0, device=cpu) = aten::__getitem__(%5, %6)
          return (%7)
        """)
    keep(*mtexts(m_traced))


def test_input_list_toplevel_flatten_direct(torch):
    """Port of TestTracer.test_input_list_toplevel_flatten_direct (test/jit/test_tracer.py)."""
    class Test(torch.nn.Module):
        def forward(self, t1, t2):
            return torch.add(t1, t2)

    inputs = [torch.ones(2, 2), torch.rand(2, 2)]
    traced = torch.jit.trace(Test(), inputs)
    # (the original only traces) a top-level list means positional args
    assert [i.debugName() for i in traced.graph.inputs()][1:] == ["t1", "t2"]
    keep(*mtexts(traced))


def test_conv(torch):
    """Port of TestTracer.test_conv (test/jit/test_tracer.py)."""
    nn = torch.nn
    x = torch.ones(20, 16, 50, 40)
    g, outputs, inputs = get_trace_graph(torch, nn.Conv2d(16, 13, 3, bias=False), x,
                                         return_inputs=True)
    m = function_from_graph(torch, g)
    assert_equal(outputs, m(*inputs))
    keep(anon(g))


# test_max_pool and test_nested_inplace (listed under A11 too) are ported once, in
# test_tracer_catalog.py.




def test_shared_param(torch):
    """Port of TestTracer.test_shared_param (test/jit/test_tracer.py)."""
    nn = torch.nn

    class MyModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.b = self.a = nn.Parameter(torch.randn(2, 2))

        def forward(self, x):
            return x * self.a + self.b

    m = MyModule()
    # (catalog note, not in the original) torch.jit.trace refuses the shared parameter
    msg = raises_text(ValueError, lambda: torch.jit.trace(m, (torch.randn(2, 2),)))
    assert msg == "TracedModules don't support parameter sharing between modules"
    g, _ = get_trace_graph(torch, m, (torch.randn(2, 2),))
    run_dce(torch, g)
    assert len(list(g.inputs())) == 2
    FileCheck().check("mul").check("add").run(str(g))
    keep(msg, anon(g))


def test_traced_module_cuda(torch):
    """Port of TestTracer.test_traced_module_cuda (test/jit/test_tracer.py).

    ADAPT (catalog): the .cuda()/.to('cuda') round trips are dropped (no CUDA); the traced
    submodule's attribute rules, the dtype/device conversions on CPU and the state_dict round
    trip are kept."""
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self, num_features, num_layers):
            super().__init__()
            self.num_layers = num_layers
            layers = [[nn.Linear(num_features, num_features), nn.Sigmoid()]
                      for _ in range(num_layers)]
            self.submodule = nn.Sequential(*chain(*layers))

        def forward(self, x):
            for i in range(self.num_layers):
                x = self.submodule[i](x) + x
            return x

    model = Model(5, 3)
    x = torch.randn(2, 5)
    traced_model = torch.jit.trace(model, x)
    model.__repr__()

    linear_submodule = next(iter(traced_model.submodule._modules.values()))
    # all non-parameter attributes are gone
    with pytest.raises(AttributeError):
        linear_submodule.in_features
    linear_submodule.weight
    linear_submodule.weight = nn.Parameter(torch.randn(linear_submodule.weight.shape))
    with pytest.raises(RuntimeError):
        del linear_submodule.weight
    # submodules cannot be called
    msg = raises_text(RuntimeError, lambda: linear_submodule(x))
    assert "Trace submodules cannot be called." in msg

    # conversions (CPU only)
    traced_model.float()
    cpu_out = traced_model(x.float())
    traced_model.to("cpu")
    assert_equal(traced_model(x.float()), cpu_out)
    traced_model.to(torch.get_default_dtype())

    # state_dict + load_state_dict
    state = {k: v.clone() for k, v in traced_model.state_dict().items()}
    new_state = {k: v.clone().fill_(1) for k, v in state.items()}
    out = traced_model(x)
    traced_model.load_state_dict(new_state)
    out_ones = traced_model(x)
    traced_model.load_state_dict(state)
    out_state = traced_model(x)
    assert_equal(out, out_state)
    assert_not_equal(out, out_ones)
    keep(*mtexts(traced_model))
    keep(repr(traced_model).replace("RecursiveScriptModule", "<traced>"))


def test_type_same_device(torch):
    """Port of TestTracer.test_type_same_device (test/jit/test_tracer.py).

    ADAPT (catalog): the original traces a CUDA input; here a CPU one. The assertion is the
    same: ``x.type(dtype)`` records the dtype-only aten::to overload, so no device appears in
    the traced code."""
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dtype = torch.float16

        def forward(self, x=None):
            h = x.type(self.dtype)
            return h

    a = Model()
    b = torch.jit.trace(a, example_inputs=(torch.ones([1], device=torch.device("cpu")),))
    FileCheck().check_not("device").run(b.code)
    # the same on the graph's nodes: aten::to(%x, 5, False, False, None) (torch 2.13's graph)
    FileCheck().check("aten::to(%x, %4, %5, %6, %7)").run(gtext(b))
    keep(b.code, *mtexts(b))


@save_load_half
def test_trace_dict_input(torch):
    """Port of TestTracer.test_trace_dict_input (test/jit/test_tracer.py)."""
    class Bar(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.foo = Foo()

        def forward(self, a, b):
            return self.foo({"a": a, "b": b})["a"]

    class Foo(torch.nn.Module):
        def forward(self, x):
            return {"a": x["a"] * x["b"]}

    x = (torch.rand(3), torch.rand(3))
    model = Bar()
    check_trace_(torch, model, x)
    # (the trace itself, as check_trace_ makes it: its save/load half checks a loaded copy,
    # whose graph carries no shapes)
    traced = check_trace_(torch, model, x, export_import=False)
    # catalog: the submodule's CallMethod takes the lifted tensors and returns one Tensor
    # (torch 2.13's graphs)
    assert_graph(traced, """
        graph(%self.1 : __torch__.test_module_catalog.Bar,
              %a : Float(3, strides=[1], requires_grad=0, device=cpu),
              %b : Float(3, strides=[1], requires_grad=0, device=cpu)):
          %foo : __torch__.test_module_catalog.Foo = prim::GetAttr[name="foo"](%self.1)
          %12 : Tensor = prim::CallMethod[name="forward"](%foo, %a, %b)
          return (%12)
        """)
    assert_graph(traced.foo, """
        graph(%self : __torch__.test_module_catalog.Foo,
              %a : Float(3, strides=[1], requires_grad=0, device=cpu),
              %b : Float(3, strides=[1], requires_grad=0, device=cpu)):
          %1 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::mul(%a, %b), scope: __module.foo
          return (%1)
        """)
    keep(*mtexts(traced))


def test_trace_dict_output(torch):
    """Port of TestTracer.test_trace_dict_output (test/jit/test_tracer.py)."""
    class TraceDictStrTensor(torch.nn.Module):
        def forward(self, a, b):
            return {"a": a, "b": b}

    class TraceDictTensorTensor(torch.nn.Module):
        def forward(self, a, b):
            return {a: b, b: a}

    x = (torch.rand(3), torch.rand(3))
    msg = raises_text(RuntimeError, lambda: torch.jit.trace(TraceDictStrTensor(), x),
                      r"Encountering a dict at the output")

    traced_dict_str_mod = torch.jit.trace(TraceDictStrTensor(), x, strict=False)
    assert_equal(traced_dict_str_mod(*x), {"a": x[0], "b": x[1]})

    traced_dict_tensor_mod = torch.jit.trace(TraceDictTensorTensor(), x, strict=False)
    assert_equal(traced_dict_tensor_mod(*x), {x[0]: x[1], x[1]: x[0]})
    keep(msg, *mtexts(traced_dict_str_mod), *mtexts(traced_dict_tensor_mod))


def test_trace_optioanl_dtype(torch):
    """Port of TestTracer.test_trace_optioanl_dtype (test/jit/test_tracer.py).

    ADAPT: ``torch.allclose`` (result discarded by the original) becomes an equality assertion."""
    class Test(torch.nn.Module):
        def forward(self):
            return torch.arange(5)

    traced = torch.jit.trace(Test(), ())
    # torch.allclose(traced(), Test()()) (its result is discarded) becomes an equality
    # assertion: reftrace has no allclose
    assert_equal(traced(), Test()())
    keep(*mtexts(traced))


CALL_TRACED = (
    "calling an already traced function/module inside a trace is not recorded: the interpreter "
    "replays the callee's graph with the tracer suspended, so its outputs are untracked (torch "
    "records prim::CallFunction / prim::CallMethod[name=\"forward\"]); the first untracked "
    "output used as an op input becomes a constant, i.e. 'Cannot insert a Tensor that requires "
    "grad as a constant' or 'did not have observable data dependence'")


def test_trace_autograd_function(torch):
    """Port of TestTracer.test_trace_autograd_function (test/jit/test_tracer.py)."""
    class TestFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            return torch.neg(input)

        @staticmethod
        def backward(ctx, grad_output):
            return torch.neg(grad_output)

    class TracedModule(torch.nn.Module):
        def forward(self, x):
            return torch.relu(TestFunc.apply(x))

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tm = TracedModule()

        def forward(self, x):
            return self.tm(x)

    traced = torch.jit.trace(Wrapper(), (torch.rand(3, 4),))
    keep(*mtexts(traced))


def test_trace_multi_output_function(torch):
    """Port of TestTracer.test_trace_multi_output_function (test/jit/test_tracer.py)."""
    class Foo(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return y, x

        @staticmethod
        def backward(ctx, du, dv):
            return dv, du

    class Bar(torch.nn.Module):
        def forward(self, x, y):
            x = x.relu()
            y = y.relu()
            z = Foo.apply(x, y)
            return z

    x = torch.rand(3, 2, dtype=torch.double)
    y = torch.rand(1, 2, dtype=torch.double)
    traced = torch.jit.trace(Bar(), (x, y))
    schema = ("(Double(1, 2, strides=[2, 1], requires_grad=0, device=cpu), "
              "Double(3, 2, strides=[2, 1], requires_grad=0, device=cpu)) = ^Foo")
    FileCheck().check(schema).run(traced.graph)
    u, v = traced(x, y)
    assert_equal(u, y)
    assert_equal(v, x)


def test_interpolate_trace(torch):
    """Port of TestTracer.test_interpolate_trace (test/jit/test_tracer.py)."""
    nn = torch.nn

    class test(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 32, kernel_size=3, padding=1)

        def forward(self, x):
            y = self.conv(x)
            w = nn.functional.interpolate(y, mode="bilinear", align_corners=False, scale_factor=3)
            return w

    f = test()
    g = torch.jit.trace(f, (torch.zeros(1, 1, 28, 28),))
    x = torch.zeros(1, 1, 14, 14)
    assert_equal(g(x), f(x))
    # catalog: scale factors are recorded, not the output size
    FileCheck().check("aten::upsample_bilinear2d").run(gtext(g))
    keep(*mtexts(g))


def test_call_traced_fn_from_traced_module(torch):
    """Port of TestTracer.test_call_traced_fn_from_traced_module (test/jit/test_tracer.py)."""
    with dont_inline_everything(torch):
        @trace_deco(torch, torch.rand(3, 4))
        def traced_fn(x):
            return torch.neg(x)

        class TracedModule(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.param = torch.nn.Parameter(torch.rand(4, 5))

            def forward(self, x):
                return traced_fn(torch.mm(x, self.param))

        tm = torch.jit.trace(TracedModule(), torch.rand(3, 4))
        # Note: neg op from the traced function should be properly inlined
        FileCheck().check("aten::mm").check('name="traced_fn"').check_next(
            "prim::CallFunction").run(str(tm.graph))
        keep(*mtexts(tm))


def test_call_traced_module_from_traced_module(torch):
    """Port of TestTracer.test_call_traced_module_from_traced_module (test/jit/test_tracer.py)."""
    with dont_inline_everything(torch):
        class TracedModule1(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.param = torch.nn.Parameter(torch.rand(5, 7))

            def forward(self, x):
                return torch.mm(x, self.param)

        class TracedModule(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.param = torch.nn.Parameter(torch.rand(4, 5))
                self.mod = torch.jit.trace(TracedModule1(), torch.rand(3, 5))

            def forward(self, x):
                return self.mod(torch.mm(x, self.param)) + 1.0

        tm = torch.jit.trace(TracedModule(), torch.rand(3, 4))
        FileCheck().check("aten::mm").check("prim::CallMethod").check_same(
            "forward").check("aten::add").run(str(tm.graph))
        keep(*mtexts(tm))


def test_tracing_hooks(torch):
    """Port of TestTracer.test_tracing_hooks (test/jit/test_tracer.py)."""
    nn = torch.nn

    class Net(nn.Module):
        def forward(self, x):
            return x + x

    def test_hook(is_post_hook, hook, fc):
        n = Net()
        if is_post_hook:
            n.register_forward_hook(hook)
        else:
            n.register_forward_pre_hook(hook)

        module = torch.jit.trace(n, (torch.tensor(1.0),))

        eager_input = torch.tensor(1.0)
        eager_out = n(eager_input)

        fc.run(module.forward.graph)
        input = torch.tensor(1.0)
        output = module(input)

        assert_equal(input, eager_input)
        assert_equal(output, eager_out)
        keep(*mtexts(module))

    def hook_no_return(mod, input, output):
        input[0].add_(1)
        output.sub_(1)

    fc = FileCheck().check("add(").check("add_(").check("sub_(")
    test_hook(True, hook_no_return, fc)

    def hook_return(mod, input, output):
        input[0].add_(1)
        return output - 3

    fc = FileCheck().check("add(").check("add_(").check("sub(")
    test_hook(True, hook_return, fc)

    b = torch.tensor(3.0)

    def captured_hook(mod, input, output):
        return output - b

    fc = FileCheck().check("add(").check("sub(")
    test_hook(True, captured_hook, fc)

    def pre_hook_no_ret(mod, input):
        input[0].add_(3)

    fc = FileCheck().check("add_(").check("add(")
    test_hook(False, pre_hook_no_ret, fc)

    def pre_hook_ret(mod, input):
        return input[0] - 4

    fc = FileCheck().check("sub(").check("add(")
    test_hook(False, pre_hook_ret, fc)


def test_tracing_backward_hook_error(torch):
    """Port of TestTracer.test_tracing_backward_hook_error (test/jit/test_tracer.py)."""
    nn = torch.nn

    class Net(nn.Module):
        def forward(self, x):
            return x + x

    n = Net()

    def backward_hook(module, grad_input, grad_output):
        pass

    n.register_backward_hook(backward_hook)
    msg = raises_text(Exception, lambda: torch.jit.trace(n, (torch.tensor(1.0),)),
                      "backward hooks assigned")
    assert msg == "Modules that have backward hooks assigned can't be compiled: Net()"
    keep(msg)


def test_tracing_multiple_methods(torch):
    """Port of TestTracer.test_tracing_multiple_methods (test/jit/test_tracer.py)."""
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 1, 3)

        def forward(self, x):
            return self.conv(x)

        def weighted_kernel_sum(self, weight):
            return weight * self.conv.weight

    example_weight = torch.rand(1, 1, 3, 3)
    example_forward_input = torch.rand(1, 1, 3, 3)
    inputs = {"forward": example_forward_input, "weighted_kernel_sum": example_weight}
    n = Net()
    module = trace_module(torch)(n, inputs)

    check_inputs = []
    for i in range(2):
        check_weight = torch.rand(1, 1, 3, 3)
        check_forward_input = torch.rand(1, 1, 3, 3)
        check_inputs.append({"forward": check_forward_input, "weighted_kernel_sum": check_weight})
    module = trace_module(torch)(n, inputs, check_trace=True, check_inputs=check_inputs)
    assert module._c._has_method("forward")
    assert module._c._has_method("weighted_kernel_sum")
    kept = mtexts(module) + [gtext(module.weighted_kernel_sum)]

    module = torch.jit.trace(n.forward, example_forward_input)
    module = torch.jit.trace(n.forward, example_forward_input, check_trace=True,
                             check_inputs=[example_forward_input])
    msg = raises_text(AttributeError, lambda: torch.jit.trace(n.weighted_kernel_sum, inputs),
                      "trace doesn't support compiling individual module's functions")
    keep(*kept, *mtexts(module), msg)


def test_trace_skip_none_submodule(torch):
    """Port of TestTracer.test_trace_skip_none_submodule (test/jit/test_tracer.py)."""
    class TestModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.submod = torch.nn.Linear(3, 4)
            self.submod = None

        def forward(self, inputs):
            return inputs

    m = TestModule()
    tm = torch.jit.trace(m, torch.tensor(1.0))
    assert not hasattr(tm, "submod")
    keep(*mtexts(tm))


def test_trace_with_conditional_property(torch):
    """Port of TestTracer.test_trace_with_conditional_property (test/jit/test_tracer.py)."""
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self, attr=None):
            super().__init__()
            if attr is not None:
                self._attr = attr
            self.attr_name = "_attr"

        @property
        def attr(self):
            return getattr(self, self.attr_name)

        def forward(self, x):
            return x

    x = torch.ones(1)
    traced = torch.jit.trace(Net(), x)
    keep(*mtexts(traced))


def test_trace_module_argument_names_captured(torch):
    """Port of TestTracer.test_trace_module_argument_names_captured (test/jit/test_tracer.py)."""
    nn = torch.nn

    class TestModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 1, 3)

        def forward(self, first_arg, second_arg):
            return self.conv(first_arg) + second_arg

    m = TestModule()
    example_input = (torch.ones(1, 1, 3, 3), torch.ones(1, 1, 3, 3))

    traced_module_forward = torch.jit.trace(m.forward, example_input)
    FileCheck().check("first_arg").check_next("second_arg").run(str(traced_module_forward.graph))

    traced_module = torch.jit.trace(m, example_input)
    FileCheck().check("first_arg").check_next("second_arg").run(str(traced_module.graph))
    keep(*mtexts(traced_module_forward), *mtexts(traced_module))


def test_trace_checking_with_deprecated_name(torch):
    """Port of TestTracer.test_trace_checking_with_deprecated_name (test/jit/test_tracer.py)."""
    class MyClass(torch.nn.Module):
        def __init__(self):
            super(MyClass, self).__init__()

        def forward(self, x, y, **deprecated_arguments):
            if len(deprecated_arguments) > 0:
                raise RuntimeError(f"Got unexpected arguments: {deprecated_arguments}")
            return x + y

    model = MyClass()
    m2 = torch.jit.trace(model, (torch.ones(1), torch.ones(1)))
    m3 = torch.jit.trace(model, example_kwarg_inputs={"x": torch.ones(1), "y": torch.ones(1)},
                         strict=False)
    # (the original only traces + checks) both run like the model
    a, b = torch.rand(2), torch.rand(2)
    assert_equal(m2(a, b), a + b)
    assert_equal(m3(a, b), a + b)
    keep(*mtexts(m2), *mtexts(m3))


def test_trace_no_duplicated_lifted_input_output(torch):
    """Port of TestTracer.test_trace_no_duplicated_lifted_input_output (test/jit/test_tracer.py)."""
    nn = torch.nn
    F = torch.nn.functional

    class Normalize(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.GroupNorm(num_groups=32, num_channels=32)

        def forward(self, x, y):
            if y is None:
                y = x
            else:
                y = self.norm(y)
            y = y * 2
            return y

    class G(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = Normalize()

        def forward(self, x):
            A = self.norm(x, None)
            B = F.relu(A)
            return A, B

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.g = G()
            self.norm_1 = Normalize()

        def forward(self, x):
            hs = self.g(x)
            A, B = hs
            h = self.norm_1(B, A)
            return h

    net = Net()
    net = net.eval()
    x = torch.randn(1, 32, 16, 16)
    traced = torch.jit.trace(net, x)
    FileCheck().check_not("prim::TupleUnpack").run(str(traced.graph))
    assert_equal(traced(x), net(x))
    # catalog: the CallMethods return only the lifted Values used outside (torch 2.13's graph)
    assert_graph(traced, """
        graph(%self.1 : __torch__.test_module_catalog.Net,
              %x : Float(1, 32, 16, 16, strides=[8192, 256, 16, 1], requires_grad=0, device=cpu)):
          %norm_1 : __torch__.test_module_catalog.Normalize = prim::GetAttr[name="norm_1"](%self.1)
          %g : __torch__.test_module_catalog.G = prim::GetAttr[name="g"](%self.1)
          %71 : Tensor = prim::CallMethod[name="forward"](%g, %x)
          %72 : Tensor = prim::CallMethod[name="forward"](%norm_1, %71)
          return (%72)
        """)
    keep(*mtexts(traced))


def test_trace_dict_mix_script(torch):
    """Port of TestMixTracingScripting.test_trace_dict_mix_script (test/jit/test_tracer.py).

    ADAPT (catalog): ``torch.jit.script(testB())`` becomes ``testB()``."""
    class testB(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        def forward(self, feature_map: Dict[str, List[torch.Tensor]]) -> torch.Tensor:
            output = []
            for j in feature_map.values():
                output.append(self.linear(j[0]))
            return torch.stack(output)

    class testA(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.b = testB()

        def forward(self, input_map: Dict[str, List[torch.Tensor]]) -> torch.Tensor:
            feature_map = {}
            for i, j in input_map.items():
                feature_map[i] = [j[0]]
            return self.b(feature_map)

    input_map = {"1": [torch.rand(2, 2), torch.rand(2, 2)],
                 "3": [torch.rand(2, 2), torch.rand(2, 2)]}
    model = testA()
    traced_model = torch.jit.trace(model, input_map)
    new_input_map = {"1": [torch.rand(2, 2), torch.randn(2, 2)],
                     "3": [torch.rand(2, 2), torch.rand(2, 2)]}
    assert_equal(model(new_input_map), traced_model(new_input_map))
    # catalog: the same Linear called twice -> CallMethod "forward" and "forward1"
    assert method_names(traced_model.b.linear) == ["forward", "forward1"]
    FileCheck().check('prim::CallMethod[name="forward"](%linear').check_next(
        'prim::CallMethod[name="forward1"](%linear').run(gtext(traced_model.b))
    keep(*mtexts(traced_model))


def test_trace_script_returning_complex_dict(torch):
    """Port of TestMixTracingScripting.test_trace_script_returning_complex_dict
    (test/jit/test_tracer.py).

    ADAPT (catalog): the scripted submodules become eager ones."""
    class ReturnsDict(torch.nn.Module):
        def forward(self, id_score_list: Dict[str, Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
                    ) -> Dict[str, Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
            v = id_score_list["1000"]
            idx_keys = v[1] - 1500000
            weights = v[2]
            result = {"1000": (v[0], idx_keys, weights)}
            return result

    class ChecksDict(torch.nn.Module):
        def forward(self, input: Dict[str, Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]):
            v = input["1000"]
            return v[1] + 1

    class TestModule(torch.nn.Module):
        def __init__(self, checks_dict, returns_dict):
            super().__init__()
            self.checks_dict = checks_dict
            self.returns_dict = returns_dict

        def forward(self, input: Dict[str, Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]):
            foo = self.returns_dict(input)
            return self.checks_dict(foo)

    input1 = {"1000": (torch.tensor([0]), torch.tensor([], dtype=torch.int64), torch.tensor([]))}
    input2 = {"1000": (torch.tensor([0]), torch.tensor([1500000, 1500004], dtype=torch.int64),
                       torch.tensor([2.0, 3.0]))}
    checks_dict = ChecksDict()
    returns_dict = ReturnsDict()
    eager_module = TestModule(checks_dict, returns_dict)
    traced_module = torch.jit.trace(eager_module, input1)
    assert_equal(traced_module(input1), eager_module(input1))
    assert_equal(traced_module(input2), eager_module(input2))
    keep(*mtexts(traced_module))


def test_trace_returning_dict_with_tensor_tuples(torch):
    """Port of TestMixTracingScripting.test_trace_returning_dict_with_tensor_tuples
    (test/jit/test_tracer.py)."""
    class ReturnsDict(torch.nn.Module):
        def forward(self, k: torch.Tensor, v: torch.Tensor
                    ) -> Dict[str, Tuple[torch.Tensor, torch.Tensor]]:
            x = 2 * k
            y = 3 * v
            result = {"imakey": (x, y)}
            return result

    class ReturnsBadDict(torch.nn.Module):
        def forward(self, k: torch.Tensor, v: torch.Tensor
                    ) -> Dict[str, Tuple[torch.Tensor, float]]:
            x = 2 * k
            result = {"imakey": (x, 1)}
            return result

    mod = ReturnsDict()
    traced_module = torch.jit.trace(mod, [torch.ones(1), torch.ones(1)], strict=False)
    out = traced_module(torch.ones(1), torch.ones(1))
    expected = {"imakey": (torch.tensor([2.0]), torch.tensor([3.0]))}
    assert_equal(out, expected)

    def bad():
        mod = ReturnsBadDict()
        torch.jit.trace(mod, [torch.ones(1), torch.ones(1)], strict=False)

    msg = raises_text(RuntimeError, bad, "cannot be understood by the tracer, only outputs matching")
    keep(*mtexts(traced_module), msg)


@save_load_half
def test_trace_linear(torch):
    """Port of TestMixTracingScripting.test_trace_linear (test/jit/test_tracer.py)."""
    m = torch.nn.Linear(20, 20)
    inp = torch.rand([20, 20])
    check_trace_(torch, m, (inp,))
    g = torch.jit.trace(m, (inp,)).graph
    FileCheck().check("aten::linear").run(g)
    keep(gtext(g))


# -- parity with torch ----------------------------------------------------------------------------

def test_trace_save_load_copy(torch):
    """Port of TestTracer.test_trace_save_load_copy (test/jit/test_tracer.py)."""
    class Test(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 3, 3)

        def forward(self, x):
            return self.conv(x)

    traced = torch.jit.trace(Test(), torch.rand(1, 3, 224, 224))
    buffer = io.BytesIO()
    torch.jit.save(traced, buffer)
    buffer.seek(0)
    loaded = torch.jit.load(buffer)
    # should work
    copy.copy(loaded)
    copy.deepcopy(loaded)
    # ADAPT: what was copied also runs, and the deep copy owns its parameters
    x = torch.rand(1, 3, 8, 8)
    assert_equal(copy.deepcopy(loaded)(x), loaded(x))
    assert copy.deepcopy(loaded).conv.weight is not loaded.conv.weight
    keep(loaded.code, gtext(loaded))


catalog.collect(globals())


@requires_torch
@pytest.mark.parametrize("name", list(catalog.parity_params()))
def test_matches_torch(name):
    """The original assertions hold under torch 2.13, and reftrace records what torch records."""
    catalog.matches_torch(name)
