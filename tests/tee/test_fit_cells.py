"""The general cell-level model on a balanced pilot (its own file, so pytest-xdist runs this
slow fit beside the other slow files, not after them). The marginal model's likelihood is
checked exactly against the dense Gaussian in test_linalg.py and end to end on unbalanced data
in test_fit.py.
"""

import warnings

import numpy as np
import pytest

import bayes_tee as bt

ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature",
             replicate="replicate", progressbar=False)  # fmt: skip


@pytest.fixture(scope="module")
def pilot():
    """20 items x 3 prompts x 3 judges x 2 temperatures x 3 replicates (360 cells), balanced."""
    return bt.simulate.tee_dgp(
        n_items=20, n_prompts=3, n_judges=3, n_temperatures=2, n_replicates=3, random_seed=8
    )


@pytest.fixture(scope="module")
def demo_post_cells(pilot):
    """The pilot through the general cell-level model: 2 x 1,000 draws, which mix better than
    4 x 500 in less time (sampler seeds 2-4: bulk ESS 160-400 against 100-260, the components'
    medians 0.03-0.13 posterior SD from the balanced fit's against 0.05-0.14). Its setup takes
    7.2 s alone on two cores.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)  # asserted in the test
        return bt.fit_posterior(pilot, **ROLES, method="cells", random_seed=2, chains=2, draws=1000, tune=500)


@pytest.mark.slow
def test_cell_model_agrees_with_the_balanced_shortcut(
    pilot, demo_post_cells, agrees_with_the_balanced_shortcut
):
    balanced = bt.fit_posterior(pilot, **ROLES, random_seed=1)
    assert balanced.method == "balanced"
    agrees_with_the_balanced_shortcut(balanced, demo_post_cells)


@pytest.mark.slow  # shares the cell-model fixture
def test_log_densities_need_the_effects_of_a_cell_model(tmp_path, demo_post_cells):
    """Power-scaling needs the likelihood per draw: a cell-level fit has it in memory, not
    after saving without its random effects.
    """
    from bayes_tee.posterior.power_scaling import log_densities

    demo_post_cells.save(tmp_path / "cells.nc")
    with pytest.raises(ValueError, match="keep_effects"):
        log_densities(bt.load(tmp_path / "cells.nc"))
    few = bt.Posterior(
        demo_post_cells.idata.isel(draw=slice(0, 25)),
        demo_post_cells.design,
        demo_post_cells.priors,
        demo_post_cells.method,
    )
    prior, lik = log_densities(few)
    assert lik.shape == (2, 25) and np.isfinite(lik.values).all()
    assert np.isfinite(prior["sigma_item"].values).all()
