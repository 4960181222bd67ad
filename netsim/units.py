"""Human units at the edges, SI inside.

Everything inside netsim is bytes, seconds and bytes per second. Strings such as
``"10Gbps"``, ``"64MB"`` or ``"1.5us"`` are parsed here and nowhere else, and the
``format_*`` helpers turn SI numbers back into short labels for tables. Lists
given as text -- worker counts (``"2..64"``, ``"2,4,8"``), seeds (``"0..4"``,
``"0,3,7"``), layer widths and dimensions (``"64,32"``, ``"4x4"``) -- are parsed
here too, as are the specs of compute perturbations (``"lognormal:0.1"``,
``"0:10x"``, :mod:`netsim.trace.perturb`).

Decimal prefixes (k, M, G, T, P) are powers of 1000 and binary prefixes (Ki, Mi,
Gi, Ti) powers of 1024, as in IEC 80000-13. A lower-case ``b`` is a bit, an
upper-case ``B`` a byte: ``10Gbps`` is 1.25e9 bytes/s and ``10GB/s`` is 1e10.
"""

import math
import numbers
import re

from netsim.errors import UnitError

__all__ = [
    "MAX_BYTES",
    "MIN_BANDWIDTH",
    "MAX_LATENCY",
    "MAX_SEEDS",
    "parse_bytes",
    "parse_bandwidth",
    "parse_time",
    "format_bytes",
    "format_bandwidth",
    "format_time",
    "parse_workers",
    "parse_seeds",
    "parse_shape",
    "parse_jitter",
    "parse_straggler",
    "parse_spec",
]

_PREFIX = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
}
MAX_BYTES = 2.0**53
"""The largest message or collective size accepted, 2^53 bytes (about 9.007 PB).

Every whole number of bytes up to 2^53 is exact in a float64 (IEEE 754 binary64
has a 53-bit significand), so byte counts, their sums over a run's messages and
the whole-byte checks made to 1e-9 relative stay exact; beyond it a size is
refused (:func:`parse_bytes`, and :class:`netsim.trace.core.Trace` for traces built or
loaded otherwise) rather than silently rounded."""

MIN_BANDWIDTH = 1e-3
"""The slowest link accepted, 1e-3 bytes/s (1/125 of 1 bit/s, the slowest speed a user has
asked to model).

A policy with an arithmetic reason: the largest message (:data:`MAX_BYTES`) then takes
at most 9e18 s on one link, so any run's times (sums of at most 2^53 such transfers)
stay far inside float64's range (1.8e308); at 1e-300 bytes/s a 1 GB message took
1e309 s, infinite, and its ops were reported as never able to run. Checked by
:func:`parse_bandwidth` and, for graphs built or read otherwise, by
:class:`netsim.network.compiled.Network`."""

MAX_LATENCY = 3600.0
"""The longest link latency accepted, an hour (3600 s).

The route search compares path latencies exactly as whole femtoseconds in 64-bit
integers (:class:`netsim.network.compiled.Network`), which hold at most 2^63 fs, about 9223 s;
at 1e4 s the conversion overflowed (a numpy ``RuntimeWarning`` and a wrong latency).
An hour stays below that with room, and above any earthly link (a geostationary
satellite hop is about 0.25 s). Checked by :func:`parse_time` for latencies and by
:class:`netsim.network.compiled.Network` for every edge."""

MAX_SEEDS = 100_000
"""The most seeds a range ``A..B`` may hold (:func:`parse_seeds`): each seed is at least one
training run, and the list is built in memory (36 bytes a seed as Python ints), so a range
such as ``0..4294967295`` took 150 GB before anything ran. What a command then does with
its seeds is priced by its own estimate (``studies.scaling.run_length``)."""

_NUMBER = r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*"
_QUANTITY = re.compile(_NUMBER + r"(Ki|Mi|Gi|Ti|Pi|k|K|M|G|T|P)?(.*?)\s*$")
_TIME_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ps": 1e-12}


def _split(text, what):
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text), "", ""
    m = _QUANTITY.match(str(text))
    if not m:
        raise UnitError(f"cannot parse {what} {text!r}")
    return float(m.group(1)), m.group(2) or "", m.group(3)


def _checked(value, text, what):
    if not math.isfinite(value) or value < 0:
        raise UnitError(f"{what} must be a finite non-negative number, got {text!r}")
    return value


