# Entry points for a fresh Debian machine: `make demo` and `make test` (both idempotent).
VENV   ?= .venv
BIN    := $(VENV)/bin
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: setup setup-slurm demo test lint kernel clean

setup:
	@bash scripts/setup.sh

setup-slurm:
	@bash scripts/setup.sh slurm

kernel: setup
	$(MAKE) -C src/kernel MPICC=mpicc.openmpi BUILD=$(CURDIR)/build/openmpi
	$(MAKE) -C src/kernel MPICC=mpicc.mpich BUILD=$(CURDIR)/build/mpich

demo: setup
	$(BIN)/snakemake --profile profiles/local
	$(BIN)/snakemake --profile profiles/local --report results/demo/report.html
	@echo "report: results/demo/report.html"

test: setup-slurm
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest tests

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/snakemake --lint

clean:
	rm -rf build src/kernel/build .snakemake results
