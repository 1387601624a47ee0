# tipc: build, test, bench, install.
#
# Knobs (make VAR=value; effective values are written to build/flags so changing one rebuilds):
#   USE_CUDA    auto | 0 | 1    CUDA backend (auto: on when nvcc + cuDNN + NCCL probe-compile)
#   CUDA_HOME   /usr/local/cuda
#   CUDNN_HOME  $(CUDA_HOME)    cuDNN headers/libs (e.g. a Python nvidia/cudnn folder)
#   NCCL_HOME   $(CUDA_HOME)    NCCL headers/libs
#   GPU_ARCH    90              SASS for sm_$(GPU_ARCH) plus PTX for compute_$(GPU_ARCH)
#   CPU_ARCH    x86-64-v2       -march of the baseline (everything but the per-ISA kernels, which are
#                               built for x86-64-v2, v3 and v4 and picked at start-up: cpu_isa.h);
#                               native: a build for this machine only (aarch64: armv8-a)
#   CROSS       aarch64         cross-build the CPU ops and their unit tests for aarch64 (Debian's
#                               gcc-aarch64-linux-gnu, :arm64 OpenBLAS/cmocka) and run them under
#                               qemu-aarch64: `make CROSS=aarch64 unit`
#   GLOO_LIBS   -lgloo          Gloo (Debian libgloo-dev has no pkg-config file)
#   PREFIX      /usr/local      make install
#   V=1                         show full commands
#
# Targets: all (bin/tipc), test (ASan/UBSan build + unit + e2e), bench, fuzz, man (man page and bash
# completion from the option tables), install, clean.
# Layout: build/rel/ release objects, build/san/ sanitizer objects, build/gen/ generated code.

USE_CUDA   ?= auto
CUDA_HOME  ?= /usr/local/cuda
CUDNN_HOME ?= $(CUDA_HOME)
NCCL_HOME  ?= $(CUDA_HOME)
GPU_ARCH   ?= 90
CPU_ARCH   ?= $(CPU_BASE)
GLOO_LIBS  ?= -lgloo
PREFIX     ?= /usr/local
CC         ?= gcc
CXX        ?= g++
NVCC       ?= $(CUDA_HOME)/bin/nvcc

# ---- target CPU: the baseline and the ISA levels of the dispatched kernels (engine/ops/cpu_isa.h) ----
ifeq ($(CROSS),aarch64)
CROSS_PREFIX := aarch64-linux-gnu-
CC       := $(CROSS_PREFIX)gcc
CXX      := $(CROSS_PREFIX)g++
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config
QEMU     ?= qemu-aarch64
else ifneq ($(CROSS),)
$(error CROSS=$(CROSS): only CROSS=aarch64 is supported)
endif
NM       := $(CROSS_PREFIX)nm
OBJCOPY  := $(CROSS_PREFIX)objcopy
MACHINE  := $(shell $(CC) -dumpmachine)
ifneq ($(filter aarch64%,$(MACHINE)),)
CPU_BASE   := armv8-a
ISA_LEVELS := neon
ISA_MARCH_neon := armv8-a
else
CPU_BASE   := x86-64-v2
ISA_LEVELS := v2 v3 v4
ISA_MARCH_v2 := x86-64-v2
ISA_MARCH_v3 := x86-64-v3
ISA_MARCH_v4 := x86-64-v4
endif
# The hot CPU kernels, compiled once per level with that level's -march and symbols suffixed with
# the level's name (conv2d_forward_cpu_v3); cpu_isa.c calls the running level's build.
ISA_SRCS := $(addprefix engine/ops/cpu/,act.c add.c bn.c conv2d.c conv2d_dw.c conv2d_pw.c dropout.c normalize.c \
              pool.c se.c sgd.c sgd_amp.c) engine/ops/cpu_kernels.c engine/data/resample.c

PKG_CONFIG ?= pkg-config

ifeq ($(V),1)
Q :=
else
Q := @
endif

# ---- system libraries (scripts/install-deps.sh installs them) ------------------------------
PKGS := libcurl libarchive libturbojpeg libjpeg yaml-0.1 openblas libprotobuf-c libmicrohttpd libxml-2.0 jansson libcrypto
ifeq ($(CROSS),aarch64)
PKGS := openblas cmocka   # the cross build is the CPU ops and their unit tests only
endif
ifneq ($(filter clean,$(MAKECMDGOALS)),clean)
ifneq ($(shell $(PKG_CONFIG) --exists $(PKGS) && echo ok),ok)
$(error missing libraries ($(PKGS)); run scripts/install-deps.sh)
endif
endif
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

