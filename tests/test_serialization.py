"""reftrace.save / reftrace.load (torch.save's zip format) and the refusal of untrusted files.

Both ways with live torch 2.13 when installed; torch-free, reftrace reads the file torch wrote
into tests/data/archives/torch_save.pt (tests/gen_archive_golden.py). Every malformed or
malicious file must give a RuntimeError naming the problem, and must neither execute nor write
anything; a seeded mutation fuzz checks that for byte flips, truncations and entry renames of
valid files (REFTRACE_FUZZ_CASES=N for more cases than the default).
"""
import io
import os
import pickle
import random
import struct
import warnings
import zipfile

import numpy as np
import pytest

import reftrace
from reftrace.jit._serialization import read_torchscript_archive

import archive_programs
from oracle import torch

requires_torch = pytest.mark.skipif(torch is None, reason="torch 2.13 (the oracle) is not installed")
ARCHIVES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "archives")
TORCH_SAVE = os.path.join(ARCHIVES, "torch_save.pt")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def rt_save(obj):
    buf = io.BytesIO()
    reftrace.save(obj, buf)
    return buf.getvalue()


# -- comparing objects across the two libraries ----------------------------------------------------

def _describe(lib, v):
    """A library-neutral description: tensors as (kind, dtype, shape, stride, offset,
    requires_grad, values); containers recursively; other values as they are."""
    if isinstance(v, lib.Tensor):
        kind = "Parameter" if isinstance(v, lib.nn.Parameter) else "Tensor"
        vals = v.detach().numpy() if hasattr(v, "detach") else v.numpy()
        return (kind, str(v.dtype).replace("torch.", ""), tuple(v.shape), tuple(v.stride()),
                v.storage_offset(), bool(v.requires_grad), vals.tolist())
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_describe(lib, e) for e in v])
    if isinstance(v, dict):
        return (type(v).__name__, [(k, _describe(lib, e)) for k, e in v.items()])
    if isinstance(v, lib.dtype):
        return ("dtype", str(v))
    if isinstance(v, lib.device):
        return ("device", str(v))
    return (type(v).__name__, v)


def _assert_views_share(lib, obj):
    ptr = obj["x"].untyped_storage().data_ptr()
    for k in ("t", "sl", "row"):
        assert obj[k].untyped_storage().data_ptr() == ptr, k


def test_round_trip_in_reftrace():
    obj = archive_programs.saved_object(reftrace)
    back = reftrace.load(io.BytesIO(rt_save(obj)))
    assert _describe(reftrace, back) == _describe(reftrace, obj)
    _assert_views_share(reftrace, back)
    back["x"].add_(1)  # one storage: the views see the write
    assert back["t"][1, 0].item() == 2.0 and back["sl"][0, 0].item() == 7.0


def test_reads_torch_golden_file():
    """torch-free: the file torch 2.13 wrote (gen_archive_golden.py) reads as the same object."""
    back = reftrace.load(TORCH_SAVE)
    assert _describe(reftrace, back) == _describe(reftrace, archive_programs.saved_object(reftrace))
    _assert_views_share(reftrace, back)


@requires_torch
def test_torch_reads_reftrace_file():
    got = torch.load(io.BytesIO(rt_save(archive_programs.saved_object(reftrace))))
    assert _describe(torch, got) == _describe(torch, archive_programs.saved_object(torch))
    _assert_views_share(torch, got)
    got = torch.load(io.BytesIO(rt_save(archive_programs.saved_object(reftrace))), weights_only=False)
    assert _describe(torch, got) == _describe(torch, archive_programs.saved_object(torch))


@requires_torch
def test_reftrace_reads_live_torch_file():
    buf = io.BytesIO()
    torch.save(archive_programs.saved_object(torch), buf)
    back = reftrace.load(io.BytesIO(buf.getvalue()))
    assert _describe(reftrace, back) == _describe(reftrace, archive_programs.saved_object(reftrace))
    _assert_views_share(reftrace, back)


def test_state_dict_metadata_survives():
    """A state dict's `_metadata` attribute (torch's module versions) is read and written back."""
    sd = reftrace.load(TORCH_SAVE)["linear"]
    assert sd._metadata == {"": {"version": 1}}
    assert reftrace.load(io.BytesIO(rt_save(sd)))._metadata == {"": {"version": 1}}
    if torch is not None:
        assert torch.load(io.BytesIO(rt_save(sd)))._metadata == {"": {"version": 1}}


