"""The event names of early PyTorch profiler files, read as today's.

The first releases of ``torch.profiler`` (the Kineto-based profiler of PyTorch
1.8, early 2021) wrote the same events under other category and argument
names; PyTorch 1.9 and later renamed them. netsim reads both, by rewriting an
early event into today's names before anything else looks at it:

============================ ============================ =========================
early name                   today's name                 what it is
============================ ============================ =========================
category ``Operator``        ``cpu_op``                   a CPU operator; also the
                                                          ``ProfilerStep#N`` marks
category ``Runtime``         ``cuda_runtime``             a CUDA runtime call
                                                          (kernel launch), with the
                                                          ``correlation`` id
category ``Kernel``          ``kernel``                   a GPU kernel
category ``Memcpy``          ``gpu_memcpy``               a GPU copy
category ``Memset``          ``gpu_memset``               a GPU memset
category ``async``, name     category ``ac2g``            the flow from a launch to
``launch`` (``ph`` s and f)                               its kernel
argument ``Input dims``      ``Input Dims``               operator input shapes
                                                          (``record_shapes=True``)
============================ ============================ =========================

The names are those of the public sample profiles that PyTorch's TensorBoard
plugin shipped (``pytorch/kineto``, ``tb_plugin/samples``, commit 34d6ad53,
recorded January 2021; kept as ``tests/data/kineto/tb_resnet50_worker0.pt.trace.json.gz``)
against those of profiles from PyTorch 2.x (the other files of
``tests/data/kineto``). An event already in today's names is returned as it is.
"""

__all__ = ["modern", "EARLY_CATEGORIES", "EARLY_ARGUMENTS"]

#: Early ``cat`` values and today's.
EARLY_CATEGORIES = {"Operator": "cpu_op", "Runtime": "cuda_runtime", "Kernel": "kernel",
                    "Memcpy": "gpu_memcpy", "Memset": "gpu_memset"}

#: Early argument names and today's.
EARLY_ARGUMENTS = {"Input dims": "Input Dims"}


def modern(ev):
    """An event in today's category and argument names (a copy if anything was renamed).

    Parameters
    ----------
    ev : dict
        One entry of a profile's ``traceEvents``.

    Returns
    -------
    dict
        ``ev`` itself when it already uses today's names, else a shallow copy
        with its ``cat`` (and ``args`` keys) renamed as the module's table says.

    Examples
    --------
    >>> modern({"ph": "X", "cat": "Kernel", "name": "gemm", "args": {"stream": 7}})["cat"]
    'kernel'
    >>> modern({"ph": "s", "cat": "async", "name": "launch", "id": 3})["cat"]
    'ac2g'
    >>> sorted(modern({"cat": "Operator", "args": {"Input dims": [[4]]}})["args"])
    ['Input Dims']
    >>> e = {"cat": "kernel"}; modern(e) is e
    True
    """
    cat = ev.get("cat")
    new = EARLY_CATEGORIES.get(cat) if isinstance(cat, str) else None
    if cat == "async" and ev.get("name") == "launch":
        new = "ac2g"
    if new is None:
        return ev
    ev = dict(ev, cat=new)
    args = ev.get("args")
    if isinstance(args, dict) and any(k in args for k in EARLY_ARGUMENTS):
        ev["args"] = {EARLY_ARGUMENTS.get(k, k): v for k, v in args.items()}
    return ev
