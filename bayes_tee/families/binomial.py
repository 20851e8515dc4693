"""The binomial family: 0/1 outcomes through the logit GLMM, components on the logit scale with
the logistic residual pi^2/3, theta and probability-scale shares by simulation.

>>> BINOMIAL.scale_note
' (on the logit scale)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.exceptions import DesignError
from .base import Family

#: The GLMM's defaults. Its tuning is short (nutpie adapts within 500 steps there, and the early
#: trees are the deepest, so tuning is the costly part) and its draws many: near separation its
#: global logit SDs have an ESS of 5-6% of the draws (Messing (2026)'s safety data: at 2000
#: draws per chain the least had 386; at 3000 every ESS passed 400 but one seed's R-hat of
#: sigma_item was 1.012, the chance level at that ESS; at 4000 both seeds pass every check).
#: A fit that fails its checks there goes on, to twice as many at most
#: (:data:`bayes_tee.tee.fit.EXTEND`).
TUNE, DRAWS = 500, 4000


@dataclass(frozen=True)
class Binomial(Family):
    """Logit link on successes out of trials per cell."""

    def check_outcome(self, column: str, non_binary: Any) -> None:
        """Refuse an outcome with values other than 0 and 1, naming the recode."""
        if non_binary:
            raise DesignError(
                f"family='binomial' needs a 0/1 outcome, but column {column!r} has other values "
                f"(e.g. {non_binary}). Recode it to 0/1 (e.g. df[{column!r}] = (df[{column!r}] > threshold)"
                ".astype(int)) or use family='gaussian' for graded scores."
            )

    def has_cell_term(self, overdispersion: bool) -> bool:
        """The observation-level effect is there only with overdispersion (calls that repeat)."""
        return bool(overdispersion)


BINOMIAL = Binomial(
    name="binomial",
    link="logit",
    model_label="logit GLMM",
    scale="latent (logit)",
    tune=TUNE,
    draws=DRAWS,
    # the likelihood raises it to 0.95 where few-level shared terms need it (levels.glmm_accept)
    target_accept=0.9,
    default_method="binomial",
    theta_variable="p_panel",
    fixed_residual=True,
    formula=True,
    residual_variance=float(np.pi**2 / 3),
)
