"""The trace checker (check_trace): torch's checker and random-number tests, ported.

Catalog areas A12 (the checker) and A8 (random ops and nondeterminism) of
/work/shared/reference/tracer-tests-catalog.md, from PyTorch's test/jit/test_tracer.py, with
their assertions; plus the checker's protocol (what it leaves untouched, when it stays silent)
and the exact text of its messages.

Every test takes ``lib``: reftrace always, and real torch 2.13 when installed, so each assertion
is checked against the oracle too. ``test_*_text_matches_torch`` compare reftrace's full message
with torch's, less what cannot match: source-location stacks (torch prints Python frames) and
assert_close's numbers (random data).
"""
import re
import warnings

import pytest

import reftrace
from reftrace.conformance.canon import canonical_message

try:  # torch is only the oracle; reftrace never imports it
    import torch as _torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    _torch = None

requires_torch = pytest.mark.skipif(_torch is None, reason="torch 2.13 (the oracle) is not installed")
# torch 2.13 deprecates torch.jit.trace with a DeprecationWarning on every call: not the checker's
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
LIBS = [reftrace] + ([_torch] if _torch is not None else [])

OUTPUT_MISMATCH = ("Output nr 1. of the traced function does not match the corresponding output "
                   "of the Python function")
NONDETERMINISTIC = "Trace had nondeterministic nodes"


@pytest.fixture(params=LIBS, ids=lambda lib: lib.__name__)
def lib(request):
    return request.param


def tracer_warnings(recorded):
    """TracerWarnings' messages, in order (torch 2.13 also emits a DeprecationWarning per
    torch.jit.trace call: not the checker's)."""
    return [str(w.message) for w in recorded if w.category.__name__ == "TracerWarning"]


def traced_warnings(fn):
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        result = fn()
    return result, tracer_warnings(recorded)


def assert_warns_regex(regex, fn):
    """assertWarnsRegex(torch.jit.TracerWarning, regex)."""
    _, msgs = traced_warnings(fn)
    assert any(re.search(regex, m) for m in msgs), f"no TracerWarning matching {regex!r}: {msgs}"
    return msgs


def values(t):
    return t.detach().tolist()


# == A12: the checker ================================================================================

def _dot_data(lib):
    def foo(x):
        y = x.data
        return x + y
    return lib.jit.trace(foo, lib.rand(3, 4), check_inputs=[(lib.rand(3, 4),)])


def test_trace_checker_dot_data(lib):
    """Port of TestTracer.test_trace_checker_dot_data: `.data` is untracked, so it is baked in as a
    tensor constant; the check input's trace bakes another value."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # @suppress_warnings
        with pytest.raises(lib.jit.TracingCheckError,
                           match=r"Tensor-valued Constant nodes differed in value across invocations") as info:
            _dot_data(lib)
    msg = str(info.value)
    # torch 2.13's full structure (catalog 3.1)
    assert msg.startswith(
        "Tracing failed sanity checks!\nERROR: Tensor-valued Constant nodes differed in value across "
        "invocations. This often indicates that the tracer has encountered untraceable code.\n"
        "\tNode:\n\t\t%1 : Tensor = prim::Constant[value=<Tensor>]()")
    assert "\tSource Location:\n" in msg
    assert "\tComparison exception: \tTensor-likes are not close!" in msg


def _control_flow(lib):
    def foo(x):
        for _ in range(x.size(0)):
            x = lib.neg(x)
        return x
    return lib.jit.trace(foo, lib.randn(3, 4), check_inputs=[lib.randn(4, 4)])


def test_trace_checker_control_flow(lib):
    """Port of TestTracer.test_trace_checker_control_flow: range() reads the size as a Python int
    (silently), so the loop is unrolled 3 times for the example and 4 for the check input."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(lib.jit.TracingCheckError, match=r"Graphs differed across invocations!") as info:
            _control_flow(lib)
    msg = str(info.value)
    for part in ("Tracing failed sanity checks!\nERROR: Graphs differed across invocations!\n\tGraph diff:\n",
                 "\tFirst diverging operator:\n\tNode diff:\n", "\tTrace source location:\n",
                 "\tCheck source location:\n"):
        assert part in msg


def test_trace_checker_control_flow_warns_before_raising(lib):
    """The outputs are compared before the graphs: the unrolled trace gives other numbers than
    Python on the check input, so a mismatch warning comes first, then the error."""
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        with pytest.raises(lib.jit.TracingCheckError):
            _control_flow(lib)
    msgs = tracer_warnings(recorded)
    assert len(msgs) == 1 and msgs[0].startswith(OUTPUT_MISMATCH + ". Detailed error:\nTensor-likes are not close!")


