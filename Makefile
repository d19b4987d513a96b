# Two commands from a fresh clone: `make demo` (set up, then run the offline demo) and
# `make test` (set up, then run the tests; `make test-fast` skips the slow ones). Each creates .venv first when it is missing;
# `make install` only sets up. The recipes are the README's manual steps.
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install demo test test-fast test-numerics rehearse

install: $(BIN)/snakemake

# torch first and pinned (see README, Set up): pip then keeps that build for the rest; again when
# pyproject.toml changes (a new dependency, e.g. the test extra's pytest-xdist), then touched as done
$(BIN)/snakemake: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -e ".[workflow,test,monitor]"
	touch $@

demo: $(BIN)/snakemake
	. $(BIN)/activate && snakemake --cores 2

# two pytest-xdist workers (the 2 cores; many slow tests wait on subprocesses): tests that share an
# expensive fixture go to one worker, the longest first (tests/helpers/worker_groups.py, its scheduler)
PARALLEL := -n 2

test: $(BIN)/snakemake
	. $(BIN)/activate && python -m pytest -q $(PARALLEL)

# the edit loop: every test but those marked slow (the workflow's runs and dry runs, real models,
# subprocess sweeps; pyproject.toml's markers); `make test` and CI run them all
test-fast: $(BIN)/snakemake
	. $(BIN)/activate && python -m pytest -q $(PARALLEL) -m "not slow"

# the tests comparing two code paths' float arithmetic (marker numerics) under torch's AVX2 kernels
# (CPUs without AVX-512) and its portable ones: a tolerance only this CPU's kernels meet fails here
test-numerics: $(BIN)/snakemake
	. $(BIN)/activate && for cpu in default avx2; do ATEN_CPU_CAPABILITY=$$cpu python -m pytest -q $(PARALLEL) -m numerics || exit 1; done

# the paper sweep (config/paper.yaml) end to end on offline stand-ins: every rule and job of the
# real sweep in rehearsal/ (docs/rehearsal.md); its numbers are not results
rehearse: $(BIN)/snakemake
	. $(BIN)/activate && xlt rehearse --config config/paper.yaml --out rehearsal && HF_HUB_OFFLINE=1 xlt job-server --hf-cache rehearsal/resources/hf -- snakemake --cores 2 --directory rehearsal --configfile $(CURDIR)/rehearsal/config.yaml