# ---- CUDA detection: compile a probe, never dpkg ---------------------------------------------
CUDA_INC  := -I$(CUDA_HOME)/include -I$(CUDNN_HOME)/include -I$(NCCL_HOME)/include
CUDA_LIBDIRS := -L$(CUDA_HOME)/lib64 -L$(CUDNN_HOME)/lib64 -L$(CUDNN_HOME)/lib -L$(NCCL_HOME)/lib64 -L$(NCCL_HOME)/lib
CUDA_RPATH := -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDNN_HOME)/lib64 -Wl,-rpath,$(CUDNN_HOME)/lib \
              -Wl,-rpath,$(NCCL_HOME)/lib64 -Wl,-rpath,$(NCCL_HOME)/lib
CUDA_LIBS := $(CUDA_LIBDIRS) $(CUDA_RPATH) -lcudnn -lnccl -lcublas -lcublasLt -lcudart
H := \#
ifeq ($(USE_CUDA),auto)
CUDA_PROBE := $(shell test -x $(NVCC) && printf '$(H)include <cuda_runtime.h>\n$(H)include <cudnn.h>\n$(H)include <nccl.h>\n$(H)include <cublas_v2.h>\nint main(void){return (int)cudnnGetVersion()+ncclGetVersion(0)+(int)cudaGetLastError()+(int)cublasCreate(0);}\n' \
	| $(CC) -x c - $(CUDA_INC) $(CUDA_LIBS) -o /dev/null 2>/dev/null && echo 1 || echo 0)
HAVE_CUDA := $(CUDA_PROBE)
else
HAVE_CUDA := $(USE_CUDA)
endif

# ---- sources ------------------------------------------------------------------------------------
SRC_DIRS := core runner prepare engine
MAIN_SRC := runner/main.c
C_SRCS   := $(filter-out $(MAIN_SRC) $(ISA_SRCS),$(sort $(shell find $(SRC_DIRS) -name '*.c')))
CC_SRCS  := $(sort $(shell find $(SRC_DIRS) -name '*.cc'))
CU_SRCS  := $(sort $(shell find $(SRC_DIRS) -name '*.cu'))
# ONNX schema from Debian's libonnx-dev, compiled with protoc-c at build time (never copied in).
ONNX_PROTO := /usr/include/onnx/onnx.proto
GEN_C    := build/gen/onnx.pb-c.c
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))

WARN     := -Wall -Wextra -Werror -Wshadow -Wswitch-enum -Wno-error=switch-enum
COMMON   := -std=c11 -D_GNU_SOURCE -Ibuild/gen $(PKG_CFLAGS) -fopenmp -MMD -MP
CXXFLAGS_COMMON := -std=c++17 -Wall -Wextra -Werror -D_GNU_SOURCE -fopenmp -MMD -MP
LIBS     := -Wl,--as-needed $(PKG_LIBS) $(GLOO_LIBS) -lpthread -lm -fopenmp
ifeq ($(HAVE_CUDA),1)
COMMON   += -DTIPC_HAVE_CUDA $(CUDA_INC)
CXXFLAGS_COMMON += -DTIPC_HAVE_CUDA $(CUDA_INC)
LIBS     += $(CUDA_LIBS)
NVCCFLAGS := -O3 -std=c++17 -DTIPC_HAVE_CUDA $(CUDA_INC) -Ibuild/gen \
             -gencode arch=compute_$(GPU_ARCH),code=sm_$(GPU_ARCH) \
             -gencode arch=compute_$(GPU_ARCH),code=compute_$(GPU_ARCH) \
             -Xcompiler -Wall,-Wextra,-Werror,-fPIC -Werror all-warnings -MMD -MP
else
CU_SRCS  :=
endif

REL_CFLAGS := $(COMMON) $(WARN) -O3 -march=$(CPU_ARCH) -g
SAN        := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SAN_CFLAGS := $(COMMON) $(WARN) -O1 -g -march=$(CPU_ARCH) $(SAN)

isa_objs = $(foreach l,$(ISA_LEVELS),$(patsubst %.c,build/$(1)/isa/$(l)/%.o,$(ISA_SRCS)))
objs = $(patsubst %.c,build/$(1)/%.o,$(C_SRCS)) $(patsubst %.cc,build/$(1)/%.o,$(CC_SRCS)) $(call isa_objs,$(1)) \
       $(patsubst build/gen/%.c,build/$(1)/gen/%.o,$(GEN_C)) $(patsubst %.cu,build/cuda/%.o,$(CU_SRCS))
