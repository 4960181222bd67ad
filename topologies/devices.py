"""Peak arithmetic throughput of GPUs, in FLOP/s, from their vendors' datasheets.

A trace's compute ops are given in FLOPs; the simulator turns them into
seconds as ``FLOPs / device throughput`` (``trace.metadata["device_flops"]``,
or ``netsim.simulate(..., device_flops=...)``). :func:`device_flops` gives
that throughput for a named GPU and precision.

========= ============ ========= =========== =========== ==========================
name      form factor  FP32      TF32 tensor FP16 tensor source
========= ============ ========= =========== =========== ==========================
V100      SXM2         15.7 T    --          125 T       [1]
V100-PCIe PCIe         14 T      --          112 T       [1]
A100      SXM4         19.5 T    156 T       312 T       [2]
A100-PCIe PCIe         19.5 T    156 T       312 T       [2]
H100      SXM5         67 T      494.5 T     989.5 T     [3]
H100-PCIe PCIe         51 T      378 T       756.5 T     [3]
H200      SXM5         67 T      494.5 T     989.5 T     [4]
H800      SXM5         67 T      494.5 T     989.5 T     [5]
B200      SXM (HGX)    75 T      1,100 T     2,250 T     [6]
GB200     GB200 board  80 T      1,250 T     2,500 T     [6]
GB300     GB300 board  80 T      1,250 T     2,500 T     [7]
L40S      PCIe         91.6 T    183 T       362.05 T    [8]
MI300X    OAM          163.4 T   653.7 T     1,307.4 T   [9]
========= ============ ========= =========== =========== ==========================

``fp32`` is the CUDA-core (non-tensor) single-precision peak; ``tf32`` and
``fp16`` are the dense tensor-core peaks (FP16 inputs, FP32 accumulation on
the V100). NVIDIA's A100 and H100 datasheets print the tensor figures with
2:4 structured sparsity (marked "*": A100 TF32 312, FP16 624; H100 SXM TF32
989, FP16 1,979; H100 PCIe TF32 756, FP16 1,513) and state that dense
throughput is half of that; the table holds the dense values. Peaks are
upper bounds: real training reaches a fraction of them. The V100's FP32 peak
is also the default rate of the traces ``workloads`` records
(``workloads.V100_FP32_FLOPS``, repeated there because ``workloads`` may not
import this package; tests/test_models.py holds the two equal).

The same datasheets give each GPU's memory (HBM) bandwidth, which a
memory-bound kernel's time depends on: :func:`hbm_bandwidth`
(:data:`HBM_BANDWIDTH`), by model and memory size.

References
----------
.. [1] NVIDIA, "NVIDIA Tesla V100 GPU Accelerator" datasheet (2018):
       single precision 15.7 (SXM2) / 14 (PCIe) TFLOPS, tensor performance
       125 / 112 TFLOPS.
.. [2] NVIDIA, "NVIDIA A100 Tensor Core GPU" datasheet (2021): FP32 19.5 TFLOPS,
       TF32 tensor core 156 (312*) TFLOPS, FP16 tensor core 312 (624*) TFLOPS
       for both the SXM and PCIe forms.
.. [3] NVIDIA, "NVIDIA H100 Tensor Core GPU" datasheet (2023): FP32 67 (SXM) /
       51 (PCIe) TFLOPS, TF32 tensor core 989* / 756*, FP16 tensor core
       1,979* / 1,513* TFLOPS (* with sparsity; dense is half).
.. [4] NVIDIA, "NVIDIA H200 Tensor Core GPU" datasheet (2024), H200 SXM: FP32
       67 TFLOPS, TF32 989*, FP16 1,979* TFLOPS (the H100 SXM's), GPU memory
       bandwidth 4.8 TB/s; as copied in stas00/ml-engineering
       ``compute/accelerator/README.md`` (commit 744d01e, "TFLOPS comparison
       table", dense: fp32 67.0, tf32 494.5, fp16 989; memory 4.80 TB/s).
.. [5] NVIDIA, H800 SXM5 (the H100 SXM5 with NVLink cut to 400 GB/s both ways
       and FP64 to 1 TFLOPS; FP16/BF16/FP8 as the H100's), as compared in
       "NVIDIA H800 vs H100" (philisun.com, technical analysis, 2025); NVIDIA
       publishes no H800 datasheet on its website. Memory 80 GB HBM3 at the
       H100 SXM's 3.35 TB/s (same source).
.. [6] NVIDIA, "NVIDIA Blackwell" datasheet, "Technical Specifications" table,
       GB200 NVL72 and HGX B200 columns, "Individual Blackwell GPU
       Specifications": TF32 tensor 2.5* / 2.2* PFLOPS, FP16/BF16 tensor 5* /
       4.5* PFLOPS, FP32 80 / 75 TFLOPS, GPU memory bandwidth 8 / 7.7 TB/s (*
       with sparsity), as reproduced in zdszero.github.io
       ``Computer/Artificial_Intelligence/Hardware.html``. The DGX B200
       datasheet gives the same GPU as "72 PFLOPS FP8 training" for 8 GPUs
       (9* PFLOPS FP8 each).
.. [7] NVIDIA, "NVIDIA GB300 NVL72" specifications (nvidia.com/en-us/data-center/
       gb300-nvl72): one GPU dense FP32 80, TF32 1,250, FP16 2,500 TFLOPS,
       8 TB/s of HBM3e, as copied in stas00/ml-engineering (as [4]: "NVIDIA
       GB300 SXM" row, note 24) and in Verda's "NVIDIA GB300 NVL72: GPU
       Architecture & Performance" (verda.com, 2025, per-GPU table without
       sparsity: FP16/BF16 2.5 PFLOPS, TF32 1.25 PFLOPS, FP32 0.080 PFLOPS,
       8 TB/s).
.. [8] NVIDIA, "NVIDIA L40S" datasheet (2023): FP32 91.6 TFLOPS, TF32 tensor
       183 | 366*, FP16 tensor 362.05 | 733* TFLOPS, 48 GB GDDR6 at 864 GB/s,
       PCIe Gen4 x16, no NVLink; as copied in the vendor listing
       mullet.se product 355414 (the datasheet's L40 / L40S table).
.. [9] AMD, "AMD Instinct MI300X" specifications (amd.com/en/products/
       accelerators/instinct/mi300/mi300x.html): peak FP32 vector 163.4
       TFLOPS, TF32 matrix 653.7, FP16 matrix 1,307.4 TFLOPS (without
       sparsity), 5.3 TB/s of HBM3; as copied in stas00/ml-engineering (as
       [4], "AMD MI300X" row, note 17, and its check of the FP16 figure:
       2,100 MHz x 256 FMAs x 2 x 1,216 Matrix Cores = 1,307.4 TFLOPS).
"""

