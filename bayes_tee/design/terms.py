"""The terms of the TEE model (Messing 2026, Eq. 1) and which of them a design identifies.

A *term* is one variance component: a random effect with its SD, a fixed factor whose
sensitivity index is the population variance of its level effects, or the residual cell/replicate
noise. Each term knows the facets it is indexed by, which is all the D-study needs: a component
enters Var(theta_hat) divided by the product of the level counts of its facets.

>>> [t.label for t in model_terms(("item", "prompt"), replicates=True)]
['item', 'prompt', 'item:prompt', 'replicate']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..families import get_family

#: Crossed facets in the order used for arrays and labels.
FACETS: tuple[str, ...] = ("item", "prompt", "temperature", "judge", "position")

#: Display order of components in every summary.
COMPONENT_ORDER: tuple[str, ...] = (
    "item",
    "category",
    "prompt",
    "judge",
    "temperature",
    "position",
    "item:prompt",
    "item:temperature",
    "prompt:temperature",
    "item:judge",
    "prompt:judge",
    "cell",
    "replicate",
)

Kind = Literal["random", "fixed", "residual"]


@dataclass(frozen=True)
class Term:
    """One variance component.

    Parameters
    ----------
    label : str
        lme4-style label, e.g. ``"item:prompt"``.
    facets : tuple of str
        Facets the term is indexed by; ``"replicate"`` for the within-cell noise.
    kind : {"random", "fixed", "residual"}
        ``fixed`` terms report a sensitivity index (population variance of level effects);
        ``residual`` is the within-cell replicate noise.
    """

    label: str
    facets: tuple[str, ...]
    kind: Kind

    @property
    def key(self) -> str:
        """Name-safe form of the label used for model variables (``item:prompt`` -> ``item_prompt``)."""
        return self.label.replace(":", "_")

    @property
    def var_name(self) -> str:
        """Name of the model variable that carries this term's draws."""
        return f"{self.key}_effect" if self.kind == "fixed" else f"sigma_{self.key}"


_INTERACTIONS: tuple[tuple[str, str], ...] = (
    ("item", "prompt"),
    ("item", "temperature"),
    ("prompt", "temperature"),
    ("item", "judge"),
    ("prompt", "judge"),
)


def cell_term(terms: list[Term]) -> Term:
    """The term indexed by every crossed facet: the cell-level error, integrated out of the model.

    >>> cell_term(model_terms(("item", "prompt"), replicates=True)).label
    'item:prompt'
    """
    crossed = [t for t in terms if t.kind != "residual" and t.label != "category"]
    widest = max(crossed, key=lambda t: len(t.facets))
    return widest


def model_terms(
    facets: tuple[str, ...],
    *,
    replicates: bool,
    category: bool = False,
    judge_effect: Literal["fixed", "random"] = "fixed",
    family: Literal["gaussian", "binomial"] = "gaussian",
    overdispersion: bool = True,
) -> list[Term]:
    """Terms identified by a crossed design over ``facets``.

    Parameters
    ----------
    facets : tuple of str
        Facets with two or more levels, a subset of :data:`FACETS`; must include ``"item"``.
    replicates : bool
        Whether some cell holds two or more calls, which separates replicate noise from the
        cell-level error.
    category : bool
        Items are nested in categories (``item = category + within-category item``).
    judge_effect : {"fixed", "random"}
        Judges as a fixed factor (sensitivity index over the panel) or a random facet.
    family : {"gaussian", "binomial"}
        ``binomial`` (logit GLMM): the call-level residual ``replicate`` is the logistic
        latent residual (variance pi^2/3, fixed) whether or not cells repeat, and the cell term
        is the observation-level random effect, kept only with ``overdispersion``.
    overdispersion : bool
        Binomial only: include the cell-level (observation-level) random effect.

    Returns
    -------
    list of Term
        In :data:`COMPONENT_ORDER`.

    Examples
    --------
    >>> [t.label for t in model_terms(("item", "prompt", "judge"), replicates=True)]
    ['item', 'prompt', 'judge', 'item:prompt', 'item:judge', 'prompt:judge', 'cell', 'replicate']
    """
    present = [f for f in FACETS if f in facets]
    terms = [Term("item", ("item",), "random")]
    if category:
        terms.append(Term("category", ("category",), "random"))
    if "prompt" in present:
        terms.append(Term("prompt", ("prompt",), "random"))
    if "judge" in present:
        terms.append(Term("judge", ("judge",), "random" if judge_effect == "random" else "fixed"))
    if "temperature" in present:
        terms.append(Term("temperature", ("temperature",), "fixed"))
    if "position" in present:
        # Presentation order of a pairwise comparison (Messing 2026 App. H): a fixed factor with
        # P = 2 levels, its sensitivity index the squared order bias. No interactions: item x
        # order and judge x order effects stay in the cell error.
        terms.append(Term("position", ("position",), "fixed"))
    terms += [Term(f"{a}:{b}", (a, b), "random") for a, b in _INTERACTIONS if a in present and b in present]
    # The cell-level error is the interaction of all crossed facets; it is a separate term only
    # when no other term already has exactly those facets (item x prompt alone: the cell error
    # is item:prompt). Without replicates it is the residual and absorbs replicate noise.
    cell_facets = tuple(present)
    fam = get_family(family)
    if all(set(t.facets) != set(cell_facets) for t in terms) and fam.has_cell_term(overdispersion):
        terms.append(Term("cell", cell_facets, "random"))
    if replicates or fam.fixed_residual:
        terms.append(Term("replicate", (*cell_facets, "replicate"), "residual"))
    order = {name: i for i, name in enumerate(COMPONENT_ORDER)}
    return sorted(terms, key=lambda t: order[t.label])
