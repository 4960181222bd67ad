"""The time of one matrix multiplication on a GPU from its shape: a roofline with tile and wave quantisation.

A GEMM ``C[m, n] = A[m, k] B[k, n]`` (or ``batch`` of them in one launch, a
strided batched GEMM) runs as NVIDIA's libraries run it (NVIDIA's "Matrix
Multiplication Background User's Guide" [1]_, sections 2.1 and 3): the output
is cut into tiles of ``Tm x Tn`` values, one thread block each, and the
thread blocks run on the GPU's ``S`` streaming multiprocessors (SMs), ``S``
at a time. So

============================ ====================================================
quantity                     formula
============================ ====================================================
tiles (thread blocks)        ``T = batch * ceil(m / Tm) * ceil(n / Tn)``
waves                        ``W = ceil(T / S)``
quantisation efficiency      ``q = batch m n / (W S Tm Tn)``: the share of the
                             SMs' tile slots that hold useful output (tile
                             quantisation: partial tiles at the edges; wave
                             quantisation: a part-empty last wave), the
                             better of the tile's two orientations (``Tm x
                             Tn`` or ``Tn x Tm``: cuBLAS has both, [1]_ 2.3)
FLOPs                        ``2 batch m n k``
bytes (one pass each)        ``e batch (m k + k n + m n)``: A and B read, C written
time                         ``max(FLOPs / (peak eta q), bytes / bandwidth)``
============================ ====================================================

``peak`` is the datasheet's dense tensor-core FLOP/s, ``bandwidth`` its HBM
bandwidth, ``e`` bytes per value, and ``eta`` the one calibration constant of
a GPU type: the share of the peak that a large, well-quantised GEMM reaches
(:func:`calibrate` takes it from a measured GEMM throughput at a measured
shape). The tile is one fixed shape (:data:`TILE`: the guide's largest
cuBLAS tile, 256 x 128, with which an A100 runs one thread block per SM,
108 at a time, the guide's wave example); cuBLAS picks among several tiles
per shape, smaller ones filling the SMs better at a lower per-tile
efficiency that the guide does not put in numbers, so a fixed tile errs
toward a larger quantisation loss on narrow shapes.

What is left out: the ``k`` dimension's own quantisation (a thread block
steps through ``k`` in slices; the guide's Tensor Core alignment of ``k`` to
multiples of 8 or 64 values), split-K and stream-K kernels that fill a
part-empty wave by splitting ``k``, several thread blocks per SM for small
tiles, L2 cache reuse (the bytes are the minimum: each operand once), and the
kernel's launch latency.

References
----------
.. [1] NVIDIA, "Matrix Multiplication Background User's Guide", DU-09799-001_v001,
   February 2023 (docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication),
   section 2.3 "Typical tile dimensions in cuBLAS and performance" (256x128 and 128x256 the
   largest and most efficient tiles) and 3.2 "Wave quantization" (an A100 has 108 SMs; with
   256x128 thread block tiles it runs one thread block per SM, a wave of 108 tiles).
"""

import math
from typing import NamedTuple

from netsim.checks import check_int, check_real
from netsim.errors import NetsimError

__all__ = ["TILE", "GemmDevice", "gemm_device", "tiles", "waves", "quantisation", "gemm_flops",
           "gemm_bytes", "gemm_seconds", "calibrate"]

#: The thread block tile ``(Tm, Tn)``: cuBLAS's largest, 256 x 128 ([1]_ sections 2.3 and 3.2).
TILE = (256, 128)


class GemmDevice(NamedTuple):
    """What the GEMM time needs of a GPU: peak, memory bandwidth, SMs, calibration and tile.

    ``peak``: dense tensor-core FLOP/s of the precision; ``memory_bandwidth``:
    bytes/s of its HBM; ``sms``: streaming multiprocessors; ``efficiency``: the
    calibration ``eta`` (:func:`calibrate`); ``tile``: ``(Tm, Tn)``. Build it
    with :func:`gemm_device`, which checks each field.

    Examples
    --------
    >>> d = gemm_device(312e12, 2.039e12, 108)
    >>> d.sms, d.efficiency, d.tile
    (108, 1.0, (256, 128))
    """

    peak: float
    memory_bandwidth: float
    sms: int
    efficiency: float = 1.0
    tile: tuple = TILE


def gemm_device(peak, memory_bandwidth, sms, efficiency=1.0, tile=TILE):
    """A checked :class:`GemmDevice`.

    Raises
    ------
    NetsimError
        For a peak, bandwidth or SM count that is not positive, an efficiency
        outside (0, 1], or a tile that is not two positive integers.

    Examples
    --------
    >>> gemm_device(312e12, 2.039e12, 108, efficiency=0.9).efficiency
    0.9
    >>> gemm_device(312e12, 2.039e12, 0)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: sms must be an integer >= 1, got 0
    """
    if not isinstance(tile, (tuple, list)) or len(tile) != 2:
        raise NetsimError(f"tile must be two integers (Tm, Tn), got {tile!r}")
    return GemmDevice(check_real(peak, "peak", lo=0, strict=True),
                      check_real(memory_bandwidth, "memory_bandwidth", lo=0, strict=True),
                      check_int(sms, "sms"),
                      check_real(efficiency, "efficiency", lo=0, hi=1, strict=(True, False)),
                      (check_int(tile[0], "tile rows"), check_int(tile[1], "tile columns")))


def _shape(m, n, k, batch):
    return (check_int(m, "m"), check_int(n, "n"), check_int(k, "k"), check_int(batch, "batch"))


