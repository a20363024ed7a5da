# Neoverse N1 top-down methodology: stage 1 (cycle accounting) and stage 2 (MPKI,
# miss ratio, operation mix), plus last-level cache and SPE sampling metrics.
# The N1 implements every event used here.

format  1
pmu     neoverse_n1
source  Arm, "Statistical Profiling Extension: Performance Analysis Methodology" (2023), section 3.2, Tables 3.1-3.3 and Figure 3.3 (Neoverse N1 metric groups and names); section 2.3.1, Table 2.2 (SPE sampling metrics)
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

# BR_INDIRECT_SPEC already includes procedure returns on the N1, so
# BR_RETURN_SPEC is not added again.
group   operation_mix  Top-down stage 2: speculatively executed operations by type, as a share of INST_SPEC
metric  load_percentage        %  100 * LD_SPEC / INST_SPEC
metric  store_percentage       %  100 * ST_SPEC / INST_SPEC
metric  integer_dp_percentage  %  100 * DP_SPEC / INST_SPEC
metric  simd_percentage        %  100 * ASE_SPEC / INST_SPEC
metric  scalar_fp_percentage   %  100 * VFP_SPEC / INST_SPEC
metric  branch_percentage      %  100 * (BR_IMMED_SPEC + BR_INDIRECT_SPEC) / INST_SPEC
metric  crypto_percentage      %  100 * CRYPTO_SPEC / INST_SPEC

# LL_CACHE_RD / LL_CACHE_MISS_RD count the system-level cache only when
# CPUECTLR.EXTLLC is set; otherwise they repeat the core's last cache level.
group   ll_cache  Last-level cache read effectiveness
metric  ll_cache_read_mpki        MPKI   1000 * LL_CACHE_MISS_RD / INST_RETIRED
metric  ll_cache_read_miss_ratio  ratio  LL_CACHE_MISS_RD / LL_CACHE_RD
metric  ll_cache_read_hit_ratio   ratio  (LL_CACHE_RD - LL_CACHE_MISS_RD) / LL_CACHE_RD

group   spe  Statistical Profiling Extension sampling quality
metric  spe_sampling_ratio   ratio  SAMPLE_FEED / SAMPLE_POP
metric  spe_filter_ratio     ratio  SAMPLE_FILTRATE / SAMPLE_FEED
metric  spe_collision_ratio  ratio  SAMPLE_COLLISION / SAMPLE_POP
