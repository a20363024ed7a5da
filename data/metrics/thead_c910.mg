# Metric groups for the T-Head C910/C920 (event names from events/thead_c910.evt).
# Only events listed in the C910 manual's Table 12.5 are used here; the extra
# indices of the table (0x7, 0x1b..0x2a) are left out of metrics.

format  1
pmu     thead_c910
source  XuanTie C910 User Manual (openc910, 2024-06-27), chapter 12, Table 12.5 (event list)
source  openc910 RTL C910_RTL_FACTORY/gen_rtl/pmu/rtl/ct_hpcp_top.v (L2 sources tied to zero)

group   ipc  Instructions per cycle and its inverse
metric  ipc  -  instructions / cycles
metric  cpi  -  cycles / instructions

group   mpki  Misses per thousand retired instructions
metric  l1i_cache_mpki       MPKI  1000 * L1_ICACHE_MISS / instructions
metric  l1d_cache_mpki       MPKI  1000 * (L1_DCACHE_READ_MISS + L1_DCACHE_WRITE_MISS) / instructions
metric  l1d_read_mpki        MPKI  1000 * L1_DCACHE_READ_MISS / instructions
metric  itlb_mpki            MPKI  1000 * ITLB_MISS / instructions
metric  dtlb_mpki            MPKI  1000 * DTLB_MISS / instructions
metric  jtlb_mpki            MPKI  1000 * JTLB_MISS / instructions
metric  branch_mpki          MPKI  1000 * COND_BRANCH_MISPREDICT / instructions
metric  indirect_branch_mpki MPKI  1000 * INDIRECT_BRANCH_MISPREDICT / instructions

group   miss_ratio  Fraction of accesses that missed (0..1)
metric  l1i_cache_miss_ratio        ratio  L1_ICACHE_MISS / L1_ICACHE_ACCESS
metric  l1d_read_miss_ratio         ratio  L1_DCACHE_READ_MISS / L1_DCACHE_READ_ACCESS
metric  l1d_write_miss_ratio        ratio  L1_DCACHE_WRITE_MISS / L1_DCACHE_WRITE_ACCESS
metric  indirect_branch_mispredict_ratio  ratio  INDIRECT_BRANCH_MISPREDICT / INDIRECT_BRANCH_RETIRED

# The openc910 RTL ties the L2 event sources 0x10-0x13 to zero (ct_hpcp_top.v,
# event16..19_adder = 4'b0): on parts built from it these metrics read 0 or n/a.
group   l2_cache  L2 misses (may read 0 or n/a: openc910-derived parts tie the L2 event sources 0x10-0x13 to zero)
metric  l2_cache_mpki        MPKI  1000 * (L2_CACHE_READ_MISS + L2_CACHE_WRITE_MISS) / instructions
metric  l2_read_miss_ratio          ratio  L2_CACHE_READ_MISS / L2_CACHE_READ_ACCESS
metric  l2_write_miss_ratio         ratio  L2_CACHE_WRITE_MISS / L2_CACHE_WRITE_ACCESS

group   operation_mix  Share of retired instructions by kind (percent of instructions)
metric  store_pct          %  100 * STORE_RETIRED / instructions
metric  indirect_branch_pct %  100 * INDIRECT_BRANCH_RETIRED / instructions

group   lsu  Load/store unit disturbances per thousand instructions (unit-less counts)
metric  lsu_spec_fail_pki       -  1000 * LSU_SPEC_FAIL / instructions
metric  lsu_cross_4k_stall_pki  -  1000 * LSU_CROSS_4K_STALL / instructions
metric  lsu_other_stall_pki     -  1000 * LSU_OTHER_STALL / instructions
