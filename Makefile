# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both build .venv from requirements/lock.txt (the exact tested set) with uv.
PY ?= python3
UV_VERSION := 0.13.9
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCK := requirements/lock.txt
LATEST := .venv-latest
PYTEST_FAST := -m "not slow"
# two workers, whole files each, in the order tests/conftest.py gives (longest first)
XDIST := -n 2 --dist loadfile --no-loadscope-reorder

.PHONY: demo test test-fast lint test-latest lock wheel-check python-check venv bench models paper clean docs

## Stop with one line when the interpreter is older than 3.12 (PY=/path/to/python3.12 to choose one)
python-check:
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null || { \
	  echo "bayes_tee needs Python >= 3.12; '$(PY)' is $$($(PY) --version 2>&1 || echo missing): install python3.12 or 3.13 (e.g. 'pyenv install 3.12') or run 'make PY=/path/to/python3.12 ...'."; \
	  exit 1; }

$(STAMP): pyproject.toml $(LOCK) | python-check
	rm -rf $(VENV)
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -r $(LOCK)
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python --no-deps -e .
	$(BIN)/python -m compileall -q bayes_tee  # the package's own bytecode (an editable install has none)
	$(BIN)/python -m ipykernel install --user --name bayes_tee --display-name "bayes_tee" >/dev/null
	# the kernels compiled for the generic CPU into the package (40 s, two processes) and, beside
	# them, PyTensor's operations compiled into its cache by the two layouts that fit through a PyMC
	# model (15 s with PyTensor's cache warm): the other layouts load the shipped kernels
	$(BIN)/bayes-tee warmup --ship >/dev/null & ship=$$!; \
	  $(BIN)/bayes-tee warmup --jobs 1 --layouts marginal cells >/dev/null; pymc=$$?; \
	  wait $$ship && exit $$pymc
	touch $(STAMP)

venv: $(STAMP)

## Fit the embedded demo pilot; print components, shares, theta, diagnostics; write out/demo_shares.png
demo: $(STAMP)
	$(BIN)/bayes-tee demo --out out

## ruff lint and format check (part of `make test`)
LINTED := bayes_tee tests scripts benchmarks
lint: $(STAMP)
	$(BIN)/ruff check $(LINTED) notebooks
	$(BIN)/ruff format --check $(LINTED)

## Lint, then the whole test suite and the package's docstring examples on the locked stack in
## one run (two pytest-xdist workers; the slowest tests listed, against the 15-minute budget)
test: lint
	$(BIN)/python -m pytest -q $(XDIST) --durations=15 --doctest-modules bayes_tee tests

## The inner loop: tests not marked slow
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) $(PYTEST_FAST)

## The newest releases pyproject's ranges allow, in a separate venv, on the fast subset
test-latest: | python-check
	rm -rf $(LATEST)
	$(PY) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(LATEST)/bin/uv pip install --quiet --compile-bytecode --python $(LATEST)/bin/python --refresh --upgrade -e ".[test]"
	$(LATEST)/bin/uv pip list --python $(LATEST)/bin/python 2>/dev/null | grep -iE '^(pymc|pytensor|arviz|nutpie|numpy|pandas|xarray|scipy) '
	$(LATEST)/bin/python -m pytest -q $(XDIST) $(PYTEST_FAST) -p no:cacheprovider

## Re-resolve the lock from pyproject's ranges (one file for Python 3.12 and 3.13, every platform)
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra test --extra docs --universal --python-version 3.12 \
	    --upgrade --quiet -o $(LOCK)

## Build the wheel and fit the demo with it in a clean venv (Python 3.13 if present); CI runs it
## after `make test` (a packaging check: two minutes of installing, not part of the suite's budget)
wheel-check: $(STAMP)
	$(BIN)/python scripts/check_wheel.py

## The documentation site in docs/_build/html: notebooks executed in fast mode (docs/gallery),
## Sphinx with warnings as errors, then the pages checked in headless Chromium (skipped without it)
docs: $(STAMP)
	$(BIN)/python scripts/build_gallery.py
	rm -rf docs/_build docs/api/generated
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs docs/_build/html
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_docs_site.py

## Speed benchmarks (ratios against a baseline in the same process)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_fit.py
	$(BIN)/python benchmarks/bench_compile.py
	$(BIN)/python benchmarks/bench_startup.py

## Regenerate the reference posteriors in models/
SHARED ?= ../shared
models: $(STAMP)
	$(BIN)/bayes-tee demo --out out --save models/tee_demo.nc --quiet
	$(BIN)/bayes-tee fit $(SHARED)/external/tee_replication/propaganda_pilot_clean.csv \
	    --outcome cn_more_favorable --item question_ID --prompt variant_id --judge judge_model \
	    --temperature temperature --replicate replication --category question_focus \
	    --seed 1 --quiet --out models/propaganda_pilot.nc
	$(BIN)/bayes-tee fit $(SHARED)/external/tee_replication/propaganda_pilot_clean.csv \
	    --outcome cn_more_favorable --item question_ID --prompt variant_id --judge judge_model \
	    --temperature temperature --replicate replication --category question_focus \
	    --family binomial --seed 1 --quiet --out models/propaganda_pilot_glmm.nc
	$(BIN)/python scripts/make_studies.py binary_pilot
	$(BIN)/python scripts/noise_small_k.py
	$(BIN)/python scripts/calibration_sweep.py --reps 40

## Seed 000's safety demonstration in full: refit the LPM, GLMM, prior presets and leave-one-judge-out
## from ../shared, save models/safety_*, write out/00_safety_paper.ipynb (about 26 min on 2 cores)
paper: $(STAMP)
	BAYES_TEE_REFIT=1 MPLBACKEND=Agg $(BIN)/python scripts/run_notebook.py notebooks/00_safety_paper.ipynb out/00_safety_paper.ipynb

clean:
	rm -rf $(VENV) $(LATEST) out .pytest_cache docs/_build docs/gallery docs/api/generated