from types import MappingProxyType
from typing import NamedTuple

from netsim.costmodel.gemm import calibrate, gemm_device
from netsim.errors import TopologyError

__all__ = ["Device", "DEVICES", "PRECISIONS", "DeviceError", "device_flops", "model_key",
           "COMPUTE_CAPABILITY", "compute_capability", "LAUNCH_LATENCY", "launch_latency",
           "HBM_BANDWIDTH", "hbm_bandwidth", "GPU_MEMORY", "gpu_memory", "SM_COUNT", "GEMM_BENCHMARK", "device_gemm",
           "HOST_CPUS", "host_cpu"]


class DeviceError(TopologyError):
    """An unknown device name or a precision the device does not have.

    Examples
    --------
    >>> device_flops("V100", "tf32")
    Traceback (most recent call last):
    ...
    topologies.devices.DeviceError: V100 has no tf32 throughput; it has: fp32, fp16
    """


class Device(NamedTuple):
    """Peak FLOP/s of one GPU per precision (None: the device has no such unit).

    Examples
    --------
    >>> d = DEVICES["A100"]
    >>> d.form_factor, d.fp32 / 1e12, d.source
    ('SXM4', 19.5, 'NVIDIA A100 datasheet')
    """

    name: str
    form_factor: str
    fp32: float
    tf32: float | None
    fp16: float | None
    source: str


#: Precisions :func:`device_flops` knows.
PRECISIONS = ("fp32", "tf32", "fp16")

_T = 1e12