def parse_bytes(text):
    """Parse a size such as ``"64MB"``, ``"1KiB"``, ``"1e6"`` or ``512`` into bytes.

    Parameters
    ----------
    text : str or number
        A number (already bytes) or a number followed by an optional prefix and ``B``.

    Returns
    -------
    float
        The size in bytes.

    Raises
    ------
    UnitError
        If the text is not a size, is negative, or exceeds :data:`MAX_BYTES`.

    Examples
    --------
    >>> parse_bytes("64MB")
    64000000.0
    >>> parse_bytes("1KiB")
    1024.0
    >>> parse_bytes(12), parse_bytes("9PB")
    (12.0, 9000000000000000.0)
    >>> parse_bytes("9007199254740993")  # 2^53 + 1, which a float rounds to 2^53
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: size '9007199254740993' is 9007199254740993 bytes, over the largest accepted, 2^53 = 9.007e+15 bytes (~9 PB: whole bytes stay exact in a float)
    >>> parse_bytes("1e300")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: size '1e300' is 1e+300 bytes, over the largest accepted, 2^53 = 9.007e+15 bytes (~9 PB: whole bytes stay exact in a float)
    """
    value, prefix, unit = _split(text, "size")
    if unit not in ("", "B", "bytes", "byte"):
        raise UnitError(f"unknown size unit {unit!r} in {text!r}; use B, kB, MB, GB, KiB, MiB, ...")
    nbytes = _checked(value * _PREFIX[prefix], text, "size")
    if nbytes >= MAX_BYTES:  # 2^53 + 1 rounds to 2^53 as a float: compare the exact value
        from decimal import Decimal

        number = str(text) if isinstance(text, numbers.Number) else _QUANTITY.match(
            str(text)).group(1)
        exact = Decimal(number) * int(_PREFIX[prefix])  # exact: 28 digits hold any such size
        if exact > MAX_BYTES:
            shown = f"{exact.normalize():f}" if nbytes == MAX_BYTES else f"{nbytes:.4g}"
            raise UnitError(f"size {text!r} is {shown} bytes, over the largest accepted, 2^53 = "
                            f"{MAX_BYTES:.4g} bytes (~9 PB: whole bytes stay exact in a float)")
    return nbytes


def parse_bandwidth(text):
    """Parse a link speed such as ``"10Gbps"``, ``"100Gb/s"`` or ``"12.5GB/s"`` into bytes/s.

    Parameters
    ----------
    text : str or number
        A number (already bytes/s) or a number with a prefix and ``bps``, ``b/s``,
        ``Bps`` or ``B/s``. ``b`` is bits, ``B`` is bytes.

    Returns
    -------
    float
        The bandwidth in bytes per second.

    Examples
    --------
    >>> parse_bandwidth("10Gbps")
    1250000000.0
    >>> parse_bandwidth("12.5GB/s")
    12500000000.0
    >>> parse_bandwidth("1e-300Bps")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: bandwidth '1e-300Bps' is 1e-300 bytes/s, under the slowest accepted, 0.001 bytes/s (times must stay finite)
    """
    value, prefix, unit = _split(text, "bandwidth")
    if unit in ("bps", "b/s", "bit/s"):
        scale = 1 / 8
    elif unit in ("Bps", "B/s", ""):
        scale = 1.0
    else:
        raise UnitError(f"unknown bandwidth unit {unit!r} in {text!r}; use Gbps, Gb/s, GB/s, ...")
    bandwidth = _checked(value * _PREFIX[prefix] * scale, text, "bandwidth")
    if bandwidth < MIN_BANDWIDTH:
        raise UnitError(f"bandwidth {text!r} is {bandwidth:.4g} bytes/s, under the slowest "
                        f"accepted, {MIN_BANDWIDTH:g} bytes/s (times must stay finite)")
    return bandwidth


def parse_time(text, limit=MAX_LATENCY):
    """Parse a duration such as ``"1.5us"``, ``"2ms"`` or ``3e-6`` into seconds.

    Parameters
    ----------
    text : str or number
    limit : float, optional
        The longest accepted (default :data:`MAX_LATENCY`, a link latency's bound).

    Returns
    -------
    float

    Examples
    --------
    >>> parse_time("1.5us")
    1.5e-06
    >>> parse_time("2ms")
    0.002
    >>> parse_time("1e300s")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: time '1e300s' is 1e+300 s, over the longest accepted, 3600 s
    """
    value, prefix, unit = _split(text, "time")
    unit = prefix + unit
    if unit not in _TIME_UNITS:
        raise UnitError(f"unknown time unit {unit!r} in {text!r}; use s, ms, us, ns")
    seconds = _checked(value * _TIME_UNITS[unit], text, "time")
    if seconds > limit:
        raise UnitError(f"time {text!r} is {seconds:.4g} s, over the longest accepted, {limit:g} s")
    return seconds


