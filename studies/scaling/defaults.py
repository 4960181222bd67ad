"""The defaults under which a paradigm's scaling study shows its paper's effect.

``netsim scale PARADIGM`` records on digits with each paradigm's own defaults. Two of
them hide the paper's effect or fail there, and :func:`study_defaults` changes them, each
with a sentence the report prints:

* ``ps-partitioned`` records on the ``sparse`` dataset unless a dataset is given: on dense
  digits every mini-batch touches every row, so METIS and random placement move the same
  bytes (21.7 against 21.8 us per iteration at P = 4); on sparse data METIS keeps a
  worker's rows on few servers (Li, Andersen & Smola, arXiv:1505.04636).
* ``ringtmp``'s layer partition needs a layer per node: its default model has 4 dense
  layers, so beyond P = 4 it deepens (``deepen=True``: one hidden layer of 16 per node)
  unless the model's shape is given (``hidden``, ``deepen`` or ``partition``).
"""

from workloads.paradigms.ringtmp import DEFAULT_LAYER_HIDDEN, DEFAULT_WIDTH

__all__ = ["DATASET", "DATASETS", "study_defaults"]

#: The dataset of a scaling study's recordings when none is given.
DATASET = "digits"

#: Paradigm -> the dataset its scaling study records on when none is given.
DATASETS = {"ps-partitioned": "sparse"}


def study_defaults(paradigm, workers, options, dataset=None):
    """The dataset and options a scaling study of ``paradigm`` runs with, and why.

    Parameters
    ----------
    paradigm : str
        A paradigm name (anything else, e.g. a trace file, is left as it is).
    workers : sequence of int
        The P studied.
    options : dict
        The paradigm options given.
    dataset : str, optional
        The dataset given (None: the paradigm's study default).

    Returns
    -------
    dataset : str
    options : dict
        A copy, with the options the study adds.
    notes : list of str
        One sentence per default chosen for the paradigm (none where the user chose).

    Examples
    --------
    >>> study_defaults("ps-partitioned", [2, 4], {})[0]
    'sparse'
    >>> ds, opts, notes = study_defaults("ringtmp", [2, 8], {})
    >>> ds, opts
    ('digits', {'deepen': True})
    >>> study_defaults("ringtmp", [2, 4], {})[1], study_defaults("ps-sync", [64], {})[2]
    ({}, [])
    """
    options, notes = dict(options), []
    if dataset is None:
        dataset = DATASETS.get(paradigm, DATASET)
        if paradigm in DATASETS:
            notes.append(f"dataset {dataset} (the default for {paradigm}: on dense digits "
                         "every mini-batch touches every row, so METIS and random placement "
                         "move the same bytes; give --dataset to choose)")
    layers = len(DEFAULT_LAYER_HIDDEN) + 1
    if (paradigm == "ringtmp" and max(workers) > layers
            and not {"hidden", "deepen", "partition"} & set(options)):
        options["deepen"] = True
        notes.append(f"deepen=true: the default {layers}-layer model leaves a node without a "
                     f"layer beyond P = {layers}, so the model has one hidden layer of "
                     f"{DEFAULT_WIDTH} per node and deepens with P (give --set hidden=... or "
                     "--set deepen=false to choose)")
    return dataset, options, notes
