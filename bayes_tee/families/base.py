"""What depends on the outcome family, in one object.

A :class:`Family` says how a family's scores are modelled and how its answers are reported:
its link, the scale its variance components live on, whether its scores are standardised before
sampling, its sampler defaults, which draws give theta and whether theta's interval has a closed
form, and how its outcome is checked. The rest of the package asks the family
(:func:`bayes_tee.families.get_family`) instead of testing its name, so a new family is one
module here plus its entry in :data:`bayes_tee.families.FAMILIES`.

>>> from bayes_tee.families import get_family
>>> fam = get_family("binomial")
>>> fam.link, fam.scale, fam.sampler_defaults()
('logit', 'latent (logit)', (500, 4000, 0.9))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Family:
    """One outcome family.

    Attributes
    ----------
    name : str
        The ``family=`` name.
    link : str
        ``identity`` or ``logit``: how the linear predictor maps to the mean score.
    model_label : str
        How a write-up names the model (``linear model``, ``logit GLMM``).
    scale : str
        The scale of the variance components (``outcome`` or ``latent (logit)``).
    tune, draws : int
        Default tuning steps and draws per chain.
    target_accept : float
        Default NUTS target acceptance rate.
    default_method : str or None
        The likelihood this family always takes under ``method="auto"``; ``None`` lets
        :func:`bayes_tee.likelihoods.registry.choose_method` pick by layout.
    theta_variable : str
        The posterior variable whose draws are the panel's theta.
    fixed_residual : bool
        The residual is a known constant on the latent scale (the logistic pi^2/3), not a
        parameter; the model's replicate term is then always present.
    formula : bool
        ``formula=`` fits are available.
    residual_variance : float or None
        The latent residual's variance when it is a known constant (pi^2/3 for the logit link,
        1 for the probit), else ``None``.
    """

    name: str
    link: str
    model_label: str
    scale: str
    tune: int
    draws: int
    target_accept: float
    default_method: str | None
    theta_variable: str
    fixed_residual: bool
    formula: bool
    residual_variance: float | None = None

    @property
    def latent(self) -> bool:
        """The components live on a latent scale, not on the outcome's: answers on the outcome
        (probability) scale go through simulation.
        """
        return self.link != "identity"

    @property
    def scale_note(self) -> str:
        """`` (on the logit scale)`` for a latent family, empty otherwise (for write-ups)."""
        return f" (on the {self.link} scale)" if self.latent else ""

    def sampler_defaults(self) -> tuple[int, int, float]:
        """``(tune, draws, target_accept)`` when the caller gives none."""
        return self.tune, self.draws, self.target_accept

    def check_outcome(self, column: str, non_binary: Any) -> None:
        """Raise :class:`~bayes_tee.DesignError` when the outcome does not suit the family
        (``non_binary``: a few values that are not 0/1, or empty).
        """

    def cell_counts(
        self, column: str, cells: Any, rows: Any, notes: list[str]
    ) -> tuple[Any, tuple[float, ...] | None]:
        """The per-cell table with any per-category counts the family's likelihood needs, and
        the outcome's categories (``None``: the family has none). ``rows`` is each row's cell
        and score, or ``None`` when the rows are not in memory.
        """
        return cells, None

    def has_cell_term(self, overdispersion: bool) -> bool:
        """Whether the model has a cell-level random effect (beside the residual)."""
        return True

    def standardize(
        self, design: Any, reference: tuple[float, float] | None = None
    ) -> tuple[Any, float, float]:
        """The design with its scores on the scale the sampler sees, and the location and scale
        that put draws back on the user's scale (``(design, 0.0, 1.0)``: left as it is; a GLMM
        reads the priors' ``reference`` itself).
        """
        return design, 0.0, 1.0
