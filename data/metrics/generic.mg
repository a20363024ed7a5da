# Metric groups built only from Linux generic perf event names, so they apply
# to any PMU whose kernel driver maps these names (hardware, hw-cache and
# software events). A metric whose events the kernel cannot open prints n/a.
# task-clock counts nanoseconds of CPU time of the measured task(s), so the
# "per second" rates below are per second of CPU time, not of wall time.

format  1
pmu     generic
source  Linux perf_event_open(2): PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE and PERF_TYPE_SOFTWARE generic events (perf list names)
source  Standard derived ratios: IPC/CPI, misses per kilo-instruction, miss ratios

group   ipc  Instructions per cycle and its inverse
metric  ipc  -  instructions / cycles
metric  cpi  -  cycles / instructions

group   mpki  Misses per thousand retired instructions
metric  branch_mpki     MPKI  1000 * branch-misses / instructions
metric  l1d_cache_mpki  MPKI  1000 * L1-dcache-load-misses / instructions
metric  l1i_cache_mpki  MPKI  1000 * L1-icache-load-misses / instructions
metric  llc_mpki        MPKI  1000 * LLC-load-misses / instructions
metric  dtlb_mpki       MPKI  1000 * dTLB-load-misses / instructions
metric  itlb_mpki       MPKI  1000 * iTLB-load-misses / instructions

group   miss_ratio  Fraction of accesses that missed (0..1)
metric  branch_misprediction_ratio  ratio  branch-misses / branches
metric  l1d_cache_miss_ratio        ratio  L1-dcache-load-misses / L1-dcache-loads
metric  llc_miss_ratio              ratio  LLC-load-misses / LLC-loads
metric  dtlb_miss_ratio             ratio  dTLB-load-misses / dTLB-loads
metric  cache_miss_ratio            ratio  cache-misses / cache-references

group   software  Kernel software events per second of task CPU time
metric  page_faults_per_sec        /s  1000000000 * page-faults / task-clock
metric  context_switches_per_sec   /s  1000000000 * context-switches / task-clock
metric  cpu_migrations_per_sec     /s  1000000000 * cpu-migrations / task-clock