def test_file_layout_matches_torch():
    """The records torch.save writes, in its order, with its contents; data 64-byte aligned."""
    ours = zipfile.ZipFile(io.BytesIO(rt_save(archive_programs.saved_object(reftrace))))
    theirs = zipfile.ZipFile(TORCH_SAVE)

    def layout(z):
        return [i.filename.split("/", 1)[1] for i in z.infolist()]
    assert layout(ours) == layout(theirs)
    for name in (".format_version", ".storage_alignment", "byteorder", "version"):
        assert ours.read("archive/" + name) == theirs.read("torch_save/" + name)
    # the same storages, in the same order, with the same bytes
    for i in ours.infolist():
        if "/data/" in i.filename:
            assert ours.read(i) == theirs.read("torch_save/" + i.filename.split("/", 1)[1])


def test_path_names_the_archive_folder(tmp_path):
    path = tmp_path / "weights.pt"
    reftrace.save({"a": reftrace.ones(2)}, str(path))
    assert zipfile.ZipFile(path).namelist()[0] == "weights/data.pkl"
    assert reftrace.load(str(path))["a"].tolist() == [1.0, 1.0]


def test_load_state_dict_from_torch_file():
    sd = reftrace.load(TORCH_SAVE)["linear"]
    lin = reftrace.nn.Linear(3, 2)
    lin.load_state_dict(sd)
    assert lin.weight.detach().tolist() == [[0.0, 0.25, 0.5], [0.75, 1.0, 1.25]]
    assert lin.bias.detach().tolist() == [0.5, -0.5]


def test_map_location():
    data = rt_save({"a": reftrace.ones(2)})
    assert reftrace.load(io.BytesIO(data), map_location="cpu")["a"].device.type == "cpu"
    assert reftrace.load(io.BytesIO(data), map_location={"cpu": "cpu"})["a"].device.type == "cpu"


def test_save_refuses_what_the_format_cannot_hold():
    with pytest.raises(TypeError, match="cannot save an object of type .*Linear"):
        reftrace.save(reftrace.nn.Linear(2, 2), io.BytesIO())
    x = reftrace.ones(4)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        reftrace.save([x, x.view(reftrace.int32)], io.BytesIO())


def test_pickling_a_tensor_points_at_save():
    with pytest.raises(TypeError, match=r"reftrace\.save .* reftrace\.jit\.save"):
        pickle.dumps(reftrace.ones(2))
    assert callable(reftrace.save) and callable(reftrace.jit.save)


# -- refusals -----------------------------------------------------------------------------------

def _zip(records, prefix="archive"):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in records.items():
            z.writestr(f"{prefix}/{name}", data)
    return buf.getvalue()


def _records(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    return {i.filename.split("/", 1)[1]: z.read(i) for i in z.infolist()}


def _with_pickle(pkl, **extra):
    recs = _records(rt_save({"a": reftrace.arange(4.)}))
    recs["data.pkl"] = pkl
    recs.update(extra)
    return _zip(recs)


class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_unknown_global_never_imported_or_called(tmp_path):
    marker = tmp_path / "pwned"
    data = _with_pickle(pickle.dumps(_Evil(marker), protocol=2))
    with pytest.raises(RuntimeError, match=r"Unsupported global: GLOBAL (posix|os)\.system"):
        reftrace.load(io.BytesIO(data))
    assert not marker.exists()


def test_weights_only_false_is_refused():
    with pytest.raises(RuntimeError, match="weights_only=False"):
        reftrace.load(io.BytesIO(rt_save({})), weights_only=False)
    assert reftrace.load(io.BytesIO(rt_save({"a": 1})), weights_only=None) == {"a": 1}


@pytest.mark.parametrize("pkl, message", [
    (b"\x80\x02I1\n.", "unsupported pickle opcode b'I'"),                       # INT (text)
    (b"\x80\x02ccopyreg\n_reconstructor\n.", "GLOBAL copyreg._reconstructor"),
    (b"\x80\x02cbuiltins\neval\n.", "GLOBAL builtins.eval"),
    (b"\x80\x02c__torch__\nM\n)\x81.", "GLOBAL __torch__.M"),                   # classes: archives only
    (b"\x80\x02cbuiltins\nset\n.", "contains a bare builtins.set"),
    (b"\x80\x02t.", "MARK not found"),
    (b"\x80\x02h\x05.", "memo entry 5"),
    (b"\x80\x02X\xff\xff\xff\x7f", "truncated"),
    (b"\x80\x02]K\x01\x88s.", "SETITEM on list"),
    (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n)\x81.", "NEWOBJ of torch._utils._rebuild_tensor_v2"),
    (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(X\x01\x00\x00\x00sK\x00)))\x89}tR.",
     "first argument must be a storage"),
    (b"\x80\x02ccollections\nOrderedDict\n)R}(X\x05\x00\x00\x00itemsK\x01ub.",
     "BUILD of OrderedDict with attribute 'items'"),
    (b"\x80\x02", "truncated"),
    (b"\x80\x02.", "stack underflow"),
])
def test_malformed_pickles(pkl, message):
    with pytest.raises(RuntimeError, match="Weights only load failed") as e:
        reftrace.load(io.BytesIO(_with_pickle(pkl)))
    assert message in str(e.value)


