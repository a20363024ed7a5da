# hpmkit's perf.data scanner (src/native/perfdata_*.c), loaded by hpmkit.perfdata through
# ctypes (hpmkit.native.load("hpmperf")). Native build only: it runs on the workstation.
EXTRA_ALL += $(BUILD)/native/libhpmperf.so

$(BUILD)/native/libhpmperf.so: $(wildcard src/native/perfdata_*.c) src/sym/demangle.c src/sym/demangle.h
	@mkdir -p $(@D)
	$(CC) -O2 -fPIC -shared $(WARN) -fvisibility=hidden -o $@ $(filter %.c,$^) -ldl