def tiles(m, n, tile=TILE, batch=1):
    """Thread blocks of a GEMM with an ``m x n`` output: ``batch ceil(m/Tm) ceil(n/Tn)``.

    Examples
    --------
    >>> tiles(4096, 4096, (128, 128)), tiles(1792, 1792)   # [1]_'s 7 x 14 = 98 tiles
    (1024, 98)
    """
    m, n, _, batch = _shape(m, n, 1, batch)
    return batch * math.ceil(m / tile[0]) * math.ceil(n / tile[1])


def waves(m, n, sms, tile=TILE, batch=1):
    """Waves of thread blocks on ``sms`` SMs: ``ceil(tiles / sms)``.

    Examples
    --------
    >>> waves(4096, 4096, 108, (128, 128)), waves(1792, 1792, 108)
    (10, 1)
    """
    return math.ceil(tiles(m, n, tile, batch) / check_int(sms, "sms"))


def quantisation(m, n, sms, tile=TILE, batch=1):
    """Tile and wave quantisation efficiency: ``batch m n / (waves sms Tm Tn)``, in (0, 1].

    The better of the tile and its transpose (cuBLAS's 256 x 128 and 128 x 256).

    Examples
    --------
    A 4096 x 4096 output in 128 x 128 tiles on an A100: 1024 tiles in 10
    waves of 108 slots.

    >>> quantisation(4096, 4096, 108, (128, 128)) == 1024 / 1080
    True
    >>> quantisation(256, 128, 108)   # one tile: one SM of 108 busy
    0.009259259259259259

    128 rows of 108 x 256 columns: 216 half-empty 256 x 128 tiles in two waves,
    or 108 full 128 x 256 tiles in one.

    >>> quantisation(128, 108 * 256, 108), quantisation(108 * 256, 128, 108)
    (1.0, 1.0)
    """
    slots = min(waves(m, n, sms, tile, batch), waves(m, n, sms, tile[::-1], batch))
    return (batch * m * n) / (slots * sms * tile[0] * tile[1])


def gemm_flops(m, n, k, batch=1):
    """FLOPs of the GEMM: ``2 batch m n k`` (a multiply and an add per term).

    Examples
    --------
    >>> gemm_flops(2, 3, 4, batch=5)
    240
    """
    m, n, k, batch = _shape(m, n, k, batch)
    return 2 * batch * m * n * k


def gemm_bytes(m, n, k, element=2, batch=1):
    """Bytes the GEMM moves at least: ``element batch (m k + k n + m n)``.

    Examples
    --------
    >>> gemm_bytes(2, 3, 4)   # (8 + 12 + 6) fp16 values
    52
    """
    m, n, k, batch = _shape(m, n, k, batch)
    return element * batch * (m * k + k * n + m * n)


def gemm_seconds(m, n, k, device, element=2, batch=1):
    """Seconds of the GEMM on ``device``: ``max(FLOPs / (peak eta q), bytes / bandwidth)``.

    Parameters
    ----------
    m, n, k : int
        ``C[m, n] = A[m, k] B[k, n]``.
    device : GemmDevice
    element : int
        Bytes per value of A, B and C.
    batch : int
        GEMMs of that shape in one launch (their tiles share the waves).

    Examples
    --------
    Compute-bound: 4096^3 on an A100's 312 TFLOP/s with 128 x 128 tiles runs at
    1024/1080 of the peak. Memory-bound: ``k = 8``, 33.8 MB at 2,039 GB/s.

    >>> a100 = gemm_device(312e12, 2.039e12, 108, tile=(128, 128))
    >>> gemm_seconds(4096, 4096, 4096, a100) == 2 * 4096 ** 3 / (312e12 * 1024 / 1080)
    True
    >>> gemm_seconds(4096, 4096, 8, a100) == 2 * (2 * 4096 * 8 + 4096 ** 2) / 2.039e12
    True
    """
    flops = gemm_flops(m, n, k, batch)
    q = quantisation(m, n, device.sms, device.tile, batch)
    return max(flops / (device.peak * device.efficiency * q),
               gemm_bytes(m, n, k, element, batch) / device.memory_bandwidth)


def calibrate(measured, m, n, k, device, element=2):
    """The efficiency ``eta`` at which :func:`gemm_seconds` of shape ``(m, n, k)`` is ``measured``.

    ``measured`` is a GEMM benchmark's FLOP/s at that shape; ``eta =
    measured / (peak q)``, the quantisation of the shape taken out. The
    measurement must be compute-bound in the model (else no ``eta`` gives it).

    Raises
    ------
    NetsimError
        For a measurement above ``peak q`` or one the memory roofline caps.

    Examples
    --------
    >>> d = gemm_device(312e12, 2.039e12, 108)
    >>> eta = calibrate(271.2e12, 1024, 10240, 5120, d)
    >>> rate = gemm_flops(1024, 10240, 5120) / gemm_seconds(1024, 10240, 5120,
    ...                                                  d._replace(efficiency=eta))
    >>> round(eta, 4), round(rate / 1e12, 9)   # 320 tiles in 3 waves of 108: q = 320/324
    (0.8801, 271.2)
    """
    measured = check_real(measured, "measured", lo=0, strict=True)
    eta = measured / (device.peak * quantisation(m, n, device.sms, device.tile))
    memory = gemm_bytes(m, n, k, element) / device.memory_bandwidth
    if eta > 1 or gemm_flops(m, n, k) / measured < memory:
        raise NetsimError(f"{measured:g} FLOP/s at {m}x{n}x{k} is not a compute-bound "
                          f"GEMM of this device (efficiency {eta:.3f})")
    return eta
