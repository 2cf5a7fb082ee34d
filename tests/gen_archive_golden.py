"""Write torch 2.13's TorchScript archives of the archive programs (tests/archive_programs.py),
and torch.save's file of archive_programs.saved_object (torch_save.pt).

    python tests/gen_archive_golden.py                 # the GOLDEN subset -> tests/data/archives/
    python tests/gen_archive_golden.py --out DIR --all # every program -> DIR (what the tests use)

Class and function names that already exist in torch's process-wide compilation unit are
mangled (``___torch_mangle_N``), so an archive's text depends on what the process traced before.
Each program is therefore traced in its own fresh process: torch is imported once, and a child
forked per program (cheap) traces and saves it. reftrace's side of the comparison uses a fresh
compilation unit per program likewise (tests/test_jit_save.py).
"""
import io
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _save_in_child(torch, program, path):
    pid = os.fork()
    if pid == 0:  # the child: a compilation unit that has seen nothing
        code = 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                traced, _ = program.trace(torch)
                buf = io.BytesIO()
                torch.jit.save(traced, buf)
            with open(path, "wb") as f:
                f.write(buf.getvalue())
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise RuntimeError(f"torch could not trace and save {program.name}")


def write_archives(names, out_dir):
    import torch
    import archive_programs
    assert torch.__version__.startswith("2.13"), torch.__version__
    torch.set_num_threads(1)
    programs = archive_programs.all_programs()
    os.makedirs(out_dir, exist_ok=True)
    for key, name in names.items():
        _save_in_child(torch, programs[name], os.path.join(out_dir, key + ".pt"))
    # torch.save's format: the object of every kind test_serialization.py checks
    torch.save(archive_programs.saved_object(torch), os.path.join(out_dir, "torch_save.pt"))


def file_key(name):
    return name.replace("/", "__").replace(".", "_").replace(":", "__")


if __name__ == "__main__":
    import archive_programs
    if "--all" in sys.argv:
        names = {file_key(n): n for n in archive_programs.all_programs()}
    else:
        names = dict(archive_programs.GOLDEN)
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else \
        os.path.join(HERE, "data", "archives")
    write_archives(names, out)
    print("wrote", len(names), "archives to", out)
