"""The marginal model (every random effect integrated out) on the balanced demo (its own file,
so pytest-xdist runs this slow fit beside the cell-level one)."""


def test_marginal_model_agrees_with_the_balanced_shortcut(demo_post, demo_post_marginal,
                                                          agrees_with_the_balanced_shortcut):
    agrees_with_the_balanced_shortcut(demo_post, demo_post_marginal)
    # no random-effect vectors: the balanced path's geometry
    assert demo_post_marginal.diagnostics()["ok"], demo_post_marginal.diagnostics()
    assert demo_post_marginal.info["n_free_parameters"] == demo_post.info["n_free_parameters"]
