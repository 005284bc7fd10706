# SPDX-License-Identifier: GPL-2.0
#
# ckpt: one build for the engine module, the userspace parts and the tests.
#
#   make              module for the default kernel + all userspace
#   make KVER=V       ... for another installed kernel (or KDIR=/path/build)
#   make deps         install every Debian package the project needs
#   make check        build everything, run host tests and the VM suites on
#                     both kernel lines; ends with "N passed, N failed"
#   make check-debug  the debug kernel's subset alone (KASAN, lockdep)
#   make demo         the end-to-end demonstration in a VM
#   make bench        ckpt against CRIU, side by side in one VM run
#   make style        checkpatch and sparse on the kernel code
#   make fuzz         fuzz the image reader for FUZZ_SECONDS (default 60)
#   make install      PREFIX=/usr/local DESTDIR= ; make dkms-install
#
# V=1 shows the commands.

VERSION := $(shell cat VERSION)
O := build
PREFIX ?= /usr/local
DESTDIR ?=
MANDIR ?= $(PREFIX)/share/man

ifeq ($(V),1)
Q :=
else
Q := @
MAKEFLAGS += --no-print-directory
endif

# The target kernel: from what is installed, never from uname -r.
ifneq ($(KDIR),)
KVER ?= $(patsubst linux-headers-%,%,$(notdir $(realpath $(KDIR))))
endif
KVER ?= $(shell mk/kver --default 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
KVERS_ALL = $(shell mk/kver --all)

CC ?= gcc
CFLAGS ?= -O2 -g
USER_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -MMD -MP \
	-Iinclude/uapi -DCKPT_VERSION='"$(VERSION)"' $(CFLAGS)
NL_CFLAGS = $(shell pkg-config --cflags libnl-genl-3.0)
NL_LIBS = $(shell pkg-config --libs libnl-genl-3.0)

# The kernel source package provides checkpatch.pl and the kselftest harness.
KSRC_TAR ?= $(firstword $(wildcard /usr/src/linux-source-6.1.tar.xz /usr/src/linux-source-*.tar.xz))
KSRC := $(O)/ksrc
KSFT_HDR := $(KSRC)/tools/testing/selftests/kselftest_harness.h

KMOD_SRCS := $(wildcard kmod/ckpt/*.c kmod/ckpt/*.h) kmod/ckpt/Kbuild \
	include/uapi/linux/ckpt.h VERSION

# The one door to /dev/ckpt (lib/engine), linked into ckpt and into libckpt:
# position-independent, hidden symbols, libc only.
ENGINE_OBJ := $(O)/lib/engine/engine.o
# The restorer (lib/restore): everything 'ckpt restart' does, as a static
# library, with the image checks shared with the engine and the door.
IMAGE_OBJS := $(O)/lib/restore/image_check.o $(O)/lib/restore/csum.o
RESTORE_OBJS := $(patsubst lib/restore/%.c,$(O)/lib/restore/%.o,$(wildcard lib/restore/*.c)) \
	$(IMAGE_OBJS) $(ENGINE_OBJ)
RESTORE_LIB := $(O)/lib/libckpt-restore.a
# lib/restore first: kmod/ckpt has headers of the same names (image.h).
RESTORE_CFLAGS := -Ilib/restore -Ilib/engine -Ikmod/ckpt
# The ckptd protocol and snapshot metadata (lib/ckptd), in ckpt and ckptd.
PROTO_OBJS := $(patsubst lib/ckptd/%.c,$(O)/lib/ckptd/%.o,$(wildcard lib/ckptd/*.c))
PROTO_CFLAGS := -Ilib/ckptd $(RESTORE_CFLAGS)
JANSSON_LIBS := -ljansson
# Every cli/*.c is part of ckpt.
CLI_OBJS := $(patsubst cli/%.c,$(O)/cli/%.o,$(wildcard cli/*.c))
CLI_CFLAGS := -Icli $(PROTO_CFLAGS)
# The daemon (daemon/): libevent's loop, OpenSSL's TLS, HKDF, HMAC and SHA-256.
CKPTD_OBJS := $(patsubst daemon/%.c,$(O)/daemon/%.o,$(wildcard daemon/*.c))
CKPTD_LIBS := -levent $(JANSSON_LIBS) -lssl -lcrypto
MKIMAGE := $(O)/tests/host/mkimage
MKIMAGE_OBJS := $(IMAGE_OBJS)

# The image fuzzer (make fuzz), built with clang's libFuzzer and sanitizers
# from the same sources as ckpt inspect; never part of a plain make.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ := $(O)/fuzz/image_fuzz
FUZZ_SRCS := tests/fuzz/image_fuzz.c lib/restore/image.c lib/restore/names.c cli/inspect.c cli/inspect_tree.c cli/json.c cli/print.c \
	lib/restore/treedir.c lib/restore/err.c lib/engine/engine.c \
	kmod/ckpt/csum.c kmod/ckpt/image_check.c
FUZZ_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -g -O1 \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Iinclude/uapi -Icli -Ilib/restore -Ilib/engine -Ikmod/ckpt -DCKPT_VERSION='"$(VERSION)"'
KSFT_PROGS := $(patsubst tests/kselftest/%.c,$(O)/tests/kselftest/%,$(wildcard tests/kselftest/*.c))
LIBCKPT_OBJS := $(patsubst lib/libckpt/%.c,$(O)/lib/libckpt/%.o,$(wildcard lib/libckpt/*.c)) \
	$(ENGINE_OBJ)
LIBCKPT := $(O)/lib/libckpt.so.1 $(O)/lib/libckpt.so $(O)/lib/libckpt.a \
	$(O)/lib/libckpt.pc
# Programs to checkpoint in demos and benchmarks.
WORKLOADS := $(patsubst tests/workloads/%.c,$(O)/tests/workloads/%,$(wildcard tests/workloads/*.c))
# A JVM's (vm-tests/tests/jvm.sh).
JAVA_WORKLOADS := $(patsubst tests/workloads/%.java,$(O)/tests/workloads/%.class,$(wildcard tests/workloads/*.java))
# Libraries tests LD_PRELOAD into ckpt's commands.
PRELOADS := $(patsubst tests/preload/%.c,$(O)/tests/preload/%.so,$(wildcard tests/preload/*.c))
# MPI programs to checkpoint (tests/mpi), built once per MPI library, with
# its compiler wrapper: build/tests/mpi/openmpi/NAME, .../mpich/NAME.
MPI_IMPLS := openmpi mpich
MPI_PROGS := $(foreach m,$(MPI_IMPLS),$(patsubst tests/mpi/%.c,$(O)/tests/mpi/$(m)/%,\
	$(wildcard tests/mpi/*.c)))
MPI_HOOKS := $(foreach m,$(MPI_IMPLS),$(O)/lib/$(m)/libckpt-mpi.so)

.PHONY: all deps deps-check kmod kmod-all user check check-host check-vm \
	debug-kernel kmod-debug check-debug heat-refs \
	demo bench style install dkms-install clean help fuzz fuzz-build

all: deps-check kmod user

help:
	@sed -n '3,18p' Makefile | sed 's/^# \{0,1\}//'

deps:
	$(Q)mk/deps

deps-check:
	$(Q)mk/deps --if-missing

# ---------------------------------------------------------------- module
#
# Each kernel gets its own mirror of the module sources (symlinks) under
# build/<kver>, so objects for different kernels never mix and the source
# tree stays clean. The mirror keeps the tree's shape (kmod/ckpt two levels
# below a root holding include/ and VERSION), which Kbuild relies on.

# KMOD_DIR: where the mirrors go (a build of its own elsewhere, leaving
# build/<kver>'s module alone). Not O=, which the kernel's make would take
# for its own.
KMOD_DIR ?= $(O)

define kmod_build
	$(Q)test -e /lib/modules/$(1)/build/Makefile -o -n "$(2)" || \
		{ echo "no kbuild tree for kernel '$(1)' (run: make deps)" >&2; exit 1; }
	$(Q)mkdir -p $(KMOD_DIR)/$(1)/kmod/ckpt
	$(Q)ln -sfn $(CURDIR)/include $(KMOD_DIR)/$(1)/include
	$(Q)ln -sf $(CURDIR)/VERSION $(KMOD_DIR)/$(1)/VERSION
	$(Q)find $(KMOD_DIR)/$(1)/kmod/ckpt -maxdepth 1 -type l ! -exec test -e {} \; -delete
	$(Q)ln -sf $(CURDIR)/kmod/ckpt/*.[ch] $(CURDIR)/kmod/ckpt/Kbuild $(KMOD_DIR)/$(1)/kmod/ckpt/
	$(Q)$(MAKE) -C $(or $(2),/lib/modules/$(1)/build) M=$(CURDIR)/$(KMOD_DIR)/$(1)/kmod/ckpt \
		W=1 KCFLAGS=-Werror $(if $(filter 1,$(V)),V=1) modules
endef

kmod:
	$(call kmod_build,$(KVER),$(KDIR))

kmod-all:
	$(Q)for k in $(KVERS_ALL); do \
		$(MAKE) kmod KVER=$$k KDIR=/lib/modules/$$k/build || exit 1; \
	done

# The test bed's debug kernel (KASAN, KFENCE, lockdep, DEBUG_LIST): built
# once per machine under /var/cache/ckpt, see Documentation/testing.md.
debug-kernel: deps-check
	$(Q)mk/debug-kernel > /dev/null

kmod-debug: debug-kernel
	$(Q)$(MAKE) kmod KVER=$$(mk/debug-kernel --release) KDIR=$$(mk/debug-kernel --dir)

# ---------------------------------------------------------------- userspace

user: $(O)/bin/ckpt $(O)/bin/ckpt-run $(O)/bin/ckpt-join $(O)/bin/ckpt-ssh $(O)/lib/ckpt/ssh/ssh $(O)/bin/ckptd $(LIBCKPT) $(MKIMAGE) $(KSFT_PROGS) $(WORKLOADS) $(JAVA_WORKLOADS) $(PRELOADS) \
	$(MPI_PROGS) $(MPI_HOOKS) $(O)/tests/host/libckpt_unit $(O)/tests/host/tcpjoin_unit \
	$(O)/tests/host/addrmap_unit $(O)/tests/host/tty_unit

$(O)/tests/host/libckpt_unit: tests/host/libckpt_unit.c $(O)/lib/libckpt.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) -pthread -rdynamic -Ilib/libckpt -o $@ $< $(O)/lib/libckpt.a -ldl

$(O)/tests/host/addrmap_unit: tests/host/addrmap_unit.c lib/ckptd/addrmap.c lib/restore/err.c lib/ckptd/addrmap.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) $(PROTO_CFLAGS) -o $@ $(filter %.c,$^) $(JANSSON_LIBS)

$(O)/tests/host/tty_unit: tests/host/tty_unit.c cli/tty.c cli/commands.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) -Icli -o $@ $(filter %.c,$^)

$(O)/tests/host/tcpjoin_unit: tests/host/tcpjoin_unit.c lib/ckptd/tcpjoin.c lib/ckptd/proto.c lib/ckptd/meta.c lib/ckptd/addrmap.c \
		lib/restore/err.c lib/ckptd/tcpjoin.h lib/ckptd/proto.h lib/ckptd/meta.h lib/ckptd/addrmap.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) $(PROTO_CFLAGS) -o $@ $(filter %.c,$^) $(JANSSON_LIBS)

$(O)/bin/ckpt-run $(O)/bin/ckpt-join $(O)/bin/ckpt-ssh: $(O)/bin/ckpt
	$(Q)ln -sf ckpt $@

# A job's plain ssh: ckpt-run puts its directory first on the job's PATH.
$(O)/lib/ckpt/ssh/ssh: $(O)/bin/ckpt
	@mkdir -p $(@D)
	$(Q)ln -sf ../../../bin/ckpt $@

# libckpt: shared (versioned symbols, only the API exported) and static.
$(O)/lib/libckpt.so.1: $(LIBCKPT_OBJS) lib/libckpt/libckpt.map
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(USER_CFLAGS) -shared -pthread -Wl,-soname,libckpt.so.1 \
		-Wl,--version-script=lib/libckpt/libckpt.map -Wl,-z,defs \
		-o $@ $(LIBCKPT_OBJS)

$(O)/lib/libckpt.so: $(O)/lib/libckpt.so.1
	$(Q)ln -sf libckpt.so.1 $@

$(O)/lib/libckpt.a: $(LIBCKPT_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/lib/libckpt.pc: lib/libckpt/libckpt.pc.in VERSION
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(O)/lib/libckpt/%.o: lib/libckpt/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) -fPIC -fvisibility=hidden -pthread \
		-Ilib/libckpt -Ilib/engine -c -o $@ $<

$(ENGINE_OBJ): lib/engine/engine.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(O)/bin/ckpt: $(CLI_OBJS) $(PROTO_OBJS) $(RESTORE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(USER_CFLAGS) -pthread -o $@ $^ $(JANSSON_LIBS)

$(O)/bin/ckptd: $(CKPTD_OBJS) $(PROTO_OBJS) $(RESTORE_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(USER_CFLAGS) -pthread -o $@ $^ $(CKPTD_LIBS)

$(O)/daemon/%.o: daemon/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) -Idaemon $(PROTO_CFLAGS) -c -o $@ $<

$(O)/lib/ckptd/%.o: lib/ckptd/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) $(PROTO_CFLAGS) -c -o $@ $<

$(O)/cli/%.o: cli/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) $(CLI_CFLAGS) -DCKPT_LIBDIR='"$(PREFIX)/lib"' -c -o $@ $<

$(RESTORE_LIB): $(RESTORE_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/lib/restore/%.o: lib/restore/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) $(RESTORE_CFLAGS) -c -o $@ $<

# The engine's image checks and checksum, compiled as they are for userspace.
$(IMAGE_OBJS): $(O)/lib/restore/%.o: kmod/ckpt/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) $(RESTORE_CFLAGS) -c -o $@ $<

$(MKIMAGE): tests/host/mkimage.c $(MKIMAGE_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) $(RESTORE_CFLAGS) -o $@ $< $(MKIMAGE_OBJS)

$(FUZZ): $(FUZZ_SRCS) $(wildcard cli/*.h lib/restore/*.h) kmod/ckpt/image_check.h \
		include/uapi/linux/ckpt_image.h
	@command -v $(FUZZ_CC) > /dev/null || \
		{ echo "$(FUZZ_CC) is not installed (run: make deps)" >&2; exit 1; }
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CLANG   $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_SRCS)

# The ckptd protocol's and snapshot metadata's fuzzer, the same way.
MSG_FUZZ := $(O)/fuzz/msg_fuzz
MSG_FUZZ_SRCS := tests/fuzz/msg_fuzz.c lib/ckptd/proto.c lib/ckptd/meta.c lib/ckptd/tcpjoin.c \
	lib/ckptd/addrmap.c lib/restore/err.c

$(MSG_FUZZ): $(MSG_FUZZ_SRCS) $(wildcard lib/ckptd/*.h) lib/restore/restore.h
	@command -v $(FUZZ_CC) > /dev/null || \
		{ echo "$(FUZZ_CC) is not installed (run: make deps)" >&2; exit 1; }
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CLANG   $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -Ilib/ckptd -o $@ $(MSG_FUZZ_SRCS) $(JANSSON_LIBS)

fuzz-build: $(FUZZ) $(MSG_FUZZ) $(MKIMAGE)

# Runs single-threaded; the corpus grows in build/fuzz/corpus across runs.
fuzz: fuzz-build
	$(Q)tests/fuzz/run -t $(FUZZ_SECONDS) -c $(O)/fuzz/corpus

$(KSFT_HDR): $(KSRC_TAR)
	@test -n "$(KSRC_TAR)" || { echo "linux-source-6.1 is not installed (run: make deps)" >&2; exit 1; }
	@echo "  EXTRACT checkpatch and the kselftest harness from $(notdir $(KSRC_TAR))"
	$(Q)mk/ksrc $(KSRC_TAR) $(KSRC)

# The critical-section benchmark links libckpt statically.
$(O)/tests/workloads/csbench: tests/workloads/csbench.c $(O)/lib/libckpt.a
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) -pthread -Ilib/libckpt -o $@ $< $(O)/lib/libckpt.a

$(O)/tests/workloads/%: tests/workloads/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) -pthread -o $@ $<

$(O)/tests/workloads/%.class: tests/workloads/%.java
	@mkdir -p $(@D)
	@command -v javac > /dev/null || \
		{ echo "javac is not installed (run: make deps)" >&2; exit 1; }
	@$(if $(Q),echo "  JAVAC   $@")
	$(Q)javac -d $(@D) $<

$(O)/tests/preload/%.so: tests/preload/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) -fPIC -shared -o $@ $<

# mpicc.openmpi and mpicc.mpich (Debian's names for each library's mpicc).
# MPIX_Checkpoint's library, libckpt-mpi.so, is built with each too (an
# MPI handle is a pointer in one, an int in the other); tests/mpi/mpix
# links it.
define mpi_rule
$(O)/tests/mpi/$(1)/%: tests/mpi/%.c
	@command -v mpicc.$(1) > /dev/null || \
		{ echo "mpicc.$(1) is not installed (run: make deps)" >&2; exit 1; }
	@mkdir -p $$(@D)
	@$$(if $(Q),echo "  MPICC   $$@")
	$(Q)mpicc.$(1) $$(USER_CFLAGS) -o $$@ $$< $$(MPI_LINK)

$(O)/lib/$(1)/libckpt-mpi.so: mpi-hooks/mpix.c mpi-hooks/mpix_ckpt.h $(O)/lib/libckpt.so
	@mkdir -p $$(@D)
	@$$(if $(Q),echo "  MPICC   $$@")
	$(Q)mpicc.$(1) $$(USER_CFLAGS) -fPIC -shared -Wl,-z,defs -Ilib/libckpt \
		-Impi-hooks -o $$@ $$< -L$(O)/lib -lckpt -ljansson

$(O)/tests/mpi/$(1)/mpix: $(O)/lib/$(1)/libckpt-mpi.so
$(O)/tests/mpi/$(1)/mpix: MPI_LINK = -Impi-hooks -L$(O)/lib/$(1) -lckpt-mpi -L$(O)/lib -lckpt \
	-Wl,-rpath,$(abspath $(O))/lib/$(1):$(abspath $(O))/lib
endef
$(foreach m,$(MPI_IMPLS),$(eval $(call mpi_rule,$(m))))

# The VM tests' reference runs of heat (200 steps, on one node and over
# two), made natively on this host rather than under TCG in each test
# (tests/mpi/heat-ref says why they match).
HEAT_REFS := $(foreach m,$(MPI_IMPLS),$(foreach n,200,$(O)/tests/mpi/$(m)/heat-$(n).ref))
heat-refs: $(HEAT_REFS)
$(O)/tests/mpi/%.ref: tests/mpi/heat-ref
	@$(if $(Q),echo "  REF     $@")
	$(Q)tests/mpi/heat-ref $(word 1,$(subst /, ,$*)) $(subst heat-,,$(notdir $*)) $@
$(foreach m,$(MPI_IMPLS),$(foreach n,200,$(eval $(O)/tests/mpi/$(m)/heat-$(n).ref: $(O)/tests/mpi/$(m)/heat)))

# The image checksum (csum.c) too, for tests that edit images.
$(O)/tests/kselftest/%: tests/kselftest/%.c $(KSFT_HDR) $(O)/lib/libckpt.a \
		$(O)/lib/restore/csum.o
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(USER_CFLAGS) -Wno-unused-parameter -pthread -I$(dir $(KSFT_HDR)) \
		-Ilib/libckpt $(NL_CFLAGS) -o $@ $< $(O)/lib/libckpt.a \
		$(O)/lib/restore/csum.o $(NL_LIBS)

-include $(sort $(LIBCKPT_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(RESTORE_OBJS:.o=.d) \
	$(PROTO_OBJS:.o=.d) $(CKPTD_OBJS:.o=.d)) $(MKIMAGE).d $(KSFT_PROGS:=.d) $(WORKLOADS:=.d) $(PRELOADS:.so=.d) \
	$(MPI_PROGS:=.d) $(MPI_HOOKS:.so=.d)

# ---------------------------------------------------------------- checks

# Host tests leave TAP in build/check/host, the VM suites in build/check/vm;
# the summary counts both.
# Every one-node test runs once on each line, on the distro's kernels.
# The debug kernel (KASAN, KFENCE, lockdep) runs a named subset
# (DEBUG_TESTS) with make check-debug, not here: its build alone took a
# third of CI's hour (Documentation/testing.md, "The debug kernel").
# Two lanes run side by side (mk/check-lanes): the 6.1 line's engine
# programs (FIRST61_TESTS), then the 6.12 line's two-node tests
# (NODES_TESTS) and mpi_node (MPI_TESTS); and the rest of the 6.12 line's
# suite, then the rest of the 6.1 line's. Each then takes host tests from
# one queue until none is left, which evens them out.
DEBUG_TESTS ?= $(shell sed 's/\#.*//' vm-tests/debug-tests)
FIRST61_TESTS = $(DEBUG_TESTS)
MPI_TESTS := mpi_node
NODES_TESTS = $(shell vm-tests/suite -l | awk '$$2 ~ /^nodes=2(-|$$)/ { print $$1 }')
# The engine fuzzer's time per case on the distro kernels, and on the
# debug kernel (make check-debug), whose checkers see what a bad input
# does (the program's default is 20 s).
CHECK_FUZZ_SECONDS ?= 8
DEBUG_FUZZ_SECONDS ?= 12

# The build before the tests uses every CPU (CHECK_JOBS); should it fail,
# it runs again one job at a time, so that a failure is a build's, not an
# ordering's, and its first error is the one printed last.
CHECK_JOBS ?= $(shell nproc)

check: deps-check
	$(Q)$(MAKE) -j$(CHECK_JOBS) kmod-all user || $(MAKE) kmod-all user
	$(Q)rm -rf $(O)/check
	$(Q)mkdir -p $(O)/check
	@# A reference that cannot be made fails the heat tests, not the run.
	-$(Q)$(MAKE) --no-print-directory heat-refs
	-$(Q)NODES_TESTS="$(NODES_TESTS)" MPI_TESTS="$(MPI_TESTS)" \
		FIRST61_TESTS="$(FIRST61_TESTS)" \
		CHECK_FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS) mk/check-lanes $(O)/check
	$(Q)mk/summarize $(O)/check

# The host tests boot guests too (cross_kernel loads each line's module).
check-host: kmod-all user
	$(Q)rm -rf $(O)/check/host
	-$(Q)tests/host/run $(O)/check/host
	$(Q)mk/summarize $(O)/check/host

check-vm: deps-check kmod-all user heat-refs
	$(Q)rm -rf $(O)/check/vm
	-$(Q)vm-tests/suite -o $(O)/check/vm $(TESTS)
	$(Q)mk/summarize $(O)/check/vm

# The debug kernel's subset alone (or TESTS=... on it).
check-debug: deps-check kmod-debug user
	$(Q)rm -rf $(O)/check/debug
	-$(Q)CKPT_FUZZ_SECONDS=$(DEBUG_FUZZ_SECONDS) vm-tests/suite -k debug \
		-o $(O)/check/debug $(or $(TESTS),$(DEBUG_TESTS))
	$(Q)mk/summarize $(O)/check/debug

demo: all
	$(Q)vm-tests/demo

# ckpt against CRIU in one VM run; see Documentation/performance.md.
bench: all
	$(Q)vm-tests/bench

# STYLE_ONLY=checkpatch or sparse runs one half (tests/host/style.sh).
style: $(KSFT_HDR)
	$(Q)mk/style $(KSRC) $(KDIR) $(KVER) $(STYLE_ONLY)

# ---------------------------------------------------------------- install

install: all
	install -d $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/include/linux $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)/etc/ckpt $(DESTDIR)/lib/systemd/system
	install -m 0755 $(O)/bin/ckpt $(DESTDIR)$(PREFIX)/bin/ckpt
	install -m 0755 $(O)/bin/ckptd $(DESTDIR)$(PREFIX)/bin/ckptd
	install -m 0644 Documentation/man/ckptd.8 $(DESTDIR)$(MANDIR)/man8/
	test -e $(DESTDIR)/etc/ckpt/ckptd.conf || \
		install -m 0644 contrib/ckptd.conf $(DESTDIR)/etc/ckpt/ckptd.conf
	install -m 0644 contrib/systemd/ckptd.service $(DESTDIR)/lib/systemd/system/
	install -m 0644 include/uapi/linux/ckpt.h $(DESTDIR)$(PREFIX)/include/linux/ckpt.h
	install -m 0644 include/uapi/linux/ckpt_image.h \
		$(DESTDIR)$(PREFIX)/include/linux/ckpt_image.h
	install -m 0644 Documentation/man/ckpt.1 Documentation/man/ckpt-run.1 \
		$(DESTDIR)$(MANDIR)/man1/
	ln -sf ckpt $(DESTDIR)$(PREFIX)/bin/ckpt-run
	ln -sf ckpt $(DESTDIR)$(PREFIX)/bin/ckpt-join
	ln -sf ckpt $(DESTDIR)$(PREFIX)/bin/ckpt-ssh
	install -d $(DESTDIR)$(PREFIX)/lib/ckpt/ssh
	ln -sf ../../../bin/ckpt $(DESTDIR)$(PREFIX)/lib/ckpt/ssh/ssh
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man7
	install -m 0755 $(O)/lib/libckpt.so.1 $(DESTDIR)$(PREFIX)/lib/libckpt.so.1
	ln -sf libckpt.so.1 $(DESTDIR)$(PREFIX)/lib/libckpt.so
	install -m 0644 $(O)/lib/libckpt.a $(DESTDIR)$(PREFIX)/lib/libckpt.a
	install -m 0644 $(O)/lib/libckpt.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/libckpt.pc
	install -m 0644 lib/libckpt/libckpt.h $(DESTDIR)$(PREFIX)/include/libckpt.h
	install -m 0644 mpi-hooks/mpix_ckpt.h $(DESTDIR)$(PREFIX)/include/mpix_ckpt.h
	for m in $(MPI_IMPLS); do \
		install -d $(DESTDIR)$(PREFIX)/lib/ckpt/$$m && \
		install -m 0755 $(O)/lib/$$m/libckpt-mpi.so $(DESTDIR)$(PREFIX)/lib/ckpt/$$m/ || exit 1; \
	done
	install -m 0644 Documentation/man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 Documentation/man/libckpt.7 $(DESTDIR)$(MANDIR)/man7/
	install -m 0644 contrib/bash-completion/ckpt \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/ckpt
	ln -sf ckpt $(DESTDIR)$(PREFIX)/share/bash-completion/completions/ckpt-run
	ln -sf ckpt $(DESTDIR)$(PREFIX)/share/bash-completion/completions/ckptd
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(O)/$(KVER)/kmod/ckpt \
		INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=updates modules_install

# Copies the module sources where DKMS expects them (/usr/src/ckpt-VERSION)
# and registers, builds and installs them for KVER.
dkms-install:
	$(Q)mk/dkms-src $(DESTDIR)/usr/src/ckpt-$(VERSION)
	dkms install -m ckpt -v $(VERSION) -k $(KVER)

clean:
	rm -rf $(O)
