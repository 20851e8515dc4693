"""Prior specifications as data.

Every SD gets a half-Student-t(nu=3) prior by default, scaled to the outcome's SD: weakly
informative (it puts about 90% of its mass below 2.35 outcome SDs), proper, and with no mass
piling at zero, so a small facet's SD gets a proper posterior instead of REML's boundary zero
(Messing 2026 App. C.6). Fixed-factor level effects get a zero-sum Normal, the grand mean a Normal
around the data mean. A :class:`PriorSpec` is frozen, round-trips through ``to_dict`` /
``from_dict`` and is written into every saved posterior.

Presets (for sensitivity analysis; all scales are multiples of the outcome SD):

``default``        half-t(3), scale 1.
``half_t_wide``    half-t(3), scale 2.5: lets SDs up to several outcome SDs.
``half_t_narrow``  half-t(3), scale 0.25: expects each component well below the total spread.
``half_normal``    half-normal, scale 1: lighter tail; pulls large SDs in more.
``half_cauchy``    half-Cauchy, scale 1 (Gelman 2006): heaviest tail.
``exponential``    exponential with mean 1: mode at zero, shrinks small components hardest.

Besides the presets' families, ``SDPrior("gamma", scale, nu=2)`` is the boundary-avoiding prior
of Chung et al. (2013), as blme uses it: mode ``scale``, zero density at zero, so no SD funnels
to the boundary (it pulls small components up).

>>> spec = get_prior("half_normal")
>>> spec.sd.family, PriorSpec.from_dict(spec.to_dict()) == spec
('half_normal', True)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from .exceptions import ArgumentError

if TYPE_CHECKING:
    import pymc as pm

Family = Literal["half_t", "half_normal", "half_cauchy", "exponential", "gamma"]


@dataclass(frozen=True)
class SDPrior:
    """Prior on one standard deviation, with scale in outcome-SD units.

    Parameters
    ----------
    family : {"half_t", "half_normal", "half_cauchy", "exponential", "gamma"}
    scale : float
        Scale (half-t/normal/Cauchy, gamma), or mean (exponential), as a multiple of the outcome SD.
    nu : float
        Degrees of freedom of the half-t; shape of the gamma. A gamma with shape 2 is the
        boundary-avoiding prior of Chung et al. (2013): its density vanishes linearly at zero, so
        a weakly identified SD cannot funnel to the boundary, and its mode is ``scale``.
    """

    family: Family = "half_t"
    scale: float = 1.0
    nu: float = 3.0

    def __post_init__(self) -> None:
        if self.family not in ("half_t", "half_normal", "half_cauchy", "exponential", "gamma"):
            raise ArgumentError(f"Unknown prior family {self.family!r}.")
        if not self.scale > 0 or not self.nu > 0:
            raise ArgumentError("Prior scale and nu must be positive.")

    def build(self, name: str, outcome_sd: float) -> pm.Distribution:
        """Create the PyMC variable (inside a model context)."""
        import pymc as pm  # PyMC is loaded where a PyMC graph is built

        s = self.scale * outcome_sd
        if self.family == "half_t":
            return pm.HalfStudentT(name, nu=self.nu, sigma=s)
        if self.family == "half_normal":
            return pm.HalfNormal(name, sigma=s)
        if self.family == "half_cauchy":
            return pm.HalfCauchy(name, beta=s)
        if self.family == "gamma":
            return pm.Gamma(name, alpha=self.nu, beta=1.0 / s)
        return pm.Exponential(name, lam=1.0 / s)

    def log_normaliser(self, outcome_sd: float) -> float:
        """The log density's constant: its value at ``sigma = 0`` (the same normalisation as the
        PyMC variable of :meth:`build`). The strata kernel adds the ``sigma``-dependent part
        (:mod:`bayes_tee.likelihoods.strata.kernel`).

        >>> round(SDPrior("half_normal", 1.0).log_normaliser(1.0), 4)
        -0.2258
        """
        from scipy.special import gammaln  # scipy is loaded where a density is built

        s = self.scale * outcome_sd
        if self.family == "half_t":
            nu = self.nu
            return float(
                np.log(2.0) + gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi * s * s)
            )
        if self.family == "half_normal":
            return float(0.5 * np.log(2.0 / np.pi) - np.log(s))
        if self.family == "half_cauchy":
            return float(np.log(2.0 / np.pi) - np.log(s))
        if self.family == "gamma":
            return float(-gammaln(self.nu) - self.nu * np.log(s))
        return float(-np.log(s))

    def sample(self, rng: np.random.Generator, outcome_sd: float, size: int | None = None) -> np.ndarray:
        """Draws from this prior (the distribution :meth:`build` creates), for simulation-based
        calibration.

        >>> bool(SDPrior("half_normal", 2.0).sample(np.random.default_rng(0), 1.0, 1000).mean() > 1)
        True
        """
        s = self.scale * outcome_sd
        if self.family == "half_t":
            return np.abs(rng.standard_t(self.nu, size)) * s
        if self.family == "half_normal":
            return np.abs(rng.standard_normal(size)) * s
        if self.family == "half_cauchy":
            return np.abs(rng.standard_cauchy(size)) * s
        if self.family == "gamma":
            return rng.gamma(self.nu, s, size)
        return rng.exponential(s, size)

    def support_point(self, outcome_sd: float) -> float:
        """PyMC's starting value for this prior: the scale (half-t, normal, Cauchy) or the mean
        (exponential, gamma).
        """
        if self.family == "gamma":
            return self.nu * self.scale * outcome_sd
        return self.scale * outcome_sd


@dataclass(frozen=True)
class PriorSpec:
    """Priors of the whole model.

    Parameters
    ----------
    name : str
        Preset name, or ``"custom"``.
    sd : SDPrior
        Prior on every SD unless overridden.
    overrides : tuple of (label, SDPrior)
        Per-component SD priors, e.g. ``(("prompt", SDPrior("half_normal", 0.5)),)``.
    fixed_scale : float
        SD of the zero-sum Normal prior on fixed level effects, in outcome SDs.
    system_scale : float
        The same for the compared systems' effects (a design's ``system``): wide, so that an
        extreme system is not pulled towards the others (a system measured to within 0.2
        outcome SDs is pulled in by 0.04% of its distance, ``se^2 / (se^2 + 10^2)``).
    intercept_scale : float
        SD of the Normal prior on the grand mean around the data mean, in outcome SDs.
    reference : (float, float), optional
        The ``(location, scale)`` every prior is relative to, in the outcome's units, instead of
        the data's mean and SD: priors that do not look at the data (simulation-based
        calibration; one prior for many data sets). A GLMM's latent scale has its own unit (the
        link's); its grand mean's prior is then centred at ``location`` (on the latent scale)
        instead of the data's rate.
    slope_scale : float
        SD of the Normal prior on every covariate's slope per SD of the covariate (the
        covariates are standardised), in outcome SDs (a GLMM: in the latent unit); a slope per
        level of a facet has zero-sum deviations with this SD, a random slope's SD the SD prior.

    Examples
    --------
    >>> spec = PriorSpec(overrides=(("prompt", SDPrior("half_normal", 0.5)),))
    >>> spec.for_component("prompt").family
    'half_normal'
    >>> PriorSpec(reference=(3.0, 1.2)).reference
    (3.0, 1.2)
    """

    name: str = "default"
    sd: SDPrior = field(default_factory=SDPrior)
    overrides: tuple[tuple[str, SDPrior], ...] = ()
    fixed_scale: float = 1.0
    intercept_scale: float = 2.0
    system_scale: float = 10.0
    reference: tuple[float, float] | None = None
    slope_scale: float = 1.0

    def __post_init__(self) -> None:
        if self.reference is not None:
            ref = tuple(float(v) for v in self.reference)
            if len(ref) != 2 or not np.isfinite(ref).all() or not ref[1] > 0:
                raise ArgumentError(
                    f"reference must be (location, scale) with a finite location and a positive scale, "
                    f"got {self.reference!r}."
                )
            object.__setattr__(self, "reference", ref)

    def for_component(self, label: str) -> SDPrior:
        """The SD prior of one component."""
        return dict(self.overrides).get(label, self.sd)

    def fixed_scale_of(self, label: str, system: str | None = None) -> float:
        """The prior SD (in outcome SDs) of the fixed term ``label``; ``system`` names the
        design's compared systems, whose effects get :attr:`system_scale`.

        >>> PriorSpec().fixed_scale_of("judge"), PriorSpec().fixed_scale_of("system", "system")
        (1.0, 10.0)
        """
        return self.system_scale if system is not None and label == system else self.fixed_scale

    def to_dict(self) -> dict:
        """Plain dict, for JSON."""
        d = asdict(self)
        d["overrides"] = [[k, asdict(v)] for k, v in self.overrides]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "PriorSpec":
        """Inverse of :meth:`to_dict`."""
        return cls(
            name=d["name"],
            sd=SDPrior(**d["sd"]),
            overrides=tuple((k, SDPrior(**v)) for k, v in d.get("overrides", [])),
            fixed_scale=d["fixed_scale"],
            intercept_scale=d["intercept_scale"],
            system_scale=d.get("system_scale", 10.0),
            reference=None if d.get("reference") is None else tuple(d["reference"]),
            slope_scale=d.get("slope_scale", 1.0),
        )


#: Named prior presets: ``default`` (half-t(3)), ``half_normal``, ``exponential`` and the others below.
PRESETS: dict[str, PriorSpec] = {
    "default": PriorSpec(),
    "half_t_wide": PriorSpec("half_t_wide", SDPrior("half_t", 2.5)),
    "half_t_narrow": PriorSpec("half_t_narrow", SDPrior("half_t", 0.25)),
    "half_normal": PriorSpec("half_normal", SDPrior("half_normal", 1.0)),
    "half_cauchy": PriorSpec("half_cauchy", SDPrior("half_cauchy", 1.0)),
    "exponential": PriorSpec("exponential", SDPrior("exponential", 1.0)),
}


def get_prior(spec: str | PriorSpec | dict | None = None) -> PriorSpec:
    """Resolve a preset name, a dict or a :class:`PriorSpec` to a :class:`PriorSpec`.

    Examples
    --------
    >>> get_prior().name
    'default'
    """
    if spec is None:
        return PRESETS["default"]
    if isinstance(spec, PriorSpec):
        return spec
    if isinstance(spec, dict):
        return PriorSpec.from_dict(spec)
    if spec in PRESETS:
        return PRESETS[spec]
    raise ArgumentError(
        f"Unknown prior preset {spec!r}; choose one of {sorted(PRESETS)} or pass a PriorSpec."
    )
