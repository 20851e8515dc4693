"""Matplotlib figures, one module per topic. Every function draws the tables it is given,
computes nothing, returns the Figure and never calls ``show()``; a failed fit's diagnostics
warning (``table.attrs["warning"]``) is printed under the axes.

>>> fig = post.plot_shares()                       # doctest: +SKIP
>>> fig = plot_shares(post.shares(), counts=post.design.counts)  # doctest: +SKIP
>>> fig.savefig("shares.png")                      # doctest: +SKIP
"""

from .allocation import plot_allocation
from .calibration import plot_calibration
from .noise import plot_paired_noise
from .pairwise import plot_raee
from .studies import plot_coverage, plot_sbc, plot_staircase
from .systems import plot_cost_front, plot_leaderboard, plot_p_better, plot_ranks
from .tee import (
    plot_dstudy,
    plot_frontier,
    plot_interventions,
    plot_link_comparison,
    plot_prior_sensitivity,
    plot_shares,
)

__all__ = [
    "plot_allocation",
    "plot_calibration",
    "plot_cost_front",
    "plot_coverage",
    "plot_dstudy",
    "plot_frontier",
    "plot_interventions",
    "plot_leaderboard",
    "plot_link_comparison",
    "plot_p_better",
    "plot_paired_noise",
    "plot_prior_sensitivity",
    "plot_raee",
    "plot_ranks",
    "plot_shares",
    "plot_sbc",
    "plot_staircase",
]