#: Named devices (read-only); see the module docstring for the sources.
DEVICES = MappingProxyType({
    "V100": Device("V100", "SXM2", 15.7 * _T, None, 125 * _T, "NVIDIA Tesla V100 datasheet"),
    "V100-PCIe": Device("V100-PCIe", "PCIe", 14 * _T, None, 112 * _T,
                        "NVIDIA Tesla V100 datasheet"),
    "A100": Device("A100", "SXM4", 19.5 * _T, 156 * _T, 312 * _T, "NVIDIA A100 datasheet"),
    "A100-PCIe": Device("A100-PCIe", "PCIe", 19.5 * _T, 156 * _T, 312 * _T,
                        "NVIDIA A100 datasheet"),
    "H100": Device("H100", "SXM5", 67 * _T, 494.5 * _T, 989.5 * _T, "NVIDIA H100 datasheet"),
    "H100-PCIe": Device("H100-PCIe", "PCIe", 51 * _T, 378 * _T, 756.5 * _T,
                        "NVIDIA H100 datasheet"),
    "H200": Device("H200", "SXM5", 67 * _T, 494.5 * _T, 989.5 * _T, "NVIDIA H200 datasheet"),
    "H800": Device("H800", "SXM5", 67 * _T, 494.5 * _T, 989.5 * _T,
                   "H800 SXM5: the H100 SXM5's compute"),
    "B200": Device("B200", "SXM (HGX)", 75 * _T, 1100 * _T, 2250 * _T,
                   "NVIDIA Blackwell datasheet, HGX B200"),
    "GB200": Device("GB200", "GB200 board", 80 * _T, 1250 * _T, 2500 * _T,
                    "NVIDIA Blackwell datasheet, GB200 NVL72"),
    "GB300": Device("GB300", "GB300 board", 80 * _T, 1250 * _T, 2500 * _T,
                    "NVIDIA GB300 NVL72 specifications"),
    "L40S": Device("L40S", "PCIe", 91.6 * _T, 183 * _T, 362.05 * _T, "NVIDIA L40S datasheet"),
    "MI300X": Device("MI300X", "OAM", 163.4 * _T, 653.7 * _T, 1307.4 * _T,
                     "AMD Instinct MI300X specifications"),
})


def _by_model(table, model, what="GPU model"):
    """``table``'s value for a GPU model (or ``what``), named in any case and with any dashes."""
    for key, value in table.items():
        if model_key(key) == model_key(model):
            return value
    raise DeviceError(f"unknown {what} {model!r}; known: {', '.join(table)}")


def model_key(name):
    """A device or part name as the tables here match it: case, dashes and spaces dropped.

    The same rule as ``workloads.models._key``, copied there because workloads/ and
    topologies/ do not import each other (ARCHITECTURE.md).

    Examples
    --------
    >>> model_key("A100-PCIe 80GB")
    'a100pcie80gb'
    """
    return "".join(ch for ch in str(name).casefold() if ch.isalnum())


def device_flops(name, precision="fp32"):
    """Peak throughput of a named GPU, in FLOP/s.

    Parameters
    ----------
    name : str
        A key of :data:`DEVICES`; case and dashes do not matter (``"h100pcie"``).
    precision : {"fp32", "tf32", "fp16"}
        CUDA-core FP32, or dense tensor-core TF32 / FP16.

    Returns
    -------
    float

    Raises
    ------
    DeviceError
        For an unknown device or precision, or one the device lacks (the V100
        has no TF32), listing what is known.

    Examples
    --------
    >>> device_flops("V100"), device_flops("a100", "tf32")
    (15700000000000.0, 156000000000000.0)
    >>> device_flops("TPU")
    Traceback (most recent call last):
    ...
    topologies.devices.DeviceError: unknown device 'TPU'; known devices: V100, V100-PCIe, A100, A100-PCIe, H100, H100-PCIe, H200, H800, B200, GB200, GB300, L40S, MI300X
    """
    for key, dev in DEVICES.items():
        if model_key(key) == model_key(name):
            break
    else:
        raise DeviceError(f"unknown device {name!r}; known devices: {', '.join(DEVICES)}")
    if precision not in PRECISIONS:
        raise DeviceError(f"unknown precision {precision!r}; known precisions: "
                          f"{', '.join(PRECISIONS)}")
    value = getattr(dev, precision)
    if value is None:
        have = [p for p in PRECISIONS if getattr(dev, p) is not None]
        raise DeviceError(f"{dev.name} has no {precision} throughput; it has: {', '.join(have)}")
    return float(value)