def _format(value, unit, steps):
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    for scale, prefix in steps:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    scale, prefix = steps[-1]
    return f"{value / scale:.3g} {prefix}{unit}"


def format_bytes(nbytes):
    """Short decimal label for a byte count.

    >>> format_bytes(64e6)
    '64 MB'
    """
    return _format(nbytes, "B", [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")])


def format_bandwidth(bytes_per_second):
    """Short label for a bandwidth, in bits per second as link speeds are sold.

    >>> format_bandwidth(1.25e9)
    '10 Gbps'
    """
    bits = bytes_per_second * 8
    return _format(bits, "bps", [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, "")])


def format_time(seconds):
    """Short label for a duration.

    >>> format_time(2.5e-6)
    '2.5 us'
    """
    return _format(seconds, "s", [(1, ""), (1e-3, "m"), (1e-6, "u"), (1e-9, "n"), (1e-12, "p")])


def parse_workers(text):
    """Parse worker counts: ``"A..B"`` (the powers of two from A to B) or ``"2,3,8"`` (a list).

    A range runs over powers of two only, so both ends must be powers of two
    (``1..8``, ``16..256``); any other set of counts is given as a list
    (``3,4,5``). ``3..5`` is refused rather than read as ``3`` alone.

    Parameters
    ----------
    text : str or int
        ``"2..64"``, ``"3,5,7"`` (strictly increasing integers >= 1) or one integer.

    Returns
    -------
    list of int
        Strictly increasing, each >= 1.

    Raises
    ------
    UnitError
        For text of neither form, an empty list or item (a stray comma), a range
        with ``A < 1``, ``B < A`` or an end that is not a power of two, a count
        below 1, or a list that does not increase.

    Examples
    --------
    >>> parse_workers("2..16"), parse_workers("3,5"), parse_workers(4)
    ([2, 4, 8, 16], [3, 5], [4])
    >>> parse_workers("8,4")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: worker list must be strictly increasing, got '8,4'
    >>> parse_workers("3..5")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: workers range '3..5' runs over powers of two and 3 is not one; list every value instead: 3,4,5
    """
    text = str(text).strip()
    ends, out = _range_or_list(text, "worker", "2..64 or 2,4,8", 1)
    if ends is None:
        return out
    lo, hi = ends
    for end in ends:
        if end & (end - 1):
            listed = ",".join(map(str, range(lo, hi + 1))) if hi - lo < 16 else f"{lo},...,{hi}"
            raise UnitError(f"workers range {text!r} runs over powers of two and {end} is "
                            f"not one; list every value instead: {listed}")
    out = []
    while lo <= hi:
        out.append(lo)
        lo *= 2
    return out


def parse_seeds(text):
    """Parse seeds: ``"A..B"`` (every integer from A to B), ``"0,3,7"`` (a list) or one integer.

    The range and list syntax of :func:`parse_workers`, but a range takes every
    integer (``0..4`` is five seeds) and a seed may be 0. Seeds are at most
    ``2**32 - 1``, the largest numpy's legacy seeding takes.

    Parameters
    ----------
    text : str or int
        ``"0..4"``, ``"0,3,7"`` (strictly increasing integers >= 0) or one integer.

    Returns
    -------
    list of int
        Strictly increasing, each in ``0..2**32 - 1``.

    Raises
    ------
    UnitError
        For text of neither form, an empty list or item, a range with
        ``B < A``, a negative seed or one above ``2**32 - 1``, or a list that
        does not increase.

    Examples
    --------
    >>> parse_seeds("0..4"), parse_seeds("0,3,7"), parse_seeds(2)
    ([0, 1, 2, 3, 4], [0, 3, 7], [2])
    >>> parse_seeds("5..2")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: seeds range '5..2' must be A..B with 0 <= A <= B
    """
    text = str(text).strip()
    ends, out = _range_or_list(text, "seed", "0..4 or 0,3,7", 0)
    if ends is not None:
        if ends[1] - ends[0] + 1 > MAX_SEEDS:
            raise UnitError(f"seeds {text!r} are {ends[1] - ends[0] + 1} seeds, over the "
                            f"{MAX_SEEDS} accepted (each seed is a run of its own)")
        out = list(range(ends[0], ends[1] + 1))
    if out[-1] > 2**32 - 1:
        raise UnitError(f"seeds must be at most 2**32 - 1 = {2**32 - 1}, got {text!r}")
    return out


def _range_or_list(text, noun, example, minimum):
    """The ends ``(A, B)`` of ``"A..B"`` or the items of ``"A,B,..."``: ``(ends, None)`` or
    ``(None, items)``, checked against ``minimum``; ``noun`` and ``example`` word the errors."""
    if ".." not in text:
        parts = text.split(",")
        if not any(x.strip() for x in parts):
            raise UnitError(f"the {noun} list is empty")
        if not all(x.strip() for x in parts):
            raise UnitError(f"{noun} list {text!r} has an empty item (a stray comma?)")
    # Only int() is guarded: UnitError is a ValueError, so the checks below must sit
    # outside the try or their messages would be replaced by the generic one.
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split(".."))
        else:
            out = [int(x) for x in text.split(",")]
    except ValueError:
        raise UnitError(f"{noun}s must look like {example}, got {text!r}") from None
    if ".." in text:
        if lo < minimum or hi < lo:
            raise UnitError(f"{noun}s range {text!r} must be A..B with {minimum} <= A <= B")
        return (lo, hi), None
    if any(p < minimum for p in out):
        raise UnitError(f"{noun}s must be >= {minimum}, got {text!r}")
    if out != sorted(set(out)):
        raise UnitError(f"{noun} list must be strictly increasing, got {text!r}")
    return None, out


