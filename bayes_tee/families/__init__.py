"""Outcome families: what depends on how a score is modelled (:class:`~.base.Family`).

:data:`FAMILIES` lists them by ``family=`` name; :func:`get_family` looks one up with an error
that names the choices. A new family is one module here and one entry below.

>>> get_family("gaussian").link
'identity'
>>> sorted(FAMILIES)
['binomial', 'gaussian', 'ordinal', 'ordinal_probit']
"""

from __future__ import annotations

from .._core.exceptions import ArgumentError
from .base import Family
from .binomial import BINOMIAL
from .gaussian import GAUSSIAN
from .ordinal import ORDINAL, ORDINAL_PROBIT

#: Every family by its ``family=`` name.
FAMILIES: dict[str, Family] = {f.name: f for f in (GAUSSIAN, BINOMIAL, ORDINAL, ORDINAL_PROBIT)}


def get_family(name: str | Family) -> Family:
    """The family called ``name`` (a :class:`Family` is returned as it is).

    Raises
    ------
    ValueError
        An unknown name; the message lists the families.

    Examples
    --------
    >>> get_family("binomial").model_label
    'logit GLMM'
    """
    if isinstance(name, Family):
        return name
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise ArgumentError(f"family must be one of {sorted(FAMILIES)}, got {name!r}.") from None


__all__ = ["FAMILIES", "Family", "get_family"]