def _tensor_pickle(numel, size, stride=(1,), offset=0, key="0"):
    """data.pkl of one float tensor over storage `key` declared with `numel` elements."""
    def t(values):
        return b"(" + b"".join(b"\x8a\x08" + struct.pack("<q", v) for v in values) + b"t"
    pid = (b"(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX" + struct.pack("<I", len(key)) + key.encode()
           + b"X\x03\x00\x00\x00cpu\x8a\x08" + struct.pack("<q", numel) + b"tQ")
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" + pid + b"J" + struct.pack("<i", offset)
            + t(size) + t(stride) + b"\x89ccollections\nOrderedDict\n)Rt" + b"R.")


@pytest.mark.parametrize("pkl, message", [
    # torch 2.13 accepts a tensor reaching past its storage and reads whatever follows
    (_tensor_pickle(4, (5,)), "needs 5 elements but its storage has 4"),
    (_tensor_pickle(4, (2,), offset=3), "needs 5 elements but its storage has 4"),
    (_tensor_pickle(4, (2, 2), (2, 2)), "needs 5 elements"),
    # the storage record holds 16 bytes: a larger declared size is refused before allocating
    (_tensor_pickle(1 << 60, (1,)), "holds 16 bytes but is declared as 1152921504606846976 elements"),
    (_tensor_pickle(4, (4,), key="../../etc/passwd"), "invalid storage key"),
    (_tensor_pickle(4, (4,), key="9"), "storage record 'data/9' is missing"),
    (_tensor_pickle(4, (1 << 62,)), "out of range"),
])
def test_storage_checks(pkl, message):
    with pytest.raises(RuntimeError) as e:
        reftrace.load(io.BytesIO(_with_pickle(pkl)))
    assert message in str(e.value)


def test_declared_size_checked_before_reading():
    """A record whose directory entry claims more than the file holds is refused unread."""
    data = bytearray(rt_save({"a": reftrace.arange(4.)}))
    z = zipfile.ZipFile(io.BytesIO(bytes(data)))
    info = next(i for i in z.infolist() if i.filename.endswith("data/0"))
    cd = data.rfind(b"PK\x01\x02" + data[data.find(b"PK\x01\x02") + 4:data.find(b"PK\x01\x02") + 4][:0],
                    0, len(data))
    # patch the central directory sizes of data/0 to 2**31
    start = data.find(b"PK\x01\x02")
    while True:
        name_len = struct.unpack("<H", data[start + 28:start + 30])[0]
        if data[start + 46:start + 46 + name_len].endswith(b"data/0"):
            break
        start = data.find(b"PK\x01\x02", start + 4)
    data[start + 20:start + 28] = struct.pack("<II", 1 << 31, 1 << 31)
    with pytest.raises(RuntimeError, match="claims more bytes than the file has"):
        reftrace.load(io.BytesIO(bytes(data)))
    assert info and cd >= 0