#: CUDA compute capability (major * 10 + minor) of each GPU model a machine builder names,
#: from NVIDIA's "CUDA GPUs - Compute Capability" table (developer.nvidia.com/cuda-gpus):
#: Tesla P100 6.0, V100 7.0, A100 8.0, GeForce RTX 4090 and L40S 8.9, H100, H200 and H800 9.0,
#: B200 and GB200 10.0, GB300 10.3 (the B300 of Blackwell Ultra: ``sm_103``, first built by
#: CUDA 12.9). The MI300X is AMD's (``gfx942``) and has no CUDA compute capability.
COMPUTE_CAPABILITY = MappingProxyType({
    "P100": 60, "V100": 70, "A100": 80, "RTX4090": 89, "L40S": 89, "H100": 90, "H200": 90,
    "H800": 90, "B200": 100, "GB200": 100, "GB300": 103,
})


def compute_capability(model):
    """CUDA compute capability of a GPU model as an integer (9.0 -> 90).

    Parameters
    ----------
    model : str
        A key of :data:`COMPUTE_CAPABILITY`; case and dashes do not matter.

    Returns
    -------
    int

    Raises
    ------
    DeviceError
        For an unknown model, listing the known ones.

    Examples
    --------
    >>> compute_capability("H100"), compute_capability("rtx-4090")
    (90, 89)
    """
    return _by_model(COMPUTE_CAPABILITY, model)


#: Host time one CPU thread spends per CUDA kernel launch, in seconds, by GPU model: the
#: "async" variant of CSCS's ReFrame check ``gpu_kernel_latency_check``
#: (reframe-hpc/reframe, ``cscs-checks/microbenchmarks/gpu/kernel_latency/kernel_latency.py``,
#: reference values of 2021; the program, ``hpctestlib/microbenchmarks/gpu/kernel_latency``,
#: launches 5000 empty kernels back to back on one GPU and divides the wall time by 5000):
#: 2.2 us on Piz Daint (P100), 1.83 us on the V100 systems ``ault:intelv100`` and
#: ``ault:amdv100``, 2.7 us on ``ault:amda100`` (the partition's name says an AMD host
#: with A100s). No such figure was found for the RTX 4090, L40S, H100, H200, H800, B200,
#: GB200 or GB300: they are given the newest measured NVIDIA GPU's, the A100's 2.7 us (an
#: assumption, named as one). No HIP launch figure of the MI300X was found: it has none.
LAUNCH_LATENCY = MappingProxyType({
    "P100": 2.2e-6, "V100": 1.83e-6, "A100": 2.7e-6,
    "RTX4090": 2.7e-6, "L40S": 2.7e-6, "H100": 2.7e-6, "H200": 2.7e-6, "H800": 2.7e-6,
    "B200": 2.7e-6, "GB200": 2.7e-6, "GB300": 2.7e-6,
})


def launch_latency(model):
    """Host seconds per CUDA kernel launch on a GPU model (:data:`LAUNCH_LATENCY`).

    Parameters
    ----------
    model : str
        A key of :data:`LAUNCH_LATENCY`; case and dashes do not matter.

    Returns
    -------
    float

    Raises
    ------
    DeviceError
        For an unknown model, listing the known ones.

    Examples
    --------
    >>> launch_latency("V100") * 1e6, launch_latency("a-100") * 1e6
    (1.83, 2.7)
    """
    return _by_model(LAUNCH_LATENCY, model)


