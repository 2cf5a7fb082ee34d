"""reftrace.jit.save writes TorchScript archives torch 2.13 reads (reftrace/jit/_export_module.py).

With torch installed, every traced program of the corpus (tracer_cases, code_cases, module_cases,
examples/, trace_module with several methods and traced callees) is traced by both libraries and
saved by both: torch.jit.load must load reftrace's archive, its outputs must equal reftrace's
trace's, and the code files (in order), the loaded ``.code`` and the version must equal torch's
own save of the same program. Class mangles (``___torch_mangle_N``) depend on what the process
traced before, so each side traces in a fresh compilation unit (torch: a forked process per
program, see gen_archive_golden.py) and the texts are compared exactly.
Without torch, reftrace's code files are compared with the archives torch wrote into
tests/data/archives/ (tests/gen_archive_golden.py).
"""
import io
import os
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest

import reftrace
from reftrace.jit._serialization import read_torchscript_archive

import code_cases
import archive_programs as programs
from gen_archive_golden import file_key
from oracle import torch as _torch


def importorskip_torch():
    if _torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    return _torch

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "archives")


def archive_records(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    return {i.filename.split("/", 1)[1]: z.read(i) for i in z.infolist()}


def code_records(data):
    """[(path, text)] of the code files, in archive order, and the version record."""
    recs = archive_records(data)
    out = {"files": [(k, v.decode()) for k, v in recs.items() if k.endswith(".py")]}
    for k in ("version", ".data/version"):
        if k in recs:
            out[k] = recs[k].decode()
    return out


def saved(lib, traced):
    buf = io.BytesIO()
    lib.jit.save(traced, buf)
    return buf.getvalue()


# -- with torch: reftrace's archives in torch.jit.load ----------------------------------------------

def _to_torch(torch, v):
    if isinstance(v, reftrace.Tensor):
        return torch.from_numpy(np.array(v.detach().numpy()))
    if isinstance(v, (tuple, list)):
        return type(v)(_to_torch(torch, e) for e in v)
    if isinstance(v, dict):
        return {_to_torch(torch, k): _to_torch(torch, e) for k, e in v.items()}
    return v


def _assert_same(torch, got, want):
    if isinstance(want, torch.Tensor):
        assert isinstance(got, torch.Tensor)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert torch.allclose(got.detach(), want.detach(), rtol=1e-6, atol=1e-6, equal_nan=True)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(torch, g, w)
    elif isinstance(want, dict):
        _assert_same(torch, list(got.items()), list(want.items()))
    else:
        assert got == want


@pytest.fixture(scope="session")
def torch_archives(tmp_path_factory):
    """torch's archive of every program, each saved in a fresh process (gen_archive_golden.py)."""
    importorskip_torch()
    out = tmp_path_factory.mktemp("torch_archives")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_archive_golden.py")
    subprocess.run([sys.executable, script, "--all", "--out", str(out)], check=True,
                   capture_output=True)
    return {name: (out / (file_key(name) + ".pt")).read_bytes() for name in programs.all_programs()}


@pytest.fixture
def fresh_names(monkeypatch):
    """A fresh compilation unit: class names mangle as in a process that traced nothing else."""
    from reftrace.jit import _module_trace
    monkeypatch.setattr(_module_trace, "PYTHON_CU", _module_trace.CompilationUnit())


def _check_against_torch(torch, program, torch_file):
    r_traced, r_inputs = program.trace(reftrace)
    r_file = saved(reftrace, r_traced)
    loaded = torch.jit.load(io.BytesIO(r_file))
    if program.deterministic:
        t_inputs = _to_torch(torch, r_inputs)  # copied first: a program may mutate its inputs
        want = _to_torch(torch, r_traced(*r_inputs))
        _assert_same(torch, loaded(*t_inputs), want)
    assert code_records(r_file) == code_records(torch_file)
    t_loaded = torch.jit.load(io.BytesIO(torch_file))
    assert loaded.code == t_loaded.code
    for (name, sub), (t_name, t_sub) in zip(loaded.named_modules(), t_loaded.named_modules()):
        assert name == t_name
        assert dict(sub.named_parameters()).keys() == dict(t_sub.named_parameters()).keys()
        assert dict(sub.named_buffers()).keys() == dict(t_sub.named_buffers()).keys()
        assert sub.training == t_sub.training


@pytest.mark.parametrize("name", sorted(programs.all_programs()))
def test_torch_loads_reftrace_archive(name, torch_archives, fresh_names):
    torch = importorskip_torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check_against_torch(torch, programs.all_programs()[name], torch_archives[name])


def test_parameters_keep_values_and_requires_grad():
    torch = importorskip_torch()
    program = programs.all_programs()["module/nested_linear_twice"]
    traced, _ = program.trace(reftrace)
    loaded = torch.jit.load(io.BytesIO(saved(reftrace, traced)))
    want = dict(traced.named_parameters())
    got = dict(loaded.named_parameters())
    assert want.keys() == got.keys()
    for k in want:
        assert got[k].requires_grad
        np.testing.assert_array_equal(got[k].detach().numpy(), want[k].detach().numpy())
    np.testing.assert_array_equal(loaded.scale.numpy(), traced.scale.numpy())


def test_extra_files_and_path(tmp_path):
    traced, _ = programs.all_programs()["tracer/simple_arith"].trace(reftrace)
    path = tmp_path / "model.pt"
    traced.save(str(path), _extra_files={"meta.json": b'{"a": 1}', "note.txt": "hi"})
    recs = archive_records(path.read_bytes())
    assert recs["extra/meta.json"] == b'{"a": 1}' and recs["extra/note.txt"] == b"hi"
    assert zipfile.ZipFile(path).namelist()[0].startswith("model/")  # torch names the folder after the file
    extra = {"meta.json": "", "absent": "x"}
    archive = read_torchscript_archive(str(path), _extra_files=extra)
    assert extra == {"meta.json": b'{"a": 1}', "absent": b""}
    assert archive.data.qualified_name == "__torch__.PlaceholderModule"
    torch = importorskip_torch()
    t_extra = {"meta.json": "", "absent": "x"}
    torch.jit.load(str(path), _extra_files=t_extra)
    assert t_extra == extra


def test_records_are_aligned_and_stored():
    """torch's writer puts each uncompressed record's data on a 64-byte boundary."""
    traced, _ = programs.all_programs()["module/nested_linear_twice"].trace(reftrace)
    data = saved(reftrace, traced)
    z = zipfile.ZipFile(io.BytesIO(data))
    for info in z.infolist():
        if info.compress_type == zipfile.ZIP_STORED:
            name_len, extra_len = np.frombuffer(data[info.header_offset + 26:info.header_offset + 30], "<u2")
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename


def test_save_rejects_other_objects():
    with pytest.raises(TypeError, match="traced functions and traced modules"):
        reftrace.jit.save(reftrace.nn.Linear(2, 2), io.BytesIO())


# -- reading back: what reftrace wrote is data reftrace reads ----------------------------------------

def test_reftrace_reads_its_own_archive(fresh_names):
    traced, _ = programs.all_programs()["module/nested_linear_twice"].trace(reftrace)
    archive = read_torchscript_archive(saved(reftrace, traced))
    root = archive.data
    assert root.qualified_name.endswith(".Net") and root.state["training"] is True
    lin = root.state["a"].state["lin"]
    assert lin.qualified_name == "__torch__.torch.nn.modules.linear.Linear"
    np.testing.assert_array_equal(lin.state["weight"].detach().numpy(), traced.a.lin.weight.detach().numpy())
    assert lin.state["weight"].requires_grad
    np.testing.assert_array_equal(root.state["scale"].numpy(), traced.scale.numpy())
    assert "code/__torch__/archive_case.py" in archive.code and archive.version == 3
    assert archive.source_for(root.qualified_name).startswith("class Net(Module):")


# -- without torch: torch's own archives, checked in -----------------------------------------------

def _golden_names():
    if not os.path.isdir(GOLDEN_DIR):
        return []
    return sorted(f[:-3] for f in os.listdir(GOLDEN_DIR) if f.endswith(".pt") and f != "torch_save.pt")


@pytest.mark.parametrize("golden", _golden_names())
def test_code_equals_torch_golden_archive(golden, fresh_names):
    """reftrace's archive of the program has the code files torch wrote for it."""
    name = programs.GOLDEN[golden]
    traced, _ = programs.all_programs()[name].trace(reftrace)
    with open(os.path.join(GOLDEN_DIR, golden + ".pt"), "rb") as f:
        torch_file = f.read()
    assert code_records(saved(reftrace, traced)) == code_records(torch_file)
    archive = read_torchscript_archive(torch_file)
    assert archive.data.qualified_name.startswith("__torch__.")
    assert set(archive.code) == {k for k in archive_records(torch_file) if k.endswith(".py")}


def test_golden_archives_exist():
    assert set(_golden_names()) == set(programs.GOLDEN), "run python tests/gen_archive_golden.py"
