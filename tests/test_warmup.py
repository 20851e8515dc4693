"""``bayes-tee warmup``: every kernel layout fits, and a bad request is refused."""

import pytest

import bayes_tee as bt
from bayes_tee.cli import warmup


def test_a_layout_warms_and_reports_its_likelihood():
    table = warmup.warm_up(["binomial", "ordinal probit, judge spreads"], jobs=1)
    assert table["method"].tolist() == ["binomial", "ordinal_probit"]
    assert (table["seconds"] > 0).all()


def test_every_layout_uses_a_kernel_likelihood():
    kernels = {"balanced", "augmented", "blocks", "collapsed", "binomial", "ordinal", "ordinal_probit"}
    assert len(warmup.LAYOUTS) >= 10
    for name in ("systems", "pairwise", "ordinal, judge cutpoints", "collapsed"):
        assert warmup._warm(name)[2] in kernels


def test_bad_requests_are_refused():
    with pytest.raises(bt.ArgumentError, match="Unknown warm-up layout"):
        warmup.warm_up(["nope"])
    with pytest.raises(bt.ArgumentError, match="jobs must be at least 1"):
        warmup.warm_up(["binomial"], jobs=0)
