"""Errors and warnings raised by bayes_tee.

Every user-facing problem is one of these classes, so a notebook can filter or catch them:

>>> import warnings, bayes_tee as bt
>>> warnings.simplefilter("error", bt.DiagnosticWarning)   # make a bad fit fatal
"""

from __future__ import annotations

import warnings


class DesignError(ValueError):
    """The data or the column roles cannot be used; the message names the column and the fix."""


class DesignWarning(UserWarning):
    """Something about the design was changed for the user (rows dropped, a facet removed)."""


class DiagnosticWarning(UserWarning):
    """A fit failed a convergence check (R-hat, ESS, divergences): its numbers are not reliable."""


class CalibrationWarning(UserWarning):
    """A judge-calibration diagnostic failed: Youden J is small, or calibration differs between
    systems where it was assumed shared; corrected estimates need a weaker claim.
    """


# A failed fit must be visible every time a summary of it is shown, not once per session.
warnings.filterwarnings("always", category=DiagnosticWarning)
