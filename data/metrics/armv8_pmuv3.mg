# Top-down stage 1 and stage 2 metrics for any Armv8/Armv9 PMUv3 core, using only
# the common events 0x0000-0x003F.  A core that lacks an event (see its PMCEID
# registers) cannot compute the metrics that use it.
# Operation mix needs the 0x0070-range *_SPEC events, which are not in this
# table; see the per-core metric files.

format  1
pmu     armv8_pmuv3
source  Arm, "Statistical Profiling Extension: Performance Analysis Methodology" (2023), section 3.2, Tables 3.1-3.3 (metric groups and names)
source  Formulas cross-checked against Linux tools/perf/pmu-events/arch/arm64/arm/neoverse-n1/metrics.json (Arm's published Neoverse N1 top-down metrics)

group   ipc  Instructions per cycle and cycles per instruction
metric  ipc  -  INST_RETIRED / CPU_CYCLES
metric  cpi  -  CPU_CYCLES / INST_RETIRED

group   cycle_accounting  Top-down stage 1: share of cycles stalled in the frontend, in the backend, or doing useful work
metric  frontend_stalled_cycles  %  100 * STALL_FRONTEND / CPU_CYCLES
metric  backend_stalled_cycles   %  100 * STALL_BACKEND / CPU_CYCLES
metric  useful_cycles            %  100 * (CPU_CYCLES - STALL_FRONTEND - STALL_BACKEND) / CPU_CYCLES

group   mpki  Top-down stage 2: misses per thousand retired instructions
metric  branch_mpki     MPKI  1000 * BR_MIS_PRED_RETIRED / INST_RETIRED
metric  l1d_cache_mpki  MPKI  1000 * L1D_CACHE_REFILL / INST_RETIRED
metric  l1i_cache_mpki  MPKI  1000 * L1I_CACHE_REFILL / INST_RETIRED
metric  l2_cache_mpki   MPKI  1000 * L2D_CACHE_REFILL / INST_RETIRED
metric  l1d_tlb_mpki    MPKI  1000 * L1D_TLB_REFILL / INST_RETIRED
metric  l1i_tlb_mpki    MPKI  1000 * L1I_TLB_REFILL / INST_RETIRED
metric  l2_tlb_mpki     MPKI  1000 * L2D_TLB_REFILL / INST_RETIRED
metric  dtlb_mpki       MPKI  1000 * DTLB_WALK / INST_RETIRED
metric  itlb_mpki       MPKI  1000 * ITLB_WALK / INST_RETIRED

group   miss_ratio  Top-down stage 2: misses per access
metric  branch_misprediction_ratio  ratio  BR_MIS_PRED_RETIRED / BR_RETIRED
metric  l1d_cache_miss_ratio        ratio  L1D_CACHE_REFILL / L1D_CACHE
metric  l1i_cache_miss_ratio        ratio  L1I_CACHE_REFILL / L1I_CACHE
metric  l2_cache_miss_ratio         ratio  L2D_CACHE_REFILL / L2D_CACHE
metric  l1d_tlb_miss_ratio          ratio  L1D_TLB_REFILL / L1D_TLB
metric  l1i_tlb_miss_ratio          ratio  L1I_TLB_REFILL / L1I_TLB
metric  l2_tlb_miss_ratio           ratio  L2D_TLB_REFILL / L2D_TLB
metric  dtlb_walk_ratio             ratio  DTLB_WALK / L1D_TLB
metric  itlb_walk_ratio             ratio  ITLB_WALK / L1I_TLB
