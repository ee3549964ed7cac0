"""DFT and STFT as products with constant Fourier bases (static signal lengths)."""

import numpy as np

from .registry import op
from .util import norm_axis


def _bases(n_in, length, bins, inverse):
    k = np.arange(bins)[None, :]
    t = np.arange(n_in)[:, None]
    theta = 2 * np.pi * ((k * t) % length) / length
    return np.cos(theta), np.sin(theta)


@op("DFT")
def dft(n):
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    if n.opset >= 20:
        axis = int(n.c(2, what="axis").reshape(-1)[0]) if n.has(2) else -2
    else:
        axis = int(n.attr("axis", 1))
    axis = norm_axis(n, axis, rank)
    if axis == rank - 1:
        n.fail("the DFT axis cannot be the last (real/imaginary) axis")
    inverse, onesided = bool(n.attr("inverse", 0)), bool(n.attr("onesided", 0))
    if inverse and onesided:
        return _irfft(n, shape, axis)
    size = shape[axis]
    length = int(n.c(1, what="dft_length").reshape(-1)[0]) if n.has(1) else size
    used = min(size, length)
    bins = length // 2 + 1 if onesided else length
    dtype = n.dtype(0)
    npd = np.float16 if dtype == "float16" else np.float32
    x = n.x(0)
    # [..., n, c] -> parts [..., c] moved so that the signal axis is last
    perm = [a for a in range(rank - 1) if a != axis] + [axis]
    parts = []
    for c in range(shape[-1]):
        p = bl.slice(x, [0] * (rank - 1) + [c], shape[:-1] + [1])
        p = bl.reshape(p, shape[:-1])
        p = bl.transpose(p, perm)
        if used < size:
            ps = bl.operand_shape(p)
            p = bl.slice(p, [0] * len(ps), ps[:-1] + [used])
        parts.append(p)
    if len(parts) == 1 and onesided and not inverse and length % 2 == 0 and length >= 8:
        # A real signal's one-sided transform: the radix-2 form (half the multiply-adds).
        p = parts[0]
        if used < length:
            ps = bl.operand_shape(p)
            p = bl.pad(p, [0] * len(ps), [0] * (len(ps) - 1) + [length - used])
        y = radix2_rows(n, p, length, np.ones(length), npd)  # [..., bins, 2]
        inv = [perm.index(a) for a in range(rank - 1)]
        return bl.transpose(y, inv + [rank - 1])
    cos, sin = _bases(used, length, bins, inverse)
    C = n.importer.operand(cos.astype(npd))
    S = n.importer.operand(sin.astype(npd))
    xr = parts[0]
    xi = parts[1] if len(parts) > 1 else None
    sign = 1.0 if inverse else -1.0
    # X[k] = sum x[t] (cos + sign*i*sin)
    yr = bl.matmul(xr, C)
    yi = bl.matmul(xr, S)
    yi = bl.mul(yi, n.const(sign, dtype))
    if xi is not None:
        yr = bl.sub(yr, bl.mul(bl.matmul(xi, S), n.const(sign, dtype)))
        yi = bl.add(yi, bl.matmul(xi, C))
    if inverse:
        scale = n.const(1.0 / length, dtype)
        yr, yi = bl.mul(yr, scale), bl.mul(yi, scale)
    inv = [perm.index(a) for a in range(rank - 1)]
    yr = bl.unsqueeze(bl.transpose(yr, inv), [rank - 1])
    yi = bl.unsqueeze(bl.transpose(yi, inv), [rank - 1])
    return bl.concat([yr, yi], rank - 1)


