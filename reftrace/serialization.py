"""torch.save / torch.load in torch 2.13's zip format (torch/serialization.py).

A file is a zip archive (see _inline_container.py) holding::

    archive/data.pkl               the object, pickled; each tensor is _rebuild_tensor_v2 over a
                                   persistent id ('storage', torch.FloatStorage, '0', 'cpu', numel)
    archive/.format_version        "1"
    archive/.storage_alignment     "64"
    archive/byteorder              "little"
    archive/data/0, data/1, ...    each storage's bytes (little-endian), once per storage
    archive/version                "3\\n"
    archive/.data/serialization_id a 40-digit id

Views of one storage are written once and come back sharing it (strides and offsets kept).
``load`` reads only what ``weights_only=True`` allows in torch (tensors, parameters, dicts,
OrderedDicts, lists, tuples, numbers, strings, dtypes, devices, torch.Size); it never imports or
calls anything the file names (_weights_only_unpickler.py). ``weights_only=False`` would mean
running the file's pickle with Python's full object model: reftrace refuses it.
"""
import os
import random
import warnings
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from . import _dtype as D
from ._device import device as _device_cls, CPU
from ._inline_container import ZipReader, ZipWriter, archive_name
from ._pickler import Pickler
from ._weights_only_unpickler import STORAGE_NAMES, Unpickler

if TYPE_CHECKING:
    from .types import FileLike

__all__ = ["save", "load"]

FORMAT_VERSION = "1"
STORAGE_ALIGNMENT = "64"
# caffe2/serialize/versions.h kProducedFileFormatVersion for torch.save's records
PRODUCED_VERSION = 3
MAX_SUPPORTED_VERSION = 10  # torch 2.13 reads archives up to its kMaxSupportedFileFormatVersion


# -- writing --------------------------------------------------------------------------------------

def _storage_root(t):
    return t._base if t._base is not None else t


class StorageTable:
    """Assigns each storage a key (``"0"``, ``"1"`` ... in order of first use) and remembers its
    bytes; views of one storage share its key (torch keys storages by their data pointer)."""

    def __init__(self):
        self.keys = {}       # id(root tensor) -> key
        self.roots = []      # root tensors (kept alive), in key order
        self.dtypes = {}     # key -> dtype the storage is written as

    def pid(self, t):
        from .ops.layout import _storage_array
        root = _storage_root(t)
        key = self.keys.get(id(root))
        if key is None:
            key = self.keys[id(root)] = str(len(self.roots))
            self.roots.append(root)
            self.dtypes[key] = root.dtype
        if t.dtype is not self.dtypes[key]:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data "
                               "as different types")
        if t.dtype not in STORAGE_NAMES:
            raise RuntimeError(f"cannot save a tensor of dtype {t.dtype}")
        flat, offset = _storage_array(t)
        return ("storage", STORAGE_NAMES[t.dtype], key, location_tag(t.device), int(flat.shape[0])), offset

    def storage_bytes(self):
        """(key, bytes) for each storage, in key order: little-endian, as torch writes them."""
        from .ops.layout import _storage_array
        from reftrace_backends import get_backend
        for i, root in enumerate(self.roots):
            flat, _ = _storage_array(root)
            host = np.asarray(get_backend(root.device.type).to_host(flat))
            host = np.ascontiguousarray(host, dtype=host.dtype.newbyteorder("<"))
            yield str(i), memoryview(host.reshape(-1)).cast("B")  # written without a copy


def location_tag(device):
    """torch's location_tag: 'cpu', or 'cuda:<index>' (always with an index)."""
    return "cpu" if device.type == "cpu" else f"{device.type}:{device.index or 0}"


def serialization_id():
    """torch writes a 40-digit id per file (.data/serialization_id); only its presence matters."""
    return "".join(random.choice("0123456789") for _ in range(40))


