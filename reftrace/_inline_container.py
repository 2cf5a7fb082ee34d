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
    """The records of one torch zip archive, by name relative to its top-level folder.

    The file is read record by record (a path is opened and kept open until ``close()``): a
    storage is read straight into the array that will hold it, one copy from the file, as torch's
    reader does."""

    def __init__(self, f, what="the file"):
        self.what = what
        self._own = None
        if isinstance(f, (str, os.PathLike)):
            self.fh = self._own = open(f, "rb")
        elif isinstance(f, (bytes, bytearray, memoryview)):
            self.fh = io.BytesIO(bytes(f))
        elif hasattr(f, "read") and getattr(f, "seekable", lambda: hasattr(f, "seek"))():
            self.fh = f
        elif hasattr(f, "read"):  # a stream (a pipe): the zip directory is at its end
            data = f.read()
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError("the file object must be opened in binary mode")
            self.fh = io.BytesIO(bytes(data))
        else:
            raise TypeError(f"expected a path or a binary file object, got {type(f).__name__}")
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self):
        what = self.what
        start = self.fh.seek(0, io.SEEK_CUR)
        self.size = self.fh.seek(0, io.SEEK_END) - start
        self.fh.seek(start)
        magic = self.fh.read(4)
        self.fh.seek(start)
        if not isinstance(magic, bytes):
            raise TypeError("the file object must be opened in binary mode")
        if magic != b"PK\x03\x04":
            if magic[:1] == b"\x80":
                raise RuntimeError(
                    f"{what} is in torch's legacy (non-zip) format, which reftrace does not read: "
                    "the legacy format needs pickle's full object model. Re-save it with torch "
                    "(torch.save(torch.load(path), path) in an environment you trust).")
            raise RuntimeError(f"{what} is not a torch zip archive (it does not start with a zip "
                               "local file header)")
        try:
            self.zip = zipfile.ZipFile(self.fh)
            infos = self.zip.infolist()
        except Exception as exc:  # zipfile raises many types for damaged directories
            raise _zip_error(what, exc) from None
        if not infos:
            raise RuntimeError(f"{what} is an empty zip archive")
        self.prefix = self._check_names(infos)
        self.infos = {i.filename[len(self.prefix):]: i for i in infos}

    def close(self):
        if self._own is not None:
            self._own.close()
            self._own = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

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

    def _info(self, name, expected_size):
        info = self.infos.get(name)
        if info is None:
            raise RuntimeError(f"{self.what} has no record {name!r}")
        if expected_size is not None and info.file_size < expected_size:
            raise RuntimeError(f"{self.what}: record {name!r} holds {info.file_size} bytes but "
                               f"{expected_size} are needed")
        return info

    def read(self, name, expected_size=None):
        """The bytes of record ``name``; ``expected_size`` (if given) is checked against the
        directory before reading, so a forged size never allocates."""
        info = self._info(name, expected_size)
        try:
            return self.zip.read(info)
        except Exception as exc:
            raise _zip_error(f"{self.what} (record {name!r})", exc) from None

    def read_into(self, name, out):
        """Fill the writable NumPy array ``out`` with the first ``out.nbytes`` bytes of record
        ``name``: for a stored record (torch stores storages uncompressed) straight from the
        file, with no intermediate copy and no CRC pass (torch's reader does not check it
        either; sizes are checked, contents are data)."""
        nbytes = out.nbytes
        info = self._info(name, nbytes)
        if info.compress_type != zipfile.ZIP_STORED or not hasattr(self.fh, "readinto"):
            out.reshape(-1).view("u1")[:] = memoryview(self.read(name))[:nbytes]
            return
        self.fh.seek(info.header_offset)
        header = self.fh.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"{self.what}: record {name!r} has no valid local header")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        local_name = self.fh.read(name_len)
        if local_name.decode("utf-8", "replace") != info.filename and \
                local_name.decode("cp437") != info.filename:
            raise RuntimeError(f"{self.what}: record {name!r}'s local header names {local_name!r}")
        start = info.header_offset + 30 + name_len + extra_len
        if start + nbytes > self.size:
            raise RuntimeError(f"{self.what}: record {name!r} runs past the end of the file")
        self.fh.seek(start)
        got = self.fh.readinto(memoryview(out.reshape(-1)).cast("B"))
        if got != nbytes:
            raise RuntimeError(f"{self.what}: record {name!r} is truncated")

    def read_text(self, name):
        data = self.read(name)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise RuntimeError(f"{self.what}: record {name!r} is not UTF-8 text") from None


def archive_name(f, default="archive"):
    """torch names the top-level folder after the file's stem (``model.pt`` -> ``model``)."""
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        return stem or default
    return default


class ZipWriter:
    """Collects records (bytes, or buffers such as a storage's memory, not copied), then writes
    them in the order given, as torch's writer does, straight into the target file."""

    def __init__(self, name):
        self.name = name
        self.records = []

    def write(self, record, data, compress=False):
        self.records.append((record, data, compress))

    def _write_to(self, fh):
        with zipfile.ZipFile(fh, "w") as z:
            for record, data, compress in self.records:
                info = zipfile.ZipInfo(f"{self.name}/{record}", date_time=(1980, 1, 1, 0, 0, 0))
                info.create_system = 0
                if compress:
                    info.compress_type = zipfile.ZIP_DEFLATED
                else:
                    info.compress_type = zipfile.ZIP_STORED
                    info.extra = _padding(fh.tell(), len(info.filename.encode("utf-8")))
                z.writestr(info, data)

    def to_bytes(self):
        buf = io.BytesIO()
        self._write_to(buf)
        return buf.getvalue()

    def save(self, f):
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as fh:
                self._write_to(fh)
        elif getattr(f, "seekable", lambda: False)():
            self._write_to(f)
        else:  # a stream: assemble in memory (the zip directory needs offsets)
            f.write(self.to_bytes())


def _padding(offset, name_len):
    """An extra field ('FB', as torch's writer) that puts the record's data on a 64-byte
    boundary: the local header is 30 bytes + name + extra."""
    start = offset + 30 + name_len + 4
    pad = (-start) % ALIGNMENT
    return b"FB" + struct.pack("<H", pad) + b"Z" * pad

