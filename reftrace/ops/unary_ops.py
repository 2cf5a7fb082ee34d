"""exp2, erf, erfc (ATen/native/UnaryOps.cpp): integer and bool inputs compute in the default
float dtype; float16 in float32 and float32 in float64, rounded once (as pointwise_math.py).

NumPy has no erf: math.erf / math.erfc per element (correctly rounded in float64), vectorised
with np.frompyfunc, so these are slower than the other pointwise ops.
"""
import math

import numpy as np

from ._iter import pointwise_result
from ._pointwise_helpers import float_of
from ._registry import derivatives, op
from .arithmetic import dispatch_check, inplace, quiet
from .pointwise_math import _WIDER

_FM = ("function", "method")
_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _float_kernel(fn, kernel_name=None):
    @quiet
    def kernel(self):
        dt = float_of(self.dtype)
        if kernel_name is not None:
            dispatch_check(kernel_name, "f")(dt)
        wide = _WIDER.get(dt, dt.np)
        arr = np.asarray(fn(self._array.astype(wide, copy=False)), dtype=wide)
        return pointwise_result(arr.astype(dt.np, copy=False), dt, self.device, (self,))
    return kernel


exp2 = op("exp2(Tensor self) -> Tensor", variants=_FM)(_float_kernel(np.exp2))
derivatives(exp2, {"self": "grad * result.conj() * M_LN2"})
exp2_ = op("exp2_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(exp2.kernel))

erf = op("erf(Tensor self) -> Tensor", variants=_FM)(_float_kernel(_ERF, "erf_vml_cpu"))
derivatives(erf, {"self": "2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad"})
erf_ = op("erf_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(erf.kernel))

erfc = op("erfc(Tensor self) -> Tensor", variants=_FM)(_float_kernel(_ERFC, "erfc_vml_cpu"))
derivatives(erfc, {"self": "-2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad"})
erfc_ = op("erfc_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(erfc.kernel))
