#!/usr/bin/env bash
# install-deps.sh: every Debian package a fresh machine needs to build, test and run tipc.
# Idempotent: packages already installed are skipped, so CI can run it on every build.
# Usage: scripts/install-deps.sh        (as root, or with sudo available)
set -euo pipefail

PKGS=(
  build-essential pkg-config make gcc g++   # toolchain
  clang libclang-rt-14-dev                  # libFuzzer + sanitizer runtimes for tests/fuzz
  libcmocka-dev                             # unit tests
  libcurl4-openssl-dev                      # prepare/fetch.c, rendezvous client
  libarchive-dev                            # prepare/extract.c
  libturbojpeg0-dev libjpeg62-turbo-dev     # engine/data/jpeg.c, prepare/synth.c
  libyaml-dev                               # engine YAML recipes
  libopenblas-dev                           # CPU GEMM
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev   # ONNX export (onnx.proto compiled at build time)
  libmicrohttpd-dev                         # rendezvous KV server
  libgloo-dev                               # CPU collectives
  python3                                   # tests: local http.server
  iproute2 procps                           # tests: network namespaces, process checks
)

missing=()
for p in "${PKGS[@]}"; do
  [[ "$p" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
