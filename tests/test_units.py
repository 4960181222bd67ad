"""Human units and text lists at the edges: netsim.units."""

import numpy as np
import pytest

from netsim.errors import NetsimError, UnitError
from netsim.units import (format_bandwidth, parse_bandwidth, parse_bytes, parse_seeds,
                          parse_shape, parse_time, parse_workers)


def test_prefixes_and_bits():
    # IEC 80000-13: k = 1e3, Ki = 2**10; a lower-case b is a bit.
    assert parse_bytes("1KiB") == 1024 and parse_bytes("1kB") == 1000
    assert parse_bandwidth("8bps") == 1.0 and parse_bandwidth("8B/s") == 8.0
    assert parse_time("250ns") == pytest.approx(2.5e-7)
    assert parse_bandwidth(format_bandwidth(1.25e9).replace(" ", "")) == 1.25e9


@pytest.mark.parametrize("text, expected", [
    ("2..64", [2, 4, 8, 16, 32, 64]),
    ("4..4", [4]),
    ("1..8", [1, 2, 4, 8]),
    (" 3, 5 ,7 ", [3, 5, 7]),
    (8, [8]),
])
def test_parse_workers_accepts(text, expected):
    assert parse_workers(text) == expected


@pytest.mark.parametrize("text, message", [
    ("2..x", "workers must look like 2..64 or 2,4,8, got '2..x'"),
    ("2..4..8", "workers must look like 2..64 or 2,4,8"),
    ("two", "workers must look like"),
    ("0..8", "workers range '0..8' must be A..B with 1 <= A <= B"),
    ("8..2", "workers range '8..2' must be A..B with 1 <= A <= B"),
    (",", "the worker list is empty"),
    ("2,4,", "worker list '2,4,' has an empty item (a stray comma?)"),
    # A range runs over powers of two: 3..5 is refused, not read as 3 alone (issue 18).
    ("3..5", "workers range '3..5' runs over powers of two and 3 is not one; list every "
             "value instead: 3,4,5"),
    ("2..20", "workers range '2..20' runs over powers of two and 20 is not one"),
    ("0,2", "workers must be >= 1, got '0,2'"),
    ("8,4", "worker list must be strictly increasing, got '8,4'"),
    ("4,4", "worker list must be strictly increasing"),
])
def test_parse_workers_refuses(text, message):
    with pytest.raises(UnitError) as info:
        parse_workers(text)
    assert str(info.value) == message or str(info.value).startswith(message)
    assert isinstance(info.value, NetsimError)  # the CLI prints it on one line


@pytest.mark.parametrize("text, expected", [
    ("0..4", [0, 1, 2, 3, 4]),  # every integer, not the powers of two of a workers range
    ("3..3", [3]),
    ("0,3,7", [0, 3, 7]),
    (" 7 ", [7]),
    (0, [0]),
    (f"{2**32 - 2}..{2**32 - 1}", [2**32 - 2, 2**32 - 1]),
])
def test_parse_seeds_accepts(text, expected):
    assert parse_seeds(text) == expected


@pytest.mark.parametrize("text, message", [
    ("5..2", "seeds range '5..2' must be A..B with 0 <= A <= B"),
    ("-1..2", "seeds range '-1..2' must be A..B with 0 <= A <= B"),
    ("x", "seeds must look like 0..4 or 0,3,7, got 'x'"),
    ("0..x", "seeds must look like 0..4 or 0,3,7, got '0..x'"),
    ("", "the seed list is empty"),
    ("0,,2", "seed list '0,,2' has an empty item (a stray comma?)"),
    ("-1", "seeds must be >= 0, got '-1'"),
    ("3,1", "seed list must be strictly increasing, got '3,1'"),
    (str(2**32), "seeds must be at most 2**32 - 1 = 4294967295, got '4294967296'"),
])
def test_parse_seeds_refuses(text, message):
    with pytest.raises(UnitError) as info:
        parse_seeds(text)
    assert str(info.value) == message


@pytest.mark.parametrize("value, expected", [
    ("64,32", (64, 32)), ("64x32", (64, 32)), ("4x4x4", (4, 4, 4)), (" 8 , 8 ", (8, 8)),
    ("16", (16,)), (16, (16,)), (np.int64(3), (3,)), ([8, 4], (8, 4)), ((2, 2), (2, 2)),
])
def test_parse_shape_accepts(value, expected):
    out = parse_shape(value)
    assert out == expected and all(type(d) is int for d in out)


@pytest.mark.parametrize("value", ["", ",", "32,", "64,,32", "64,a", "64;32", "0", "4x-1", 0, True, 2.5, [8, 1.5],
                                   [], None])
def test_parse_shape_refuses(value):
    with pytest.raises(UnitError, match=r"^dims must look like 64,32 or 64x32 \(integers >= 1\)"):
        parse_shape(value, "dims")


def test_sizes_up_to_two_to_the_53_bytes_are_exact_and_beyond_refused():
    """2^53 bytes (~9 PB) is the largest size at which every whole byte count is a float64
    (a 53-bit significand): accepted there, refused one whole byte later, in units and traces."""
    from netsim import TraceBuilder
    from netsim.errors import TraceError
    from netsim.units import MAX_BYTES

    assert MAX_BYTES == 2**53 and float(2**53 - 1) == 2**53 - 1  # exact just below
    assert parse_bytes(str(2**53)) == 2**53 and parse_bytes("1PB") == 1e15
    # 2^53 + 1 is no float64: it rounded to 2^53 and passed; its exact value is compared now
    for text in (str(2**53 + 1), f"{2**53 + 1}B", "9.0071992547409921PB", str(2**53 + 2),
                 "10PB", "1e300", "8PiB"):  # 8 PiB = 2^53 exactly: accepted
        if text == "8PiB":
            assert parse_bytes(text) == MAX_BYTES
            continue
        with pytest.raises(UnitError, match="over the largest accepted, 2\\^53"):
            parse_bytes(text)
    b = TraceBuilder(2)
    b.message(0, 1, float(2**53))
    assert b.build().size[0] == 2**53
    b = TraceBuilder(2)
    b.message(0, 1, float(2**53 + 2))
    with pytest.raises(TraceError, match="over 2\\^53 bytes"):
        b.build()


def test_a_ring_of_9_pb_gives_the_closed_form():
    """At the bound the replay still matches Patarasuk & Yuan's ring 2 (P-1)/P n / B + 2 (P-1) a."""
    from netsim.comm import collectives
    from netsim import simulate
    from topologies import star

    P, n, B = 4, float(2**53), 1.25e9
    r = simulate(collectives.ring_allreduce(P, n), star(P, bandwidth=B, latency=0.0))
    assert r.makespan == pytest.approx(2 * (P - 1) / P * n / B, rel=1e-9)