REL_OBJS := $(call objs,rel)
SAN_OBJS := $(call objs,san)
UNIT_BINS := $(patsubst tests/unit/%.c,build/san/tests/%,$(UNIT_SRCS))

.PHONY: all test unit e2e bench fuzz install man clean features FORCE
all: features bin/tipc

features:
	@printf '# tipc build: %s cuda (USE_CUDA=%s)  %s gloo  %s openblas\n' \
	  "$(if $(filter 1,$(HAVE_CUDA)),✓,✗)" "$(USE_CUDA)" "✓" "✓"

# build/flags: rebuild everything when the effective flags change (git's GIT-CFLAGS). The cross
# build keeps its own (build/aarch64/flags), so switching between the two rebuilds nothing.
FLAGS_FILE := $(if $(CROSS),build/$(CROSS)/flags,build/flags)
$(FLAGS_FILE): FORCE
	@mkdir -p $(dir $@)
	@echo '$(REL_CFLAGS) | $(SAN_CFLAGS) | $(LIBS) | $(HAVE_CUDA) $(GPU_ARCH) $(NVCCFLAGS)' | cmp -s - $@ || \
	 echo '$(REL_CFLAGS) | $(SAN_CFLAGS) | $(LIBS) | $(HAVE_CUDA) $(GPU_ARCH) $(NVCCFLAGS)' > $@

