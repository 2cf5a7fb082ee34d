"""torch's deprecated Python signatures (deprecated.yaml: ``p.add_(-lr, grad)``,
``torch.addmm(beta, M, mat1, mat2)``): values, the traced graph (the regular ATen overload with
the arguments reordered) and the warning, which torch gives once per process for whichever
deprecated signature comes first. Each case runs in a fresh interpreter, under torch and reftrace."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r'''
import sys, warnings
m = __import__(sys.argv[1])
x = m.ones(2); a = m.ones(2, 2); y = m.arange(2.0); b = m.ones(1, 2, 2)
calls = {
 "add fn": lambda: m.add(x, 2, y),
 "add meth": lambda: x.add(2, y),
 "add_": lambda: x.clone().add_(-0.5, y),
 "add out": lambda: m.add(x, 2, y, out=m.empty(2)),
 "sub meth": lambda: x.sub(2, y),
 "sub_": lambda: x.clone().sub_(2, y),
 "addcmul_": lambda: x.clone().addcmul_(0.5, y, y),
 "addcdiv fn": lambda: m.addcdiv(x, 0.5, y, y + 1),
 "addmm fn": lambda: m.addmm(2, a, a, a),
 "addmm fn alpha": lambda: m.addmm(2, a, 3, a, a),
 "addmm meth": lambda: a.addmm(2, 3, a, a),
 "addmv meth": lambda: x.addmv(2, a, y),
 "baddbmm": lambda: m.baddbmm(2, b, 3, b, b),
 "addr": lambda: m.addr(2, a, y, y),
 "add number other": lambda: m.add(x, 2, 3),
}
first = sys.argv[2]
for k in [first] + [k for k in calls if k != first]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        print(k, calls[k]().tolist())
        for ww in w:
            print("  warning:", str(ww.message).split(" (Triggered internally")[0])
print(m.jit.trace(lambda x, y: x.add(2, y).sub_(3, y) + m.addmm(2, a, a, a).sum(), (x, y)).graph)
'''


def _run(module, first):
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", PROGRAM, module, first], capture_output=True,
                       text=True, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return r.stdout.replace("<string>", "")


@pytest.mark.parametrize("first", ["add_", "add meth", "add fn", "addmm meth", "addcmul_"])
def test_deprecated_signatures_match_torch(first):
    assert _run("reftrace", first) == _run("torch", first)


def test_scalar_overloads_are_not_python_bindings():
    # add.Scalar / mul.Scalar exist for C++ composites (special.ndtr's MulBackward1), but
    # Python never binds them: a number goes to the .Tensor overload as a wrapped tensor
    import reftrace
    import torch

    def graph(m):
        return str(m.jit.trace(lambda x: m.mul(x, 2) + x.add(3) - m.sub(x, 1, alpha=2), (m.ones(2),)).graph)
    assert graph(reftrace) == graph(torch)
