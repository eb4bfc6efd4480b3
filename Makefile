# cgrun: hand-written Makefile.  `make` builds everything, `make check` runs
# every test, `make install` honours PREFIX and DESTDIR.
#
# Sources are picked up by directory, sub-folders included: every .c under
# worker-lib/ goes into libcgrun, every .c under rendezvous/ but main.c into
# an internal static library (used by cgrun-rdzvd and the launcher), every
# .c under launcher/ but main.c into another, and every tests/**/test_*.c
# becomes one Check test program.
#
# The layers point one way: include/ <- worker-lib/ <- rendezvous/ <-
# launcher/.  Each layer's objects see only the include paths of their own
# layer and the layers below it (every folder inside them), so a header of a
# higher layer cannot be included by mistake: the build fails.
# tests/tree/t_layers.sh checks the same from the sources.

VERSION      = 0.1.0
SOMAJOR      = 1
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
SBINDIR     ?= $(PREFIX)/sbin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
DATADIR     ?= $(PREFIX)/share
# bash-completion's place for DATADIR (/usr/share/bash-completion/completions
# with PREFIX=/usr), from its .pc where it is installed.
BASHCOMPDIR ?= $(or $(shell $(PKG_CONFIG) --define-variable=datadir=$(DATADIR) \
	--variable=completionsdir bash-completion 2>/dev/null),$(DATADIR)/bash-completion/completions)
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
SYSCONFDIR  ?= /etc
UNITDIR     ?= $(PREFIX)/lib/systemd/system
DESTDIR     ?=
BUILD       ?= build
CUDA_HOME   ?= /usr/local/cuda

CC          ?= cc
PKG_CONFIG  ?= pkg-config
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wformat=2 -Wpointer-arith -Wcast-qual -Wwrite-strings \
       -Wno-unused-parameter -Wvla -Wnull-dereference -Wundef
ifneq ($(filter true 1,$(CI) $(WERROR)),)
WARN += -Werror
endif
OPT ?= -O2 -g
ifneq ($(SANITIZE),)
OPT += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif
CPPFLAGS += -D_GNU_SOURCE -DCGRUN_VERSION='"$(VERSION)"'
CFLAGS   += -std=c11 $(OPT) $(WARN) -fPIC -fvisibility=hidden -MMD -MP

EVENT_CFLAGS := $(shell $(PKG_CONFIG) --cflags libevent 2>/dev/null)
EVENT_LIBS   := $(shell $(PKG_CONFIG) --libs libevent_core libevent_extra 2>/dev/null || echo -levent_core -levent_extra)
HWLOC_CFLAGS := $(shell $(PKG_CONFIG) --cflags hwloc 2>/dev/null)
HWLOC_LIBS   := $(shell $(PKG_CONFIG) --libs hwloc 2>/dev/null || echo -lhwloc)
JSON_CFLAGS  := $(shell $(PKG_CONFIG) --cflags json-c 2>/dev/null)
JSON_LIBS    := $(shell $(PKG_CONFIG) --libs json-c 2>/dev/null || echo -ljson-c)
CRYPTO_LIBS  := $(shell $(PKG_CONFIG) --libs libcrypto 2>/dev/null || echo -lcrypto)
CURL_CFLAGS  := $(shell $(PKG_CONFIG) --cflags libcurl 2>/dev/null)
SYSTEMD_LIBS := $(shell $(PKG_CONFIG) --libs libsystemd 2>/dev/null || echo -lsystemd)
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell $(PKG_CONFIG) --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)
CPPFLAGS += $(EVENT_CFLAGS) $(HWLOC_CFLAGS) $(JSON_CFLAGS) $(CURL_CFLAGS)
# Optional, bench/floor.c only: its io_uring mode where liburing-dev is.
URING_LIBS   := $(shell $(PKG_CONFIG) --libs liburing 2>/dev/null)

# NCCL bootstrap library: only where nccl.h is found.
HAVE_NCCL := $(shell test -f $(CUDA_HOME)/include/nccl.h && test -f $(CUDA_HOME)/include/cuda_runtime.h && echo 1)

