"""Command-line values: typed paradigm or topology options (worker ranges: netsim.units).

Human text comes in (``2..64``, ``servers=2``, ``hidden=32,16``); plain Python
values go out. Bad text is a :class:`~netsim.errors.NetsimError` naming it.
"""

from netsim.errors import NetsimError
from netsim.units import parse_shape

__all__ = ["option_value", "paradigm_options"]


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
            return parse_shape(text, key)
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