#: Peak bandwidth of a GPU's own memory (HBM), bytes/s, by GPU model and memory size, from
#: NVIDIA's datasheets: "GPU Memory Bandwidth" of the A100 datasheet (2021): 1,555 GB/s for
#: the 40 GB SXM and PCIe parts, 2,039 GB/s for the 80 GB SXM part, 1,935 GB/s for the
#: 80 GB PCIe part; the V100 datasheet's 900 GB/s (SXM2 and PCIe); the H100 datasheet's
#: (2023) 3.35 TB/s (SXM) and 2 TB/s (PCIe); the H200's 4.8 TB/s, the H800 SXM5's 3.35 TB/s,
#: the HGX B200's 7.7 TB/s, the GB200's and GB300's 8 TB/s, the MI300X's 5.3 TB/s (sources
#: [4]-[9] of the module docstring). The L40S has GDDR6, not HBM: its 864 GB/s is the
#: same quantity, the GPU's own memory. Peaks: a memory-bound kernel reaches a share.
HBM_BANDWIDTH = MappingProxyType({
    "V100": 900e9, "V100-PCIe": 900e9,
    "A100-40GB": 1555e9, "A100-80GB": 2039e9,
    "A100-PCIe-40GB": 1555e9, "A100-PCIe-80GB": 1935e9,
    "H100": 3.35e12, "H100-PCIe": 2e12, "H200": 4.8e12, "H800": 3.35e12,
    "B200": 7.7e12, "GB200": 8e12, "GB300": 8e12, "L40S": 864e9, "MI300X": 5.3e12,
})


def hbm_bandwidth(model):
    """Peak bytes/s of a GPU model's own memory (:data:`HBM_BANDWIDTH`).

    The A100 comes with 40 or 80 GB at different bandwidths: name the size.

    Parameters
    ----------
    model : str
        A key of :data:`HBM_BANDWIDTH`; case and dashes do not matter.

    Returns
    -------
    float

    Raises
    ------
    DeviceError
        For an unknown model, listing the known ones.

    Examples
    --------
    >>> hbm_bandwidth("A100-80GB") / 1e9, hbm_bandwidth("a100 40gb") / 1e9
    (2039.0, 1555.0)
    >>> hbm_bandwidth("A100")
    Traceback (most recent call last):
    ...
    topologies.devices.DeviceError: unknown GPU model 'A100'; known: V100, V100-PCIe, A100-40GB, A100-80GB, A100-PCIe-40GB, A100-PCIe-80GB, H100, H100-PCIe, H200, H800, B200, GB200, GB300, L40S, MI300X
    """
    return _by_model(HBM_BANDWIDTH, model)


#: Memory of one GPU (its HBM, the L40S's GDDR6), bytes, by GPU model: the "Memory (GB)" column of
#: the memory table of stas00/ml-engineering ``compute/accelerator/README.md`` (commit 744d01e,
#: "Generally available"), which copies the vendors' datasheets: A100 SXM and PCIe 80, H100 SXM
#: and PCIe 80, H200 SXM 141, B200 SXM 180, GB200 SXM 186, B300 SXM 288 (the GB300's GPU: note
#: 24 there, "more memory for the latter"), L40S 48, MI300X 192. The H800 SXM5 has the H100's
#: 80 (source [5] of the module docstring); the V100 32, the larger of its datasheet's 16 and 32 GB
#: ([1]); the A100's 40 GB parts are not the ``A100`` of a topology (the 80 GB part, as
#: :data:`GEMM_BENCHMARK` assumes): give the memory where it is another. Read as GiB
#: (``2**30`` bytes), as that page's note on units says capacities "most often" are; GB
#: (``10**9``) would be 7 % less. A check against these refuses only what cannot fit even then.
GPU_MEMORY = MappingProxyType({k: v * 2**30 for k, v in {
    "V100": 32, "V100-PCIe": 32, "A100": 80, "A100-PCIe": 80, "H100": 80, "H100-PCIe": 80,
    "H200": 141, "H800": 80, "B200": 180, "GB200": 186, "GB300": 288, "L40S": 48, "MI300X": 192,
}.items()})


