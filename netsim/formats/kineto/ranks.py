"""Every rank of a profiled job its own program: its collectives matched with its peers' in order.

PyTorch requires the members of a process group to issue that group's
collectives in the same order; NCCL matches them by that order. The importer
keys each rank's n-th collective of process group ``pg`` as ``(pg, n)``, so a
rank that skipped or reordered a call (or a profile whose ranks cover
different windows) would pair unrelated calls. :func:`check_sequences`
compares every rank's sequence with its group's and names the first
difference.
"""

from netsim.errors import TraceError

__all__ = ["check_sequences"]


def _describe(rec):
    return f"{rec['tag']} of {rec['nbytes']:g} bytes over {list(rec['group'])}"


def check_sequences(paths, programs):
    """Refuse ranks whose collectives of a process group differ, naming the first difference.

    Parameters
    ----------
    paths : dict
        rank -> its profile's path, for messages.
    programs : dict
        rank -> its records (:func:`netsim.trace.programs.assemble`), collectives as
        ``{"op": "coll", "key": (pg, n), "tag": kind, "nbytes": b, "group": ranks}``.

    Raises
    ------
    TraceError
        When a member of a group lacks a call its group's lowest rank makes, has
        one more, or describes a call differently: naming both files, the
        process group and the call's position.

    Examples
    --------
    >>> ar = lambda n, b: {"op": "coll", "key": ("0", n), "tag": "allreduce", "nbytes": b,
    ...                    "group": [0, 1]}
    >>> check_sequences({0: "a.json", 1: "b.json"}, {0: [ar(0, 8)], 1: [ar(0, 8)]})
    >>> check_sequences({0: "a.json", 1: "b.json"}, {0: [ar(0, 8), ar(1, 4)], 1: [ar(0, 8)]})
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: b.json: rank 1 ends process group '0' after 1 collectives; a.json (rank 0) goes on with #1, allreduce of 4 bytes over [0, 1]
    """
    seqs = {}                             # pg -> rank -> [records in order]
    for r, prog in programs.items():
        for rec in prog:
            if rec["op"] == "coll":
                seqs.setdefault(rec["key"][0], {}).setdefault(r, []).append(rec)
    for pg, by_rank in seqs.items():
        members = sorted({g for recs in by_rank.values() for rec in recs for g in rec["group"]})
        absent = [g for g in members if g in programs and g not in by_rank]
        if absent:
            first = by_rank[min(by_rank)][0]
            raise TraceError(f"{paths[absent[0]]}: rank {absent[0]} has no collective of "
                             f"process group {pg!r}; {paths[min(by_rank)]} (rank "
                             f"{min(by_rank)}) has {len(by_rank[min(by_rank)])}, the first "
                             f"{_describe(first)}")
        lead = min(by_rank)
        ref = by_rank[lead]
        for r in sorted(by_rank):
            mine = by_rank[r]
            for n in range(max(len(ref), len(mine))):
                if n >= len(mine) or n >= len(ref):
                    short, long_ = (r, lead) if n >= len(mine) else (lead, r)
                    extra = (ref if long_ == lead else mine)[n]
                    raise TraceError(f"{paths[short]}: rank {short} ends process group {pg!r} "
                                     f"after {n} collectives; {paths[long_]} (rank {long_}) "
                                     f"goes on with #{n}, {_describe(extra)}")
                a, b = ref[n], mine[n]
                if (a["tag"], float(a["nbytes"]), list(a["group"])) != \
                        (b["tag"], float(b["nbytes"]), list(b["group"])):
                    raise TraceError(f"{paths[r]}: rank {r}'s collective #{n} of process group "
                                     f"{pg!r} is {_describe(b)}; {paths[lead]} (rank {lead}) "
                                     f"has {_describe(a)}")
