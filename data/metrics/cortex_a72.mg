# Cortex-A72 metrics.  The A72 (Armv8.0 PMU) has no STALL_FRONTEND/STALL_BACKEND,
# BR_RETIRED, BR_MIS_PRED_RETIRED, L1D_TLB, L1I_TLB, L2D_TLB*, DTLB_WALK or
# ITLB_WALK, so there is no cycle_accounting group and no TLB-walk or TLB
# miss-ratio metrics here.  The branch metrics use the speculative events
# BR_MIS_PRED and BR_PRED instead of the retired ones used on newer cores
# (wrong-path branches are included, so values are slightly higher).

format  1
pmu     cortex_a72
source  Arm, "Statistical Profiling Extension: Performance Analysis Methodology" (2023), section 3.2, Tables 3.1-3.3 and Figure 3.3 (metric groups and names), restricted to the events of Arm Cortex-A72 MPCore TRM (100095_0003) Table 11-24
source  Formulas cross-checked against Linux tools/perf/pmu-events/arch/arm64/arm/neoverse-n1/metrics.json, with speculative branch events substituted where the A72 lacks the retired ones

group   ipc  Instructions per cycle and cycles per instruction
metric  ipc  -  INST_RETIRED / CPU_CYCLES
metric  cpi  -  CPU_CYCLES / INST_RETIRED

group   mpki  Misses per thousand retired instructions
metric  branch_mpki     MPKI  1000 * BR_MIS_PRED / INST_RETIRED
metric  l1d_cache_mpki  MPKI  1000 * L1D_CACHE_REFILL / INST_RETIRED
metric  l1i_cache_mpki  MPKI  1000 * L1I_CACHE_REFILL / INST_RETIRED
metric  l2_cache_mpki   MPKI  1000 * L2D_CACHE_REFILL / INST_RETIRED
metric  l1d_tlb_mpki    MPKI  1000 * L1D_TLB_REFILL / INST_RETIRED
metric  l1i_tlb_mpki    MPKI  1000 * L1I_TLB_REFILL / INST_RETIRED

group   miss_ratio  Misses per access
metric  branch_misprediction_ratio  ratio  BR_MIS_PRED / BR_PRED
metric  l1d_cache_miss_ratio        ratio  L1D_CACHE_REFILL / L1D_CACHE
metric  l1i_cache_miss_ratio        ratio  L1I_CACHE_REFILL / L1I_CACHE
metric  l2_cache_miss_ratio         ratio  L2D_CACHE_REFILL / L2D_CACHE

# Branches = immediate + indirect, as in Arm's operation-mix definition (where
# BR_INDIRECT_SPEC includes procedure returns; the A72 TRM does not say so
# explicitly, so branch_percentage may slightly undercount returns on the A72).
group   operation_mix  Speculatively executed operations by type, as a share of INST_SPEC
metric  load_percentage        %  100 * LD_SPEC / INST_SPEC
metric  store_percentage       %  100 * ST_SPEC / INST_SPEC
metric  integer_dp_percentage  %  100 * DP_SPEC / INST_SPEC
metric  simd_percentage        %  100 * ASE_SPEC / INST_SPEC
metric  scalar_fp_percentage   %  100 * VFP_SPEC / INST_SPEC
metric  branch_percentage      %  100 * (BR_IMMED_SPEC + BR_INDIRECT_SPEC) / INST_SPEC
metric  crypto_percentage      %  100 * CRYPTO_SPEC / INST_SPEC
