from bayes_tee.design.terms import cell_term, model_terms


def labels(*facets, **kw):
    return [t.label for t in model_terms(facets, **kw)]


def test_full_design_terms():
    assert labels("item", "prompt", "temperature", "judge", replicates=True, category=True) == [
        "item",
        "category",
        "prompt",
        "judge",
        "temperature",
        "item:prompt",
        "item:temperature",
        "prompt:temperature",
        "item:judge",
        "prompt:judge",
        "cell",
        "replicate",
    ]


def test_no_judge_column_means_no_judge_terms():
    assert all("judge" not in x for x in labels("item", "prompt", replicates=True))


def test_cell_error_coincides_with_widest_interaction():
    terms = model_terms(("item", "prompt"), replicates=False)
    assert [t.label for t in terms] == ["item", "prompt", "item:prompt"]
    assert cell_term(terms).label == "item:prompt"


def test_judge_random_option():
    kinds = {t.label: t.kind for t in model_terms(("item", "judge"), replicates=True, judge_effect="random")}
    assert kinds["judge"] == "random"
