#!/usr/bin/env bash
# Installs what mpiguide needs and is missing; idempotent, seconds on a ready machine.
#   scripts/setup.sh          MPI (Open MPI + MPICH) and the Python venv
#   scripts/setup.sh slurm    additionally the Debian packages of the local test SLURM cluster
#                             and the headless browser the campaign page's test opens it in
# As root, missing Debian packages are installed with apt-get. Without root, MPI that is already
# on PATH (e.g. a loaded environment module) is used; if none is found we say what to install.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
MPI_PKGS=(openmpi-bin libopenmpi-dev mpich libmpich-dev)
# The local test cluster (tests/slurm/cluster.sh): munge, slurmctld + slurmd + clients,
# slurmdbd with its MySQL plugin and MariaDB for accounting (the executor plugin polls sacct),
# and libpmix2, which srun --mpi=pmix (Open MPI) loads at run time.
SLURM_PKGS=(munge slurm-wlm slurmdbd slurm-wlm-basic-plugins slurm-wlm-mysql-plugin
            mariadb-server mariadb-client libpmix2)
# tests/workflow/test_page.py reads the campaign page as a browser renders it.
BROWSER_PKGS=(chromium)

missing_pkgs() {
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || echo "$pkg"
  done
}

apt_install() {
  local -a missing
  mapfile -t missing < <(missing_pkgs "$@")
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    return 1
  fi
  echo "setup: installing Debian packages (apt-get): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

setup_mpi() {
  if command -v mpicc.openmpi >/dev/null && command -v mpicc.mpich >/dev/null; then
    return 0
  fi
  if command -v dpkg-query >/dev/null && apt_install "${MPI_PKGS[@]}"; then
    return 0
  fi
  if command -v mpicc >/dev/null; then
    echo "setup: using the MPI on PATH ($(command -v mpicc)); Open MPI + MPICH side by side" \
         "are needed only for the full test suite"
    return 0
  fi
  echo "setup: no MPI found. Install one, e.g. as root:" >&2
  echo "  apt-get install ${MPI_PKGS[*]}" >&2
  echo "or load your site's MPI module (module load openmpi) and run again." >&2
  exit 1
}

setup_slurm() {
  if command -v dpkg-query >/dev/null; then
    apt_install "${SLURM_PKGS[@]}" && return 0
    echo "setup: not root and SLURM packages missing: the SLURM tests will be skipped" \
         "(as root: apt-get install ${SLURM_PKGS[*]})"
  else
    echo "setup: not a Debian system: the SLURM tests run only where tests/slurm/cluster.sh" \
         "finds munged, mariadbd, slurmdbd, slurmctld and slurmd"
  fi
}

setup_browser() {
  command -v dpkg-query >/dev/null && apt_install "${BROWSER_PKGS[@]}" && return 0
  command -v chromium >/dev/null && return 0
  echo "setup: no chromium: the campaign page's browser test will be skipped" \
       "(as root on Debian: apt-get install ${BROWSER_PKGS[*]})"
}

setup_venv() {
  local stamp="$VENV/.mpiguide-installed"
  if [ -f "$stamp" ] && [ "$stamp" -nt pyproject.toml ]; then
    return 0
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating the Python venv $VENV"
    "$PYTHON" -m venv "$VENV"
  fi
  # pip says nothing under -q: a first install takes a minute or more
  echo "setup: installing mpiguide, Snakemake and their Python packages into $VENV (pip)"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e ".[workflow,dev]"
  touch "$stamp"
  echo "setup: Python packages installed"
}

setup_mpi
if [ "${1:-}" = slurm ]; then
  setup_slurm
  setup_browser
fi
setup_venv
