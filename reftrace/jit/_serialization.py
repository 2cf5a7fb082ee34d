"""TorchScript archives: torch.jit.save / the reading half of torch.jit.load
(torch/jit/_serialization.py; the format is torch/csrc/jit/serialization/export_module.cpp's).

An archive is a zip (reftrace/_inline_container.py) whose records sit in one top-level folder::

    extra/<name>                   the _extra_files, verbatim
    data/0, data/1 ...             storages of the tensors in data.pkl
    data.pkl                       the module object: GLOBAL __torch__.Net, NEWOBJ, BUILD with
                                   {attribute: value} (tensors, bools, None, submodule objects)
    code/__torch__.py, code/__torch__/torch/nn/modules/linear.py, ...
                                   each class (and free function) as torch's Python printer writes
                                   it, one file per Python module of the class's qualified name
    constants/0 ...                storages of the tensors in constants.pkl
    constants.pkl                  a tuple: the CONSTANTS.c0, c1 ... the code refers to
    version                        "3\\n" (more when an op with an upgrader is used: div -> 4)
    byteorder                      "little"
    .data/serialization_id         a 40-digit id

Reading is data only: the pickles go through the restricted unpickler (TorchScript classes come
back as ``ArchivedObject``s, never as Python classes) and the code is returned as text for a
front end that parses it (``ast``) and never executes it.
"""
from .._inline_container import ZipReader
from .._weights_only_unpickler import ArchivedObject
from .. import serialization as _ser

__all__ = ["Archive", "ArchivedObject", "read_torchscript_archive"]


class Archive:
    """What a TorchScript archive holds, as data.

    ``data``       the root object from data.pkl: an ``ArchivedObject(qualified_name, state)``
                   (``qualified_name`` such as ``'__torch__.Net'`` or
                   ``'__torch__.torch.nn.modules.linear.Linear'``; ``state`` maps attribute names to
                   tensors, numbers, bools, None, strings, lists/tuples/dicts, ArchivedObjects);
    ``constants``  the tuple from constants.pkl (``CONSTANTS.c<i>`` is ``constants[i]``);
    ``code``       {path inside the archive, e.g. ``'code/__torch__/x.py'``: source text};
    ``extra``      {name: bytes} for the ``extra/`` records that were asked for, or all of them
                   when ``_extra_files`` is None;
    ``version``    the archive's file format version (an int, 1..10);
    ``name``       the archive's top-level folder name.
    """

    def __init__(self, data, constants, code, extra, version, name):
        self.data, self.constants, self.code = data, constants, code
        self.extra, self.version, self.name = extra, version, name

    def source_for(self, qualified_name):
        """The code file that defines ``qualified_name`` (``__torch__.a.b.C`` is in
        ``code/__torch__/a/b.py``), or None."""
        qualifier = qualified_name.rpartition(".")[0]
        return self.code.get("code/" + qualifier.replace(".", "/") + ".py")

    def __repr__(self):
        return (f"<Archive {self.name!r} version={self.version} root={self.data!r} "
                f"{len(self.constants)} constants, {len(self.code)} code files>")


def read_torchscript_archive(f, map_location=None, _extra_files=None):
    """Read a TorchScript archive (written by torch.jit.save or reftrace.jit.save) as data.

    ``f`` is a path, a binary file object or bytes. ``map_location`` is as torch.jit.load's
    (None, a device or string, or a dict {saved location: new location}). ``_extra_files``, if
    a dict, is filled in place with the bytes of the named ``extra/`` records, ``b''`` for a
    name the archive lacks (as torch does).

    Every problem with an untrusted file (not a zip, truncated, path traversal in names, storages
    shorter than their tensors, declared sizes larger than the file, pickle globals or opcodes
    outside torch's format, an unsupported version) is a RuntimeError naming it; nothing is
    imported, executed or written.
    """
    what = _ser._describe_file(f)
    with ZipReader(f, what) as reader:
        return _read(reader, what, map_location, _extra_files)


def _read(reader, what, map_location, _extra_files):
    if not reader.has("data.pkl"):
        raise RuntimeError(f"{what} is not a TorchScript archive: it has no data.pkl record")
    if not reader.has("constants.pkl") or not any(n.startswith("code/") for n in reader.names()):
        raise RuntimeError(f"{what} is not a TorchScript archive (no constants.pkl or code/): "
                           "a file written by torch.save is read with reftrace.load")
    version = _ser.check_version(reader, what)
    byteorder = _ser.check_byteorder(reader, what)
    constants = _ser.unpickle_record(reader, "constants.pkl", "constants", map_location, byteorder,
                                     what, allow_torchscript_classes=True)
    if not isinstance(constants, tuple):
        raise RuntimeError(f"{what}: constants.pkl holds a {type(constants).__name__}, not a tuple")
    data = _ser.unpickle_record(reader, "data.pkl", "data", map_location, byteorder, what,
                                allow_torchscript_classes=True)
    if not isinstance(data, ArchivedObject):
        raise RuntimeError(f"{what}: data.pkl holds a {type(data).__name__}, not a TorchScript "
                           "module object")
    code = {}
    for name in reader.names():
        if name.startswith("code/") and name.endswith(".py"):
            code[name] = reader.read_text(name)
    extra = {}
    wanted = None if _extra_files is None else list(_extra_files)
    for name in reader.names():
        if name.startswith("extra/"):
            key = name[len("extra/"):]
            if wanted is None or key in wanted:
                extra[key] = reader.read(name)
    if _extra_files is not None:
        for key in wanted:  # torch gives a name the archive lacks b''
            _extra_files[key] = extra.get(key, b"")
    return Archive(data, constants, code, extra, version, reader.prefix.rstrip("/"))
