"""The ``blocks`` likelihood is exact: integrating its sampled shared effects out (the log
density is quadratic in them) gives the marginal model's log density up to a constant, on every
layout it serves; its gradient is the log density's.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.design.build import build_design
from bayes_tee.likelihoods import build_model, choose_method, method_note
from bayes_tee.likelihoods.blocks.density import BlocksDensity, blocks_density
from bayes_tee.likelihoods.blocks.layout import DIRECT, NESTED, WOODBURY, block_sizes, blocks_limitation

ROLES = dict(outcome="score", item="item", prompt="prompt", judge="judge", temperature="temperature")
VALUE = {"log": "{}_log__", "zerosum": "{}_zerosum__", "real": "{}"}


def layout(case):
    if case == "systems_sparse":  # an adaptive comparison's data: each item holds half its cells
        df = bt.simulate.systems_dgp(8, 10, 3, n_prompts=2, random_seed=2)
        df = df[np.random.default_rng(0).random(len(df)) < 0.5]
        df["score"] = 40.0 + 7.0 * df["score"]
        roles = dict(outcome="score", item="item", prompt="prompt", judge="judge", system="model")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bt.DesignWarning)
            return build_design(df, **roles, judge_effect="random", warn=False)
    kw = dict(n_items=12, n_prompts=3, n_judges=2, n_temperatures=2, n_replicates=3, random_seed=5)
    roles, extra = dict(ROLES, replicate="replicate"), {}
    if case == "categories":
        kw["n_categories"] = 3
        roles["category"] = "category"
    if case == "random_judges":
        extra["judge_effect"] = "random"
    if case == "no_replicates":
        kw["n_replicates"] = 1
        roles.pop("replicate")
    if case == "items_only":
        kw.update(n_prompts=1, n_judges=1, n_temperatures=1, n_replicates=4)
        roles = dict(outcome="score", item="item", replicate="replicate")
    if case in ("sparse", "all_direct"):  # an adaptive run's data: most items hold a few cells
        kw["n_categories"] = 3
        roles["category"] = "category"
    df = bt.simulate.tee_dgp(**kw)
    if case in ("sparse", "all_direct"):  # all_direct: no item holds half its cells
        keys = ["item", "prompt", "judge", "temperature"]
        cells = df[keys].drop_duplicates()
        rng = np.random.default_rng(1)
        full = cells["item"].isin(df["item"].unique()[: 3 if case == "sparse" else 0])
        keep = full | (rng.random(len(cells)) < 0.25)
        df = df.merge(cells[keep], on=keys)
    df["score"] = 40.0 + 7.0 * df["score"]  # far from 0 and 1: the centring is exercised
    rng = np.random.default_rng(0)
    if case != "no_replicates":
        df = df.drop(index=rng.choice(df.index, size=len(df) // 10, replace=False))
    if case == "categories":  # sizes 2, 4, 4 and a few cells empty
        df = df[~df["item"].isin(df.drop_duplicates("item").groupby("category")["item"].first().iloc[:1])]
        df = df[~df["item"].isin(df.drop_duplicates("item").groupby("category")["item"].first().iloc[:1])]
    if case != "items_only":
        keys = [k for k in ("item", "prompt", "judge", "temperature") if k in df]
        cell = df[keys].drop_duplicates().iloc[[3, 17, 18]]
        df = df.merge(cell, how="left", indicator=True).query("_merge == 'left_only'").drop(columns="_merge")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return bt.validate_design(df, **roles, **extra)


CASES = [
    "calls_lost",
    "categories",
    "random_judges",
    "no_replicates",
    "items_only",
    "sparse",
    "all_direct",
    "systems_sparse",
]


@pytest.mark.parametrize("case", CASES)
def test_blocks_density_integrates_to_the_marginal_model(case):
    d = layout(case)
    assert not d.complete
    spec = bt.priors.get_prior()
    dens = blocks_density(d, spec)
    mm = build_model(d, spec, method="marginal")
    logp_m = mm.compile_logp(mode="FAST_COMPILE")
    init = mm.initial_point()
    lay = dens.layout
    flat = np.concatenate(
        [np.arange(lay.ndim)[lay.slices[n]] for n, k, _ in lay.parameters if k == "flat"] + [np.zeros(0, int)]
    )
    diffs = []
    for seed in range(4):
        x = dens.initial_point(np.random.default_rng(seed))
        x[flat] = 0.0
        value, grad = dens.logp_grad(x)
        # the log density is quadratic in the shared coordinates: exact Hessian by differences
        hess = np.array(
            [
                (dens.logp_grad(x + e)[1] - dens.logp_grad(x - e)[1])[flat] / 2.0
                for e in np.eye(lay.ndim)[flat]
            ]
        ).reshape(flat.size, flat.size)
        hess = -0.5 * (hess + hess.T)
        g = grad[flat]
        integral = value + 0.5 * g @ np.linalg.solve(hess, g) - 0.5 * np.linalg.slogdet(hess)[1]
        integral += 0.5 * flat.size * np.log(2 * np.pi)
        # the model's parameters where the density's coordinates stand for them (the grand
        # mean's map), the density carrying that map's Jacobian
        reported, log_jac = dens.report(x), dens.grand_mean(x)[1]
        point = {
            VALUE[k].format(n): reported[lay.slices[n]].reshape(np.shape(init[VALUE[k].format(n)]))
            for n, k, _ in lay.parameters
            if k != "flat"
        }
        diffs.append(integral - log_jac - logp_m(point))
    assert np.ptp(diffs) < 1e-8 * max(1.0, abs(np.mean(diffs))), diffs


def test_sparse_items_are_factored_on_their_observed_cells():
    """An item holding fewer cells than it lacks takes the direct form (its observed cells'
    own covariance), the others the Woodbury step; both are exact (the tests above).
    """
    d = layout("sparse")
    b = blocks_density(d, bt.priors.get_prior()).blocks
    assert b.direct.any() and not b.direct.all()
    observed = np.bincount(d.cells["item"], minlength=len(d.levels["item"]))
    np.testing.assert_array_equal(np.diff(b.offsets)[b.direct], observed[b.direct])


def test_sparse_comparisons_integrate_over_their_item_nested_effects():
    """A comparison's item holding half its cells takes the nested form: its 1 + 2 + 3 + 8
    item-nested effects are fewer than its observed or its empty cells.
    """
    size, form = block_sizes(layout("systems_sparse"))
    assert (form == NESTED).sum() >= 5
    assert (size[form == NESTED] <= 14).all()


@pytest.mark.parametrize("case", ["calls_lost", "categories", "no_replicates", "sparse", "systems_sparse"])
def test_every_form_gives_the_same_density(case):
    """Each item's three forms (Woodbury over its latent cells, its observed cells' covariance,
    Woodbury over its item-nested effects) are the same density: equal gradients everywhere and
    log densities a parameter-free constant apart (the forms drop different constants).
    """
    d = layout(case)
    spec = bt.priors.get_prior()
    n = len(d.levels["item"])
    dens = {f: BlocksDensity(d, spec, np.full(n, f)) for f in (WOODBURY, DIRECT, NESTED)}
    gaps = []
    for seed in range(3):
        x = dens[WOODBURY].initial_point(np.random.default_rng(seed))
        ref, g_ref = dens[WOODBURY].logp_grad(x)
        row = []
        for f in (DIRECT, NESTED):
            value, grad = dens[f].logp_grad(x)
            np.testing.assert_allclose(grad, g_ref, rtol=1e-9, atol=1e-9 * np.abs(g_ref).max())
            row.append(value - ref)
        gaps.append(row)
    gaps = np.array(gaps)
    assert np.ptp(gaps, axis=0).max() < 1e-8 * max(1.0, np.abs(gaps).max()), gaps
    # the direct and nested forms factor the same covariance: no constant between them
    assert abs(gaps[0, 1] - gaps[0, 0]) < 1e-8 * max(1.0, abs(gaps[0, 0]))


def test_nested_cells_are_classed_by_their_calls():
    """The nested form reads each cell's diagonal from its class (its count of calls): every
    nested cell's class holds its ``1/n - 1/R``, the classes count the nested cells and the
    columns per variance term count every nested column. The ``calls_lost`` layout has items
    whose cells fall in several classes, so the form test above also checks the slopes of the
    classes other than an item's largest (visited cell by cell) against those of its largest
    (from the trace identity).
    """
    d = layout("calls_lost")
    n = len(d.levels["item"])
    a = BlocksDensity(d, bt.priors.get_prior(), np.full(n, NESTED)).blocks.arrays
    cells = np.arange(a["cell_cls"].size)
    np.testing.assert_array_equal(a["cls_dr"][a["cell_cls"]], a["cell_dr"][cells])
    assert a["cls_n"].sum() == cells.size and (a["cls_n"] > 0).all()
    np.testing.assert_array_equal(a["col_n"], np.bincount(a["col_var"], minlength=a["col_n"].size))
    per_item = [np.unique(a["cell_cls"][a["offsets"][i] : a["offsets"][i + 1]]).size for i in range(n)]
    assert max(per_item) >= 2


def test_every_item_direct_packs_for_the_callback():
    """With no item left for the Woodbury step its per-category sums are empty, and still the
    float arrays the C callback reads (numpy's bincount of nothing is int64).
    """
    dens = blocks_density(layout("all_direct"), bt.priors.get_prior())
    assert dens.blocks.direct.all()
    logp, expand, table, *_ = dens.callback()
    assert table.shape[0] > 0


@pytest.mark.parametrize("case", ["calls_lost", "categories", "sparse", "all_direct", "systems_sparse"])
def test_blocks_gradient_is_the_log_density_s(case):
    dens = blocks_density(layout(case), bt.priors.get_prior("half_normal"))
    x = dens.initial_point(np.random.default_rng(3))
    value, grad = dens.logp_grad(x)
    eps = 1e-6
    numeric = [
        (dens.logp_grad(x + eps * e)[0] - dens.logp_grad(x - eps * e)[0]) / (2 * eps) for e in np.eye(x.size)
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5 * np.abs(grad).max())


def test_auto_takes_blocks_for_lost_calls_and_says_why():
    d = layout("calls_lost")
    assert choose_method(d) == "blocks"
    assert "integrated out exactly item by item" in method_note(d, "blocks")


def test_complete_cells_need_no_block():
    d = layout("items_only")
    dens = blocks_density(d, bt.priors.get_prior())
    assert dens.short_cells == int((d.cells["n"] < d.cells["n"].max()).sum())
    assert dens.blocks.empty_cells == 0


def test_a_design_blocks_cannot_fit_is_named_and_auto_goes_elsewhere():
    df = bt.simulate.tee_dgp(
        n_items=10, n_prompts=2, n_judges=2, n_temperatures=1, outcome="bernoulli", random_seed=1
    )
    df = df.iloc[3:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        binary = bt.validate_design(
            df, **{k: v for k, v in ROLES.items() if k != "temperature"}, family="binomial"
        )
    assert "Gaussian" in blocks_limitation(binary)
    assert choose_method(binary) != "blocks"
    assert blocks_limitation(layout("calls_lost")) is None


def test_auto_keeps_the_blocks_however_many_items():
    """The blocks' cost is linear in the items: a large run past the marginal model's cap still
    gets them (not the cell model, which samples every item effect), each item at the cost of
    its cheapest form (here its 14 item-nested effects, not its 41 short cells).
    """
    from bayes_tee.likelihoods.blocks.layout import blocks_cost
    from bayes_tee.likelihoods.registry import MAX_BLOCK_FLOPS_PER_ITEM, MAX_MARGINAL_FLOPS, marginal_cost

    rng = np.random.default_rng(0)
    items, prompts, judges, temps, reps = 1300, 5, 4, 4, 2
    grid = np.stack(
        np.meshgrid(*[np.arange(n) for n in (items, prompts, judges, temps, reps)], indexing="ij"), -1
    )
    grid = grid.reshape(-1, 5)
    grid = grid[rng.random(len(grid)) > 0.3]
    df = pd.DataFrame(grid, columns=["item", "prompt", "judge", "temperature", "replicate"])
    df["score"] = rng.normal(size=len(df)) + 0.1 * df["item"] % 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        d = bt.validate_design(df, **ROLES, replicate="replicate")
    assert marginal_cost(d) > MAX_MARGINAL_FLOPS
    assert blocks_cost(d) / items < MAX_BLOCK_FLOPS_PER_ITEM / 10
    size, form = block_sizes(d)
    assert (form == NESTED).all() and (size == 1 + 5 + 4 + 4).all()
    assert choose_method(d) == "blocks"


def test_many_level_shared_terms_take_the_short_warm_up_and_few_keep_the_default():
    """Every item-free SD with 4+ levels: 300 warm-up draws and the 0.8 target (the shared effects
    are sampled around their conditional posterior); 3 prompts keep the family's warm-up, at the
    few-level target (0.85: the grand mean sampled around its conditional posterior).
    """
    from bayes_tee.likelihoods import LIKELIHOODS
    from bayes_tee.tee.fit import sampler_settings

    lk = LIKELIHOODS["blocks"]
    few = layout("calls_lost")  # 3 prompts, fixed judges and temperatures
    df = bt.simulate.tee_dgp(
        n_items=12, n_prompts=5, n_judges=2, n_temperatures=2, n_replicates=2, random_seed=1
    )
    df = df.drop(index=df.index[::17])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        many = bt.validate_design(df, **ROLES, replicate="replicate")
    assert choose_method(many) == "blocks"
    assert lk.tune(few) is None and lk.accept(few, "nutpie") == 0.85 and lk.accept(few, "pymc") is None
    assert lk.tune(many) == 300 and lk.target_accept(many) == 0.8
    family = bt.families.get_family("gaussian")
    s = sampler_settings(family, likelihood_tune=lk.tune(many), likelihood_accept=lk.accept(many, "nutpie"))
    assert s.tune == 300 and s.target_accept == 0.8
    assert sampler_settings(family, likelihood_tune=lk.tune(few), tune=None).tune == 1000