# build/gen/commit.h: the commit tipc is built from, for `tipc version`; rewritten only when it
# changes, so a new commit rebuilds cmd_version.c alone ("unknown" outside a git checkout).
GIT_COMMIT := $(shell git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
build/gen/commit.h: FORCE
	@mkdir -p build/gen
	@echo '#define TIPC_COMMIT "$(GIT_COMMIT)"' | cmp -s - $@ || echo '#define TIPC_COMMIT "$(GIT_COMMIT)"' > $@

$(GEN_C): $(ONNX_PROTO)
	@mkdir -p build/gen
	@printf '  %-6s %s\n' PROTOC $@
	$(Q)protoc-c --c_out=build/gen -I$(dir $(ONNX_PROTO)) $(ONNX_PROTO)
build/gen/onnx.pb-c.h: $(GEN_C)

GEN_WARN := -Wno-unused-parameter
build/rel/gen/%.o: build/gen/%.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(COMMON) -O2 -c $< -o $@
build/san/gen/%.o: build/gen/%.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(COMMON) -O1 -g $(SAN) -c $< -o $@

build/rel/%.o: %.c $(FLAGS_FILE) | $(GEN_C) build/gen/commit.h
	@mkdir -p $(dir $@)
	@printf '  %-6s %s\n' CC $<
	$(Q)$(CC) $(REL_CFLAGS) -c $< -o $@
build/san/%.o: %.c $(FLAGS_FILE) | $(GEN_C) build/gen/commit.h
	@mkdir -p $(dir $@)
	@printf '  %-6s %s\n' CC-SAN $<
	$(Q)$(CC) $(SAN_CFLAGS) -c $< -o $@
# -fno-trapping-math: the kernels never read FP exception flags, and without it GCC keeps a compare
# or multiply under a condition scalar where the level has no masked vector ops (AVX2, SSE);
# values are unchanged (it only allows computing both sides of a select).
ISA_CFLAGS := -fno-trapping-math
# Per-ISA kernels: compiled to isa-raw/LEVEL/, then every symbol they define (the union over the
# level's objects, so calls between them follow) renamed NAME -> NAME_LEVEL into isa/LEVEL/.
define ISA_RULES
build/$(1)/isa-raw/$(2)/%.o: %.c $(FLAGS_FILE) | $$(GEN_C)
	@mkdir -p $$(dir $$@)
	@printf '  %-6s %s\n' CC-$(2) $$<
	$$(Q)$$(CC) $$($(3)) -march=$$(ISA_MARCH_$(2)) $$(ISA_CFLAGS) -c $$< -o $$@
build/$(1)/isa-raw/$(2)/syms: $(patsubst %.c,build/$(1)/isa-raw/$(2)/%.o,$(ISA_SRCS))
	$$(Q)$$(NM) --defined-only $$^ | awk 'NF == 3 && $$$$2 ~ /^[TtDdRrBb]$$$$/ && $$$$3 !~ /^\./ \
	  { print $$$$3, $$$$3 "_$(2)" }' | sort -u > $$@
build/$(1)/isa/$(2)/%.o: build/$(1)/isa-raw/$(2)/%.o build/$(1)/isa-raw/$(2)/syms
	@mkdir -p $$(dir $$@)
	$$(Q)$$(OBJCOPY) --redefine-syms=build/$(1)/isa-raw/$(2)/syms $$< $$@
endef
$(foreach l,$(ISA_LEVELS),$(eval $(call ISA_RULES,rel,$(l),REL_CFLAGS)))
$(foreach l,$(ISA_LEVELS),$(eval $(call ISA_RULES,san,$(l),SAN_CFLAGS)))

build/rel/%.o: %.cc $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@printf '  %-6s %s\n' CXX $<
	$(Q)$(CXX) $(CXXFLAGS_COMMON) -O2 -g -c $< -o $@
build/san/%.o: %.cc $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@printf '  %-6s %s\n' CXX-SAN $<
	$(Q)$(CXX) $(CXXFLAGS_COMMON) -O1 -g $(SAN) -c $< -o $@
build/cuda/%.o: %.cu $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@printf '  %-6s %s\n' NVCC $<
	$(Q)$(NVCC) $(NVCCFLAGS) -c $< -o $@

build/rel/libtipc.a: $(REL_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^
build/san/libtipc.a: $(SAN_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

bin/tipc: build/rel/runner/main.o build/rel/libtipc.a
	@mkdir -p bin
	@printf '  %-6s %s\n' LINK $@
	$(Q)$(CXX) -o $@ $< build/rel/libtipc.a $(LIBS)

build/san/tipc: build/san/runner/main.o build/san/libtipc.a
	@printf '  %-6s %s\n' LINK $@
	$(Q)$(CXX) $(SAN) -o $@ $< build/san/libtipc.a $(LIBS)

build/san/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) build/san/libtipc.a $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@printf '  %-6s %s\n' TEST $@
	$(Q)$(CC) $(SAN_CFLAGS) -Wno-unused-parameter -o $@ $< build/san/libtipc.a $(shell pkg-config --cflags --libs cmocka) $(LIBS) -lstdc++

# A unit test without sanitizers (e.g. for a GPU machine that lacks the sanitizer runtime:
# scripts/gpu/bundle.sh builds build/rel/tests/test_cuda_ops).
build/rel/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) build/rel/libtipc.a $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@printf '  %-6s %s\n' TEST $@
	$(Q)$(CC) $(REL_CFLAGS) -Wno-unused-parameter -o $@ $< build/rel/libtipc.a $(shell pkg-config --cflags --libs cmocka) $(LIBS) -lstdc++

# `make test`: everything under ASan/UBSan; tests/run.sh prints 'N passed, N failed, N skipped'.
# test_cpu_isa also runs from the release build: its FMA kernels (-O3) are what users run.
test: build/san/tipc bin/tipc $(UNIT_BINS) build/rel/tests/test_cpu_isa
	$(Q)TIPC=$(CURDIR)/build/san/tipc TIPC_REL=$(CURDIR)/bin/tipc tests/run.sh $(UNIT_BINS) build/rel/tests/test_cpu_isa

ifeq ($(CROSS),aarch64)
# CROSS=aarch64: the CPU ops (their NEON build through the same sources) and the unit tests that
# need nothing else, built in build/aarch64/ (no sanitizers: qemu-user runs no ASan) and run under
# qemu-aarch64 (multiarch :arm64 OpenBLAS, cmocka, libgomp: scripts/install-deps.sh --cross).
CROSS_SRCS  := engine/ops/desc.c engine/ops/cpu_isa.c engine/data/augment.c core/check.c core/rng.c \
               $(filter-out $(ISA_SRCS),$(wildcard engine/ops/cpu/*.c))
CROSS_OBJS  := $(patsubst %.c,build/aarch64/%.o,$(CROSS_SRCS)) $(call isa_objs,aarch64)
CROSS_UNITS := $(patsubst %,build/aarch64/tests/%,test_ops test_amp test_gemm_bf16)
.SECONDARY: $(CROSS_OBJS)
$(foreach l,$(ISA_LEVELS),$(eval $(call ISA_RULES,aarch64,$(l),REL_CFLAGS)))
build/aarch64/%.o: %.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	@printf '  %-6s %s\n' CC-A64 $<
	$(Q)$(CC) $(REL_CFLAGS) -c $< -o $@
build/aarch64/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(CROSS_OBJS)
	@mkdir -p $(dir $@)
	@printf '  %-6s %s\n' TEST-A64 $@
	$(Q)$(CC) $(REL_CFLAGS) -Wno-unused-parameter -o $@ $< $(CROSS_OBJS) $(PKG_LIBS) -lpthread -lm -fopenmp
unit: $(CROSS_UNITS)
	$(Q)RUN_WRAP=$(QEMU) ISA_LEVELS=neon tests/run.sh --unit-only $(CROSS_UNITS)
else
unit: $(UNIT_BINS)
	$(Q)tests/run.sh --unit-only $(UNIT_BINS)
endif

e2e: build/san/tipc bin/tipc
	$(Q)TIPC=$(CURDIR)/build/san/tipc TIPC_REL=$(CURDIR)/bin/tipc tests/run.sh --e2e-only

# Side-by-side benchmarks against the peers (PyTorch, torchvision, Gloo, ONNX Runtime).
bench: bin/tipc
	$(Q)scripts/bench/run-all.sh

# The comm.h-vs-Gloo allreduce benchmark, linked like bin/tipc (scripts/bench/allreduce_vs_gloo.sh).
build/bench/allreduce_bench: scripts/bench/allreduce_bench.cc build/rel/libtipc.a
	@mkdir -p $(dir $@)
	$(Q)$(CXX) -std=c++17 -O2 -D_GNU_SOURCE -o $@ $< build/rel/libtipc.a $(LIBS)

# libFuzzer harnesses in tests/fuzz (clang); FUZZ_SECONDS per harness.
FUZZ_SECONDS ?= 600
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))
FUZZ_LIB_SRCS := runner/plan/config.c runner/plan/plan.c runner/plan/builder.c runner/plan/step6.c runner/plan/full.c runner/plan/clas.c \
                 runner/plan/det.c runner/plan/seg.c runner/plan/dialect.c runner/plan/cmdline.c \
                 runner/launch/rdzv_store.c runner/launch/flags.c runner/launch/node.c runner/launch/hosts.c runner/launch/secret.c runner/launch/sched.c runner/launch/cluster_env.c \
                 engine/io/recipe.c core/check.c core/parse.c core/regfile.c core/options.c core/sha256.c core/strv.c
FUZZ_LIBS := $(shell pkg-config --libs libcrypto yaml-0.1 2>/dev/null) -lpthread -lm
build/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRCS)
	@mkdir -p $(dir $@)
	$(Q)clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined $(shell pkg-config --cflags yaml-0.1) \
	  -o $@ $< $(FUZZ_LIB_SRCS) $(FUZZ_LIBS)
# Seeds: tests/fuzz/seeds/NAME/ when it exists (small, in git); else our configs, the test fixtures
# and the real configs in ../shared. Corpora grow in build/fuzz/corpus-NAME (not in git).
fuzz: $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do n=$$(basename $$f); c=build/fuzz/corpus-$$n; mkdir -p $$c; \
	  if [ -d tests/fuzz/seeds/$$n ]; then cp tests/fuzz/seeds/$$n/* $$c/; else \
	  cp configs/*/*.txt $$c/ 2>/dev/null; find tests/fixtures -name '*.txt' -exec cp {} $$c/ \; 2>/dev/null; \
	  cp ../shared/tipc-configs/*.txt $$c/ 2>/dev/null; fi; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 -close_fd_mask=3 -print_final_stats=1 $$c || exit 1; done

# The man page and the bash completion, generated by the binary from its option tables
# (`tipc help man`, `tipc help completion`), so they always match `tipc CMD --help`.
man: build/man/tipc.1 build/man/tipc.bash
build/man/tipc.1: bin/tipc
	@mkdir -p build/man
	$(Q)bin/tipc help man > $@.tmp && mv $@.tmp $@
build/man/tipc.bash: bin/tipc
	@mkdir -p build/man
	$(Q)bin/tipc help completion > $@.tmp && mv $@.tmp $@

# PREFIX/bin/tipc, and PREFIX/share/tipc/{configs,images}: an installed config finds its recipe and
# demo image there from any working directory (README "Running from anywhere"); the man page and
# the bash completion where man and bash-completion look.
SHARE_DIR = $(DESTDIR)$(PREFIX)/share/tipc
install: bin/tipc build/man/tipc.1 build/man/tipc.bash
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE_DIR)/images
	install -m 755 bin/tipc $(DESTDIR)$(PREFIX)/bin/tipc
	$(Q)for f in $$(find configs -type f | LC_ALL=C sort); do install -D -m 644 "$$f" "$(SHARE_DIR)/$$f" || exit 1; done
	install -m 644 images/demo.jpg $(SHARE_DIR)/images/demo.jpg
	install -D -m 644 build/man/tipc.1 $(DESTDIR)$(PREFIX)/share/man/man1/tipc.1
	install -D -m 644 build/man/tipc.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tipc

clean:
	rm -rf build bin

FORCE:

-include $(shell find build -name '*.d' 2>/dev/null)
