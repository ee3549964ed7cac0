"""Convolutions whose filters are a windowed Fourier basis, computed in the radix-2 form of
the STFT (spectral.radix2_spectrum: half the multiply-adds of the direct product).

Audio front ends exported from PyTorch (torch.stft written out as a Conv1d, Whisper's and
NeMo's log-mel preprocessors, openWakeWord's melspectrogram) convolve the signal with rows
w(t) cos(2 pi k t / N) and w(t) sin(2 pi k t / N). The filter is recognized from its values:
every row must be +- one of those for a single window w (the all-positive k = 0 cosine row),
N the kernel length and integer bins k, within float32 rounding; otherwise, or when the
geometry does not fit (several input channels, groups, dilation, an odd stride or kernel),
the convolution is imported as it is. The rewrite is the same linear map summed in another
order (like Winograd convolutions): results move by float32 rounding of the spectrum's
magnitude, far inside the ONNX tolerance.
"""

import numpy as np

from .spectral import radix2_rows, radix2_spectrum

# Rows must match their basis row to this fraction of max |w|: float32 bases computed in
# float32 (torch) or double (numpy) agree far closer; anything else is not a Fourier bank.
_MATCH = 2e-5
_MAX_RUNS = 8  # output channels as at most this many strided runs of the spectrum


# Longest transform tried for frames of K samples: MAX_PADDING x K.
MAX_PADDING = 4


def fourier_bank(weight, known_windows=()):
    """For a [C, K] filter: (window [K] float64, indices [C], coefficients [C]) such that
    row r = coefficient[r] * spectrum part index[r] (2 k + 0 for w cos, 2 k + 1 for -w sin,
    the layout of radix2_spectrum), or None. The window is the filter's all-positive row (the
    k = 0 cosine) or, for a bank of sines alone, one of `known_windows` (of the banks found
    before it in the model)."""
    rows, size = weight.shape
    if size < 16 or size % 2 or rows < 2:
        return None
    f = weight.astype(np.float64)
    scale = float(np.max(np.abs(f)))
    if not np.isfinite(scale) or scale == 0.0:
        return None
    positive = np.all(f >= -_MATCH * scale, axis=1) & np.any(f > _MATCH * scale, axis=1)
    windows = [w for w in known_windows if w.shape == (size,)]
    if positive.any():
        windows.insert(0, f[np.argmax(np.where(positive, np.sum(f * f, axis=1), -1.0))])
    for window in windows:
        found = _match(f, window)
        if found is not None:
            return found
    return None


def _match(f, window):
    rows, size = f.shape
    peak = float(np.max(np.abs(window)))
    bins = size // 2 + 1
    k = np.arange(bins)[:, None]
    theta = 2 * np.pi * ((k * np.arange(size)[None, :]) % size) / size
    basis = np.concatenate([window * np.cos(theta), -window * np.sin(theta)])  # [2 bins, K]
    index_of = np.concatenate([2 * np.arange(bins), 2 * np.arange(bins) + 1])
    norms = np.sum(basis * basis, axis=1)
    live = norms > (_MATCH * peak) ** 2 * size
    dots = f @ basis.T
    # The match is the basis row most parallel to the filter row (|cosine| 1; windowed basis
    # rows are not orthogonal, so a projection alone can prefer a neighbour), then its
    # least-squares coefficient must be +-1.
    row_norms = np.sqrt(np.sum(f * f, axis=1))[:, None]
    cosine = dots / np.maximum(row_norms * np.sqrt(norms)[None, :], 1e-300)
    cosine[:, ~live] = 0.0
    best = np.argmax(np.abs(cosine), axis=1)
    coef = dots / np.where(live, norms, 1.0)
    sign = np.sign(coef[np.arange(rows), best])
    zero_rows = np.max(np.abs(f), axis=1) <= _MATCH * peak
    sign[zero_rows] = 1.0
    best[zero_rows] = bins  # -w sin(0) = 0: the imaginary part of bin 0, exactly zero
    if np.any(np.abs(np.abs(coef[np.arange(rows), best]) - 1.0)[~zero_rows] > 1e-3):
        return None
    error = np.max(np.abs(f - sign[:, None] * basis[best]))
    if error > _MATCH * peak:
        return None
    return window, index_of[best], sign


def _has_window_column(weight):
    """Whether some column of a [K, C] weight is all >= 0 and not all 0 (fourier_bank's test
    for its window row, zero padding aside, which changes neither)."""
    scale = float(np.max(np.abs(weight))) if weight.size else 0.0
    if not np.isfinite(scale) or scale == 0.0:
        return False
    tol = _MATCH * scale
    return bool(np.any(np.all(weight >= -tol, axis=0) & np.any(weight > tol, axis=0)))


def _usable_bank(rows, known_windows):
    """fourier_bank's answer with its indices as strided runs, or None when it is not a bank
    or its outputs would take more than _MAX_RUNS slices."""
    bank = fourier_bank(rows, known_windows)
    if bank is None:
        return None
    window, indices, coefficients = bank
    runs = _runs(indices)
    return None if len(runs) > _MAX_RUNS else (window, runs, coefficients)


def _runs(indices):
    """The indices as (start, count, step) runs, each a strided slice."""
    runs, r = [], 0
    while r < len(indices):
        step = int(indices[r + 1] - indices[r]) if r + 1 < len(indices) else 1
        count = 1
        if step > 0:
            while r + count < len(indices) and indices[r + count] - indices[r + count - 1] == step:
                count += 1
        else:
            step = 1
        runs.append((int(indices[r]), count, step))
        r += count
    return runs


