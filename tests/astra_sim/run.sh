#!/bin/sh
# Run netsim's exported Chakra traces in ASTRA-sim's analytical backend and record the makespans.
#
#   tests/astra_sim/run.sh BIN_DIR                                  # binaries already built
#   tests/astra_sim/run.sh ASTRA_SIM_CHECKOUT YAML_CPP_CHECKOUT [BUILD_DIR]   # build, then run
#
# Fetches nothing: the commits and the build steps are in tests/astra_sim/build.sh. BIN_DIR
# holds AstraSim_Analytical_Congestion_Unaware (and _Aware). The traces (netsim's 8-rank 64 MB
# ring allreduce, a recorded ps-sync run, an imported PyTorch profile), the network (a switch
# with netsim's star links: 100 Gb/s, 1 us per link), system.json and remote_memory.json are
# described in tests/astra_sim/astra.py. Writes tests/astra_sim/results.json: per trace,
# netsim's makespan, each ASTRA-sim backend's and their relative difference.
# Needs a Python with netsim's dependencies (PYTHON=..., default python). Then:
# NETSIM_ASTRA_SIM=BIN_DIR/AstraSim_Analytical_Congestion_Unaware pytest tests/test_astra_sim.py
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
if [ $# -ge 2 ]; then
    BIN=$("$HERE/build.sh" "$1" "$2" "${3:-/tmp/netsim-astra-sim}" | tail -n 1)
else
    BIN=$(cd "${1:?usage: run.sh BIN_DIR | run.sh ASTRA_SIM_CHECKOUT YAML_CPP_CHECKOUT [BUILD_DIR]}" && pwd)
fi
PYTHONPATH="$HERE/../..${PYTHONPATH:+:$PYTHONPATH}" \
    "${PYTHON:-python}" "$HERE/astra.py" "$BIN" "${OUT_DIR:-/tmp/netsim-astra-run}" --json "$HERE/results.json"
