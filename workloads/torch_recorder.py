"""Record a real PyTorch data-parallel run and import what the profiler saw.

Needs the optional extra ``pip install 'netsim[torch]'`` (torch is imported only
when a recording starts). :func:`record` trains a small MLP on scikit-learn's
digits (:func:`workloads.datasets.digits`) with ``DistributedDataParallel``
over the gloo backend on CPU, ``workers`` processes on this machine (started by
``torch.multiprocessing``, forked where the platform can, meeting through a file in a temporary directory),
under ``torch.profiler`` with ``record_shapes=True``; each rank writes its
Chrome-trace JSON, and :func:`netsim.formats.kineto.load.load_kineto` turns them into one
netsim trace: each thread's operators as compute ops with their measured
durations, each gloo collective (``gloo:all_reduce`` on gloo's worker thread)
as a netsim collective with its true byte count (``Input Dims`` times the
element size), the waits between the threads from the timeline, and the
``ProfilerStep#N`` marks as iterations.

What the recording is: one process per rank sharing this machine's cores, so
the measured operator times include whatever else the machine runs; the
collectives' own times (loopback TCP) are dropped and replayed by the network
model on the topology the user names. Project it to other worker counts with
:func:`netsim.trace.reproject.reproject` (``netsim import kineto --ranks N``).

The model is ``64 -> hidden -> 10`` with ReLU, the layer shapes of the numpy
paradigms' MLP (:mod:`workloads.mlp`) for the same ``hidden``, so its gradient
allreduce moves the same number of float32 values as the ``allreduce``
paradigm's.
"""

import os
import tempfile

from netsim import checks

from workloads.errors import WorkloadError

__all__ = ["record", "parameter_bytes"]


def parameter_bytes(hidden, n_features=64, n_classes=10):
    """Bytes of the MLP's float32 parameters (weights and biases): one gradient allreduce.

    Parameters
    ----------
    hidden : sequence of int
        Hidden layer widths.
    n_features, n_classes : int
        Input and output widths (digits: 64 and 10).

    Returns
    -------
    int

    Examples
    --------
    >>> parameter_bytes((128,))        # 4 (64 x 128 + 128 + 128 x 10 + 10)
    38440
    """
    widths = (n_features, *hidden, n_classes)
    return 4 * sum(a * b + b for a, b in zip(widths[:-1], widths[1:]))


def _worker(rank, world, rendezvous, directory, hidden, batch_size, warmup, steps, seed):
    """One rank: DDP training on its shard of the digits, profiled; writes rank<r>.json."""
    import numpy as np
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    from workloads.datasets import digits

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank,
                            world_size=world)
    try:
        torch.manual_seed(seed)
        data = digits()
        X = torch.from_numpy(np.asarray(data.X_train[rank::world], dtype=np.float32))
        y = torch.from_numpy(np.asarray(data.y_train[rank::world], dtype=np.int64))
        widths = (data.n_features, *hidden, data.n_classes)
        layers = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        model = DistributedDataParallel(torch.nn.Sequential(*layers[:-1]))
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed + rank))

        def step(i):
            idx = order[(i * batch_size) % len(y):][:batch_size]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(X[idx]), y[idx]).backward()
            opt.step()

        # DDP rebuilds its gradient buckets after the first iteration (a broadcast): warm up.
        for i in range(warmup):
            step(i)
        path = os.path.join(directory, f"rank{rank}.json")
        sched = torch.profiler.schedule(wait=0, warmup=1, active=steps)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    schedule=sched, record_shapes=True,
                                    on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
            for i in range(1 + steps):
                step(warmup + i)
                prof.step()
        dist.barrier()
    finally:
        dist.destroy_process_group()


def record(workers=2, steps=3, hidden=(128,), batch_size=8, warmup=3, seed=0, directory=None):
    """Train with PyTorch DDP over gloo on CPU under the profiler; return the imported trace.

    Parameters
    ----------
    workers : int
        Processes (ranks), >= 2.
    steps : int
        Profiled steps (``ProfilerStep#N`` marks; netsim iterations).
    hidden : int or sequence of int
        Hidden layer widths of the MLP.
    batch_size : int
        Samples per rank per step.
    warmup : int
        Unprofiled steps first (DDP rebuilds its buckets after the first).
    seed : int
        Model initialisation and sample order.
    directory : str, optional
        Where the ranks write ``rank<r>.json`` (kept); a temporary directory,
        removed afterwards, if None.

    Returns
    -------
    netsim.Trace
        As :func:`netsim.formats.kineto.load.load_kineto` imports it, with ``recorder``
        metadata: torch version, layers, batch size, ``parameter_bytes``.

    Raises
    ------
    WorkloadError
        For a bad option, or when torch is not installed.

    Examples
    --------
    Recording takes a few seconds per rank; see ``tests/test_torch_recorder.py``.

    >>> record(workers=1)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: workers must be an integer >= 2, got 1
    """
    workers = checks.check_int(workers, "workers", minimum=2, error=WorkloadError)
    steps = checks.check_int(steps, "steps", error=WorkloadError)
    batch_size = checks.check_int(batch_size, "batch_size", error=WorkloadError)
    warmup = checks.check_int(warmup, "warmup", minimum=2, error=WorkloadError)
    seed = checks.check_int(seed, "seed", minimum=0, error=WorkloadError)
    hidden = (hidden,) if isinstance(hidden, int) else tuple(hidden)
    hidden = tuple(checks.check_int(h, "hidden width", error=WorkloadError) for h in hidden)
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError:
        raise WorkloadError("recording a PyTorch run needs torch: pip install "
                            "'netsim[torch]'") from None
    from netsim.formats.kineto.load import load_kineto

    with tempfile.TemporaryDirectory() as tmp:
        where = tmp if directory is None else os.fspath(directory)
        os.makedirs(where, exist_ok=True)
        # fork where there is one: the ranks need not import torch again, nor the caller's
        # __main__ (spawn would re-run a script without an ``if __name__ == "__main__"``).
        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        mp.start_processes(_worker, args=(workers, os.path.join(tmp, "rendezvous"), where,
                                          hidden, batch_size, warmup, steps, seed),
                           nprocs=workers, join=True, start_method=method)
        trace = load_kineto([os.path.join(where, f"rank{r}.json") for r in range(workers)])
    return trace.with_metadata(recorder={
        "torch": torch.__version__, "backend": "gloo", "layers": [64, *hidden, 10],
        "batch_size": batch_size, "parameter_bytes": parameter_bytes(hidden)})