def fourier_conv(n, x, weight, strides, dilations, begin, end, groups, bias):
    """The Conv of x [B, 1, L] or [B, 1, 1, L] with constant weight [C, 1, (1,) K] in the
    radix-2 form, or None when it is not a Fourier bank convolution that form computes."""
    bl = n.b
    xshape = bl.operand_shape(x)
    rank = len(xshape)
    if rank not in (3, 4) or groups != 1 or xshape[1] != 1 or n.dtype(0) != "float32":
        return None
    if any(not isinstance(d, int) for d in xshape):
        return None
    if rank == 4 and (weight.shape[2] != 1 or xshape[2] != 1 or strides[0] != 1):
        return None
    if weight.shape[1] != 1 or any(d != 1 for d in dilations) or any(begin[:-1]) or any(end[:-1]):
        return None
    step, size = strides[-1], weight.shape[-1]
    if step % 2:
        return None
    length = xshape[-1] + begin[-1] + end[-1]
    if length < size or weight.shape[0] < 2:
        return None
    cache = n.importer.__dict__.setdefault("_fourier_spectra", {})
    known = [entry[2] for entry in cache.values()]
    bank = _usable_bank(weight.reshape(weight.shape[0], size), known)
    if bank is None:
        return None
    window, runs, coefficients = bank
    batch = xshape[0]
    signal = bl.reshape(x, [batch, xshape[-1]])
    if begin[-1] or end[-1]:
        signal = bl.pad(signal, [0, begin[-1]], [0, end[-1]])
    # The spectrum of one signal and window serves every bank convolution of it (openWakeWord
    # convolves with the cosine and the sine rows separately): made once per import.
    key = (id(x), batch, length, size, step, begin[-1], end[-1], window.tobytes())
    if key not in cache:
        spectrum = radix2_spectrum(n, signal, batch, length, size, step, window, np.float32)
        frames = bl.operand_shape(spectrum)[1]
        flat = bl.reshape(spectrum, [batch, frames, 2 * (size // 2 + 1)])
        # x is kept alive so that its id stays unique.
        cache[key] = (x, bl.transpose(flat, [0, 2, 1]), window)
    y = _select(n, cache[key][1], 1, runs, coefficients)  # [B, C, frames]
    if bias is not None:
        y = bl.add(y, bl.reshape(bias, [weight.shape[0], 1]))
    if rank == 4:
        y = bl.reshape(y, [batch, weight.shape[0], 1, bl.operand_shape(y)[2]])
    return y


def _select(n, spectrum, axis, runs, coefficients):
    """The bank's outputs from the spectrum's (re, im) parts along `axis`: strided slices,
    joined, times the rows' signs."""
    bl = n.b
    shape = bl.operand_shape(spectrum)
    parts = []
    for start, count, step in runs:
        starts, sizes, strides = [0] * len(shape), list(shape), [1] * len(shape)
        starts[axis], sizes[axis], strides[axis] = start, (count - 1) * step + 1, step
        parts.append(bl.slice(spectrum, starts, sizes, strides=strides))
    y = parts[0] if len(parts) == 1 else bl.concat(parts, axis)
    if np.any(coefficients != 1.0):
        signs = coefficients.astype(np.float32).reshape([-1] + [1] * (len(shape) - 1 - axis))
        y = bl.mul(y, n.importer.operand(signs))
    return y


def fourier_matmul(n, a, weight):
    """MatMul of frames a [..., K] with a constant [K, C] whose columns are a windowed Fourier
    basis (an STFT whose frames the model cut itself) in the radix-2 form, or None."""
    bl = n.b
    shape = bl.operand_shape(a)
    if n.dtype(0) != "float32" or weight.ndim != 2 or len(shape) < 2:
        return None
    if any(not isinstance(d, int) for d in shape) or shape[-1] != weight.shape[0]:
        return None
    taps, columns = weight.shape
    cache = n.importer.__dict__.setdefault("_fourier_spectra", {})
    known = [entry[2] for entry in cache.values()]
    if not known and not _has_window_column(weight):
        # No column can be the window (the k = 0 cosine) and no bank came before: not a bank.
        # Checked on the weight as it is, before the zero-padded float64 copies below, which
        # for a classifier's [480, 6906] product (PP-OCRv6 rec) are 0.8 GB each and took 1.9
        # of its 2.2 s import.
        return None
    # The transform length N is the frame's K, or longer when the frames are zero-padded to N
    # (a 400-sample frame in a 512-point transform): the basis rows' count tells N then.
    bank = None
    for size in dict.fromkeys([taps, 2 * (columns - 1), 2 * (columns // 2 - 1)]):
        # Frames are zero-padded by a little (400 samples in a 512-point transform), never to
        # many times their length: a classifier's [120, 18710] weight would otherwise be
        # tried as 120-sample frames in a 37,418-point transform (a 5.6 GB basis, 16 GB of
        # import for PP-OCRv5's recognizer).
        if size < taps or size % 2 or size > MAX_PADDING * taps:
            continue
        rows = np.zeros((columns, size), np.float64)
        rows[:, :taps] = weight.T
        bank = _usable_bank(rows, known)
        if bank is not None:
            break
    if bank is None:
        return None
    window, runs, coefficients = bank
    key = ("rows", id(a), size, window.tobytes())
    if key not in cache:
        frames = a
        if size > taps:
            frames = bl.pad(a, [0] * len(shape), [0] * (len(shape) - 1) + [size - taps])
        spectrum = radix2_rows(n, frames, size, window, np.float32)
        flat = bl.reshape(spectrum, shape[:-1] + [2 * (size // 2 + 1)])
        cache[key] = (a, flat, window)  # a is kept alive so that its id stays unique
    return _select(n, cache[key][1], len(shape) - 1, runs, coefficients)
