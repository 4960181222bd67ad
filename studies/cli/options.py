"""Command-line values: typed paradigm or topology options (worker ranges: netsim.units).

Human text comes in (``2..64``, ``servers=2``, ``hidden=32,16``); plain Python
values go out. Bad text is a :class:`~netsim.errors.NetsimError` naming it.
"""

from netsim.comm.library import LIBRARIES
from netsim.engine.tcp import TRANSPORTS
from netsim.errors import NetsimError
from netsim.units import parse_bytes, parse_jitter, parse_shape, parse_straggler
from workloads.option_ranges import check_needs, check_option

from studies.cli.console import GIVEN

__all__ = ["option_value", "paradigm_options", "add_perturb_arguments", "perturb_options",
           "perturb_label", "add_force_argument", "given_options", "refuse_with_list"]


def _number_or_text(text):
    """An int if the text is one, else a float if it is one, else the text itself."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def option_value(key, text, default, words=()):
    """Parse the text of option ``key`` to the type of its ``default``.

    An option named ``*_bytes`` takes a size in human units (``1kB``, ``4MiB``,
    :func:`netsim.units.parse_bytes`). A bool takes true/false (1/0, yes/no, on/off) or one of ``words`` (kept as
    text: an option such as ps-sync's ``overlap`` that is a bool or a mode), a tuple or list
    comma-separated integers, an int or float a number; with no default
    (None) the text becomes an int, a float, a tuple of comma-separated
    integers, or stays text.

    Parameters
    ----------
    key : str
        The option's name, for the message.
    text : str
    default : object
        The option's default, whose type is the value's.
    words : tuple of str, optional
        Texts a bool option also takes, returned as they are.

    Raises
    ------
    NetsimError
        Naming the option and the text, if it does not parse.

    Examples
    --------
    >>> option_value("hidden", "32,16", (64,)), option_value("nics", "true", False)
    ((32, 16), True)
    >>> option_value("overlap", "layerwise", True, ("none", "layerwise"))
    'layerwise'
    >>> option_value("partition_bytes", "1kB", None), option_value("bucket_bytes", "4MiB", 1)
    (1000.0, 4194304.0)
    >>> option_value("hidden", "256,256", None), option_value("hidden", "256", None)
    ((256, 256), 256)
    >>> option_value("servers", "two", 1)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: option servers takes an integer, got 'two'
    """
    if not str(text).strip():
        raise NetsimError(f"option {key} has an empty value; give {key}=VALUE")
    if key.endswith("_bytes"):   # a size, in units as every byte option takes them (1kB, 4MiB)
        try:
            return parse_bytes(text)
        except NetsimError as exc:
            raise NetsimError(f"option {key}: {exc}") from None
    if isinstance(default, bool):
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        if text in words:
            return text
        also = "".join(f", {w}" for w in words)
        raise NetsimError(f"option {key} takes true, false{also}; got {text!r}")
    try:
        if isinstance(default, (tuple, list)):
            return parse_shape(text, key)
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        kind = ("comma-separated integers" if isinstance(default, (tuple, list)) else
                "an integer" if isinstance(default, int) else "a number")
        raise NetsimError(f"option {key} takes {kind}, got {text!r}") from None
    if default is None and "," in text:  # ringtmp's hidden=256,256 (its default is None)
        try:
            return parse_shape(text, key)
        except ValueError:
            return text
    return _number_or_text(text) if default is None else text


def paradigm_options(name, entry, items):
    """``--set KEY=VALUE`` items as typed options of paradigm ``name``.

    Parameters
    ----------
    name : str
        The paradigm's name, for the message.
    entry : workloads.Paradigm or None
        Its registry entry (None for an unknown paradigm or none given).
    items : list of str
        ``KEY=VALUE`` texts.

    Returns
    -------
    dict
        Option name -> value of the type of its default (:func:`option_value`).

    Raises
    ------
    NetsimError
        For an option the paradigm does not have (listing its options), one given twice,
        one that applies only with another's value the options leave out
        (:func:`workloads.option_ranges.check_needs`), or a value out of the option's range (:func:`workloads.option_ranges.check_option`,
        the check the paradigm and a sweep config make).

    Examples
    --------
    >>> from workloads import PARADIGMS
    >>> paradigm_options("ps-sync", PARADIGMS["ps-sync"], ["servers=2"])
    {'servers': 2}
    """
    options = {}
    for item in items:
        key, eq, value = item.partition("=")
        if entry is None or not eq or key not in entry.options:
            known = f"{name} options are {', '.join(entry.options)}" if entry else "options need a PARADIGM"
            raise NetsimError(f"--set {item!r}: {known}")
        if key in options:
            raise NetsimError(f"--set {key}= given twice; give each option once")
        options[key] = check_option(key, option_value(key, value, entry.options[key][0],
                                                      (entry.words or {}).get(key, ())), name)
    check_needs(options, {k: v[0] for k, v in entry.options.items()} if entry else {})
    return options


STRAGGLER_HELP = ("R:Kx makes rank R K times slower (0:10x; several: 0:10x,3:2x); p=P:Kx makes "
                  "every compute op, with probability P, K times slower (p=0.01:5x)")
JITTER_HELP = ("multiply every compute op by an independent draw: lognormal:SIGMA "
               "(exp(N(-SIGMA^2/2, SIGMA)), mean 1) or uniform:LO,HI")


LIBRARY_HELP = ("communication library that expands the trace's collectives at replay: auto "
                "(default: NCCL's plan where every member is a GPU, MPICH's schedules "
                "elsewhere), mpich, nccl, or gloo (allreduce over TCP with its copies and sums "
                "on the hosts' cores, netsim.comm.gloo) (netsim.comm.library)")


def add_library_argument(p):
    """Add ``--library {auto,mpich,nccl,gloo}`` (default auto) to ``p`` or an argument group.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_library_argument(p)
    >>> p.parse_args([]).library, p.parse_args(["--library", "nccl"]).library
    ('auto', 'nccl')
    """
    p.add_argument("--library", choices=LIBRARIES, default="auto", help=LIBRARY_HELP)


def add_transport_argument(p):
    """Add ``--transport {fluid,tcp}`` (default fluid) to ``p`` or an argument group.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_transport_argument(p)
    >>> p.parse_args([]).transport, p.parse_args(["--transport", "tcp"]).transport
    ('fluid', 'tcp')
    """
    p.add_argument("--transport", choices=TRANSPORTS, default="fluid",
                   help="'fluid' (default): a message moves at its max-min share from its first "
                        "byte; 'tcp': each message is a TCP transfer, slow start from 10 "
                        "segments doubling every round trip until it reaches its share, "
                        "store-and-forward of the first segment, connections kept per pair "
                        "(netsim.engine.tcp; loss, time-outs and Cubic are not modelled)")


def add_perturb_arguments(p, seed_help=None):
    """Add ``--straggler``, ``--jitter`` (and ``--seed`` unless the parser has one) to ``p``.

    The trace is perturbed at replay time (:mod:`netsim.trace.perturb`), not re-recorded.

    Parameters
    ----------
    p : argparse.ArgumentParser
    seed_help : str, optional
        Help of a new ``--seed`` option; None if the parser has its own ``--seed``.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_perturb_arguments(p, "seed of the draws")
    >>> p.parse_args(["--straggler", "0:10x"]).straggler, p.parse_args([]).seed
    ('0:10x', 0)
    """
    g = p.add_argument_group("heterogeneity at replay time (netsim.trace.perturb; no re-recording)")
    g.add_argument("--straggler", metavar="R:Kx|p=P:Kx", help=STRAGGLER_HELP)
    g.add_argument("--jitter", metavar="DIST:PARAMS", help=JITTER_HELP)
    if seed_help is not None:
        g.add_argument("--seed", type=int, default=0, help=seed_help)


def perturb_options(args):
    """The :func:`netsim.trace.perturb.perturb` options of parsed arguments, their specs checked.

    Parameters
    ----------
    args : argparse.Namespace
        With ``straggler``, ``jitter`` and ``seed`` (any may be absent).

    Returns
    -------
    dict
        ``straggler``, ``jitter`` and ``seed`` for :func:`netsim.trace.perturb.perturb`;
        empty if neither spec is given.

    Raises
    ------
    NetsimError
        For a bad spec (:func:`netsim.units.parse_straggler`,
        :func:`netsim.units.parse_jitter`), before any work starts.

    Examples
    --------
    >>> import argparse
    >>> perturb_options(argparse.Namespace(straggler="0:10x", jitter=None, seed=3))
    {'straggler': '0:10x', 'seed': 3}
    >>> perturb_options(argparse.Namespace(straggler="0:10", jitter="lognormal:x", seed=0))
    Traceback (most recent call last):
    ...
    netsim.errors.UnitError: --jitter: sigma must be a number > 0 in 'lognormal:x', got 'x'
    """
    out = {}
    for key, parse in (("straggler", parse_straggler), ("jitter", parse_jitter)):
        spec = getattr(args, key, None)
        if spec is None:
            continue
        try:
            parse(spec)
        except NetsimError as exc:
            raise type(exc)(f"--{key}: {exc}") from None
        out[key] = spec
    if out:
        out["seed"] = getattr(args, "seed", 0) or 0
    return out


def perturb_label(options):
    """Short text of a perturbation (``straggler 0:10x, jitter lognormal:0.1``), '' for none.

    Examples
    --------
    >>> perturb_label({"straggler": "0:10x", "seed": 0}), perturb_label({})
    ('straggler 0:10x', '')
    """
    return ", ".join(f"{k} {options[k]}" for k in ("straggler", "jitter") if options.get(k))


FORCE_HELP = ("run even if the estimated size of the traces (ops x the bytes of their columns, "
              "studies.scaling.trace_size) exceeds the memory available")


def add_force_argument(p):
    """Add ``--force``: go on past the memory estimate of :mod:`studies.scaling.trace_size`.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_force_argument(p)
    >>> p.parse_args([]).force, p.parse_args(["--force"]).force
    (False, True)
    """
    p.add_argument("--force", action="store_true", help=FORCE_HELP)


def given_options(args, add_arguments):
    """The options of parsed ``args`` given on the command line, in the parser's order.

    An option counts as given when the command line holds it (the parser notes each plain
    option in ``args.options_given``, :data:`studies.cli.console.GIVEN`, so ``--tp 8`` counts though 8 is its
    default), or when its value differs from the default of the parser that
    ``add_arguments`` fills (a flag, or ``args`` made without the parser); an option
    ``args`` does not hold is not counted.

    Parameters
    ----------
    args : argparse.Namespace
    add_arguments : callable
        ``add_arguments(parser)`` of a command (or of part of one).

    Returns
    -------
    dict
        Destination -> the option's longest flag (a positional argument: its name in
        capitals).

    Examples
    --------
    >>> import argparse
    >>> def add(p):
    ...     p.add_argument("name", nargs="?"); p.add_argument("--epochs", "-e", type=int)
    >>> given_options(argparse.Namespace(name="x", epochs=None), add)
    {'name': 'NAME'}
    >>> given_options(argparse.Namespace(name=None, epochs=3), add)
    {'epochs': '--epochs'}
    >>> given_options(argparse.Namespace(name=None, epochs=None, options_given={"epochs"}), add)
    {'epochs': '--epochs'}
    """
    import argparse

    parser = argparse.ArgumentParser(add_help=False)
    add_arguments(parser)
    seen = getattr(args, GIVEN, frozenset())
    return {action.dest: (max(action.option_strings, key=len) if action.option_strings
                          else action.dest.upper())
            for action in parser._actions
            if hasattr(args, action.dest) and (getattr(args, action.dest) != action.default
                                               or (action.dest in seen
                                                   and action.option_strings))}


def refuse_with_list(args, add_arguments, what):
    """Refuse ``--list`` given with another option or argument: ``--list`` ignores them all.

    An option counts as given as :func:`given_options` counts it (on the command line,
    even at its default value); ``--list`` and ``--quiet`` themselves are not counted.

    Parameters
    ----------
    args : argparse.Namespace
        The command's parsed arguments.
    add_arguments : callable
        The command's ``add_arguments(parser)``.
    what : str
        What ``--list`` lists, for the message (``every paradigm``).

    Raises
    ------
    NetsimError
        ``--list lists WHAT; it takes no OPTION``, naming the first given (a positional
        argument by its name in capitals).

    Examples
    --------
    >>> import argparse
    >>> def add(p):
    ...     p.add_argument("name", nargs="?"); p.add_argument("--list", action="store_true")
    ...     p.add_argument("--epochs", type=int)
    >>> refuse_with_list(argparse.Namespace(name=None, list=True, epochs=None), add, "all")
    >>> refuse_with_list(argparse.Namespace(name=None, list=True, epochs=3), add, "all")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: --list lists all; it takes no --epochs
    """
    for dest, name in given_options(args, add_arguments).items():
        if dest not in ("list", "quiet"):
            raise NetsimError(f"--list lists {what}; it takes no {name}")
