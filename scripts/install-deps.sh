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
  libssl-dev                                # libcrypto: job secrets (RAND_bytes, HMAC, CRYPTO_memcmp)
  libgloo-dev                               # CPU collectives
  libxml2-dev                               # runner/report/junit.c, report/html.c: JUnit and HTML reports
  libjansson-dev                            # engine/io/metrics.c: the metrics file (JSON lines)
  libxml2-utils                             # tests: xmllint validates the JUnit report against its schema
  python3                                   # tests: local http.server
  chromium python3-pil                      # tests: report.html screenshots in headless Chromium, checked with Pillow
  groff-base                                # tests: the generated man page renders without warnings
  iproute2 procps                           # ip/tc: bench scaling --netns, netns tests; process checks
  munge slurm-wlm                           # tests: a real Slurm (tests/e2e/lib_slurm.sh; no daemon is enabled)
  python3-venv                              # tests: the launchers' venv below
)

missing=()
for p in "${PKGS[@]}"; do
  [[ "$p" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PKGS[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The aarch64 cross build of the CPU ops and their unit tests (`make CROSS=aarch64 unit`, run by CI
# under qemu-aarch64): the cross compiler, qemu-user, and the :arm64 libraries the tests link
# (multiarch). qemu-user's qemu-x86_64 also runs tests/e2e/test_cpu_emulated.sh (the portable binary
# on an emulated AVX2-only and SSE4.2-only CPU). Best effort: without them those steps skip and say why.
CROSS_PKGS=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
            libc6:arm64 libgomp1:arm64 libopenblas-dev:arm64 libcmocka-dev:arm64)
cross_missing=()
for p in "${CROSS_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || cross_missing+=("$p")
done
if ((${#cross_missing[@]} > 0)); then
  echo "install-deps: installing (aarch64 cross tests) ${cross_missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if { dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64; } &&
     $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${cross_missing[@]}"; then
    :
  else
    echo "install-deps: warning: could not install the aarch64 cross toolchain; make CROSS=aarch64 unit will not run"
  fi
fi

# The one peer the test suite runs when it can: ONNX Runtime checks our exported ONNX model
# (tests/e2e/test_onnx.sh). From PyPI, best effort: where pip cannot install it (no network, an
# externally managed Python), that test skips and says why; nothing else needs Python packages.
if ! python3 -c 'import onnxruntime, numpy' 2>/dev/null; then
  if python3 -m pip install -q --disable-pip-version-check onnxruntime numpy 2>/dev/null; then
    echo "install-deps: installed onnxruntime and numpy (pip) for the ONNX Runtime check"
  else
    echo "install-deps: warning: could not pip install onnxruntime numpy; tests/e2e/test_onnx.sh will skip"
  fi
fi
# The launchers the tests start tipc's ranks with (tests/e2e/test_launcher_*.sh, test_tcpstore): torchrun
# from PyPI torch and paddle.distributed.launch from PyPI paddlepaddle (CPU), in their own venv
# ($TIPC_LAUNCHERS_VENV, default /opt/tipc-launchers; about 5 GB, as PyPI's torch wheel brings its CUDA
# libraries). Best effort: without them those tests skip and say why. The versions the tests were
# written against; tipc speaks TCPStore as torch >= 2.5 does.
VENV=${TIPC_LAUNCHERS_VENV:-/opt/tipc-launchers}
if ! "$VENV/bin/python" -c 'import torch.distributed.run, paddle.distributed.launch' 2>/dev/null; then
  if python3 -m venv "$VENV" && "$VENV/bin/pip" install -q --disable-pip-version-check torch==2.15.0 paddlepaddle==3.3.1; then
    echo "install-deps: installed torch and paddlepaddle (pip) in $VENV for the launcher tests"
  else
    echo "install-deps: warning: could not pip install torch, paddlepaddle in $VENV; the launcher tests will skip"
  fi
fi
echo "install-deps: done"
