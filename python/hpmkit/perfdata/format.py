"""Constants of the perf.data format and the perf_event ABI (include/uapi/linux/perf_event.h,
tools/perf/util/header.h). Only numbers live here; the readers are in the sibling modules."""
from __future__ import annotations

MAGIC = b"PERFILE2"
MAGIC_BE = b"2ELIFREP"          # the same magic written by a big-endian host
MAGIC_V1 = b"PERFFILE"          # the legacy header (perf before 2.6.37); same layout
MAGICS = (MAGIC, MAGIC_BE, MAGIC_V1)
FILE_HEADER_SIZE = 104          # magic, size, attr_size, 3 sections, 256-bit feature bitmap
FILE_HEADER_SIZE_OLD = 72       # the same without the feature bitmap (perf before 2.6.38)
PIPE_HEADER_SIZE = 16
ATTR_SIZE_VER0 = 64             # the first perf_event_attr; attr.size 0 means this
# perf_event_attr sizes (VER0..VER8): the legacy header is recognised by attr_size = one + 16
ATTR_SIZES = (64, 72, 80, 96, 104, 112, 120, 128, 136)

# record types (kernel: < 64; perf tool synthesised: >= 64)
RECORD_NAMES = {
    1: "MMAP", 2: "LOST", 3: "COMM", 4: "EXIT", 5: "THROTTLE", 6: "UNTHROTTLE", 7: "FORK",
    8: "READ", 9: "SAMPLE", 10: "MMAP2", 11: "AUX", 12: "ITRACE_START", 13: "LOST_SAMPLES",
    14: "SWITCH", 15: "SWITCH_CPU_WIDE", 16: "NAMESPACES", 17: "KSYMBOL", 18: "BPF_EVENT",
    19: "CGROUP", 20: "TEXT_POKE", 21: "AUX_OUTPUT_HW_ID",
    64: "HEADER_ATTR", 65: "HEADER_EVENT_TYPE", 66: "HEADER_TRACING_DATA",
    67: "HEADER_BUILD_ID", 68: "FINISHED_ROUND", 69: "ID_INDEX", 70: "AUXTRACE_INFO",
    71: "AUXTRACE", 72: "AUXTRACE_ERROR", 73: "THREAD_MAP", 74: "CPU_MAP", 75: "STAT_CONFIG",
    76: "STAT", 77: "STAT_ROUND", 78: "EVENT_UPDATE", 79: "TIME_CONV", 80: "HEADER_FEATURE",
    81: "COMPRESSED", 82: "FINISHED_INIT", 83: "COMPRESSED2",
}
USER_TYPE_START = 64            # records perf synthesises itself: never time-ordered
REC = {v: k for k, v in RECORD_NAMES.items()}

# sample_type bits
SAMPLE_IP = 1 << 0
SAMPLE_TID = 1 << 1
SAMPLE_TIME = 1 << 2
SAMPLE_ADDR = 1 << 3
SAMPLE_READ = 1 << 4
SAMPLE_CALLCHAIN = 1 << 5
SAMPLE_ID = 1 << 6
SAMPLE_CPU = 1 << 7
SAMPLE_PERIOD = 1 << 8
SAMPLE_STREAM_ID = 1 << 9
SAMPLE_RAW = 1 << 10
SAMPLE_BRANCH_STACK = 1 << 11
SAMPLE_REGS_USER = 1 << 12
SAMPLE_STACK_USER = 1 << 13
SAMPLE_WEIGHT = 1 << 14
SAMPLE_DATA_SRC = 1 << 15
SAMPLE_IDENTIFIER = 1 << 16
SAMPLE_TRANSACTION = 1 << 17
SAMPLE_REGS_INTR = 1 << 18
SAMPLE_PHYS_ADDR = 1 << 19
SAMPLE_AUX = 1 << 20
SAMPLE_CGROUP = 1 << 21
SAMPLE_DATA_PAGE_SIZE = 1 << 22
SAMPLE_CODE_PAGE_SIZE = 1 << 23
SAMPLE_WEIGHT_STRUCT = 1 << 24
SAMPLE_NAMES = ["IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD",
                "STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT",
                "DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX",
                "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT"]