def test_trace_checker_memoization(lib):
    """Port of TestTracer.test_trace_checker_memoization: the re-trace sees the cached tensor as
    an untracked constant (prim::Constant where the first trace had aten::neg)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(lib.jit.TracingCheckError, match=r"Graphs differed across invocations!") as info:
            def foo(x):
                if not hasattr(foo, "cache"):
                    foo.cache = lib.neg(x)
                return x + foo.cache

            lib.jit.trace(foo, lib.rand(3, 4), check_inputs=[(lib.rand(3, 4),)])
    assert "\t\t- %1 : Tensor = aten::neg(%x)" in str(info.value)
    assert "\t\t+ %1 : Tensor = prim::Constant[value=<Tensor>]()" in str(info.value)


def test_trace_checker_slice_lhs(lib):
    """Port of TestTracer.test_trace_checker_slice_lhs (checkTrace, checker on): indexed
    assignment in a loop over a constant range traces deterministically; the checker is silent."""
    def foo(x):
        for i in range(3):
            x[i, :] = lib.zeros(4)
        return x

    x = lib.rand(3, 4)
    traced, msgs = traced_warnings(lambda: lib.jit.trace(foo, x.clone()))
    assert msgs == []
    assert values(traced(x.clone())) == values(foo(x.clone())) == [[0.0] * 4] * 3


def test_trace_checker_inplace_on_view(lib):
    """Port of TestTracer.test_trace_checker_inplace_on_view: with _force_outplace the add_ on a
    view of x is recorded out of place, so the trace returns x unchanged; Python zeroes it."""
    def foo(x):
        x.view(-1).add_(-x.view(-1))
        return x

    assert_warns_regex(OUTPUT_MISMATCH, lambda: lib.jit.trace(
        foo, lib.rand(3, 4), check_inputs=[lib.rand(5, 6)], _force_outplace=True))


def _dropout_train(lib):
    def foo(x):
        return lib.dropout(x, p=0.5, train=True)
    return lib.jit.trace(foo, lib.rand(3, 4), check_inputs=[lib.rand(5, 6)])


def test_trace_checker_dropout_train(lib):
    """Port of TestTracer.test_trace_checker_dropout_train: dropout in training mode gives other
    outputs on every run; the checker warns, naming the nondeterministic node."""
    assert_warns_regex(OUTPUT_MISMATCH, lambda: _dropout_train(lib))
    assert_warns_regex(NONDETERMINISTIC, lambda: _dropout_train(lib))


def test_trace_checker_dropout_train_messages(lib):
    """The nondeterministic-nodes warning comes once, right before the first mismatch, and lists
    the node as the traced graph prints it (torch 2.13's words)."""
    _, msgs = traced_warnings(lambda: _dropout_train(lib))
    assert len(msgs) == 2
    assert re.fullmatch(
        r"Trace had nondeterministic nodes\. Did you forget call \.eval\(\) on your model\? Nodes:\n"
        r"\t%3 : Float\(3, 4, strides=\[4, 1\], requires_grad=0, device=cpu\) = aten::dropout\(%x, %1, %2\)"
        r" # .*test_checker\.py:\d+:0\n"
        r"This may cause errors in trace checking\. To disable trace checking, pass check_trace=False "
        r"to torch\.jit\.trace\(\)", msgs[0]), msgs[0]
    assert msgs[1].startswith(OUTPUT_MISMATCH + ". Detailed error:\nTensor-likes are not close!\n\n"
                                                "Mismatched elements: ")
    assert msgs[1].endswith("(up to 1e-05 allowed)")


def test_trace_checker_dropout_notrain(lib):
    """Port of TestTracer.test_trace_checker_dropout_notrain: train=False dropout is the identity
    and deterministic: no checker warning."""
    input = lib.rand(3, 4)
    foo, msgs = traced_warnings(lambda: lib.jit.trace(lambda x: lib.dropout(x, p=0.5, train=False), input))
    assert msgs == []
    assert values(foo(input)) == values(input)


def test_wrapped_number(lib):
    """Port of TestTracer.test_wrapped_number: the checker's closeness test respects wrapped-
    number promotion (float32 * Python float stays float32 in eager, trace and re-trace)."""
    def foobar():
        x = -10000.0
        result = x * lib.ones(1, dtype=lib.float)
        return result

    scripted, msgs = traced_warnings(lambda: lib.jit.trace(foobar, (), check_trace=True))
    assert msgs == []
    assert scripted().dtype == lib.float32 and values(scripted()) == [-10000.0]


def test_tracing_multiple_methods(lib):
    """Port of TestTracer.test_tracing_multiple_methods (its checker part): trace_module with check
    inputs for two methods, trace of a bound forward with check inputs, and the error for other
    methods."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = lib.nn.Conv2d(1, 1, 3)

        def forward(self, x):
            return self.conv(x)

        def weighted_kernel_sum(self, weight):
            return weight * self.conv.weight

    example_weight = lib.rand(1, 1, 3, 3)
    example_forward_input = lib.rand(1, 1, 3, 3)
    inputs = {"forward": example_forward_input, "weighted_kernel_sum": example_weight}
    n = Net()
    with warnings.catch_warnings(record=True) as recorded:
        warnings.simplefilter("always")
        module = lib.jit.trace_module(n, inputs)
        check_inputs = [{"forward": lib.rand(1, 1, 3, 3), "weighted_kernel_sum": lib.rand(1, 1, 3, 3)}
                        for _ in range(2)]
        module = lib.jit.trace_module(n, inputs, check_trace=True, check_inputs=check_inputs)
        assert module._c._has_method("forward")
        assert module._c._has_method("weighted_kernel_sum")
        module = lib.jit.trace(n.forward, example_forward_input)
        module = lib.jit.trace(n.forward, example_forward_input, check_trace=True,
                               check_inputs=[example_forward_input])
    assert tracer_warnings(recorded) == []  # deterministic: the checker says nothing
    with pytest.raises(AttributeError, match="trace doesn't support compiling individual module's functions"):
        lib.jit.trace(n.weighted_kernel_sum, inputs)


# == the protocol ====================================================================================

def test_checker_leaves_the_inputs_untouched(lib):
    """The trace runs the function once on the caller's inputs; the checker runs on clones, so an
    in-place function changes the caller's tensor exactly once."""
    def addone(x):
        x.add_(1)
        return x * 2

    x = lib.zeros(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.jit.trace(addone, x)
    assert values(x) == [1.0, 1.0]


def test_checker_is_silent_on_a_deterministic_program(lib):
    def mlp(x, w1, w2):
        return lib.relu(x @ w1).matmul(w2).softmax(-1), x.size(0) * x.sum(1)

    args = (lib.randn(4, 3), lib.randn(3, 5), lib.randn(5, 2))
    _, msgs = traced_warnings(lambda: lib.jit.trace(mlp, args, check_inputs=[
        (lib.randn(6, 3), lib.randn(3, 5), lib.randn(5, 2))]))
    assert msgs == []


# == A8: random numbers ==============================================================================

def test_trace_random(lib):
    """Port of TestTracer.test_trace_random: the trace replays aten::normal drawing from the global
    generator exactly as the eager call does (fork_rng restores the state in between)."""
    def f(mean, std):
        return lib.normal(mean, std)

    traced = lib.jit.trace(f, (lib.zeros(2, 3), lib.ones(2, 3)), check_trace=False)
    mean, std = lib.zeros(5, 5), lib.ones(5, 5)
    with lib.random.fork_rng(devices=[]):
        output = f(mean, std)
    traced_output = traced(mean, std)
    assert values(output) == values(traced_output)


def _draws_after_trace(lib, check_trace):
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker warns: rand gives other numbers each run
        lib.jit.trace(lambda x: x + lib.rand(2), lib.ones(2), check_trace=check_trace)
    return values(lib.rand(2))


def test_checker_restores_the_generator_state():
    """spec/checker.md CHK-RNG (reftrace-only): after a checked trace, the program draws the numbers
    it would have drawn without the checker. torch leaves its generator advanced by the checker's
    runs (the next test pins that down)."""
    assert _draws_after_trace(reftrace, True) == _draws_after_trace(reftrace, False)


@requires_torch
def test_torch_checker_advances_the_generator():
    """What CHK-RNG differs from: torch's checker draws and does not restore the state."""
    assert _draws_after_trace(_torch, True) != _draws_after_trace(_torch, False)


# == message text, against torch ====================================================================

def _error_text(lib, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(lib.jit.TracingCheckError) as info:
            make(lib)
    return canonical_message(str(info.value))


def _memoization(lib):
    def foo(x):
        if not hasattr(foo, "cache"):
            foo.cache = lib.neg(x)
        return x + foo.cache
    return lib.jit.trace(foo, lib.rand(3, 4), check_inputs=[(lib.rand(3, 4),)])


@requires_torch
@pytest.mark.parametrize("make", [_dot_data, _memoization, _control_flow],
                         ids=["dot_data", "memoization", "control_flow"])
def test_tracing_check_error_text_matches_torch(make):
    """TracingCheckError's whole text is torch's, less source stacks and assert_close's numbers."""
    assert _error_text(reftrace, make) == _error_text(_torch, make)


@requires_torch
def test_warning_text_matches_torch():
    def texts(lib):
        lib.manual_seed(0)
        _, msgs = traced_warnings(lambda: _dropout_train(lib))
        return [canonical_message(m) for m in msgs]
    assert texts(reftrace) == texts(_torch)
