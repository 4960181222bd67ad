"""Command-line values: worker ranges and typed paradigm or topology options.

Human text comes in (``2..64``, ``servers=2``, ``hidden=32,16``); plain Python
values go out. Bad text is a :class:`~netsim.errors.NetsimError` naming it.
"""

from netsim.errors import NetsimError

__all__ = ["parse_workers", "option_value", "paradigm_options"]


def parse_workers(text):
    """Worker counts: ``2..64`` (the powers of two from 2 to 64) or ``2,3,8`` (a list).

    A range ``A..B`` runs over powers of two only, so both ends must be powers
    of two (``1..8``, ``16..256``); any other set of counts is given as a list
    (``3,4,5``). ``3..5`` is refused rather than read as ``3`` alone.

    Parameters
    ----------
    text : str or int

    Returns
    -------
    list of int
        Strictly increasing, each >= 1.

    Raises
    ------
    NetsimError
        For text of neither form, a bad range (an end that is not a power of
        two), or a list not strictly increasing.

    Examples
    --------
    >>> parse_workers("2..16"), parse_workers("3,5")
    ([2, 4, 8, 16], [3, 5])
    >>> parse_workers("3..5")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: workers range '3..5' runs over powers of two and 3 is not one; list every value instead: 3,4,5
    """
    text = str(text).strip()
    if ".." not in text:
        parts = text.split(",")
        if not any(x.strip() for x in parts):
            raise NetsimError("the worker list is empty")
        if not all(x.strip() for x in parts):
            raise NetsimError(f"worker list {text!r} has an empty item (a stray comma?)")
    # Only int() is guarded: NetsimError is a ValueError, so the range check below must sit
    # outside the try or its message would be replaced by the generic one.
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split(".."))
        else:
            out = [int(x) for x in text.split(",")]
    except ValueError:
        raise NetsimError(f"workers must look like 2..64 or 2,4,8, got {text!r}") from None
    if ".." in text:
        if lo < 1 or hi < lo:
            raise NetsimError(f"workers range {text!r} must be A..B with 1 <= A <= B")
        for end in (lo, hi):
            if end & (end - 1):
                listed = ",".join(map(str, range(lo, hi + 1))) if hi - lo < 16 else f"{lo},...,{hi}"
                raise NetsimError(f"workers range {text!r} runs over powers of two and {end} is "
                                  f"not one; list every value instead: {listed}")
        out = []
        while lo <= hi:
            out.append(lo)
            lo *= 2
        return out
    if any(p < 1 for p in out):
        raise NetsimError(f"workers must be >= 1, got {text!r}")
    if out != sorted(set(out)):
        raise NetsimError(f"worker list must be strictly increasing, got {text!r}")
    return out


def _number_or_text(text):
    """An int if the text is one, else a float if it is one, else the text itself."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def option_value(key, text, default):
    """Parse the text of option ``key`` to the type of its ``default``.

    A bool takes true/false (1/0, yes/no, on/off), a tuple or list
    comma-separated integers, an int or float a number; with no default
    (None) the text becomes an int, a float or stays text.

    Parameters
    ----------
    key : str
        The option's name, for the message.
    text : str
    default : object
        The option's default, whose type is the value's.

    Raises
    ------
    NetsimError
        Naming the option and the text, if it does not parse.

    Examples
    --------
    >>> option_value("hidden", "32,16", (64,)), option_value("nics", "true", False)
    ((32, 16), True)
    >>> option_value("servers", "two", 1)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: option servers takes a int, got 'two'
    """
    if not str(text).strip():
        raise NetsimError(f"option {key} has an empty value; give {key}=VALUE")
    if isinstance(default, bool):
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise NetsimError(f"option {key} takes true or false, got {text!r}")
    try:
        if isinstance(default, (tuple, list)):
            return tuple(int(x) for x in text.split(","))
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        raise NetsimError(f"option {key} takes a {type(default).__name__}, got {text!r}") from None
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
        For an option the paradigm does not have (listing its options).

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
        options[key] = option_value(key, value, entry.options[key][0])
    return options
