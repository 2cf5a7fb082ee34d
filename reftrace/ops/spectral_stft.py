"""aten::stft and aten::istft (SpectralOps.cpp, CompositeImplicitAutograd): frames of the signal, windowed, one
FFT per frame. torch.stft's ``center`` padding is torch/functional.py's (reftrace/functional.py).

    input (B?, L) -> frames (B, n_frames, n_fft)   an as_strided view: frame t starts at t * hop
                  -> * window (zero-padded on both sides from win_length to n_fft)
                  -> _fft_r2c / _fft_c2c over the last dim (normalized: by 1/sqrt(n_fft))
                  -> (B?, n_freq, n_frames) by a transpose; view_as_real unless return_complex.
"""
import numpy as np

from .. import _dtype as D
from .._frames import warn_at_caller
from .._tensor import _fresh, _strided
from ._decomposed import decomposed
from ._registry import composite, get_packet, op

_WARNED = {"window": False, "real": False, "iwindow": False, "ilength": False}


def _warn_once(key, message):
    if not _WARNED[key]:  # TORCH_WARN_ONCE: once per process
        _WARNED[key] = True
        warn_at_caller(message)


def _repr(self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex,
          align_to_window):
    """SpectralOps.cpp's REPR: the call as torch prints it, before each check's message."""
    def opt(v):
        return "None" if v is None else str(int(v))
    win = "None" if window is None else f"{window.type()}{{[{', '.join(map(str, window.shape))}]}}"
    return (f"stft({self.type()}[{', '.join(map(str, self.shape))}], n_fft={n_fft}, "
            f"hop_length={hop_length}, win_length={win_length}, window={win}, "
            f"normalized={int(normalized)}, onesided={opt(onesided)}, "
            f"return_complex={opt(return_complex)}, align_to_window={opt(align_to_window)}) : ")


@decomposed("stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, "
            "Tensor? window=None, bool normalized=False, bool? onesided=None, "
            "bool? return_complex=None, bool? align_to_window=None) -> Tensor",
            variants=())
