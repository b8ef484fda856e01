#!/usr/bin/env bash
# `srun --prolog` for the time-limit test: srun runs this before launching the job step and
# launches nothing until it returns, so the run job outlives its time limit and SLURM ends it
# (TIMEOUT). SLURM kills it with the job; the sleep is only an upper bound.
set -euo pipefail
sleep 600
