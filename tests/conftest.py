import os
import sys

# The configuration reftrace models (spec PLAT-1): torch's AVX2 kernels and NumPy's baseline
# (glibc-equivalent) float64 transcendentals. On a CPU with AVX512, torch would otherwise pick
# its AVX512 kernels (other vector splits and FMA contractions) and NumPy its AVX512 exp/log/...
# (last-bit differences from glibc's): both read these variables once, at import, which is
# after this file runs (pytest loads conftest.py before any test module imports them).
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
if "numpy" in sys.modules or "torch" in sys.modules:  # pragma: no cover - a plugin imported them
    import warnings
    warnings.warn("numpy or torch was imported before tests/conftest.py: the CPU configuration "
                  "of spec PLAT-1 may not apply")

# the tests run against the checkout (also when reftrace is installed elsewhere)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
