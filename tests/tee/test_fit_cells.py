"""The general cell-level model on the balanced demo (its own file, so pytest-xdist runs this
slow fit beside the other slow files, not after them). The marginal model's likelihood is
checked exactly against the dense Gaussian in test_linalg.py and end to end on unbalanced data
in test_fit.py.
"""

import numpy as np
import pytest

import bayes_tee as bt


@pytest.mark.slow
def test_cell_model_agrees_with_the_balanced_shortcut(
    demo_post, demo_post_cells, agrees_with_the_balanced_shortcut
):
    agrees_with_the_balanced_shortcut(demo_post, demo_post_cells)


@pytest.mark.slow  # the cell-model fixture takes a minute
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
    assert lik.shape == (4, 25) and np.isfinite(lik.values).all()
    assert np.isfinite(prior["sigma_item"].values).all()
