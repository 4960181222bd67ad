#!/bin/sh
# Build ASTRA-sim's analytical backends (congestion-unaware and -aware) outside the repository.
#
#   tests/astra_sim/build.sh ASTRA_SIM_CHECKOUT YAML_CPP_CHECKOUT [BUILD_DIR]
#
# Fetches nothing. ASTRA_SIM_CHECKOUT is https://github.com/astra-sim/astra-sim with its
# submodules filled in (git submodule update --init --recursive). Two commits are built, one
# build directory each; tests/astra_sim/results.json holds both runs. Their submodules (a
# "pin" is the commit astra-sim's tree names; where the mirror at hand did not hold it, the
# closest commit it did hold was used instead, said on the line):
#
# astra-sim/astra-sim c459ab61193bdb5b663ab61d2e923314dae8a77f  2025-08-11 (#333; the commit
#                                      Chakra's v2 feeder matches):
#   extern/graph_frontend/chakra       astra-sim/chakra 214f2c559c10f897bcc395f8e1502d80d14f1541
#                                      (the pin; src/feeder, Chakra's v2 feeder)
#   extern/network_backend/analytical  astra-sim/astra-network-analytical
#                                      599a0473a9a74f5383f73b3cea5a12b9bc5ebaef (the pin), with its
#                                      own submodule extern/yaml-cpp at jbeder/yaml-cpp
#                                      3d2888cc8a45da2f420454ad728cdfad01a3d54f (its pin): this
#                                      commit's build takes yaml-cpp from there, not from
#                                      YAML_CPP_CHECKOUT
#   extern/remote_memory_backend/analytical, extern/helper/fmt: as for 518bd51 below (same pins)
#   extern/helper/spdlog               as for 518bd51 below (same pin 63f08750, same stand-in)
#
# astra-sim/astra-sim 518bd513ae110428cd62eb60efc0f3993fd53c70  2026-03-25 (master, the head):
#   extern/graph_frontend/chakra       astra-sim/chakra f37c2bb50afa8b0e99b32ba9921662ab77502e85
#                                      2025-04-17 (branch stage, the newest commit with
#                                      src/feeder_v3; pin 0e3cd40c not in the mirror)
#   extern/network_backend/analytical  astra-sim/astra-network-analytical
#                                      599a0473a9a74f5383f73b3cea5a12b9bc5ebaef 2024-11-02 (main;
#                                      pin e8c5119f not in the mirror)
#   extern/remote_memory_backend/analytical  astra-sim/astra-memory-analytical
#                                      641cce854d256bfd288b1de9607b6757313363f9 (the pin)
#   extern/helper/fmt                  fmtlib/fmt 7e73566ce7bd3617cd4b14a2e3a19a2a30b524c7 (the pin)
#   extern/helper/spdlog               gabime/spdlog 62302019babd8fdf63c1c6dc4c9faa48d441a7f0
#                                      2024-03-24, v1.13.0-31 (pin 63f08750 not in the mirror)
#   extern/network_backend/ns-3, csg-htsim: not needed for the analytical backend
#
# YAML_CPP_CHECKOUT is https://github.com/jbeder/yaml-cpp at a83cd31548b19d50f3f983b069dceb4f4d50756d
# (what astra-sim 518bd51's CMakeLists.txt names in FetchContent_Declare); it is handed to CMake
# as FETCHCONTENT_SOURCE_DIR_YAML-CPP so that the configure step downloads nothing. c459ab6
# declares no such content and ignores it.
#
# Two changes to the 518bd51 checkout, both for the commits that stand in for missing pins,
# both made by this script (idempotent) and only where they apply (c459ab6 needs neither):
# - the analytical backend's CMakeLists.txt: its own "add_subdirectory(extern/yaml-cpp)" is
#   guarded by "if (NOT TARGET yaml-cpp)", because astra-sim 518bd51 already provides the
#   yaml-cpp target (astra-sim commit 2367f6f, "Add yaml package to the head repo"; without the
#   guard CMake refuses a second target of that name);
# - chakra's src/feeder_v3/et_feeder.h gets one line, "namespace Chakra { using
#   FeederV3::ETFeeder; }": astra-sim 518bd51 (workload/Workload.hh, CustomAlgorithm.hh) names
#   Chakra::ETFeeder, which f37c2bb declares only as Chakra::FeederV3::ETFeeder ("error:
#   'ETFeeder' in namespace 'Chakra' does not name a type" without it).
#
# Needs cmake >= 3.22, g++ (C++17), protoc and libprotobuf-dev (Debian 12: cmake 3.25.1,
# g++ 12.2, protobuf-compiler and libprotobuf-dev 3.21.12). The steps follow astra-sim's
# build/astra_analytical/build.sh. About 7 minutes per commit for both binaries on two shared
# cores. Prints the directory holding AstraSim_Analytical_Congestion_{Unaware,Aware}.
set -eu
SRC=$(cd "${1:?usage: build.sh ASTRA_SIM_CHECKOUT YAML_CPP_CHECKOUT [BUILD_DIR]}" && pwd)
YAML=$(cd "${2:?usage: build.sh ASTRA_SIM_CHECKOUT YAML_CPP_CHECKOUT [BUILD_DIR]}" && pwd)
OUT=${3:-/tmp/netsim-astra-sim}
JOBS=${JOBS:-2}
mkdir -p "$OUT"
ANALYTICAL="$SRC/extern/network_backend/analytical/CMakeLists.txt"
if ! grep -q "FetchContent_MakeAvailable(yaml-cpp)" "$SRC/CMakeLists.txt"; then
    # c459ab6: yaml-cpp comes from the analytical backend's own submodule
    [ -f "$SRC/extern/network_backend/analytical/extern/yaml-cpp/CMakeLists.txt" ] || {
        echo "build.sh: fill extern/network_backend/analytical/extern/yaml-cpp (git submodule update --init --recursive)" >&2
        exit 2; }
elif ! grep -q "if (NOT TARGET yaml-cpp)" "$ANALYTICAL"; then
    sed -i 's|^add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/extern/yaml-cpp yaml-cpp)|if (NOT TARGET yaml-cpp)\n    add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/extern/yaml-cpp yaml-cpp)\nendif ()|' "$ANALYTICAL"
fi
FEEDER="$SRC/extern/graph_frontend/chakra/src/feeder_v3/et_feeder.h"
if [ -f "$FEEDER" ] && ! grep -q "using FeederV3::ETFeeder;" "$FEEDER"; then
    printf '\n// Added by netsim tests/astra_sim/build.sh: astra-sim 518bd51 names Chakra::ETFeeder.\nnamespace Chakra { using FeederV3::ETFeeder; }\n' >> "$FEEDER"
fi
PROTO="$SRC/extern/graph_frontend/chakra/schema/protobuf"
protoc et_def.proto --proto_path="$PROTO" --cpp_out="$PROTO"
cmake -S "$SRC/build/astra_analytical" -B "$OUT" -DBUILDTARGET=all \
      -DFETCHCONTENT_FULLY_DISCONNECTED=ON "-DFETCHCONTENT_SOURCE_DIR_YAML-CPP=$YAML"
cmake --build "$OUT" -j "$JOBS" --target AstraSim_Analytical_Congestion_Unaware
cmake --build "$OUT" -j "$JOBS" --target AstraSim_Analytical_Congestion_Aware
echo "$OUT/bin"