def parse_shape(value, name="shape"):
    """Parse layer widths or dimensions: ``"64,32"``, ``"64x32"``, ``16`` or ``[64, 32]``.

    Parameters
    ----------
    value : str, int or sequence of int
        Integers >= 1 separated by commas or ``x`` (spaces around them are
        ignored, an empty item is refused), one integer, or a list or tuple of integers.
    name : str, optional
        What the value is (``"hidden"``, ``"dims"``), for the message.

    Returns
    -------
    tuple of int

    Raises
    ------
    UnitError
        For anything else, an empty shape, or an entry below 1.

    Examples
    --------
    >>> parse_shape("64,32"), parse_shape("4x4"), parse_shape(16), parse_shape([8, 8])
    ((64, 32), (4, 4), (16,), (8, 8))
    >>> parse_shape("64,0", "hidden")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: hidden must look like 64,32 or 64x32 (integers >= 1), got '64,0'
    """
    if isinstance(value, str):
        try:
            # An empty item (a stray comma: "32,") is refused, not skipped.
            shape = tuple(int(x) for x in value.replace("x", ",").split(","))
        except ValueError:
            shape = ()
    elif isinstance(value, (list, tuple)):
        shape = tuple(value)
    else:
        shape = (value,)
    if not shape or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
                            and d >= 1 for d in shape):
        raise UnitError(f"{name} must look like 64,32 or 64x32 (integers >= 1), got {value!r}")
    return tuple(int(d) for d in shape)


#: Jitter distributions and the parameters each takes (see :mod:`netsim.trace.perturb`).
_JITTERS = {"lognormal": ("sigma",), "uniform": ("lo", "hi")}


def _positive(text, spec, what):
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise UnitError(f"{what} must be a number > 0 in {spec!r}, got {text!r}")
    return value


def parse_jitter(text):
    """Parse a compute-jitter spec: ``"lognormal:SIGMA"`` or ``"uniform:LO,HI"``.

    Parameters
    ----------
    text : str
        ``lognormal:0.1`` (factors ``exp(N(-SIGMA^2/2, SIGMA))``, mean 1) or
        ``uniform:0.5,1.5`` (factors uniform on ``[LO, HI]``, ``0 < LO <= HI``).
        A normal distribution is not offered: it would give negative durations.

    Returns
    -------
    tuple
        ``(name, params)``, e.g. ``("lognormal", (0.1,))``.

    Raises
    ------
    UnitError
        For an unknown distribution, a wrong number of parameters, or a
        parameter that is not a number > 0 (or ``LO > HI``).

    Examples
    --------
    >>> parse_jitter("lognormal:0.1"), parse_jitter("uniform:0.5,1.5")
    (('lognormal', (0.1,)), ('uniform', (0.5, 1.5)))
    >>> parse_jitter("normal:0.1")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: unknown jitter 'normal:0.1'; give lognormal:SIGMA or uniform:LO,HI
    """
    spec = str(text).strip()
    name, _, rest = spec.partition(":")
    params = _JITTERS.get(name.strip().lower())
    if params is None:
        raise UnitError(f"unknown jitter {spec!r}; give lognormal:SIGMA or uniform:LO,HI")
    items = rest.split(",") if rest.strip() else []
    if len(items) != len(params):
        raise UnitError(f"jitter {spec!r} takes {len(params)} parameter(s): "
                        f"{name.strip().lower()}:{','.join(p.upper() for p in params)}")
    values = tuple(_positive(x.strip(), spec, p) for x, p in zip(items, params))
    if len(values) == 2 and values[0] > values[1]:
        raise UnitError(f"jitter {spec!r} needs LO <= HI")
    return name.strip().lower(), values