@pytest.mark.parametrize("records, message", [
    ({"data.pkl": b"\x80\x02}.", "../evil": b"x", "version": b"3\n"}, "unsafe entry name"),
    ({"data.pkl": b"\x80\x02}.", "version": b"99\n"}, "version 99"),
    ({"data.pkl": b"\x80\x02}.", "version": b"three\n"}, "is not an integer"),
    ({"data.pkl": b"\x80\x02}."}, "no 'version' record"),
    ({"version": b"3\n"}, "no record 'data.pkl'"),
    ({"data.pkl": b"\x80\x02}.", "version": b"3\n", "byteorder": b"middle"}, "unknown byteorder"),
])
def test_bad_archives(records, message):
    with pytest.raises(RuntimeError) as e:
        reftrace.load(io.BytesIO(_zip(records)))
    assert message in str(e.value)


def test_absolute_and_outside_names():
    for name in ("/abs/data.pkl", "archive/../../x", "a\\b"):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("archive/data.pkl", b"\x80\x02}.")
            z.writestr(name, b"x")
        with pytest.raises(RuntimeError, match="unsafe entry name|outside the archive"):
            reftrace.load(io.BytesIO(buf.getvalue()))


def test_not_zip_and_legacy():
    with pytest.raises(RuntimeError, match="not a torch zip archive"):
        reftrace.load(io.BytesIO(b"hello"))
    legacy = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps(1001, protocol=2)
    with pytest.raises(RuntimeError, match="legacy \\(non-zip\\) format"):
        reftrace.load(io.BytesIO(legacy))
    if torch is not None:
        buf = io.BytesIO()
        torch.save({"a": torch.ones(2)}, buf, _use_new_zipfile_serialization=False)
        with pytest.raises(RuntimeError, match="legacy \\(non-zip\\) format"):
            reftrace.load(io.BytesIO(buf.getvalue()))