# Every .c (or every folder) under a layer, sorted.
srcs_in = $(sort $(shell find $(1) -name '*.c'))
dirs_in = $(sort $(shell find $(1) -type d))

LIB_ALL    := $(call srcs_in,worker-lib)
LIB_SRCS   := $(filter-out %/nccl.c %/nccl_%.c,$(LIB_ALL))
# util.c's and monotime.c's helpers are hidden in libcgrun.so:
# libcgrun-nccl links its own.
NCCL_SRCS  := $(filter %/nccl.c %/nccl_%.c,$(LIB_ALL)) worker-lib/util.c \
	      worker-lib/monotime.c
RDZV_SRCS  := $(filter-out rendezvous/main.c,$(call srcs_in,rendezvous))
LNCH_SRCS  := $(filter-out launcher/main.c,$(call srcs_in,launcher))

# Include paths per layer: its own folders and those of the layers below.
INC_LIB    := -Iinclude $(addprefix -I,$(call dirs_in,worker-lib))
INC_RDZV   := $(INC_LIB) $(addprefix -I,$(call dirs_in,rendezvous))
INC_LNCH   := $(INC_RDZV) $(addprefix -I,$(call dirs_in,launcher))
LAYER_INC   = $(INC_LNCH)
$(BUILD)/worker-lib/%.o: LAYER_INC = $(INC_LIB)
$(BUILD)/rendezvous/%.o: LAYER_INC = $(INC_RDZV)
$(BUILD)/launcher/%.o: LAYER_INC = $(INC_LNCH)
# Check programs and their helpers anywhere under tests/ (by subsystem).
TEST_SRCS  := $(sort $(shell find tests -name 'test_*.c' ! -path 'tests/fuzz/*'))
TEST_HELPERS := $(sort $(shell find tests -name 'helper_*.c' ! -path 'tests/fuzz/*'))
TEST_INC   := $(addprefix -I,$(sort $(dir $(TEST_SRCS) $(TEST_HELPERS))))
# Test tools (tests/**/tool_*.c): programs with a main() of their own that
# a t_*.sh script runs, linked with the test helpers (but helper_main.c).
TOOL_SRCS  := $(sort $(shell find tests -name 'tool_*.c' ! -path 'tests/fuzz/*'))
TOOL_HELPERS := $(filter-out %/helper_main.c,$(TEST_HELPERS))
BENCH_SRCS := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

LIBCGRUN_A  = $(BUILD)/libcgrun.a
LIBCGRUN_SO = $(BUILD)/libcgrun.so.$(SOMAJOR)
LIBRDZV_A   = $(BUILD)/librdzv.a
LIBLNCH_A   = $(BUILD)/liblauncher.a
RDZVD       = $(BUILD)/cgrun-rdzvd
CGRUN       = $(BUILD)/cgrun
TESTS       = $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TOOLS       = $(patsubst tests/%.c,$(BUILD)/tests/%,$(TOOL_SRCS))
BENCHES     = $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
PCFILE      = $(BUILD)/cgrun.pc

ALL = $(LIBCGRUN_A) $(LIBCGRUN_SO) $(RDZVD) $(CGRUN) $(PCFILE) $(BENCHES)
ifeq ($(HAVE_NCCL),1)
LIBNCCL_SO = $(BUILD)/libcgrun-nccl.so.$(SOMAJOR)
NCCL_PCFILE = $(BUILD)/cgrun-nccl.pc
ALL += $(LIBNCCL_SO) $(NCCL_PCFILE)
endif

# libcgrun needs only libc (pthread_once: -lpthread for older glibc's
# static links); nothing of libevent (see readelf -d, nm -u).
LIB_DEPLIBS  = -lpthread
RDZV_DEPLIBS = $(SYSTEMD_LIBS) $(CRYPTO_LIBS) $(JSON_LIBS) $(EVENT_LIBS) -lpthread
# libcurl is not linked: the etcd-v3 backend loads it (curl_dl.c).
LNCH_DEPLIBS = $(HWLOC_LIBS) $(JSON_LIBS) -ldl -lm

