# Two commands from a fresh clone: `make demo` (set up, then run the offline demo) and
# `make test` (set up, then run the tests). Each creates .venv first when it is missing;
# `make install` only sets up. The recipes are the README's manual steps.
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install demo test

install: $(BIN)/snakemake

# torch first and pinned (see README, Set up): pip then keeps that build for the rest
$(BIN)/snakemake:
	python3 -m venv $(VENV)
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -e ".[workflow,test]"

demo: $(BIN)/snakemake
	. $(BIN)/activate && snakemake --cores 2

test: $(BIN)/snakemake
	. $(BIN)/activate && python -m pytest -q
