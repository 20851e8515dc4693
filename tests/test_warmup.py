"""``bayes-tee warmup``: every kernel layout fits, and a bad request is refused."""

import pytest

import bayes_tee as bt
from bayes_tee.cli import warmup


def test_a_layout_warms_and_reports_its_likelihood():
    table = warmup.warm_up(["binomial", "ordinal probit, judge spreads"], jobs=1)
    assert table["method"].tolist() == ["binomial", "ordinal_probit"]
    assert (table["seconds"] > 0).all()


#: The kernel each kernel likelihood samples through.
#: (the strata kernel's balanced and augmented specializations compile apart)
KERNEL = {"balanced": "strata, balanced", "augmented": "strata, augmented", "blocks": "blocks",
          "collapsed": "collapsed", "binomial": "binomial", "ordinal": "ordinal",
          "ordinal_probit": "ordinal"}  # fmt: skip


def test_the_layouts_after_the_compiling_ones_read_their_kernels():
    """The layouts warmed after the first ``COMPILING`` use kernels those compiled (so that no
    process compiles a kernel another is compiling), and each is a kernel likelihood.
    """
    first = list(warmup.LAYOUTS)[: warmup.COMPILING]
    compiled = {KERNEL[name] for name in first if name in KERNEL}
    assert compiled == set(KERNEL.values())
    for name in list(warmup.LAYOUTS)[warmup.COMPILING :]:
        assert KERNEL[warmup._warm(name)[2]] in compiled, name


def test_bad_requests_are_refused():
    with pytest.raises(bt.ArgumentError, match="Unknown warm-up layout"):
        warmup.warm_up(["nope"])
    with pytest.raises(bt.ArgumentError, match="jobs must be at least 1"):
        warmup.warm_up(["binomial"], jobs=0)
    with pytest.raises(bt.ArgumentError, match="no kernel of theirs ships"):
        warmup.warm_up(["marginal", "blocks"], ship=True)


def test_the_command_warms_the_layouts_it_is_given(capsys):
    """``bayes-tee warmup --layouts`` (``make venv`` warms the PyMC layouts so, beside the shipped
    kernels' compile): only those layouts, and an unknown name refused in one line.
    """
    from bayes_tee.cli import main

    assert main(["warmup", "--jobs", "1", "--layouts", "binomial", "ordinal probit, judge spreads"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert [r.split()[0] for r in rows[1:-1]] == ["binomial", "ordinal"] and "ordinal_probit" in rows[2]
    assert main(["warmup", "--layouts", "nope"]) == 1
    assert "Unknown warm-up layout(s) ['nope']" in capsys.readouterr().err
