"""torch's zip container (caffe2/serialize/inline_container.cc: PyTorchStreamReader/Writer).

Every torch file (torch.save's and torch.jit.save's) is a zip archive whose entries all live in
one top-level folder (``archive/data.pkl``, ``archive/data/0`` ...). The writer stores records
uncompressed and pads each local header so that the data starts on a 64-byte boundary (torch
mmaps storages from there). The reader treats the file as untrusted: every problem the zip
layer can have (truncation, a corrupted directory, bad CRCs, names with ``..``, duplicate
names, entries claiming more bytes than the file holds, decompression bombs) becomes a
``RuntimeError`` naming it, before anything of the claimed size is allocated.
"""
import io
import os
import struct
import zipfile

ALIGNMENT = 64
# deflate cannot expand data more than ~1032x: an entry claiming more is forged
_MAX_DEFLATE_RATIO = 1100


def _zip_error(where, exc):
    return RuntimeError(f"{where} is not a valid torch zip archive ({type(exc).__name__}: {exc}); "
                        "the file is truncated or corrupted")


class ZipReader:
    """The records of one torch zip archive, by name relative to its top-level folder."""

    def __init__(self, f, what="the file"):
        self.what = what
        data = _read_all(f)
        if not data.startswith(b"PK\x03\x04"):
            if data[:2] == b"\x80\x02" or data[:1] == b"\x80":
                raise RuntimeError(
                    f"{what} is in torch's legacy (non-zip) format, which reftrace does not read: "
                    "the legacy format needs pickle's full object model. Re-save it with torch "
                    "(torch.save(torch.load(path), path) in an environment you trust).")
            raise RuntimeError(f"{what} is not a torch zip archive (it does not start with a zip "
                               "local file header)")
        self.size = len(data)
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self.zip.infolist()
        except Exception as exc:  # zipfile raises many types for damaged directories
            raise _zip_error(what, exc) from None
        if not infos:
            raise RuntimeError(f"{what} is an empty zip archive")
        self.prefix = self._check_names(infos)
        self.infos = {i.filename[len(self.prefix):]: i for i in infos}

    def _check_names(self, infos):
        names = [i.filename for i in infos]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise RuntimeError(f"{self.what} has two entries named {dup!r}")
        prefix = names[0].split("/", 1)[0] + "/"
        for i in infos:
            n = i.filename
            parts = n.split("/")
            if (n.startswith("/") or "\\" in n or "\x00" in n or ".." in parts or ":" in parts[0]
                    or "" in parts[:-1]):
                raise RuntimeError(f"{self.what} has an unsafe entry name {n!r} (absolute path or "
                                   "'..'); refusing to read it")
            if not n.startswith(prefix) or n == prefix:
                raise RuntimeError(f"{self.what}: entry {n!r} is outside the archive's top-level "
                                   f"folder {prefix!r}")
            if i.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise RuntimeError(f"{self.what}: entry {n!r} uses unsupported compression "
                                   f"method {i.compress_type}")
            if i.file_size < 0 or i.compress_size > self.size or i.header_offset > self.size:
                raise RuntimeError(f"{self.what}: entry {n!r} claims more bytes than the file has")
            if i.compress_type == zipfile.ZIP_STORED and i.file_size != i.compress_size:
                raise RuntimeError(f"{self.what}: stored entry {n!r} has inconsistent sizes")
            if i.compress_type == zipfile.ZIP_DEFLATED and \
                    i.file_size > _MAX_DEFLATE_RATIO * max(i.compress_size, 1):
                raise RuntimeError(f"{self.what}: entry {n!r} claims {i.file_size} bytes from "
                                   f"{i.compress_size} compressed bytes (a decompression bomb)")
        return prefix

    def has(self, name):
        return name in self.infos

    def names(self):
        return list(self.infos)

    def size_of(self, name):
        return self.infos[name].file_size

    def read(self, name, expected_size=None):
        """The bytes of record ``name``; ``expected_size`` (if given) is checked against the
        directory before reading, so a forged size never allocates."""
        info = self.infos.get(name)
        if info is None:
            raise RuntimeError(f"{self.what} has no record {name!r} (is it a "
                               f"{'TorchScript archive' if name == 'constants.pkl' else 'torch file'}?)")
        if expected_size is not None and info.file_size < expected_size:
            raise RuntimeError(f"{self.what}: record {name!r} holds {info.file_size} bytes but "
                               f"{expected_size} are needed")
        try:
            return self.zip.read(info)
        except Exception as exc:
            raise _zip_error(f"{self.what} (record {name!r})", exc) from None

    def read_text(self, name):
        data = self.read(name)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise RuntimeError(f"{self.what}: record {name!r} is not UTF-8 text") from None


def _read_all(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read()
    if isinstance(f, (bytes, bytearray, memoryview)):
        return bytes(f)
    if not hasattr(f, "read"):
        raise TypeError(f"expected a path or a binary file object, got {type(f).__name__}")
    data = f.read()
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("the file object must be opened in binary mode")
    return bytes(data)


def archive_name(f, default="archive"):
    """torch names the top-level folder after the file's stem (``model.pt`` -> ``model``)."""
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        return stem or default
    return default


class ZipWriter:
    """Collects records, then writes them (in the order given) as torch's writer does."""

    def __init__(self, name):
        self.name = name
        self.records = []

    def write(self, record, data, compress=False):
        self.records.append((record, bytes(data), compress))

    def to_bytes(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for record, data, compress in self.records:
                info = zipfile.ZipInfo(f"{self.name}/{record}", date_time=(1980, 1, 1, 0, 0, 0))
                info.create_system = 0
                if compress:
                    info.compress_type = zipfile.ZIP_DEFLATED
                else:
                    info.compress_type = zipfile.ZIP_STORED
                    info.extra = _padding(buf.tell(), len(info.filename.encode("utf-8")))
                z.writestr(info, data)
        return buf.getvalue()

    def save(self, f):
        data = self.to_bytes()
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as fh:
                fh.write(data)
        else:
            f.write(data)


def _padding(offset, name_len):
    """An extra field ('FB', as torch's writer) that puts the record's data on a 64-byte
    boundary: the local header is 30 bytes + name + extra."""
    start = offset + 30 + name_len + 4
    pad = (-start) % ALIGNMENT
    return b"FB" + struct.pack("<H", pad) + b"Z" * pad

