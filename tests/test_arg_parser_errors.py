"""Calls that match no overload raise torch's Python-arg-parser TypeError, word for word.

torch/csrc/utils/python_arg_parser.cpp and invalid_arguments.cpp, ported in
reftrace/ops/_arg_errors.py: the per-argument message when one signature is plausible, else
"received an invalid combination of arguments" with the signatures in torchgen's order and the
``!`` marks on mismatching arguments. Every expected message is live torch's."""
import pytest

import reftrace

torch = pytest.importorskip("torch")

CALLS = [
    # functions with several overloads: arity, wrong types, keywords
    "torch.add(x, 1, 2, 3)", "torch.add(x, 'a')", "torch.add(x, foo=1)", "torch.add(x)",
    "torch.add()", "torch.add(x, x, alpha='a')", "torch.add(x, torch.float)",
    "torch.add(x, x, alpha=torch.strided)", "torch.add(x, other='a')",
    "torch.mul(x, 'a')", "torch.mul(x, x, x)", "torch.sub(x, x, x)", "torch.div(x, 'a')",
    "torch.pow(x, 'a')", "torch.where(x, 1, 2, 3)", "torch.where(x, 1)", "torch.eq(x, 'a')",
    "torch.max(x, 'a')", "torch.max(x, 1, 2, 3)", "torch.max(x, dim='a')",
    "torch.max(x, 1, keepdim=1)", "torch.clamp(x, 'a')", "torch.clamp(x, min='a')",
    "torch.clamp(x, 1, 2, 3)", "torch.mean(x, 'a')", "torch.sort(x, 'a')", "torch.softmax(x)",
    "torch.softmax(x, 'a')", "torch.argmax(x, 'a')", "torch.topk(x)", "torch.topk(x, 'a')",
    "torch.gather(x, 0)", "torch.squeeze(x, 'a')", "torch.flatten(x, 'a')",
    "torch.transpose(x, 0)", "torch.transpose(x, 0, 1, 2)", "torch.transpose(x, 0, 1, foo=2)",
    "torch.sum(x, dim=0, foo=1)", "torch.prod(x, 'a')",
    "torch.mean(x, 'a', 'b', 'c', 'd', 'e')", "torch.all(x, 'a')", "torch.std(x, 'a', 'b')",
    # one signature: its own errors
    "torch.matmul(x, 1)", "torch.matmul(x)", "torch.matmul(x, x, x)", "torch.mm(x, 1)",
    "torch.index_select(x, 0, 1)", "torch.index_select(x, 0, x, foo=1)", "torch.neg(x, 1)",
    "torch.neg('a')", "torch.exp(x, foo=1)", "torch.exp()", "torch.unsqueeze(x)",
    "torch.permute(x, 'a')", "torch.reshape(x, 1.5)", "torch.reshape(x)",
    # tensor lists: any sequence parses, the element fails to unpack
    "torch.cat(x)", "torch.cat([x, 1])", "torch.cat((x, 'a'), 0)", "torch.cat([x, x], 'a')",
    "torch.cat()", "torch.stack(x)", "torch.stack([x, 2])",
    # factories: TensorOptions, requires_grad, int-list varargs
    "torch.zeros('a')", "torch.zeros(2, dtype='a')", "torch.zeros(2, foo=1)", "torch.zeros()",
    "torch.full((2,), 'a')", "torch.full(2, 1)", "torch.full((2,))", "torch.full()",
    "torch.ones(2, 'a')", "torch.ones(2, 3, dtype=5)", "torch.ones(2, 3, layout=1)",
    "torch.arange('a')", "torch.arange()", "torch.empty()",
    # methods: self is not an argument, positions count from the first one after it
    "x.add(1, 2, 3)", "x.add('a')", "x.add(x, foo=1)", "x.add()", "x.mul(None)",
    "x.view('a')", "x.view(2.5)", "x.view(None)", "x.view(2, 'a')", "x.transpose(0)",
    "x.transpose('a', 1)", "x.transpose(0, 1, foo=2)", "x.max('a')", "x.clamp('a')",
    "x.matmul('a')", "x.index_select(0)", "x.index_select('a', x)", "x.reshape('a')",
    "x.neg(1)", "x.neg(foo=1)", "x.mean(1, 2, 3, 4)", "x.pow()", "x.permute(0, 'a')",
    "x.expand('a')", "x.unsqueeze('a')", "x.sum(dim='a')", "x.sum(foo=1)", "x.repeat('a')",
    "x.new_zeros('a')", "x.new_zeros(2, foo=1)", "x.new_ones()",
    # torch._C._nn ops reached through nn.functional
    "torch.nn.functional.interpolate(torch.ones(1, 1, 2), scale_factor='a')",
]


def _error(m, src):
    x = m.ones(2, 3)
    try:
        eval(src, {"torch": m, "x": x})
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("src", CALLS)
def test_arg_parser_error(src):
    expected = _error(torch, src)
    assert expected is not None and expected[0] == "TypeError", expected
    assert _error(reftrace, src) == expected