def save(obj: object, f: "FileLike", pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """torch.save: write ``obj`` (tensors, state dicts, nested containers of tensors and Python
    scalars) to the path or binary file ``f`` in torch 2.13's zip format."""
    if pickle_module is not None:
        raise RuntimeError("reftrace.save writes with its own pickler; pickle_module is not supported")
    if not _use_new_zipfile_serialization:
        raise RuntimeError("reftrace.save writes only torch's zip format "
                           "(_use_new_zipfile_serialization=False is the legacy format)")
    table = StorageTable()
    data = Pickler(table.pid).dump(obj)
    z = ZipWriter(archive_name(f))
    z.write("data.pkl", data)
    z.write(".format_version", FORMAT_VERSION.encode())
    z.write(".storage_alignment", STORAGE_ALIGNMENT.encode())
    if not _disable_byteorder_record:
        z.write("byteorder", b"little")
    for key, raw in table.storage_bytes():
        z.write(f"data/{key}", raw)
    z.write("version", f"{PRODUCED_VERSION}\n".encode())
    z.write(".data/serialization_id", serialization_id().encode())
    z.save(f)


# -- reading --------------------------------------------------------------------------------------

def check_version(reader, what):
    """The ``version`` record: an integer torch 2.13 can read."""
    if not reader.has("version"):
        if reader.has(".data/version"):
            text = reader.read_text(".data/version")
        else:
            raise RuntimeError(f"{what} has no 'version' record (not a file torch wrote)")
    else:
        text = reader.read_text("version")
    try:
        version = int(text.strip())
    except ValueError:
        raise RuntimeError(f"{what}: version record {text[:20]!r} is not an integer") from None
    if not 1 <= version <= MAX_SUPPORTED_VERSION:
        raise RuntimeError(
            f"{what} has file format version {version}, but this version of reftrace (like torch "
            f"2.13) supports versions 1 to {MAX_SUPPORTED_VERSION}")
    return version


def check_byteorder(reader, what):
    if reader.has("byteorder"):
        order = reader.read_text("byteorder")
        if order not in ("little", "big"):
            raise RuntimeError(f"{what}: unknown byteorder record {order[:20]!r}")
        return order
    return "little"


def resolve_location(location, map_location, what):
    """Where a storage saved on ``location`` goes: torch's map_location (None, a device, a
    string, or a dict {saved location: new location})."""
    if isinstance(map_location, dict):
        location = map_location.get(location, location)
    elif map_location is not None:
        location = str(map_location)
    try:
        dev = _device_cls(location)
    except (RuntimeError, ValueError):
        raise RuntimeError(f"{what}: don't know how to restore data location {location!r}") from None
    if dev.type == "cuda":
        from reftrace_backends import cuda_is_available
        if not cuda_is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                "is False. If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU.")
    if dev.type not in ("cpu", "cuda"):
        raise RuntimeError(f"{what}: cannot load storages onto device {location!r}")
    return dev


class StorageLoader:
    """The persistent_load side: reads record ``<folder>/<key>`` once per key, checking its size
    against the size the pickle declares before reading it, and keeps it as a root tensor."""

    def __init__(self, reader, folder, map_location, byteorder, what):
        self.reader, self.folder, self.map_location = reader, folder, map_location
        self.byteorder, self.what = byteorder, what
        self.roots = {}

    def __call__(self, storage_type, key, location, numel):
        from ._tensor import _fresh
        from reftrace_backends import get_backend
        dtype = storage_type.dtype
        got = self.roots.get(key)
        if got is not None:
            if got.dtype is not dtype or got.shape_tuple[0] != numel:
                raise RuntimeError(f"{self.what}: storage {key!r} is declared twice with "
                                   "different types or sizes")
            return got
        name = f"{self.folder}/{key}"
        if "/" in key or key in ("", ".", ".."):
            raise RuntimeError(f"{self.what}: invalid storage key {key!r}")
        nbytes = numel * dtype.itemsize
        if not self.reader.has(name):
            raise RuntimeError(f"{self.what}: storage record {name!r} is missing")
        if self.reader.size_of(name) < nbytes:
            raise RuntimeError(
                f"{self.what}: storage record {name!r} holds {self.reader.size_of(name)} bytes "
                f"but is declared as {numel} elements of {dtype} ({nbytes} bytes)")
        dev = resolve_location(location, self.map_location, self.what)
        # allocated only now: the record is known to hold nbytes
        arr = np.empty(numel, dtype=dtype.np.newbyteorder("<" if self.byteorder == "little" else ">"))
        self.reader.read_into(name, arr)
        if arr.dtype != dtype.np:
            arr = arr.astype(dtype.np)
        if dev.type != "cpu":
            arr = get_backend(dev.type).from_host(arr)
        root = _fresh(arr, dtype, dev)
        self.roots[key] = root
        return root


