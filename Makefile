# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test venv bench models paper clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	$(BIN)/python -m ipykernel install --user --name bayes_tee --display-name "bayes_tee" >/dev/null
	touch $(STAMP)

venv: $(STAMP)

## Fit the embedded demo pilot; print components, shares, theta, diagnostics; write out/demo_shares.png
demo: $(STAMP)
	$(BIN)/bayes-tee demo --out out

## Run the test suite (fits use few draws; two pytest-xdist workers, about 12 minutes on 2 cores cold)
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

## Speed benchmarks (ratios against a baseline in the same process)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_fit.py

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
## from ../shared, save models/safety_*, write out/00_safety_paper.ipynb (about 27 min on 2 cores)
paper: $(STAMP)
	BAYES_TEE_REFIT=1 MPLBACKEND=Agg $(BIN)/python scripts/run_notebook.py notebooks/00_safety_paper.ipynb out/00_safety_paper.ipynb

clean:
	rm -rf $(VENV) out .pytest_cache
