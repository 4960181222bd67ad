#!/bin/sh
# Run netsim's exported Chakra traces in ASTRA-sim's analytical backends and record the makespans.
#
#   tests/astra_sim/run.sh BIN_DIR [BIN_DIR ...]     # binaries already built, one dir per commit
#
# Fetches nothing: the commits and the build steps are in tests/astra_sim/build.sh (build each
# commit into its own directory, e.g. /tmp/astra-c459ab6 and /tmp/astra-518bd51 from checkouts
# named src-c459ab6 and src-518bd51, whose names astra.py reads back as the commits). Each
# BIN_DIR holds AstraSim_Analytical_Congestion_Unaware (and _Aware). The cases, the network (a
# switch with netsim's star links: 100 Gb/s, 1 us per link), system.json and remote_memory.json
# are described in tests/astra_sim/astra.py. Writes tests/astra_sim/results.json: per case,
# netsim's makespan, netsim's under ASTRA-sim's rules, each ASTRA-sim binary's and its relative
# difference to the latter.
# Needs a Python with netsim's dependencies (PYTHON=..., default python). Then:
# NETSIM_ASTRA_SIM=DIR1/AstraSim_Analytical_Congestion_Unaware:DIR2/... pytest tests/test_astra_sim.py
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: run.sh BIN_DIR [BIN_DIR ...]" >&2; exit 2; }
PYTHONPATH="$HERE/../..${PYTHONPATH:+:$PYTHONPATH}" \
    "${PYTHON:-python}" "$HERE/astra.py" "$@" --out "${OUT_DIR:-/tmp/netsim-astra-run}" \
    --json "$HERE/results.json" > /dev/null
echo "$HERE/results.json"