SAMPLE_KNOWN = (1 << len(SAMPLE_NAMES)) - 1

# read_format bits
FORMAT_TOTAL_TIME_ENABLED = 1
FORMAT_TOTAL_TIME_RUNNING = 2
FORMAT_ID = 4
FORMAT_GROUP = 8
FORMAT_LOST = 16

# branch_sample_type bits that change the sample layout
BRANCH_HW_INDEX = 1 << 17
BRANCH_COUNTERS = 1 << 19

# attr flag bits (the bitfield word at offset 40)
ATTR_FLAG_BITS = {
    "disabled": 0, "inherit": 1, "pinned": 2, "exclusive": 3, "exclude_user": 4,
    "exclude_kernel": 5, "exclude_hv": 6, "exclude_idle": 7, "mmap": 8, "comm": 9, "freq": 10,
    "inherit_stat": 11, "enable_on_exec": 12, "task": 13, "watermark": 14, "mmap_data": 17,
    "sample_id_all": 18, "exclude_host": 19, "exclude_guest": 20, "mmap2": 23,
    "comm_exec": 24, "use_clockid": 25, "context_switch": 26, "inherit_thread": 35,
}

# header.misc
MISC_CPUMODE_MASK = 7
MISC_KERNEL, MISC_USER, MISC_HYPERVISOR, MISC_GUEST_KERNEL, MISC_GUEST_USER = 1, 2, 3, 4, 5
MISC_COMM_EXEC = 1 << 13
MISC_MMAP_BUILD_ID = 1 << 14
MISC_BUILD_ID_SIZE = 1 << 15    # build_id_event: the size byte is valid

# callchain context markers (stored as u64; everything >= CONTEXT_MAX is a marker)
CONTEXT_HV = (1 << 64) - 32
CONTEXT_KERNEL = (1 << 64) - 128
CONTEXT_USER = (1 << 64) - 512
CONTEXT_GUEST = (1 << 64) - 2048
CONTEXT_GUEST_KERNEL = (1 << 64) - 2176
CONTEXT_GUEST_USER = (1 << 64) - 2560
CONTEXT_MAX = (1 << 64) - 4095

# header feature bits
FEAT = {
    "TRACING_DATA": 1, "BUILD_ID": 2, "HOSTNAME": 3, "OSRELEASE": 4, "VERSION": 5, "ARCH": 6,
    "NRCPUS": 7, "CPUDESC": 8, "CPUID": 9, "TOTAL_MEM": 10, "CMDLINE": 11, "EVENT_DESC": 12,
    "CPU_TOPOLOGY": 13, "NUMA_TOPOLOGY": 14, "BRANCH_STACK": 15, "PMU_MAPPINGS": 16,
    "GROUP_DESC": 17, "AUXTRACE": 18, "STAT": 19, "CACHE": 20, "SAMPLE_TIME": 21,
    "MEM_TOPOLOGY": 22, "CLOCKID": 23, "DIR_FORMAT": 24, "BPF_PROG_INFO": 25, "BPF_BTF": 26,
    "COMPRESSED": 27, "CPU_PMU_CAPS": 28, "CLOCK_DATA": 29, "HYBRID_TOPOLOGY": 30,
    "PMU_CAPS": 31,
    "HPM_KALLSYMS": 250,        # hpmkit: the recording machine's /proc/kallsyms text
}
FEAT_NAMES = {v: k for k, v in FEAT.items()}

PERF_TYPE_NAMES = {0: "hardware", 1: "software", 2: "tracepoint", 3: "hw-cache", 4: "raw",
                   5: "breakpoint"}
HW_NAMES = ["cycles", "instructions", "cache-references", "cache-misses", "branches",
            "branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
            "ref-cycles"]
SW_NAMES = ["cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
            "minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
            "bpf-output", "cgroup-switches"]
