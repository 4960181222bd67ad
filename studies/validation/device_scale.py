"""``--device-from A100 --device-to H100``: an imported profile's compute on another GPU.

A first-order rule: every measured kernel, memcpy and memset lasts
``peak(from) / peak(to)`` times as long, the two devices' peak rates
(:func:`topologies.devices.device_flops`) at one precision. The precision is the
user's (``precision=``), else the profile's: its communication kernels' payload
``dtype`` (``metadata["dtypes"]``) ``Float`` -> ``fp32``, ``Half`` or ``BFloat16`` ->
``fp16`` (the A100 and H100 datasheets give BF16 the FP16 tensor peak), else
``fp32``, said as assumed. A payload dtype is not proof of the compute precision
(mixed-precision training reduces FP32 gradients while its matrix products run in
FP16): the note says where the precision came from.

Its limits, said in the docs: a kernel bound by memory bandwidth scales with the
devices' HBM bandwidths, not their FLOP/s, and one bound by launch latency hardly
scales at all; the ratio is an upper bound on the speed-up of every kernel.
"""

from netsim.errors import NetsimError
from topologies.devices import PRECISIONS, device_flops, model_key

__all__ = ["device_scale", "profile_precision"]

_FROM_DTYPE = {"Float": "fp32", "Half": "fp16", "BFloat16": "fp16"}


def profile_precision(metadata):
    """The precision a profile's payloads suggest, and where it came from.

    Parameters
    ----------
    metadata : mapping
        A trace's metadata (``dtypes`` from :func:`netsim.formats.kineto.load.load_kineto`).

    Returns
    -------
    (str, str)
        A precision of :data:`topologies.devices.PRECISIONS` and a note.

    Examples
    --------
    >>> profile_precision({"dtypes": ["BFloat16"]})
    ('fp16', "the profile's communication dtype BFloat16")
    >>> profile_precision({})[0]
    'fp32'
    """
    dtypes = list(metadata.get("dtypes") or [])
    known = sorted({_FROM_DTYPE[d] for d in dtypes if d in _FROM_DTYPE})
    if len(known) == 1:
        return known[0], (f"the profile's communication dtype{'s' * (len(dtypes) > 1)} "
                          f"{', '.join(dtypes)}")
    why = "records no dtype" if not dtypes else f"has dtypes {', '.join(dtypes)}"
    return "fp32", f"assumed: the profile {why}"


def device_scale(metadata, device_from, device_to, precision=None):
    """The factor on every measured kernel for a GPU change, and a note saying how.

    Parameters
    ----------
    metadata : mapping
        The imported trace's metadata (its ``device`` is checked against
        ``device_from`` when it names one).
    device_from, device_to : str
        Keys of :data:`topologies.devices.DEVICES` (case and dashes do not matter).
    precision : str, optional
        ``fp32``, ``tf32`` or ``fp16``; default :func:`profile_precision`.

    Returns
    -------
    (float, str)
        ``peak(device_from) / peak(device_to)`` and a one-line note.

    Raises
    ------
    topologies.devices.DeviceError
        For an unknown device or a precision the device lacks.
    NetsimError
        When the profile names a GPU that is not ``device_from``.

    Examples
    --------
    >>> s, note = device_scale({"dtypes": ["Float"]}, "A100", "H100")
    >>> round(s, 4), note     # 19.5 / 67 TFLOP/s, the datasheets' FP32
    (0.291, "compute x 0.291: A100 -> H100 at peak fp32 (19.5 -> 67 TFLOP/s; fp32 from the profile's communication dtype Float)")
    """
    if precision is None:
        precision, why = profile_precision(metadata)
        why = f"{precision} from {why}" if not why.startswith("assumed") else \
            f"{precision} {why}"
    else:
        if precision not in PRECISIONS:
            raise NetsimError(f"unknown precision {precision!r}; known: {', '.join(PRECISIONS)}")
        why = f"{precision} as asked"
    lo, hi = device_flops(device_from, precision), device_flops(device_to, precision)
    recorded = metadata.get("device")
    if recorded and model_key(device_from) not in model_key(recorded):
        raise NetsimError(f"--device-from {device_from}: the profile was recorded on "
                          f"{recorded!r}")
    scale = lo / hi
    return scale, (f"compute x {scale:.3g}: {device_from} -> {device_to} at peak {precision} "
                   f"({lo / 1e12:g} -> {hi / 1e12:g} TFLOP/s; {why})")
