#!/bin/sh
# Build chakra_feeder_dump (driver.cpp) against Chakra's own C++ ET feeder, outside the repository.
#
#   tests/chakra_feeder/build.sh CHAKRA_CHECKOUT [BUILD_DIR]
#
# CHAKRA_CHECKOUT: a checkout of https://github.com/mlcommons/chakra; tested at commit
# 21585d8f2d65603d791d2121e3d4632351120262 (2026-05-20), whose src/feeder reads comm_src,
# comm_dst and comm_tag as int32_val. BUILD_DIR defaults to /tmp/netsim-chakra-feeder.
# Needs g++ (C++17), protoc and libprotobuf-dev (Debian 12: protobuf-compiler,
# libprotobuf-dev 3.21.12). The steps follow Chakra's .github/workflows/feeder_tests.yml.
# Then: NETSIM_CHAKRA_FEEDER=BUILD_DIR/chakra_feeder_dump pytest tests/test_chakra_feeder.py
set -eu
SRC=$(cd "${1:?usage: build.sh CHAKRA_CHECKOUT [BUILD_DIR]}" && pwd)
OUT=${2:-/tmp/netsim-chakra-feeder}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
protoc et_def.proto --proto_path="$SRC/schema/protobuf" --cpp_out="$OUT"
INC="-I$OUT -I$SRC/src/third_party/utils -I$SRC/src/feeder"
for f in "$OUT/et_def.pb.cc" "$SRC/src/feeder/et_feeder.cpp" "$SRC/src/feeder/et_feeder_node.cpp" \
         "$SRC/src/third_party/utils/protoio.cc" "$HERE/driver.cpp"; do
    g++ -std=c++17 -O1 $INC -c "$f" -o "$OUT/$(basename "$f").o"
done
g++ -o "$OUT/chakra_feeder_dump" "$OUT"/*.o -lprotobuf -lpthread
echo "$OUT/chakra_feeder_dump"