def gpu_memory(model):
    """Bytes of one GPU's own memory (:data:`GPU_MEMORY`).

    Parameters
    ----------
    model : str
        A key of :data:`GPU_MEMORY` (a GPU node's ``model``); case and dashes do not matter.

    Returns
    -------
    float

    Raises
    ------
    DeviceError
        For a model without a memory figure, listing those with one.

    Examples
    --------
    >>> gpu_memory("H100") / 2**30, gpu_memory("h200") / 2**30
    (80.0, 141.0)
    >>> gpu_memory("RTX4090")
    Traceback (most recent call last):
    ...
    topologies.devices.DeviceError: unknown GPU model with a memory figure 'RTX4090'; known: V100, V100-PCIe, A100, A100-PCIe, H100, H100-PCIe, H200, H800, B200, GB200, GB300, L40S, MI300X
    """
    return float(_by_model(GPU_MEMORY, model, "GPU model with a memory figure"))


#: Streaming multiprocessors (SMs) of each GPU model, the ``S`` of a GEMM's wave quantisation
#: (:mod:`netsim.costmodel.gemm`): 80 for the Tesla V100 (SXM2 and PCIe, NVIDIA's "Tesla V100 GPU
#: Architecture" whitepaper, 2017: "Tesla V100 ... 80 SMs"); 108 for the A100 (SXM4 and PCIe,
#: "NVIDIA A100 Tensor Core GPU Architecture" whitepaper, 2020, and the "Matrix Multiplication
#: Background User's Guide", DU-09799-001, section 3.2: "an NVIDIA A100 GPU has 108 SMs"); 132
#: for the H100 SXM5 and 114 for the H100 PCIe ("NVIDIA H100 Tensor Core GPU Architecture"
#: whitepaper, 2022); 132 for the H200 SXM (the H100 SXM5's GH100 with HBM3e; stas00/ml-engineering
#: ``compute/accelerator/README.md``, commit 744d01e, "Caches" table: "H200 SXM ... 132 SMs") and
#: for the H800 SXM5 (the H100 SXM5's compute, source [5] of the module docstring: an assumption,
#: named as one). No public SM count of the Blackwell parts as NVIDIA ships them was found: they
#: have none here.
SM_COUNT = MappingProxyType({
    "V100": 80, "V100-PCIe": 80, "A100": 108, "A100-PCIe": 108, "H100": 132, "H100-PCIe": 114,
    "H200": 132, "H800": 132,
})

#: The one GEMM calibration of each GPU type: ``(measured FLOP/s, (m, n, k), HBM model)``, a row of
#: the "Maximum Achievable Matmul FLOPS comparison table" (BF16, no sparsity) of
#: stas00/ml-engineering ``compute/accelerator/README.md`` at commit 744d01e (``mamf-finder.py``
#: times ``torch.mm`` of ``A[m, k]`` and ``B[k, n]``, a mean of 100 iterations after 50 warm-up
#: ones, and reports the best shape it found, "MxNxK"): "NVIDIA A100 SXM 271.2 | 312 | 86.9% |
#: 1024x10240x5120"; "NVIDIA A100 PCIe 252.9 | 312 | 81.1% | 2048x5120x6144"; "NVIDIA H100 SXM
#: 794.5 | 989 | 80.3% | 2048x2048x13312 | H200 is the same" (the H200's row is the H100's, as the
#: note says). The HBM model gives the memory roofline (:data:`HBM_BANDWIDTH`: the 80 GB A100s, an
#: assumption where the row does not say; the calibration is compute-bound either way). Set once
#: from the table and never tuned: the GEMM model's efficiency ``eta`` is the row's throughput
#: over the peak and over the quantisation of the row's own shape
#: (:func:`netsim.costmodel.gemm.calibrate`). No row: no GEMM model (V100, H100 PCIe, H800).
GEMM_BENCHMARK = MappingProxyType({
    "A100": (271.2e12, (1024, 10240, 5120), "A100-80GB"),
    "A100-PCIe": (252.9e12, (2048, 5120, 6144), "A100-PCIe-80GB"),
    "H100": (794.5e12, (2048, 2048, 13312), "H100"),
    "H200": (794.5e12, (2048, 2048, 13312), "H200"),
})


