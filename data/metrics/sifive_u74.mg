# Metric groups for the SiFive U74-MC (event names from events/sifive_u74.evt).
# Only two programmable counters exist (cycles and instructions are fixed), so
# groups with more than two raw events are multiplexed by the kernel; the
# combined-mask events (LOAD_RETIRED, ANY_INTERLOCK, ...) save counters.

format  1
pmu     sifive_u74
source  Rocha, "Performance Monitoring and Event-based Sampling for RISC-V" (seed 000), Table I (event set)
source  Linux tools/perf/pmu-events/arch/riscv/sifive/u74 JSON (event codes, as carried from the SiFive U74-MC manual)

group   ipc  Instructions per cycle and its inverse
metric  ipc  -  instructions / cycles
metric  cpi  -  cycles / instructions

group   mpki  Misses per thousand retired instructions
metric  l1d_cache_mpki   MPKI  1000 * DCACHE_MISS_MMIO / instructions
metric  l1i_cache_mpki   MPKI  1000 * ICACHE_MISS / instructions
metric  branch_mpki      MPKI  1000 * BRANCH_DIRECTION_MISPREDICT / instructions
metric  dtlb_mpki        MPKI  1000 * DTLB_MISS / instructions
metric  itlb_mpki        MPKI  1000 * ITLB_MISS / instructions
metric  utlb_mpki        MPKI  1000 * UTLB_MISS / instructions

group   branch  Branch prediction quality
metric  cond_branch_misprediction_ratio  ratio  BRANCH_DIRECTION_MISPREDICT / COND_BRANCH_RETIRED
metric  branch_target_mpki               MPKI   1000 * BRANCH_TARGET_MISPREDICT / instructions

group   operation_mix  Share of retired instructions by kind (percent of instructions)
metric  int_load_pct     %  100 * INT_LOAD_RETIRED / instructions
metric  int_store_pct    %  100 * INT_STORE_RETIRED / instructions
metric  int_arith_pct    %  100 * INT_ARITH_RETIRED / instructions
metric  cond_branch_pct  %  100 * COND_BRANCH_RETIRED / instructions
metric  jump_pct         %  100 * (JAL_RETIRED + JALR_RETIRED) / instructions
metric  mul_div_pct      %  100 * (INT_MUL_RETIRED + INT_DIV_RETIRED) / instructions
metric  atomic_pct       %  100 * ATOMIC_RETIRED / instructions
metric  fp_pct           %  100 * (FP_LOAD_RETIRED + FP_STORE_RETIRED + FP_ADD_RETIRED + FP_MUL_RETIRED + FP_FMA_RETIRED + FP_DIV_SQRT_RETIRED + FP_OTHER_RETIRED) / instructions

group   stalls  Cycles spent in interlocks and busy caches (percent of cycles)
metric  any_interlock_pct        %  100 * ANY_INTERLOCK / cycles
metric  address_gen_interlock_pct %  100 * ADDRESS_GEN_INTERLOCK / cycles
metric  long_latency_interlock_pct %  100 * LONG_LATENCY_INTERLOCK / cycles
metric  csr_read_interlock_pct   %  100 * CSR_READ_INTERLOCK / cycles
metric  int_mul_interlock_pct    %  100 * INT_MUL_INTERLOCK / cycles
metric  fp_interlock_pct         %  100 * FP_INTERLOCK / cycles
metric  icache_busy_pct          %  100 * ICACHE_ITIM_BUSY / cycles
metric  dcache_busy_pct          %  100 * DCACHE_DTIM_BUSY / cycles