.PHONY: all check install uninstall clean bench bench-gpu-host bench-gpu-host-sim fuzz tests
all: $(ALL)
	@test "$(HAVE_NCCL)" = 1 || echo "note: $(CUDA_HOME)/include/nccl.h not found; libcgrun-nccl skipped"

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(LAYER_INC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIBCGRUN_A): $(call obj,$(LIB_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBCGRUN_SO): $(call obj,$(LIB_SRCS))
	$(CC) -shared -Wl,-soname,libcgrun.so.$(SOMAJOR) -Wl,--no-undefined -o $@ $^ $(LDFLAGS) $(LIB_DEPLIBS)
	ln -sf libcgrun.so.$(SOMAJOR) $(BUILD)/libcgrun.so

$(BUILD)/worker-lib/nccl%.o: CPPFLAGS += -I$(CUDA_HOME)/include
$(BUILD)/worker-lib/nccl.o: CPPFLAGS += -isystem $(CUDA_HOME)/include
$(LIBNCCL_SO): $(call obj,$(NCCL_SRCS)) $(LIBCGRUN_SO)
	$(CC) -shared -Wl,-soname,libcgrun-nccl.so.$(SOMAJOR) -o $@ $(call obj,$(NCCL_SRCS)) \
	  -L$(BUILD) -lcgrun -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib -Wl,-rpath,$(CUDA_HOME)/lib64 -lnccl -lcudart $(LDFLAGS)
	ln -sf libcgrun-nccl.so.$(SOMAJOR) $(BUILD)/libcgrun-nccl.so

$(LIBRDZV_A): $(call obj,$(RDZV_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBLNCH_A): $(call obj,$(LNCH_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(RDZVD): $(call obj,rendezvous/main.c) $(LIBRDZV_A) $(LIBCGRUN_A)
	$(CC) -o $@ $^ $(LDFLAGS) $(RDZV_DEPLIBS)

$(CGRUN): $(call obj,launcher/main.c) $(LIBLNCH_A) $(LIBRDZV_A) $(LIBCGRUN_A)
	$(CC) -o $@ $^ $(LDFLAGS) $(LNCH_DEPLIBS) $(RDZV_DEPLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(call obj,$(TEST_HELPERS)) $(LIBLNCH_A) $(LIBRDZV_A) $(LIBCGRUN_A)
	$(CC) -o $@ $^ $(LDFLAGS) $(CHECK_LIBS) $(LNCH_DEPLIBS) $(RDZV_DEPLIBS)
$(BUILD)/tests/%.o: CPPFLAGS += $(CHECK_CFLAGS) -Itests $(TEST_INC)
$(TOOLS): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(call obj,$(TOOL_HELPERS)) $(LIBLNCH_A) $(LIBRDZV_A) $(LIBCGRUN_A)
	$(CC) -o $@ $^ $(LDFLAGS) $(CHECK_LIBS) $(LNCH_DEPLIBS) $(RDZV_DEPLIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIBRDZV_A) $(LIBCGRUN_A)
	$(CC) -o $@ $^ $(LDFLAGS) $(RDZV_DEPLIBS) $(BENCH_LIBS) -lm
# bench/etcd_sim runs the launcher's etcd-v3 backend: the launcher's library too.
$(BUILD)/bench/etcd_sim: $(BUILD)/bench/etcd_sim.o $(LIBLNCH_A) $(LIBRDZV_A) $(LIBCGRUN_A)
	$(CC) -o $@ $^ $(LDFLAGS) $(LNCH_DEPLIBS) $(RDZV_DEPLIBS) -lm
ifneq ($(URING_LIBS),)
$(BUILD)/bench/floor.o: CPPFLAGS += -DHAVE_LIBURING
$(BUILD)/bench/floor: BENCH_LIBS = $(URING_LIBS)
endif

# The .pc files name the install directories: remake them when these change
# (`make && make install PREFIX=/usr` must not install /usr/local's).
PCVARS = $(PREFIX):$(LIBDIR):$(INCLUDEDIR):$(CUDA_HOME)
$(BUILD)/pcvars.stamp: FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = '$(PCVARS)' ] || echo '$(PCVARS)' > $@
FORCE:
.PHONY: FORCE

$(PCFILE): Makefile $(BUILD)/pcvars.stamp
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
	  'Name: cgrun' 'Description: cgrun worker library: rank info, TCPStore client, barriers, checkpoints' \
	  'Version: $(VERSION)' 'Libs: -L$${libdir} -lcgrun' 'Libs.private: $(LIB_DEPLIBS)' \
	  'Cflags: -I$${includedir}' > $@

# cgrun-nccl.pc: CUDA lives in ${cudadir} (pkg-config --define-variable
# can move it); -isystem keeps CUDA's headers out of the users' warnings.
$(BUILD)/cgrun-nccl.pc: Makefile $(BUILD)/pcvars.stamp
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' 'cudadir=$(CUDA_HOME)' '' \
	  'Name: cgrun-nccl' 'Description: cgrun NCCL communicator bootstrap over the job store' \
	  'Version: $(VERSION)' 'Requires: cgrun' \
	  'Libs: -L$${libdir} -lcgrun-nccl -L$${cudadir}/lib64 -Wl,-rpath,$${cudadir}/lib64 -lnccl -lcudart' \
	  'Cflags: -I$${includedir} -isystem $${cudadir}/include' > $@

# A fake NVML (libnvidia-ml.so.1) for the GPU discovery tests.
FAKE_NVML = $(BUILD)/tests/place/fake_nvml/libnvidia-ml.so.1
$(FAKE_NVML): tests/place/fake_nvml/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=default -shared -o $@ $< $(LDFLAGS)

tests: $(ALL) $(TESTS) $(TOOLS) $(FAKE_NVML)

# The whole suite: unit programs and black-box scripts, one summary line.
# SUITE="PATTERN..." runs only the tests whose name contains one of them (a
# pattern with a slash: folder/name, so SUITE=launcher/ runs a folder).  Sanitizer
# builds run with third-party leaks suppressed (tests/memcheck/lsan.supp; the slow
# unwinder sees through hwloc's plugins to match them), longer Check
# timeouts, and CC instrumented for the tools scripts compile.
ifneq ($(SANITIZE),)
SUITE_ENV = LSAN_OPTIONS=suppressions=$(CURDIR)/tests/memcheck/lsan.supp:print_suppressions=0 \
	ASAN_OPTIONS=fast_unwind_on_malloc=0:detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1 CK_TIMEOUT_MULTIPLIER=3 \
	CC="$(CC) -fsanitize=$(SANITIZE)"
endif
check: tests
	$(SUITE_ENV) BUILD=$(BUILD) sh tests/run-suite.sh $(SUITE)

bench: $(ALL)
	BUILD=$(BUILD) sh bench/run.sh

# On a GPU host (nvidia-smi, an NVIDIA GPU on the bus): launch cost and agent
# RSS against a CPU-only baseline, into bench/results/gpu_host.md (< 1 min).
# bench-gpu-host-sim: the same on the fake GPU host of tests/ (no GPU needed).
bench-gpu-host: $(ALL)
	BUILD=$(BUILD) sh bench/gpu_host.sh
bench-gpu-host-sim: $(ALL) $(FAKE_NVML)
	BUILD=$(BUILD) sh bench/gpu_host.sh --simulate

# ---- fuzzing: every tests/fuzz/fuzz_*.c is a libFuzzer target, linked with
# the project's sources compiled again by clang with the fuzzer's coverage
# and ASan+UBSan (not the gcc-built libraries).  `make fuzz` runs each for
# FUZZ_SECONDS on its seed corpus (tests/fuzz/corpus/<target>/, read-only;
# new inputs go to $(BUILD)/fuzz/work) and writes $(BUILD)/fuzz/results.txt.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN     ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS   = -std=c11 -O1 -g -fno-omit-frame-pointer -Wall -Wextra \
                -Wno-unused-parameter $(FUZZ_SAN)
FUZZ_DIR      = $(BUILD)/fuzz
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS       = $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_SRCS))
FUZZ_LIB      = $(FUZZ_DIR)/libproject.a
FUZZ_OBJS     = $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(LIB_SRCS) $(RDZV_SRCS) $(LNCH_SRCS))

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(INC_LNCH) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	$(FUZZ_CC) $(INC_LNCH) -Itests $(TEST_INC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) \
	  $(LNCH_DEPLIBS) $(RDZV_DEPLIBS)

fuzzers: $(FUZZERS)

fuzz: $(FUZZERS)
	BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh
.PHONY: fuzzers

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) \
	  $(DESTDIR)$(INCLUDEDIR)/cgrun $(DESTDIR)$(PKGCONFIGDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man8
	install -m 755 $(CGRUN) $(DESTDIR)$(BINDIR)/cgrun
	install -m 755 $(RDZVD) $(DESTDIR)$(SBINDIR)/cgrun-rdzvd
	install -m 644 $(LIBCGRUN_A) $(DESTDIR)$(LIBDIR)/libcgrun.a
	install -m 755 $(LIBCGRUN_SO) $(DESTDIR)$(LIBDIR)/libcgrun.so.$(SOMAJOR)
	ln -sf libcgrun.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libcgrun.so
	if [ -n "$(LIBNCCL_SO)" ]; then \
	  install -m 755 $(LIBNCCL_SO) $(DESTDIR)$(LIBDIR)/libcgrun-nccl.so.$(SOMAJOR) && \
	  ln -sf libcgrun-nccl.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libcgrun-nccl.so; fi
	install -m 644 include/cgrun/*.h $(DESTDIR)$(INCLUDEDIR)/cgrun/
	if [ -n "$(NCCL_PCFILE)" ]; then install -m 644 $(NCCL_PCFILE) $(DESTDIR)$(PKGCONFIGDIR)/cgrun-nccl.pc; fi
	install -m 644 $(PCFILE) $(DESTDIR)$(PKGCONFIGDIR)/cgrun.pc
	for m in man/*.1; do [ -f "$$m" ] && install -m 644 $$m $(DESTDIR)$(MANDIR)/man1/ || true; done
	for m in man/*.3; do [ -f "$$m" ] && install -m 644 $$m $(DESTDIR)$(MANDIR)/man3/ || true; done
	for m in man/*.8; do [ -f "$$m" ] && install -m 644 $$m $(DESTDIR)$(MANDIR)/man8/ || true; done
	install -d $(DESTDIR)$(DATADIR)/cgrun $(DESTDIR)$(BASHCOMPDIR)
	install -m 644 docs/event-log.schema.json $(DESTDIR)$(DATADIR)/cgrun/
	install -m 644 completion/cgrun.bash $(DESTDIR)$(BASHCOMPDIR)/cgrun
	install -m 644 completion/cgrun.bash $(DESTDIR)$(BASHCOMPDIR)/cgrun-rdzvd
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/cgrun
	for u in rendezvous/systemd/cgrun-rdzvd.service rendezvous/systemd/cgrun-rdzvd.socket; do \
	  sed -e 's|/usr/sbin/cgrun-rdzvd|$(SBINDIR)/cgrun-rdzvd|' -e 's|/etc/cgrun/|$(SYSCONFDIR)/cgrun/|' \
	    $$u > $(DESTDIR)$(UNITDIR)/$${u##*/} && chmod 644 $(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; done
	test -e $(DESTDIR)$(SYSCONFDIR)/cgrun/rdzvd.conf || \
	  install -m 644 rendezvous/rdzvd.conf.example $(DESTDIR)$(SYSCONFDIR)/cgrun/rdzvd.conf

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/cgrun $(DESTDIR)$(SBINDIR)/cgrun-rdzvd \
	  $(DESTDIR)$(LIBDIR)/libcgrun.* $(DESTDIR)$(LIBDIR)/libcgrun-nccl.* \
	  $(DESTDIR)$(PKGCONFIGDIR)/cgrun.pc $(DESTDIR)$(PKGCONFIGDIR)/cgrun-nccl.pc \
	  $(DESTDIR)$(UNITDIR)/cgrun-rdzvd.service $(DESTDIR)$(UNITDIR)/cgrun-rdzvd.socket
	rm -f $(DESTDIR)$(BASHCOMPDIR)/cgrun $(DESTDIR)$(BASHCOMPDIR)/cgrun-rdzvd
	rm -rf $(DESTDIR)$(INCLUDEDIR)/cgrun $(DESTDIR)$(DATADIR)/cgrun

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
