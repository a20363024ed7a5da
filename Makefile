# hpmkit C core: libhpm (static + shared), the hpm CLI, unit tests.
#   make                      native build into build/
#   make cross-riscv64        static hpm + unit tests for riscv64 into build/riscv64/
#   make cross-aarch64        same for aarch64
#   make install PREFIX=/usr/local
CROSS ?=
CC := $(CROSS)gcc
HOSTCC ?= cc
AR := $(CROSS)ar
BUILD ?= build
PREFIX ?= /usr/local
STATIC ?= 0

MACHINE := $(shell $(CC) -dumpmachine)
ifneq ($(findstring x86_64,$(MACHINE)),)
  ARCH_SRC := src/lib/arch/x86_64.c
else ifneq ($(findstring aarch64,$(MACHINE)),)
  ARCH_SRC := src/lib/arch/aarch64.c
else ifneq ($(findstring riscv64,$(MACHINE)),)
  ARCH_SRC := src/lib/arch/riscv64.c
else
  ARCH_SRC := src/lib/arch/generic.c
endif

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
CPPFLAGS += -Iinclude -Isrc/lib -D_GNU_SOURCE
LIB_CFLAGS := $(CFLAGS) $(WARN) -fPIC -fvisibility=hidden -pthread

LIB_SRC := $(wildcard src/lib/*.c) $(ARCH_SRC)
LIB_OBJ := $(patsubst src/lib/%.c,$(BUILD)/obj/lib/%.o,$(LIB_SRC)) $(BUILD)/obj/lib/embedded.o
# hpm = command front-ends (src/cli) + the benchmark engine (src/bench) + shared output
# helpers (src/util) + the board's symbol readers (src/sym: kallsyms, PLT slots) + the
# perf.data writer (src/perffile, also linked into lab/pes) + libhpm; docs/architecture.md
# says which may include which.
CLI_SRC := $(wildcard src/cli/*.c)
CLI_OBJ := $(patsubst src/cli/%.c,$(BUILD)/obj/cli/%.o,$(CLI_SRC))
SYM_SRC := $(wildcard src/sym/*.c)
SYM_OBJ := $(patsubst src/sym/%.c,$(BUILD)/obj/sym/%.o,$(SYM_SRC))
PERFFILE_SRC := $(wildcard src/perffile/*.c)
PERFFILE_OBJ := $(patsubst src/perffile/%.c,$(BUILD)/obj/perffile/%.o,$(PERFFILE_SRC))
BENCH_SRC := $(wildcard src/bench/*.c)
BENCH_OBJ := $(patsubst src/bench/%.c,$(BUILD)/obj/bench/%.o,$(BENCH_SRC))
UTIL_SRC := $(wildcard src/util/*.c)
UTIL_OBJ := $(patsubst src/util/%.c,$(BUILD)/obj/util/%.o,$(UTIL_SRC))
HPM_OBJ := $(CLI_OBJ) $(BENCH_OBJ) $(UTIL_OBJ) $(SYM_OBJ) $(PERFFILE_OBJ)
DATA := $(sort $(wildcard data/events/*.evt) $(wildcard data/metrics/*.mg))
HEADERS := $(wildcard include/hpm/*.h)
TEST_SRC := $(wildcard tests/c/*.c)

SONAME := libhpm.so.0
LINK_STATIC := $(if $(filter 1,$(STATIC)),-static,)
# static builds (the lab guests) cannot dlopen: src/sym/demangle.c then leaves names mangled
CPPFLAGS += $(if $(filter 1,$(STATIC)),-DHPM_STATIC,)

# Fragments in mk/*.mk (one per component: workloads, native helpers for hpmkit, ...) add
# their targets to EXTRA_ALL (native build) and CROSS_BINS (paths under $(BUILD) that
# `make cross-<arch>` builds for the lab guests).
EXTRA_ALL :=
CROSS_BINS := bin/hpm bin/hpm-loop bin/touch-pages bin/hpmlab-init tests/unit
.DEFAULT_GOAL := all
-include $(sort $(wildcard mk/*.mk))

all: $(BUILD)/lib/libhpm.a $(BUILD)/lib/libhpm.so $(BUILD)/bin/hpm $(BUILD)/bin/hpm-loop \
     $(BUILD)/bin/touch-pages \
     $(BUILD)/tests/unit $(BUILD)/tests/regions_demo headers pkgconfig $(EXTRA_ALL)

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(@D)
	$(HOSTCC) -O2 -o $@ $<

$(BUILD)/gen/embedded.c: $(BUILD)/tools/embed $(DATA)
	@mkdir -p $(@D)
	$(BUILD)/tools/embed $@ data/ $(DATA)

$(BUILD)/obj/lib/embedded.o: $(BUILD)/gen/embedded.c src/lib/internal.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/obj/lib/%.o: src/lib/%.c src/lib/internal.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/lib/libhpm.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/lib/libhpm.so: $(LIB_OBJ) src/lib/libhpm.map
	@mkdir -p $(@D)
	$(CC) -shared -pthread -Wl,-soname,$(SONAME) -Wl,--version-script=src/lib/libhpm.map \
		-o $(BUILD)/lib/$(SONAME) $(LIB_OBJ) -lm
	ln -sf $(SONAME) $@

$(BUILD)/obj/cli/%.o: src/cli/%.c $(wildcard src/cli/*.h) src/bench/bench.h src/util/out.h src/util/sorted.h \
		    $(wildcard src/sym/*.h) $(wildcard src/perffile/*.h) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Isrc/bench -Isrc/util -Isrc/sym -Isrc/perffile $(CFLAGS) $(WARN) -c -o $@ $<

$(BUILD)/obj/sym/%.o: src/sym/%.c $(wildcard src/sym/*.h) src/util/sorted.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Isrc/util $(CFLAGS) $(WARN) -c -o $@ $<

$(BUILD)/obj/perffile/%.o: src/perffile/%.c $(wildcard src/perffile/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o $@ $<

$(BUILD)/obj/bench/%.o: src/bench/%.c $(wildcard src/bench/*.h) src/util/out.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Isrc/util $(CFLAGS) $(WARN) -c -o $@ $<

$(BUILD)/obj/util/%.o: src/util/%.c src/util/out.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o $@ $<

# hpm links libhpm statically: one file to copy onto a board.
$(BUILD)/bin/hpm: $(HPM_OBJ) $(BUILD)/lib/libhpm.a
	@mkdir -p $(@D)
	$(CC) $(LINK_STATIC) -pthread -o $@ $(HPM_OBJ) $(BUILD)/lib/libhpm.a -lm

# Calibration workload with an exactly known instruction count per iteration.
$(BUILD)/bin/hpm-loop: workloads/hpm-loop.c $(BUILD)/lib/libhpm.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -O1 $(LINK_STATIC) -pthread -o $@ $< $(BUILD)/lib/libhpm.a -lm

# PID 1 of the lab guests (static; see lab/init.c)
$(BUILD)/bin/hpmlab-init: lab/init.c
	@mkdir -p $(@D)
	$(CC) -O2 $(WARN) -static -o $@ $<

$(BUILD)/bin/touch-pages: workloads/touch-pages.c
	@mkdir -p $(@D)
	$(CC) -O1 $(LINK_STATIC) -o $@ $<

$(BUILD)/tests/unit: $(TEST_SRC) $(BUILD)/lib/libhpm.a tests/c/check.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/c $(CFLAGS) $(WARN) $(LINK_STATIC) -pthread -o $@ $(TEST_SRC) \
		$(BUILD)/lib/libhpm.a -lm

$(BUILD)/tests/regions_demo: tests/regions_demo.c $(BUILD)/lib/libhpm.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LINK_STATIC) -pthread -o $@ $< $(BUILD)/lib/libhpm.a -lm
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -DHPM_REGIONS_DISABLE -o $@-off $<

headers: $(HEADERS)
	@mkdir -p $(BUILD)/include/hpm
	cp $(HEADERS) $(BUILD)/include/hpm/

pkgconfig: $(BUILD)/lib/pkgconfig/hpm.pc
$(BUILD)/lib/pkgconfig/hpm.pc: hpm.pc.in
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(abspath $(BUILD))|' -e 's|@VERSION@|0.1.0|' $< > $@

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/hpm
	install -m 755 $(BUILD)/bin/hpm $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/lib/libhpm.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/lib/$(SONAME) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libhpm.so
	install -m 644 $(HEADERS) $(DESTDIR)$(PREFIX)/include/hpm/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|0.1.0|' hpm.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/hpm.pc

cross-riscv64:
	$(MAKE) CROSS=riscv64-linux-gnu- BUILD=build/riscv64 STATIC=1 $(addprefix build/riscv64/,$(CROSS_BINS))
cross-aarch64:
	$(MAKE) CROSS=aarch64-linux-gnu- BUILD=build/aarch64 STATIC=1 $(addprefix build/aarch64/,$(CROSS_BINS))
cross: cross-riscv64 cross-aarch64

clean:
	rm -rf build

.PHONY: all headers pkgconfig install cross cross-riscv64 cross-aarch64 clean