def device_gemm(model):
    """The GEMM time model of a GPU model (:class:`netsim.costmodel.gemm.GemmDevice`).

    Its dense FP16/BF16 peak (:func:`device_flops`), its memory bandwidth
    (:data:`HBM_BANDWIDTH`), its SMs (:data:`SM_COUNT`) and its one calibration
    constant from :data:`GEMM_BENCHMARK`, with the 256 x 128 tile of
    :data:`netsim.costmodel.gemm.TILE`.

    Parameters
    ----------
    model : str
        A key of :data:`GEMM_BENCHMARK`; case and dashes do not matter.

    Returns
    -------
    netsim.costmodel.gemm.GemmDevice

    Raises
    ------
    DeviceError
        For a model without an SM count or a benchmark row, listing those with both.

    Examples
    --------
    >>> a100, h100 = device_gemm("A100"), device_gemm("h100")
    >>> a100.sms, round(a100.efficiency, 3), h100.sms, round(h100.efficiency, 3)
    (108, 0.88, 132, 0.828)
    >>> device_gemm("V100")
    Traceback (most recent call last):
    ...
    topologies.devices.DeviceError: unknown GPU model with a GEMM benchmark 'V100'; known: A100, A100-PCIe, H100, H200
    """
    measured, shape, hbm = _by_model(GEMM_BENCHMARK, model, "GPU model with a GEMM benchmark")
    key = next(k for k in GEMM_BENCHMARK if model_key(k) == model_key(model))
    plain = gemm_device(device_flops(key, "fp16"), hbm_bandwidth(hbm), SM_COUNT[key])
    return plain._replace(efficiency=calibrate(measured, *shape, plain))


#: Host CPUs, by part or family: the attributes of their graph nodes. ``memory_bandwidth`` is
#: one socket's (the vendor's figure, reads and writes together: a peak, STREAM reaches a share
#: of it), which SHM staging (:mod:`netsim.comm.nccl.staging`) and CPU collectives
#: (:mod:`netsim.comm.gloo`) share; ``core_bandwidth``, where a source gives it, what one core moves
#: to and from memory (bytes/s, reads and writes counted as STREAM counts them), which bounds a
#: CPU collective's copies and sums.
#:
#: * ``EPYC-7002`` (second-generation AMD EPYC, "Rome"): eight DDR4-3200 channels x 8 bytes x
#:   3.2 GT/s = 204.8 GB/s per socket (AMD's product pages, e.g. EPYC 7542, "Per Socket Mem
#:   BW 204.8 GB/s"); no per-core figure.
#: * ``Xeon-E5-2620-v4`` (Broadwell-EP, 8 cores, four DDR4-2133 channels): 68.3 GB/s per
#:   socket, Intel ARK "Max Memory Bandwidth" (quoted in spdk/spdk#321, 2018). One core:
#:   11.1 GB/s, a published single-thread ``memcpy`` of 25,000,000-byte blocks taking 4.5 ms
#:   on Broadwell-E with DDR4-2133 (Stack Overflow question 39260020, "Why is Skylake so
#:   much better than Broadwell-E for single-threaded memory throughput?", 2016:
#:   2 x 25 MB / 4.5 ms, a read and a write per byte). Broadwell-E is the desktop form of
#:   the same core and ring; no STREAM figure for one core of the E5-2620 v4 itself was
#:   found, and the question's answer notes that many-core Xeons move less per core than
#:   the desktop parts (higher uncore latency), so this figure may be high for the server
#:   part (an assumption, named as one).
HOST_CPUS = MappingProxyType({
    "EPYC-7002": MappingProxyType({"memory_bandwidth": 204.8e9}),
    "Xeon-E5-2620-v4": MappingProxyType({"memory_bandwidth": 68.3e9, "core_bandwidth": 11.1e9}),
})


def host_cpu(part):
    """A host CPU's attributes for graph nodes: ``memory_bandwidth`` (and ``core_bandwidth``).

    Parameters
    ----------
    part : str
        A key of :data:`HOST_CPUS`; case and dashes do not matter.

    Returns
    -------
    dict

    Raises
    ------
    DeviceError
        For an unknown part, listing the known ones.

    Examples
    --------
    >>> host_cpu("xeon-e5-2620-v4")
    {'memory_bandwidth': 68300000000.0, 'core_bandwidth': 11100000000.0}
    >>> host_cpu("EPYC-7002")
    {'memory_bandwidth': 204800000000.0}
    """
    return dict(_by_model(HOST_CPUS, part, "CPU part"))
