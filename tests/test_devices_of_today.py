"""The GPUs of today's machines: peak dense FLOP/s, memory bandwidth, compute capability.

Each expected value is the vendor's printed figure, halved where the vendor prints it with
2:4 sparsity (the sources are in topologies/devices.py's docstring), written out here again
rather than read from the table.
"""

import pytest

from topologies.devices import (
    DeviceError,
    compute_capability,
    device_flops,
    hbm_bandwidth,
    launch_latency,
)

T = 1e12


@pytest.mark.parametrize("name, fp32, tf32_sparse, fp16_sparse", [
    ("H200", 67, 989, 1979),        # H200 datasheet (sparse 989 / 1,979 printed as 989.5 dense)
    ("H800", 67, 989, 1979),        # H100 SXM5's compute
    ("B200", 75, 2200, 4500),       # Blackwell datasheet, HGX B200 column
    ("GB200", 80, 2500, 5000),      # Blackwell datasheet, GB200 NVL72 column
    ("GB300", 80, 2500, 5000),      # GB300 NVL72 specifications
    # L40S datasheet: dense 183 | sparse 366 (TF32), dense 362.05 | sparse 733 (FP16): its
    # dense FP16 figure is not half its sparse one; the table holds the dense figure.
    ("L40S", 91.6, 366, 2 * 362.05),
])
def test_nvidia_peaks_are_half_the_sparse_figures(name, fp32, tf32_sparse, fp16_sparse):
    assert device_flops(name, "fp32") == pytest.approx(fp32 * T)
    assert device_flops(name, "tf32") == pytest.approx(tf32_sparse / 2 * T, rel=2e-3)
    assert device_flops(name, "fp16") == pytest.approx(fp16_sparse / 2 * T, rel=2e-3)


def test_mi300x_matrix_peak_is_clock_times_matrix_cores():
    # 2,100 MHz x 256 FMAs per Matrix Core per clock x 2 FLOPs x 1,216 Matrix Cores.
    assert device_flops("MI300X", "fp16") == pytest.approx(2100e6 * 256 * 2 * 1216, rel=1e-4)
    assert device_flops("MI300X", "tf32") == pytest.approx(device_flops("MI300X", "fp16") / 2,
                                                          rel=1e-3)


@pytest.mark.parametrize("name, tbps", [("H200", 4.8), ("H800", 3.35), ("B200", 7.7),
                                        ("GB200", 8), ("GB300", 8), ("L40S", 0.864),
                                        ("MI300X", 5.3)])
def test_memory_bandwidth_is_the_datasheets(name, tbps):
    assert hbm_bandwidth(name) == pytest.approx(tbps * 1e12)


@pytest.mark.parametrize("name, cc", [("B200", 100), ("GB200", 100), ("GB300", 103),
                                      ("H800", 90), ("L40S", 89)])
def test_compute_capability(name, cc):
    assert compute_capability(name) == cc
    assert launch_latency(name) > 0


def test_an_amd_gpu_has_no_cuda_compute_capability():
    with pytest.raises(DeviceError, match="unknown GPU model 'MI300X'"):
        compute_capability("MI300X")
