# Entry points for a fresh Debian machine: `make demo` and `make test` (both idempotent).
VENV   ?= .venv
BIN    := $(VENV)/bin
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: setup setup-slurm setup-mpi demo check test lint kernel clean

setup:
	@bash scripts/setup.sh

setup-slurm:
	@bash scripts/setup.sh slurm

# Open MPI 5, MPICH 5 and Intel MPI from the package registry, each into .mpi/<install>/ with the
# venv's pip (docs/cluster.md); what `install:` in an mpi entry names.
setup-mpi: setup
	@PYTHON=$(BIN)/python bash scripts/setup_mpi.sh

kernel: setup
	$(MAKE) -C src/kernel MPICC=mpicc.openmpi BUILD=$(CURDIR)/build/openmpi
	$(MAKE) -C src/kernel MPICC=mpicc.mpich BUILD=$(CURDIR)/build/mpich

# Snakemake options for both lines of `make demo`: make cannot pass --config itself
# (`make demo SNAKEMAKE_ARGS="--config remeasure=True"`). MPIGUIDE_COMMAND tells the workflow's
# messages how the command is typed again (mpiguide.campaign.executor.STARTED_AS_VARIABLE).
SNAKEMAKE_ARGS ?=
# The workflow, then Snakemake's report of it (--report-after-run: the DAG read once for both);
# then the workflow once more, which re-makes only the page: the report is an input of it, so
# that the page the demo leaves links the report it made rather than saying there is none yet.
DEMO_REPORT := results/demo/report.html
demo: export MPIGUIDE_COMMAND = make demo SNAKEMAKE_ARGS=
demo: setup
	$(BIN)/snakemake --profile profiles/local --report $(DEMO_REPORT) --report-after-run $(SNAKEMAKE_ARGS)
	$(BIN)/snakemake --profile profiles/local $(SNAKEMAKE_ARGS)
	@echo "report: $(DEMO_REPORT)"
	@echo "page: results/demo/index.html"

# The inner loop: every test that starts neither MPI, Snakemake nor SLURM, on both cores (a test
# file stays in one worker: its module fixtures run once).
check: setup
	$(BIN)/python -m pytest -m "not kernel and not workflow and not slurm" -q -n 2 --dist loadfile tests

# Everything: lint first, then the suite on both cores, then alone the tests that compare times
# measured side by side (the `timing` marker), which a second worker's MPI ranks would skew.
# Each run keeps every test's time in a JUnit XML file under $(TEST_TIMES), for CI to keep and
# for finding what makes the suite slow; the slowest tests of both runs end the output.
TEST_TIMES := .ci/test-times
# Python keeps its bytecode caches (__pycache__, git-ignored) even where the environment says
# PYTHONDONTWRITEBYTECODE: the suite starts hundreds of Python processes, each of which would
# compile the package again (docs/measurements/workflow.md, "The suite and bytecode").
test: export PYTHONDONTWRITEBYTECODE =
test: setup-slurm setup-mpi lint
	$(BIN)/python -m pytest --junitxml=$(TEST_TIMES)/suite.xml \
		-n 2 --dist loadfile -m "not timing" tests
	$(BIN)/python -m pytest --junitxml=$(TEST_TIMES)/timing.xml -m timing tests
	$(BIN)/python scripts/slowest_tests.py $(TEST_TIMES)/suite.xml $(TEST_TIMES)/timing.xml

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/snakefmt --check Snakefile workflow
	$(BIN)/snakemake --lint

clean:
	rm -rf build src/kernel/build .snakemake results
