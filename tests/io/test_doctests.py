"""The readers' docstring examples that run without log files are run as doctests."""

import doctest

import pytest

from bayes_tee.design import roles as design
from bayes_tee.io import long_frame

OBJECTS = [long_frame, long_frame.score_value, long_frame.describe, design.frame_roles]


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: o.__name__)
def test_docstring_examples(obj):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(
        obj, globs=vars(__import__(obj.__module__ if callable(obj) else obj.__name__, fromlist=["_"]))
    )
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0