def make_tensor(storage, storage_offset, size, stride, requires_grad, what="the file"):
    """_rebuild_tensor_v2: a view of ``storage`` (a 1-D root tensor). torch 2.13 accepts a
    tensor reaching past its storage and reads whatever memory follows; reftrace refuses."""
    from ._tensor import _view_of
    from .ops.shape import _restride
    numel = storage.shape_tuple[0]
    if all(size):
        need = storage_offset + 1 + sum((s - 1) * st for s, st in zip(size, stride))
    else:
        need = storage_offset
    if need > numel:
        raise RuntimeError(
            f"{what}: a tensor of size {list(size)}, stride {list(stride)} and storage offset "
            f"{storage_offset} needs {need} elements but its storage has {numel}")
    arr = storage._array
    start = arr[storage_offset:] if all(size) else arr[:0]
    t = _view_of(storage, _restride(start, tuple(size), tuple(stride)), tuple(stride))
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(f"{what}: a {t.dtype} tensor cannot require gradients")
        t.requires_grad = True
    return t


def make_parameter(data, requires_grad):
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    if not isinstance(data, Tensor):
        raise RuntimeError(f"_rebuild_parameter of a {type(data).__name__}, not a tensor")
    return Parameter(data, requires_grad)


def make_device(name):
    try:
        return _device_cls(name)
    except (RuntimeError, ValueError):
        raise RuntimeError(f"Weights only load failed: invalid device {name!r}") from None


def unpickle_record(reader, record, folder, map_location, byteorder, what,
                    allow_torchscript_classes=False):
    """Unpickle one record with the restricted unpickler, its storages read from ``folder``."""
    loader = StorageLoader(reader, folder, map_location, byteorder, what)
    u = Unpickler(reader.read(record), loader,
                  lambda *a: make_tensor(*a, what=what), make_parameter, make_device,
                  allow_torchscript_classes=allow_torchscript_classes, what=f"{what}: {record}")
    return u.load()


def _describe_file(f):
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file"


def load(f: "FileLike", map_location: Any = None, pickle_module: Any = None, *,
         weights_only: Optional[bool] = True, mmap: Optional[bool] = None,
         **pickle_load_args: Any) -> Any:
    """torch.load with ``weights_only=True`` (torch 2.13's default, also when None): tensors,
    state dicts, and nested containers of tensors and Python scalars from a file torch (or
    reftrace.save) wrote. ``mmap`` is accepted and ignored: storages are always read into memory
    (a mapped file changed under the loader would crash it)."""
    if weights_only is False:  # None is torch 2.13's default, which means True
        raise RuntimeError(
            "reftrace.load reads only what torch.load(weights_only=True) reads: weights_only=False "
            "would execute the file's pickle (arbitrary code). Load such files with torch in an "
            "environment you trust.")
    if pickle_module is not None:
        raise RuntimeError("reftrace.load reads with its own unpickler; pickle_module is not supported")
    what = _describe_file(f)
    with ZipReader(f, what) as reader:
        if reader.has("constants.pkl"):  # torch's _is_torchscript_zip
            warnings.warn("'torch.load' received a zip file that looks like a TorchScript archive "
                          "dispatching to 'torch.jit.load' (call 'torch.jit.load' directly to "
                          "silence this warning)", UserWarning, stacklevel=2)
            raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives passed "
                               "to ``torch.load``. reftrace reads TorchScript archives (as data, "
                               "never executing them) with reftrace.jit.load.")
        check_version(reader, what)
        byteorder = check_byteorder(reader, what)
        return unpickle_record(reader, "data.pkl", "data", map_location, byteorder, what)
