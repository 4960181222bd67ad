"""Which measured steps of an imported profile a replay is compared with, and why.

A profile's ``ProfilerStep#N`` marks time every step the profiler recorded, but not every
step measures the training loop's steady state:

* an **empty** step, with no GPU (or collective) op launched in it, measures the host alone:
  PyTorch's profiler opens a last ``ProfilerStep`` when the loop's final ``step()`` call
  returns, and it holds nothing (it is never compared);
* the **first** recorded step carries one-time work (allocator growth, communicator and
  autotuning set-up, the profiler's own start): left out when steps were not chosen by hand
  and at least one other step remains;
* a **partial final** step, cut short by the profiler's stop, launches fewer ops than the
  steps before it: left out, when steps were not chosen, if it launches fewer than the
  median of the other steps.

When the user selects steps (``--steps``), every selected step that is not empty is compared.
"""

import numpy as np

__all__ = ["compared_steps"]


def compared_steps(ops_per_step, selected=False, numbers=None):
    """The steps to compare (indices into the kept steps) and a note saying which were left out.

    Parameters
    ----------
    ops_per_step : list of int
        Ops launched in each kept step, in order.
    selected : bool
        True when the user chose the steps: only empty ones are left out.
    numbers : list of int, optional
        The steps' ``ProfilerStep#`` numbers, for the note (default: positions from 0).

    Returns
    -------
    keep : list of int
    note : str
        ``"all"``, or what was left out and why.

    Examples
    --------
    >>> compared_steps([5023, 5025, 5025], numbers=[4, 5, 6])
    ([1, 2], 'left out: ProfilerStep#4 (warm-up)')
    >>> compared_steps([90, 100, 100, 40, 0])
    ([1, 2], 'left out: step 0 (warm-up), step 3 (partial), step 4 (empty)')
    >>> compared_steps([90, 100, 0], selected=True)
    ([0, 1], 'left out: step 2 (empty)')
    >>> compared_steps([7])
    ([0], 'all')
    """
    counts = [int(c) for c in ops_per_step]
    why = {i: "empty" for i, c in enumerate(counts) if c == 0}
    full = [i for i, c in enumerate(counts) if c > 0]
    if not selected and len(full) >= 3:
        last, others = full[-1], full[:-1]
        if counts[last] < np.median([counts[i] for i in others]):
            why[last] = "partial"
            full = others
    if not selected and len(full) >= 2:
        why[full[0]] = "warm-up"
        full = full[1:]
    label = (lambda i: f"step {i}") if numbers is None else (lambda i: f"ProfilerStep#{numbers[i]}")
    note = ", ".join(f"{label(i)} ({why[i]})" for i in sorted(why))
    return full, ("left out: " + note) if note else "all"
