# libhpm-papi: the PAPI C interface on libhpm (src/papi, include/hpm-papi; docs/papi.md).
#   build/lib/libhpm-papi.so   self-contained: libhpm inside, only PAPI_* exported, its own
#                              calls bound to itself (-Bsymbolic: it can sit beside libpapi)
#   build/lib/libhpm-papi.a    the PAPI layer only: link with libhpm.a (pkg-config --static)
#   build/include/hpm-papi/    papi.h, papiStdEventDefs.h
#   build/lib/pkgconfig/hpm-papi.pc
#   build/bin/papi-check       the test driver of tests/py/test_papi_compat.py (also in the lab)
#   build/bin/papi-ctest-run   runs PAPI's ctests in a lab guest (no shell there)
PAPI_SRC := $(sort $(wildcard src/papi/*.c))
PAPI_OBJ := $(patsubst src/papi/%.c,$(BUILD)/obj/papi/%.o,$(PAPI_SRC))
PAPI_HEADERS := $(wildcard include/hpm-papi/*.h)
PAPI_SONAME := libhpm-papi.so.0

EXTRA_ALL += $(BUILD)/lib/libhpm-papi.a $(BUILD)/lib/libhpm-papi.so papi-headers \
	     $(BUILD)/lib/pkgconfig/hpm-papi.pc $(BUILD)/bin/papi-check $(BUILD)/bin/papi-ctest-run
CROSS_BINS += lib/libhpm-papi.a bin/papi-check bin/papi-ctest-run

$(BUILD)/obj/papi/%.o: src/papi/%.c src/papi/papi_int.h src/papi/presets.def $(PAPI_HEADERS) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iinclude/hpm-papi $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/lib/libhpm-papi.a: $(PAPI_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/lib/libhpm-papi.so: $(PAPI_OBJ) $(LIB_OBJ) src/papi/libhpm-papi.map mk/papi.mk
	@mkdir -p $(@D)
	$(CC) -shared -pthread -Wl,-Bsymbolic -Wl,-soname,$(PAPI_SONAME) \
		-Wl,--version-script=src/papi/libhpm-papi.map \
		-o $(BUILD)/lib/$(PAPI_SONAME) $(PAPI_OBJ) $(LIB_OBJ) -lm
	ln -sf $(PAPI_SONAME) $@

papi-headers: $(PAPI_HEADERS)
	@mkdir -p $(BUILD)/include/hpm-papi
	cp $(PAPI_HEADERS) $(BUILD)/include/hpm-papi/

$(BUILD)/lib/pkgconfig/hpm-papi.pc: src/papi/hpm-papi.pc.in
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(abspath $(BUILD))|' -e 's|@VERSION@|0.1.0|' $< > $@

# a PAPI program like any other: papi.h from our include path, static libraries
$(BUILD)/bin/papi-check: tests/papi/papi_check.c $(BUILD)/lib/libhpm-papi.a $(BUILD)/lib/libhpm.a $(PAPI_HEADERS)
	@mkdir -p $(@D)
	$(CC) -Iinclude -Iinclude/hpm-papi -O1 -g $(WARN) -static -pthread -o $@ $< \
		$(BUILD)/lib/libhpm-papi.a $(BUILD)/lib/libhpm.a -lm

$(BUILD)/bin/papi-ctest-run: tests/papi/ctest_run.c
	@mkdir -p $(@D)
	$(CC) -O2 $(WARN) -static -o $@ $<

# hpm papi-avail reads the preset list too
$(BUILD)/obj/cli/cmd_papi_avail.o: src/papi/presets.def $(PAPI_HEADERS)

install: install-papi
install-papi: $(BUILD)/lib/libhpm-papi.a $(BUILD)/lib/libhpm-papi.so
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/hpm-papi
	install -m 644 $(BUILD)/lib/libhpm-papi.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/lib/$(PAPI_SONAME) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(PAPI_SONAME) $(DESTDIR)$(PREFIX)/lib/libhpm-papi.so
	install -m 644 $(PAPI_HEADERS) $(DESTDIR)$(PREFIX)/include/hpm-papi/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|0.1.0|' src/papi/hpm-papi.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/hpm-papi.pc

.PHONY: papi-headers install-papi