_STRAGGLER = re.compile(r"^\s*(?:(\d+)|p\s*=\s*([^:]+?))\s*:\s*([^x\s]+)\s*x?\s*$")


def parse_straggler(text):
    """Parse a straggler spec: ``"R:Kx"`` (rank R is K times slower) or ``"p=P:Kx"``
    (every compute op is, with probability P, K times slower); several separated by commas.

    Parameters
    ----------
    text : str
        E.g. ``"0:10x"``, ``"0:10x,3:2x"`` or ``"p=0.01:5x"``.

    Returns
    -------
    list of tuple
        ``("rank", R, K)`` or ``("p", P, K)`` per item.

    Raises
    ------
    UnitError
        For an item of neither form, ``K`` not a number > 0, ``P`` outside
        ``[0, 1]``, or a rank given twice.

    Examples
    --------
    >>> parse_straggler("0:10x"), parse_straggler("p=0.01:5x,2:3")
    ([('rank', 0, 10.0)], [('p', 0.01, 5.0), ('rank', 2, 3.0)])
    >>> parse_straggler("0:-1x")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: straggler factor K must be a number > 0 in '0:-1x', got '-1'
    """
    spec = str(text).strip()
    out, ranks = [], set()
    for item in spec.split(","):
        m = _STRAGGLER.match(item)
        if not m:
            raise UnitError(f"straggler {item.strip()!r} in {spec!r} must look like R:Kx (rank R "
                            f"is K times slower) or p=P:Kx (each op with probability P)")
        k = _positive(m.group(3), spec, "straggler factor K")
        if m.group(1) is not None:
            r = int(m.group(1))
            if r in ranks:
                raise UnitError(f"straggler rank {r} is given twice in {spec!r}")
            ranks.add(r)
            out.append(("rank", r, k))
        else:
            try:
                p = float(m.group(2))
            except ValueError:
                p = math.nan
            if not 0 <= p <= 1:
                raise UnitError(f"straggler probability P must be in [0, 1] in {spec!r}, "
                                f"got {m.group(2)!r}")
            out.append(("p", p, k))
    return out


def parse_spec(spec, what="topology", error=UnitError):
    """``NAME[:key=value,...]`` as the name and its options, as texts (one parser for every spec).

    Topology specs (``star:n=4,bandwidth=10Gbps``) and transformer configs
    (``gpt3-13b:layers=8,seq=1024``) are read by it alike: an empty item (a stray comma),
    an item without ``=`` or an empty value, and a key given twice are refused, never
    skipped or overwritten. Each caller types and checks the values.

    Parameters
    ----------
    spec : str
    what : str, optional
        What the spec is, for the message (``topology``, ``--config``).
    error : type, optional
        The exception class raised.

    Returns
    -------
    name : str
    options : dict
        Key -> its text (stripped), in the order given.

    Examples
    --------
    >>> parse_spec("star:n=4, bandwidth=10Gbps")
    ('star', {'n': '4', 'bandwidth': '10Gbps'})
    >>> parse_spec("gpt3-13b:layers=8,layers=16", "--config")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: --config 'gpt3-13b:layers=8,layers=16' gives option 'layers' twice
    >>> parse_spec("star:n=4,")
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: topology 'star:n=4,' has an empty option (a stray comma?)
    """
    name, colon, rest = spec.partition(":")
    options = {}
    for item in rest.split(",") if colon else ():
        key, eq, value = item.partition("=")
        key = key.strip()
        if not key and not eq:
            raise error(f"{what} {spec!r} has an empty option (a stray comma?)")
        if not key or not eq or not value.strip():
            raise error(f"{what} option {item!r} must be key=value")
        if key in options:
            raise error(f"{what} {spec!r} gives option {key!r} twice")
        options[key] = value.strip()
    return name, options