def test_truncated_files():
    data = rt_save(archive_programs.saved_object(reftrace))
    for n in (10, len(data) // 2, len(data) - 30):
        with pytest.raises(RuntimeError):
            reftrace.load(io.BytesIO(data[:n]))


def test_torchscript_archive_is_not_a_state_dict():
    with pytest.warns(UserWarning, match="looks like a TorchScript archive"), \
            pytest.raises(RuntimeError, match="Cannot use ``weights_only=True`` with TorchScript archives"):
        reftrace.load(os.path.join(ARCHIVES, "simple_arith.pt"))
    with pytest.raises(RuntimeError, match="not a TorchScript archive"):
        read_torchscript_archive(TORCH_SAVE)


# -- mutation fuzz --------------------------------------------------------------------------------

def _mutants(data, rng, n):
    """Seeded mutations of a valid file: byte flips, truncations, entry renames, duplicated and
    dropped entries, swapped storages."""
    recs = list(zipfile.ZipFile(io.BytesIO(data)).infolist())
    names = [i.filename for i in recs]
    contents = {i.filename: zipfile.ZipFile(io.BytesIO(data)).read(i) for i in recs}
    for _ in range(n):
        kind = rng.randrange(6)
        if kind == 0:  # flip 1..8 random bytes anywhere
            m = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                m[rng.randrange(len(m))] ^= 1 << rng.randrange(8)
            yield bytes(m)
        elif kind == 1:
            yield data[:rng.randrange(len(data))]
        elif kind == 2:  # flip bytes inside one record's content, re-zipped (valid zip, bad content)
            name = rng.choice(names)
            c = bytearray(contents[name])
            if c:
                for _ in range(rng.randint(1, 4)):
                    c[rng.randrange(len(c))] = rng.randrange(256)
            yield _rezip({**contents, name: bytes(c)})
        elif kind == 3:  # rename one entry
            name = rng.choice(names)
            new = rng.choice(["../x", name + "x", name.rsplit("/", 1)[0] + "/data/99", "/abs",
                              name.replace("archive", "other"), rng.choice(names)])
            items = [(new if k == name else k, v) for k, v in contents.items()]
            yield _rezip(items)
        elif kind == 4:  # drop one entry
            name = rng.choice(names)
            yield _rezip({k: v for k, v in contents.items() if k != name})
        else:  # truncate one record's content
            name = rng.choice(names)
            yield _rezip({**contents, name: contents[name][:rng.randrange(len(contents[name]) + 1)]})


def _rezip(items):
    buf = io.BytesIO()
    items = items.items() if isinstance(items, dict) else items
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w") as z:
        warnings.simplefilter("ignore")  # duplicated names are one of the mutations
        for name, content in items:
            info = zipfile.ZipInfo(name)
            z.writestr(info, content)
    return buf.getvalue()


def _loaders():
    return [("state", rt_save(archive_programs.saved_object(reftrace)), reftrace.load),
            ("torch_save", _read(TORCH_SAVE), reftrace.load),
            ("jit", _read(os.path.join(ARCHIVES, "methods_and_callee.pt")), read_torchscript_archive),
            ("jit_mlp", _read(os.path.join(ARCHIVES, "nested_linear_twice.pt")), read_torchscript_archive)]


def test_mutation_fuzz(tmp_path, monkeypatch):
    """Every mutant either loads or raises a RuntimeError: never another exception type,
    never a crash, never a file written."""
    monkeypatch.chdir(tmp_path)
    n = int(os.environ.get("REFTRACE_FUZZ_CASES", "300"))
    rng = random.Random(1234)
    outcomes = {"loaded": 0, "refused": 0}
    for name, data, loader in _loaders():
        for mutant in _mutants(data, rng, max(1, n // 4)):
            try:
                loader(io.BytesIO(mutant))
                outcomes["loaded"] += 1
            except RuntimeError:
                outcomes["refused"] += 1
            except Exception as e:  # pragma: no cover - what the test exists to catch
                pytest.fail(f"{name}: {type(e).__name__}: {e}")
    assert outcomes["refused"] > 0
    assert os.listdir(tmp_path) == []


def test_big_endian_records():
    """byteorder 'big': storages are byte-swapped on reading (torch writes the record on
    big-endian machines)."""
    recs = _records(rt_save({"a": reftrace.arange(4.), "i": reftrace.tensor([1, -2])}))
    recs["byteorder"] = b"big"
    for key, dt in (("data/0", "<f4"), ("data/1", "<i8")):
        recs[key] = np.frombuffer(recs[key], dt).astype(dt.replace("<", ">")).tobytes()
    back = reftrace.load(io.BytesIO(_zip(recs)))
    assert back["a"].tolist() == [0.0, 1.0, 2.0, 3.0] and back["i"].tolist() == [1, -2]


def test_cuda_location_without_cuda():
    recs = _records(rt_save({"a": reftrace.ones(2)}))
    recs["data.pkl"] = recs["data.pkl"].replace(b"\x03\x00\x00\x00cpu", b"\x06\x00\x00\x00cuda:0")
    data = _zip(recs)
    from reftrace_backends import cuda_is_available
    if not cuda_is_available():
        with pytest.raises(RuntimeError, match="map_location=torch.device\\('cpu'\\)"):
            reftrace.load(io.BytesIO(data))
    assert reftrace.load(io.BytesIO(data), map_location="cpu")["a"].device.type == "cpu"


def test_archive_storage_shorter_than_tensor():
    """The same checks guard TorchScript archives (data/ and constants/)."""
    recs = _records(_read(os.path.join(ARCHIVES, "nested_linear_twice.pt")))
    recs["data/0"] = recs["data/0"][:4]
    with pytest.raises(RuntimeError, match="storage record 'data/0' holds 4 bytes"):
        read_torchscript_archive(_zip(recs))
    recs = _records(_read(os.path.join(ARCHIVES, "simple_arith.pt")))
    recs["constants.pkl"] = b"\x80\x02cos\nsystem\n."
    with pytest.raises(RuntimeError, match="GLOBAL os.system"):
        read_torchscript_archive(_zip(recs))


def test_shared_and_self_referencing_containers():
    shared, t = [1], reftrace.ones(2)
    loop = [shared]
    loop.append(loop)
    back = reftrace.load(io.BytesIO(rt_save({"a": shared, "b": shared, "loop": loop, "t1": t, "t2": t,
                                             "long": tuple(range(5))})))
    assert back["a"] is back["b"] and back["loop"][1] is back["loop"] and back["t1"] is back["t2"]
    assert back["long"] == (0, 1, 2, 3, 4)
    tup = ([],)
    tup[0].append(tup)
    with pytest.raises(ValueError, match="tuple that contains itself"):
        reftrace.save(tup, io.BytesIO())


def test_streams_and_text_files():
    class Stream:  # a pipe: read() only
        def __init__(self, data):
            self.buf = io.BytesIO(data)

        def read(self, n=-1):
            return self.buf.read(n)

        def seekable(self):
            return False
    assert reftrace.load(Stream(rt_save({"a": reftrace.ones(2)})))["a"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="binary mode"):
        reftrace.load(io.StringIO("PK"))
