"""Torch names reftrace lacks raise "reftrace does not implement torch.X yet" (an AttributeError,
so hasattr stays False); `python -m reftrace coverage` lists what reftrace implements."""
import subprocess
import sys

import pytest

import reftrace
from reftrace._missing import NotImplementedInReftrace
from reftrace._torch_names import TORCH_NAMES


def _a_missing_name(namespace, obj):
    for name in TORCH_NAMES[namespace]:
        if not hasattr(obj, name):
            return name
    pytest.skip(f"reftrace implements every name of {namespace}")


@pytest.mark.parametrize("namespace, obj", [
    ("torch", reftrace), ("torch.linalg", reftrace.linalg), ("torch.special", reftrace.special),
    ("torch.fft", reftrace.fft)])
def test_missing_module_name_says_so(namespace, obj):
    name = _a_missing_name(namespace, obj)
    with pytest.raises(NotImplementedInReftrace, match=f"reftrace does not implement {namespace}.{name} yet"):
        getattr(obj, name)
    assert not hasattr(obj, name)
    assert issubclass(NotImplementedInReftrace, AttributeError)


def test_missing_tensor_name_says_so():
    name = _a_missing_name("torch.Tensor", reftrace.Tensor)
    with pytest.raises(NotImplementedInReftrace, match=f"reftrace does not implement torch.Tensor.{name} yet"):
        getattr(reftrace.ones(2), name)


def test_names_torch_lacks_are_plain_attribute_errors():
    with pytest.raises(AttributeError, match="module 'reftrace' has no attribute 'no_such_op'") as e:
        reftrace.no_such_op
    assert type(e.value) is AttributeError
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'no_such_method'") as e:
        reftrace.ones(1).no_such_method
    assert type(e.value) is AttributeError


def test_namespaces_hold_their_ops():
    assert reftrace.linalg.vector_norm is reftrace.ops.get_packet("linalg_vector_norm")


def test_coverage_command_lists_names():
    out = subprocess.run([sys.executable, "-m", "reftrace", "coverage", "--missing"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "torch.linalg" in out.stdout and "implemented" in out.stdout
    missing = _a_missing_name("torch", reftrace)
    assert missing in out.stdout


def test_torch_names_match_torch():
    torch = pytest.importorskip("torch", exc_type=ImportError)
    # (a subset: importing torch's own submodules later, as other tests do, adds names to dir)
    assert set(TORCH_NAMES["torch"]) <= {n for n in dir(torch) if not n.startswith("_")}
    assert {"einsum", "linalg", "fft", "add", "float32"} <= set(TORCH_NAMES["torch"])
    assert set(TORCH_NAMES["torch.Tensor"]) == {n for n in dir(torch.Tensor) if not n.startswith("_")}