def _irfft(n, shape, axis):
    """Inverse DFT of a one-sided spectrum (numpy's irfft): a real signal of dft_length
    (default 2 * (bins - 1)) samples from bins 0 .. length // 2 (imaginary parts of bin 0 and,
    for even lengths, bin length / 2 do not contribute), as products with constant bases
    weighted 1 for those two bins and 2 for the others, scaled by 1 / length."""
    bl = n.b
    rank = len(shape)
    size = shape[axis]
    length = int(n.c(1, what="dft_length").reshape(-1)[0]) if n.has(1) else 2 * (size - 1)
    if length < 1:
        n.fail(f"a one-sided spectrum of {size} bins gives no signal; give dft_length")
    used = min(size, length // 2 + 1)
    k = np.arange(used)[:, None]
    t = np.arange(length)[None, :]
    weight = np.full((used, 1), 2.0)
    weight[0] = 1.0
    if length % 2 == 0 and used > length // 2:
        weight[length // 2] = 1.0
    theta = 2 * np.pi * ((k * t) % length) / length
    npd = np.float16 if n.dtype(0) == "float16" else np.float32
    real = n.importer.operand((weight * np.cos(theta) / length).astype(npd))
    imag = n.importer.operand((-weight * np.sin(theta) / length).astype(npd))
    x = n.x(0)
    perm = [a for a in range(rank - 1) if a != axis] + [axis]
    parts = []
    for c in range(min(shape[-1], 2)):
        p = bl.reshape(bl.slice(x, [0] * (rank - 1) + [c], shape[:-1] + [1]), shape[:-1])
        p = bl.transpose(p, perm)
        ps = bl.operand_shape(p)
        if used < size:
            p = bl.slice(p, [0] * len(ps), ps[:-1] + [used])
        parts.append(p)
    y = bl.matmul(parts[0], real)
    if len(parts) > 1:
        y = bl.add(y, bl.matmul(parts[1], imag))
    inv = [perm.index(a) for a in range(rank - 1)]
    return bl.unsqueeze(bl.transpose(y, inv), [rank - 1])


@op("STFT")
def stft(n):
    """Frames times the windowed Fourier basis, as one strided conv2d over the signal. Real
    signals come as [batch, length, 1] or, as ONNX Runtime also accepts, [batch, length];
    complex ones as [batch, length, 2] (re, im)."""
    bl = n.b
    shape = n.static_shape(0)
    if len(shape) == 2:
        shape = shape + [1]
    if len(shape) != 3 or shape[2] not in (1, 2):
        n.fail(
            f"the signal must be [batch, length], [batch, length, 1] (real) or "
            f"[batch, length, 2] (complex), got {shape}"
        )
    batch, length, parts = shape
    step = int(n.c(1, what="frame_step").reshape(-1)[0])
    if step < 1:
        n.fail(f"frame_step must be at least 1, got {step}")
    window = n.c(2, what="window") if n.has(2) else None
    if n.has(3):
        frame = int(n.c(3, what="frame_length").reshape(-1)[0])
    elif window is not None:
        frame = window.shape[0]
    else:
        n.fail("neither window nor frame_length is given")
    if window is not None and window.shape != (frame,):
        n.fail(f"the window has shape {list(window.shape)}, frame_length is {frame}")
    if not 1 <= frame <= length:
        n.fail(f"frame_length {frame} must be between 1 and the signal length {length}")
    onesided = bool(n.attr("onesided", 1))
    if onesided and parts == 2:
        n.fail("onesided output is defined for real signals only")
    bins = frame // 2 + 1 if onesided else frame
    w = np.ones(frame) if window is None else window.astype(np.float64)
    npd = np.float16 if n.dtype(0) == "float16" else np.float32
    if parts == 1 and onesided and frame % 2 == 0 and step % 2 == 0 and frame >= 8:
        signal = bl.reshape(n.x(0), [batch, length])
        return radix2_spectrum(n, signal, batch, length, frame, step, w, npd)
    cos, sin = _bases(frame, frame, bins, False)
    cos_w, sin_w = (cos * w[:, None]).T, (sin * w[:, None]).T  # [bins, frame]
    # (re + i im)(cos - i sin) = (re cos + im sin) + i (im cos - re sin)
    real = [cos_w, sin_w][:parts]
    imag = [-sin_w, cos_w][:parts]
    # Channels-last throughout, so that no transpose runs before or after the convolution: the
    # signal [batch, length, parts] is already an NHWC image of one row, and the output
    # channels interleave (re, im) per bin, so [batch, 1, frames, 2 bins] is the ONNX result
    # [batch, frames, bins, 2] as it lies in memory.
    filters = np.stack([np.stack(real, 1), np.stack(imag, 1)], 1)  # [bins, 2, parts, frame]
    filters = filters.astype(npd).reshape(2 * bins, parts, frame).transpose(0, 2, 1)
    filters = np.ascontiguousarray(filters).reshape(2 * bins, 1, frame, parts)
    x = bl.reshape(n.x(0), [batch, 1, length, parts])
    y = bl.conv2d(
        x,
        n.importer.operand(filters),
        strides=[1, step],
        input_layout="nhwc",
        filter_layout="ohwi",
    )
    frames = bl.operand_shape(y)[2]
    return bl.reshape(y, [batch, frames, bins, 2])


def half_filters(frame, parity, w, npd):
    """[N / 4 + 1 bins, 2, N / 2 taps]: the half-length transform of a frame's even
    (parity 0) or odd (parity 1, turned by the twiddle factors W^k) samples, windowed by w,
    each bin's (re, im) rows: E[k] = sum x[2m] w[2m] W^(2km), T[k] = sum x[2m+1] w[2m+1]
    W^(k(2m+1)), W = e^(-2 pi i / N)."""
    half = frame // 2
    k = np.arange(half // 2 + 1)[:, None]
    t = 2 * np.arange(half)[None, :] + parity  # the frame's sample of each tap
    theta = 2 * np.pi * ((k * t) % frame) / frame
    weighted = w[parity::2][None, :]
    return np.stack([np.cos(theta) * weighted, -np.sin(theta) * weighted], 1).astype(npd)


def butterfly(n, even, turned, frame, npd):
    """X[0 .. N/2] from E and T ([..., N / 4 + 1, 2], interleaved (re, im)):
    X[k] = E[k] + T[k], X[N/2 - j] = conj(E[j] - T[j]) (E and O of real samples are
    conjugate-symmetric). Returns [..., N / 2 + 1, 2]."""
    bl = n.b
    half = frame // 2
    shape = bl.operand_shape(even)
    lower = bl.add(even, turned)  # X[0 .. H/2]
    upper_count = half - half // 2  # X[H/2 + 1 .. H] from j = upper_count - 1 .. 0
    conj = n.importer.operand(np.array([1, -1], npd))
    upper = bl.mul(bl.sub(even, turned), conj)
    upper = bl.slice(upper, [0] * len(shape), shape[:-2] + [upper_count, 2])
    return bl.concat([lower, bl.reverse(upper, [len(shape) - 2])], len(shape) - 2)


def radix2_spectrum(n, x, batch, length, frame, step, w, npd):
    """A real, one-sided STFT of even frame N and even step as one radix-2 step of an FFT:
    the half-length transforms of each frame's even samples, E, and odd samples turned by the
    twiddle factors, T (half_filters), are two convolutions of half the taps and half the
    bins (half the multiply-adds of the direct one), joined by the butterfly. Complex values
    stay interleaved (re, im) in the last axis throughout, the layout of the result:
    x [batch, length] -> [batch, frames, N / 2 + 1, 2]."""
    bl = n.b
    half = frame // 2
    half_bins = half // 2 + 1
    frames = (length - frame) // step + 1

    def half_transform(parity):
        count = (length - parity + 1) // 2
        samples = bl.slice(x, [0, parity], [batch, length - parity], strides=[1, 2])
        filters = half_filters(frame, parity, w, npd).reshape(2 * half_bins, 1, half, 1)
        y = bl.conv2d(
            bl.reshape(samples, [batch, 1, count, 1]),
            n.importer.operand(filters),
            strides=[1, step // 2],
            input_layout="nhwc",
            filter_layout="ohwi",
        )
        y = bl.slice(y, [0, 0, 0, 0], [batch, 1, frames, 2 * half_bins])
        return bl.reshape(y, [batch, frames, half_bins, 2])

    return butterfly(n, half_transform(0), half_transform(1), frame, npd)


def radix2_rows(n, x, frame, w, npd):
    """The one-sided transform of each row of x [..., N] (frames already cut), windowed by w,
    in the radix-2 form: two products with half the rows and columns of the direct one.
    Returns [..., N / 2 + 1, 2]."""
    bl = n.b
    shape = bl.operand_shape(x)
    half_bins = frame // 4 + 1
    parts = []
    for parity in (0, 1):
        samples = bl.slice(
            x, [0] * (len(shape) - 1) + [parity], shape[:-1] + [frame - parity],
            strides=[1] * (len(shape) - 1) + [2],
        )  # fmt: skip
        filters = half_filters(frame, parity, w, npd).reshape(2 * half_bins, frame // 2)
        y = bl.matmul(samples, n.importer.operand(np.ascontiguousarray(filters.T)))
        parts.append(bl.reshape(y, shape[:-1] + [half_bins, 2]))
    return butterfly(n, parts[0], parts[1], frame, npd)
