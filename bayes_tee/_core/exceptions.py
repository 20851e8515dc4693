"""Errors and warnings raised by bayes_tee.

Every input problem is a :class:`DesignError` (a ``ValueError``) that names the column, file
or argument and the fix: :class:`FileError` for a file or folder that cannot be read,
:class:`ArgumentError` for an argument out of its range or naming something that does not
exist. So ``except bt.DesignError`` catches every refusal, and a notebook can filter the
warnings:

>>> import warnings, bayes_tee as bt
>>> warnings.simplefilter("error", bt.DiagnosticWarning)   # make a bad fit fatal
"""

from __future__ import annotations

import warnings


class DesignError(ValueError):
    """The data or the column roles cannot be used; the message names the column and the fix."""


class FileError(DesignError):
    """A file or folder cannot be read as what it was given for (a log, a parquet dataset, a
    saved posterior); the message names the file and what was expected.
    """


class MissingFileError(FileError, FileNotFoundError):
    """A file or folder that does not exist (also a ``FileNotFoundError``)."""


class ArgumentError(DesignError):
    """An argument's value is outside its range or names something the data or the fit does not
    have (a facet, a system, a preset); the message names the argument and the values it takes.
    """


class UnknownNameError(ArgumentError, KeyError):
    """A name looked up in a table of names (a data set, a system, a posterior group) is not
    there; also a ``KeyError``, so lookups written against a mapping still catch it.
    """

    def __str__(self) -> str:  # a KeyError quotes its message; this one reads as a sentence
        return str(self.args[0]) if self.args else ""


class SamplingError(RuntimeError):
    """The sampler could not run on valid input (every initial point failed, a worker died):
    the message says what the sampler reported and what to try.
    """


class DesignWarning(UserWarning):
    """Something about the design was changed for the user (rows dropped, a facet removed)."""


class DiagnosticWarning(UserWarning):
    """A fit failed a convergence check (R-hat, ESS, divergences): its numbers are not reliable."""


class CalibrationWarning(UserWarning):
    """A judge-calibration diagnostic failed: Youden J is small, or calibration differs between
    systems where it was assumed shared; corrected estimates need a weaker claim.
    """


def first_line(err: BaseException) -> str:
    """The first line of an error's message (a library's backtrace left out), or its type's
    name when it has no message.

    >>> first_line(RuntimeError("All initialization points failed" + chr(10) + "Stack backtrace:"))
    'All initialization points failed'
    """
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


# A failed fit must be visible every time a summary of it is shown, not once per session.
warnings.filterwarnings("always", category=DiagnosticWarning)