def stft(self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex,
         align_to_window):
    if window is None:
        _warn_once("window", "A window was not provided. A rectangular window will be applied,"
                   "which is known to cause spectral leakage. Other windows such as "
                   "torch.hann_window or torch.hamming_window are recommended to reduce spectral "
                   "leakage.To suppress this warning and use a rectangular window, explicitly set "
                   "`window=torch.ones(n_fft, device=<device>)`.")
    complex_out = return_complex if return_complex is not None else (
        self.dtype.is_complex or (window is not None and window.dtype.is_complex))
    if not complex_out:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        _warn_once("real", "stft with return_complex=False is deprecated. In a future pytorch "
                   "release, stft will return complex tensors for all inputs, and "
                   "return_complex=False will raise an error.\nNote: you can still call "
                   "torch.view_as_real on the complex output to recover the old return format.")
    hop = hop_length if hop_length is not None else n_fft >> 2
    win = win_length if win_length is not None else n_fft
    where = _repr(self, n_fft, hop, win, window, normalized, onesided, return_complex,
                  align_to_window)
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(where + "expected a tensor of floating point or complex values")
    if self.dim() not in (1, 2):
        raise RuntimeError(where + "expected a 1D or 2D tensor")
    input = self.unsqueeze(0) if self.dim() == 1 else self
    batch, length = input.shape[0], input.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(where + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(where + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(where + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(where + f"expected a 1D window tensor of size equal to win_length={win}, "
                           f"but got window with size [{', '.join(map(str, window.shape))}]")
    if align_to_window and win < n_fft:
        raise NotImplementedError("reftrace: stft(align_to_window=True) with win_length < n_fft "
                                  "is not implemented yet")
    window_ = window
    if win < n_fft:  # the window centred in n_fft, zeros either side
        left = (n_fft - win) // 2
        source = window if window is not None else input.new_ones([win])
        window_ = source.new_zeros([n_fft])
        window_[left:left + win] = source
    n_frames = 1 + (length - n_fft) // hop
    s0, s1 = input.stride()
    frames = input.as_strided([batch, n_frames, n_fft], [s0, hop * s1, s1],
                              input.storage_offset())
    if window_ is not None:
        frames = frames.mul(window_)
    complex_fft = frames.dtype.is_complex
    sided = onesided if onesided is not None else not complex_fft
    normalization = 1 if normalized else 0    # fft_norm_mode: by_root_n / none
    if complex_fft:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = get_packet("_fft_c2c")(frames, [frames.dim() - 1], normalization, True)
    else:
        out = get_packet("_fft_r2c")(frames, [frames.dim() - 1], normalization, sided)
    out.transpose_(1, 2)            # (in place, as torch: TransposeBackward1, SqueezeBackward4)
    if self.dim() == 1:
        out.squeeze_(0)
    return out if complex_out else _view_as_real(out)


def _view_as_real(t):
    """view_as_real's layout (real strides: twice the complex ones, then 1), as a fresh tensor:
    reftrace has no real view of complex storage; the intermediate it views is torch's own."""
    real = D.float64 if t.dtype is D.complex128 else D.float32
    a = np.stack([t._array.real, t._array.imag], -1)
    strides = [2 * s for s in t.stride()] + [1]
    order = sorted(range(a.ndim), key=lambda d: -strides[d])
    dense = np.ascontiguousarray(a.transpose(order)).transpose(np.argsort(order))
    return _strided(dense.astype(real.np), real, t.device, strides)


def _istft_repr(self, n_fft, hop, win, window, center, normalized, onesided, length,
                return_complex):
    def opt(v):
        return "None" if v is None else str(int(v))
    kind = {D.complex64: "CPUComplexFloatType", D.complex128: "CPUComplexDoubleType"}.get(
        self.dtype, self.type())
    w = "None" if window is None else f"{window.type()}{{[{', '.join(map(str, window.shape))}]}}"
    return (f"istft({kind}[{', '.join(map(str, self.shape))}], n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, center={int(center)}, normalized={int(normalized)}, "
            f"onesided={opt(onesided)}, length={opt(length)}, return_complex={int(return_complex)}) ")


def _istft_setup(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                 return_complex):
    """istft's defaults, warning and argument checks (SpectralOps.cpp), shared by the kernel and
    the decomposition autograd records: (hop, win, onesided, the message prefix)."""
    hop = hop_length if hop_length is not None else n_fft >> 2
    win = win_length if win_length is not None else n_fft
    if window is None:
        _warn_once("iwindow", "A window was not provided. A rectangular window will be applied."
                   "Please provide the same window used by stft to make the inversion lossless."
                   "To suppress this warning and use a rectangular window, explicitly set "
                   "`window=torch.ones(n_fft, device=<device>)`.")
    if not self.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    where = _istft_repr(self, n_fft, hop, win, window, center, normalized, onesided, length,
                        return_complex)
    a = self._array
    if a.size == 0:
        raise RuntimeError(where + ": input tensor cannot be empty.")
    if a.ndim not in (2, 3):
        raise RuntimeError(where + ": expected a tensor with 3 or 4 dimensions of complex values, "
                           f"but got {a.ndim + 1}")
    fft_size, n_frames = a.shape[-2], a.shape[-1]
    sided = onesided if onesided is not None else fft_size != n_fft
    if sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of the "
                           "input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not sided and n_fft != fft_size:
        raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(where + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(where + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(where + ": Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    return hop, win, sided, where


@op("istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, "
    "Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None, "
    "int? length=None, bool return_complex=False) -> Tensor", variants=("function", "method"))
def istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
          return_complex):
    """SpectralOps.cpp istft: an inverse FFT per frame, times the window, overlap-added and
    divided by the overlap-added squared window (computed here in float64, rounded once)."""
    hop, win, sided, where = _istft_setup(self, n_fft, hop_length, win_length, window, center,
                                          normalized, onesided, length, return_complex)
    a = np.asarray(self._array, dtype=np.complex128)
    fft_size, n_frames = a.shape[-2], a.shape[-1]
    w = np.ones(win) if window is None else np.asarray(window._array, dtype=np.complex128
                                                       if window.dtype.is_complex else np.float64)
    left = (n_fft - win) // 2
    w = np.pad(w, (left, n_fft - win - left))
    frames = (a[None] if a.ndim == 2 else a).transpose(0, 2, 1)      # (channel, n_frames, fft)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = np.fft.ifft(frames, axis=-1, norm=norm)
        out_dtype = self.dtype
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        frames = np.fft.irfft(frames[..., :n_fft // 2 + 1], n=n_fft, axis=-1, norm=norm)
        out_dtype = D.float64 if self.dtype is D.complex128 else D.float32
    total = n_fft + hop * (n_frames - 1)
    y = np.zeros((frames.shape[0], total), np.result_type(frames, w))
    envelope = np.zeros(total, w.dtype)
    for t in range(n_frames):
        y[:, t * hop:t * hop + n_fft] += frames[:, t] * w
        envelope[t * hop:t * hop + n_fft] += w * w
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else total)
    y, envelope = y[:, start:end], envelope[start:end]
    if (np.abs(envelope) < 1e-11).any():
        raise RuntimeError(where + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if a.ndim == 2:
        y = y[0]
    if end > total:
        _warn_once("ilength", "The length of signal is shorter than the length parameter. Result "
                   "is being padded with zeros in the tail. Please check your center and "
                   "hop_length settings.")
        y = np.concatenate([y, np.zeros(y.shape[:-1] + (end - total,), y.dtype)], -1)
    return _fresh(np.ascontiguousarray(y).astype(out_dtype.np), out_dtype, self.device)


@composite(istft)
def _istft_composite(self, n_fft, hop_length, win_length, window, center, normalized, onesided,
                     length, return_complex):
    # SpectralOps.cpp istft is CompositeImplicit: the inverse FFT of the frames, times the window,
    # overlap-added by unfold_backward, sliced and divided by the overlap-added squared window
    hop, win, sided, where = _istft_setup(self, n_fft, hop_length, win_length, window, center,
                                          normalized, onesided, length, return_complex)
    aten = get_packet
    real = D.float64 if self.dtype is D.complex128 else D.float32
    window_tmp = window if window is not None else aten("ones")([win], dtype=real)
    if win != n_fft:
        left = (n_fft - win) // 2
        window_tmp = aten("constant_pad_nd")(window_tmp, [left, n_fft - win - left], 0)
    x = aten("view_as_real")(self.resolve_conj())
    input_dim = x.dim()
    n_frames = x.shape[-2]
    if input_dim == 3:
        x = x.unsqueeze(0)
    x = aten("view_as_complex")(x.transpose(1, 2))             # (channel, n_frames, fft_size)
    norm = 1 if normalized else 2                                 # fft_norm_mode by_root_n / by_n
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = aten("_fft_c2c")(x, [x.dim() - 1], norm, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = aten("_fft_c2r")(x, [x.dim() - 1], norm, n_fft)
    total = n_fft + hop * (n_frames - 1)
    y_tmp = x * window_tmp.view(1, 1, n_fft)
    y = aten("unfold_backward")(y_tmp, [y_tmp.shape[0], total], 1, n_fft, hop)
    envelope = aten("unfold_backward")(window_tmp.pow(2).expand(1, n_frames, n_fft), [1, total], 1,
                                       n_fft, hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else total)
    y = aten("slice").Tensor(y, 1, start, end, 1)
    envelope = aten("slice").Tensor(envelope, 1, start, end, 1)
    if (np.abs(envelope._array) < 1e-11).any():
        raise RuntimeError(where + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if input_dim == 3:
        y = y.squeeze(0)
    if end > total:
        _warn_once("ilength", "The length of signal is shorter than the length parameter. Result "
                   "is being padded with zeros in the tail. Please check your center and "
                   "hop_length settings.")
        y = aten("constant_pad_nd")(y, [0, end - total], 0)
    return y
