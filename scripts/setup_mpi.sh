#!/usr/bin/env bash
# Installs the MPI libraries mpiguide measures beside Debian's (Open MPI 5, MPICH 5, Intel MPI),
# each from the Python package registry's wheels into its own prefix below the checkout
# (.mpi/<install>/), without root. Which wheels, at which pinned versions, and where: the table of
# src/mpiguide/campaign/installs.py, which also says what an mpi entry naming one needs.
# Idempotent: a prefix whose stamp lists its wheels is left as it is (seconds on a ready machine);
# one without (interrupted, or other versions) is removed and installed anew.
#   PYTHON=.venv/bin/python bash scripts/setup_mpi.sh      (make setup-mpi)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}

table=$(PYTHONPATH=$PWD/src "$PYTHON" -m mpiguide.campaign.installs)
while IFS=$'\t' read -r name prefix stamp wheels; do
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wheels" ]; then
    echo "setup-mpi: $name: installed in $prefix"
    continue
  fi
  echo "setup-mpi: $name: pip install $wheels into $prefix"
  rm -rf "$prefix"
  # --no-deps: the pins are the whole install (installs.py says why Intel MPI needs no more).
  # shellcheck disable=SC2086  # one word per wheel
  "$PYTHON" -m pip install --quiet --no-deps --no-warn-script-location \
    --disable-pip-version-check --prefix "$prefix" $wheels
  printf '%s\n' "$wheels" > "$stamp"
done <<< "$table"
