"""``reftrace.jit.load``: torch.jit.load (torch/jit/_serialization.py) without torch.

The archive's files are read by ``_serialization.read_torchscript_archive`` (a restricted
unpickler: tensors, the module tree, no code); its ``code/`` sources are parsed (``ast``, never
executed) into class types by ``_import_source.py``, whose methods ``_ir_emitter.py`` turns into
graphs when first used; the module tree becomes ``RecursiveScriptModule``s (``_script.py``).
"""
from typing import Any

from ._import_source import SourceImporter
from ._script import build_module


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> Any:
    """Load a TorchScript archive written by ``torch.jit.save`` (or ``reftrace.jit.save``) of a
    traced function or module. ``f``: a path or a binary file object; ``_extra_files``: a dict
    whose keys name files of the archive's ``extra/`` folder, filled in with their contents."""
    from ._serialization import ArchivedObject, read_torchscript_archive
    archive = read_torchscript_archive(f, map_location=map_location, _extra_files=_extra_files)
    return module_from_archive(archive, ArchivedObject)


def module_from_archive(archive, archived_object_type):
    root = archive.data
    if not isinstance(root, archived_object_type):
        raise RuntimeError("archive is not a TorchScript module: its data.pkl holds a "
                           f"{type(root).__name__}, not a module object")
    importer = SourceImporter(archive.code, archive.constants)
    return build_module(importer, root, archived_object_type)
