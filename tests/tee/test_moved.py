"""The modules that left ``bayes_tee.tee`` still import from their old paths, with a warning
that names the new one, and are the very same module objects.
"""

import importlib
import subprocess
import sys

import pytest

from bayes_tee._core.moved import MODULES
from bayes_tee.tee.moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_imports_the_new_module_with_a_warning(old, monkeypatch):
    new = importlib.import_module(MOVED[old])
    # the warning comes at a process's first import of the old path: forget an earlier one
    # (bayes_tee.tee.moved's doctest imports bayes_tee.tee.anova in the same worker)
    monkeypatch.delitem(sys.modules, f"bayes_tee.tee.{old}", raising=False)
    with pytest.warns(DeprecationWarning, match=MOVED[old].replace(".", r"\.")):
        module = importlib.import_module(f"bayes_tee.tee.{old}")
    assert module is new


def test_from_import_of_an_old_name_warns_in_a_fresh_process():
    code = "from bayes_tee.tee import design; from bayes_tee.design import roles; assert design is roles"
    ok = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", code], capture_output=True)
    assert ok.returncode == 0, ok.stderr
    strict = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code], capture_output=True, text=True
    )
    assert strict.returncode != 0 and "moved to bayes_tee.design.roles" in strict.stderr


def test_an_unknown_old_name_is_an_ordinary_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("bayes_tee.tee.not_a_module")


def test_import_bayes_tee_loads_no_heavy_library():
    """``import bayes_tee`` and the command line's parser load neither PyMC nor ArviZ nor
    matplotlib nor pandas: each public name is imported when first used.
    """
    code = (
        "import sys, bayes_tee, bayes_tee.cli; bayes_tee.cli._parser(); "
        "print(sorted(m for m in ('pymc', 'pytensor', 'arviz_stats', 'matplotlib', 'pandas', 'nutpie') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("old", sorted(MODULES))
def test_every_moved_module_imports_from_its_old_path_with_a_warning(old):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match="moved to"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MODULES[old])


@pytest.mark.parametrize(
    "module, name, new",
    [
        ("bayes_tee.posterior.dstudy", "counts_with", "bayes_tee.gstudy.weights"),
        ("bayes_tee.posterior.reliability", "measured_facets", "bayes_tee.gstudy.coefficients"),
        ("bayes_tee.posterior.leaderboard", "separation", "bayes_tee.posterior.separation"),
        ("bayes_tee.likelihoods.ordinal", "ordinal_model", "bayes_tee.likelihoods.ordinal.model"),
        ("bayes_tee.likelihoods.marginal", "marginal_layout", "bayes_tee.likelihoods.marginal.model"),
        ("bayes_tee.studies.dgp", "judge_calibration", "bayes_tee.studies.verdicts_dgp"),
    ],
)
def test_moved_names_import_from_their_old_module_with_a_warning(module, name, new):
    with pytest.warns(DeprecationWarning, match=f"{name} moved to {new}"):
        value = getattr(importlib.import_module(module), name)
    assert value is getattr(importlib.import_module(new), name)
