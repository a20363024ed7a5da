/* SPDX-License-Identifier: MIT */
/*
 * PAPI preset event codes for libhpm-papi (hpmkit). Names and numbers follow
 * PAPI 7's API so that programs written for PAPI compile unchanged; the list
 * is generated from src/papi/presets.def (the descriptions there are ours).
 * Whether a preset counts anything here is decided at run time by libhpm's
 * PMU tables (PAPI_query_event, hpm papi-avail).
 */
#ifndef _PAPISTDEVENTDEFS
#define _PAPISTDEVENTDEFS

/* Code classes: presets set the top bit, native events the next one; both
 * set marks a user-defined event (not offered by libhpm-papi). */
#define PAPI_PRESET_MASK     ((int)0x80000000)
#define PAPI_NATIVE_MASK     ((int)0x40000000)
#define PAPI_UE_MASK         ((int)0xC0000000)
#define PAPI_PRESET_AND_MASK 0x7FFFFFFF
#define PAPI_NATIVE_AND_MASK 0xBFFFFFFF
#define PAPI_UE_AND_MASK     0x3FFFFFFF

#define PAPI_MAX_PRESET_EVENTS 128
#define PAPI_MAX_USER_EVENTS 50
#define USER_EVENT_OPERATION_LEN 512

/* Index of each preset (its code without PAPI_PRESET_MASK). */
enum {
	PAPI_L1_DCM_idx = 0x00,
	PAPI_L1_ICM_idx = 0x01,
	PAPI_L2_DCM_idx = 0x02,
	PAPI_L2_ICM_idx = 0x03,
	PAPI_L3_DCM_idx = 0x04,
	PAPI_L3_ICM_idx = 0x05,
	PAPI_L1_TCM_idx = 0x06,
	PAPI_L2_TCM_idx = 0x07,
	PAPI_L3_TCM_idx = 0x08,
	PAPI_CA_SNP_idx = 0x09,
	PAPI_CA_SHR_idx = 0x0a,
	PAPI_CA_CLN_idx = 0x0b,
	PAPI_CA_INV_idx = 0x0c,
	PAPI_CA_ITV_idx = 0x0d,
	PAPI_L3_LDM_idx = 0x0e,
	PAPI_L3_STM_idx = 0x0f,
	PAPI_BRU_IDL_idx = 0x10,
	PAPI_FXU_IDL_idx = 0x11,
	PAPI_FPU_IDL_idx = 0x12,
	PAPI_LSU_IDL_idx = 0x13,
	PAPI_TLB_DM_idx = 0x14,
	PAPI_TLB_IM_idx = 0x15,
	PAPI_TLB_TL_idx = 0x16,
	PAPI_L1_LDM_idx = 0x17,
	PAPI_L1_STM_idx = 0x18,
	PAPI_L2_LDM_idx = 0x19,
	PAPI_L2_STM_idx = 0x1a,
	PAPI_BTAC_M_idx = 0x1b,
	PAPI_PRF_DM_idx = 0x1c,
	PAPI_L3_DCH_idx = 0x1d,
	PAPI_TLB_SD_idx = 0x1e,
	PAPI_CSR_FAL_idx = 0x1f,
	PAPI_CSR_SUC_idx = 0x20,
	PAPI_CSR_TOT_idx = 0x21,
	PAPI_MEM_SCY_idx = 0x22,
	PAPI_MEM_RCY_idx = 0x23,
	PAPI_MEM_WCY_idx = 0x24,
	PAPI_STL_ICY_idx = 0x25,
	PAPI_FUL_ICY_idx = 0x26,
	PAPI_STL_CCY_idx = 0x27,
	PAPI_FUL_CCY_idx = 0x28,
	PAPI_HW_INT_idx = 0x29,
	PAPI_BR_UCN_idx = 0x2a,
	PAPI_BR_CN_idx = 0x2b,
	PAPI_BR_TKN_idx = 0x2c,
	PAPI_BR_NTK_idx = 0x2d,
	PAPI_BR_MSP_idx = 0x2e,
	PAPI_BR_PRC_idx = 0x2f,
	PAPI_FMA_INS_idx = 0x30,
	PAPI_TOT_IIS_idx = 0x31,
	PAPI_TOT_INS_idx = 0x32,
	PAPI_INT_INS_idx = 0x33,
	PAPI_FP_INS_idx = 0x34,
	PAPI_LD_INS_idx = 0x35,
	PAPI_SR_INS_idx = 0x36,
	PAPI_BR_INS_idx = 0x37,
	PAPI_VEC_INS_idx = 0x38,
	PAPI_RES_STL_idx = 0x39,
	PAPI_FP_STAL_idx = 0x3a,
	PAPI_TOT_CYC_idx = 0x3b,
	PAPI_LST_INS_idx = 0x3c,
	PAPI_SYC_INS_idx = 0x3d,
	PAPI_L1_DCH_idx = 0x3e,
	PAPI_L2_DCH_idx = 0x3f,
	PAPI_L1_DCA_idx = 0x40,
	PAPI_L2_DCA_idx = 0x41,
	PAPI_L3_DCA_idx = 0x42,
	PAPI_L1_DCR_idx = 0x43,
	PAPI_L2_DCR_idx = 0x44,
	PAPI_L3_DCR_idx = 0x45,
	PAPI_L1_DCW_idx = 0x46,
	PAPI_L2_DCW_idx = 0x47,
	PAPI_L3_DCW_idx = 0x48,
	PAPI_L1_ICH_idx = 0x49,
	PAPI_L2_ICH_idx = 0x4a,
	PAPI_L3_ICH_idx = 0x4b,
	PAPI_L1_ICA_idx = 0x4c,
	PAPI_L2_ICA_idx = 0x4d,
	PAPI_L3_ICA_idx = 0x4e,
	PAPI_L1_ICR_idx = 0x4f,
	PAPI_L2_ICR_idx = 0x50,
	PAPI_L3_ICR_idx = 0x51,
	PAPI_L1_ICW_idx = 0x52,
	PAPI_L2_ICW_idx = 0x53,
	PAPI_L3_ICW_idx = 0x54,
	PAPI_L1_TCH_idx = 0x55,
	PAPI_L2_TCH_idx = 0x56,
	PAPI_L3_TCH_idx = 0x57,
	PAPI_L1_TCA_idx = 0x58,
	PAPI_L2_TCA_idx = 0x59,
	PAPI_L3_TCA_idx = 0x5a,
	PAPI_L1_TCR_idx = 0x5b,
	PAPI_L2_TCR_idx = 0x5c,
	PAPI_L3_TCR_idx = 0x5d,
	PAPI_L1_TCW_idx = 0x5e,
	PAPI_L2_TCW_idx = 0x5f,
	PAPI_L3_TCW_idx = 0x60,
	PAPI_FML_INS_idx = 0x61,
	PAPI_FAD_INS_idx = 0x62,
	PAPI_FDV_INS_idx = 0x63,
	PAPI_FSQ_INS_idx = 0x64,
	PAPI_FNV_INS_idx = 0x65,
	PAPI_FP_OPS_idx = 0x66,
	PAPI_SP_OPS_idx = 0x67,
	PAPI_DP_OPS_idx = 0x68,
	PAPI_VEC_SP_idx = 0x69,
	PAPI_VEC_DP_idx = 0x6a,
	PAPI_REF_CYC_idx = 0x6b,
	PAPI_END_idx
};

#define PAPI_L1_DCM  (PAPI_L1_DCM_idx | PAPI_PRESET_MASK) /* Level 1 data cache misses */
#define PAPI_L1_ICM  (PAPI_L1_ICM_idx | PAPI_PRESET_MASK) /* Level 1 instruction cache misses */
#define PAPI_L2_DCM  (PAPI_L2_DCM_idx | PAPI_PRESET_MASK) /* Level 2 data cache misses */
#define PAPI_L2_ICM  (PAPI_L2_ICM_idx | PAPI_PRESET_MASK) /* Level 2 instruction cache misses */
#define PAPI_L3_DCM  (PAPI_L3_DCM_idx | PAPI_PRESET_MASK) /* Level 3 data cache misses */
#define PAPI_L3_ICM  (PAPI_L3_ICM_idx | PAPI_PRESET_MASK) /* Level 3 instruction cache misses */
#define PAPI_L1_TCM  (PAPI_L1_TCM_idx | PAPI_PRESET_MASK) /* Level 1 cache misses, data and instruction */
#define PAPI_L2_TCM  (PAPI_L2_TCM_idx | PAPI_PRESET_MASK) /* Level 2 cache misses, data and instruction */
#define PAPI_L3_TCM  (PAPI_L3_TCM_idx | PAPI_PRESET_MASK) /* Level 3 cache misses, data and instruction */
#define PAPI_CA_SNP  (PAPI_CA_SNP_idx | PAPI_PRESET_MASK) /* Snoop requests */
#define PAPI_CA_SHR  (PAPI_CA_SHR_idx | PAPI_PRESET_MASK) /* Requests for exclusive access to a shared cache line */
#define PAPI_CA_CLN  (PAPI_CA_CLN_idx | PAPI_PRESET_MASK) /* Requests for exclusive access to a clean cache line */
#define PAPI_CA_INV  (PAPI_CA_INV_idx | PAPI_PRESET_MASK) /* Requests to invalidate a cache line */
#define PAPI_CA_ITV  (PAPI_CA_ITV_idx | PAPI_PRESET_MASK) /* Requests for a cache line intervention */
#define PAPI_L3_LDM  (PAPI_L3_LDM_idx | PAPI_PRESET_MASK) /* Level 3 load misses */
#define PAPI_L3_STM  (PAPI_L3_STM_idx | PAPI_PRESET_MASK) /* Level 3 store misses */
#define PAPI_BRU_IDL (PAPI_BRU_IDL_idx | PAPI_PRESET_MASK) /* Cycles the branch units are idle */
#define PAPI_FXU_IDL (PAPI_FXU_IDL_idx | PAPI_PRESET_MASK) /* Cycles the integer units are idle */
#define PAPI_FPU_IDL (PAPI_FPU_IDL_idx | PAPI_PRESET_MASK) /* Cycles the floating point units are idle */
#define PAPI_LSU_IDL (PAPI_LSU_IDL_idx | PAPI_PRESET_MASK) /* Cycles the load/store units are idle */
#define PAPI_TLB_DM  (PAPI_TLB_DM_idx | PAPI_PRESET_MASK) /* Data TLB misses */
#define PAPI_TLB_IM  (PAPI_TLB_IM_idx | PAPI_PRESET_MASK) /* Instruction TLB misses */
#define PAPI_TLB_TL  (PAPI_TLB_TL_idx | PAPI_PRESET_MASK) /* TLB misses, data and instruction */
#define PAPI_L1_LDM  (PAPI_L1_LDM_idx | PAPI_PRESET_MASK) /* Level 1 load misses */
#define PAPI_L1_STM  (PAPI_L1_STM_idx | PAPI_PRESET_MASK) /* Level 1 store misses */
#define PAPI_L2_LDM  (PAPI_L2_LDM_idx | PAPI_PRESET_MASK) /* Level 2 load misses */
#define PAPI_L2_STM  (PAPI_L2_STM_idx | PAPI_PRESET_MASK) /* Level 2 store misses */
#define PAPI_BTAC_M  (PAPI_BTAC_M_idx | PAPI_PRESET_MASK) /* Branch target address cache misses */
#define PAPI_PRF_DM  (PAPI_PRF_DM_idx | PAPI_PRESET_MASK) /* Data prefetches that missed the cache */
#define PAPI_L3_DCH  (PAPI_L3_DCH_idx | PAPI_PRESET_MASK) /* Level 3 data cache hits */
#define PAPI_TLB_SD  (PAPI_TLB_SD_idx | PAPI_PRESET_MASK) /* TLB shootdowns */
#define PAPI_CSR_FAL (PAPI_CSR_FAL_idx | PAPI_PRESET_MASK) /* Store-conditional instructions that failed */
#define PAPI_CSR_SUC (PAPI_CSR_SUC_idx | PAPI_PRESET_MASK) /* Store-conditional instructions that succeeded */
#define PAPI_CSR_TOT (PAPI_CSR_TOT_idx | PAPI_PRESET_MASK) /* Store-conditional instructions */
#define PAPI_MEM_SCY (PAPI_MEM_SCY_idx | PAPI_PRESET_MASK) /* Cycles stalled on any memory access */
#define PAPI_MEM_RCY (PAPI_MEM_RCY_idx | PAPI_PRESET_MASK) /* Cycles stalled on memory reads */
#define PAPI_MEM_WCY (PAPI_MEM_WCY_idx | PAPI_PRESET_MASK) /* Cycles stalled on memory writes */
#define PAPI_STL_ICY (PAPI_STL_ICY_idx | PAPI_PRESET_MASK) /* Cycles in which no instruction was issued */
#define PAPI_FUL_ICY (PAPI_FUL_ICY_idx | PAPI_PRESET_MASK) /* Cycles in which the maximum number of instructions was issued */
#define PAPI_STL_CCY (PAPI_STL_CCY_idx | PAPI_PRESET_MASK) /* Cycles in which no instruction completed */
#define PAPI_FUL_CCY (PAPI_FUL_CCY_idx | PAPI_PRESET_MASK) /* Cycles in which the maximum number of instructions completed */
#define PAPI_HW_INT  (PAPI_HW_INT_idx | PAPI_PRESET_MASK) /* Hardware interrupts */
#define PAPI_BR_UCN  (PAPI_BR_UCN_idx | PAPI_PRESET_MASK) /* Unconditional branch instructions */
#define PAPI_BR_CN   (PAPI_BR_CN_idx | PAPI_PRESET_MASK) /* Conditional branch instructions */
#define PAPI_BR_TKN  (PAPI_BR_TKN_idx | PAPI_PRESET_MASK) /* Conditional branch instructions taken */
#define PAPI_BR_NTK  (PAPI_BR_NTK_idx | PAPI_PRESET_MASK) /* Conditional branch instructions not taken */
#define PAPI_BR_MSP  (PAPI_BR_MSP_idx | PAPI_PRESET_MASK) /* Conditional branch instructions mispredicted */
#define PAPI_BR_PRC  (PAPI_BR_PRC_idx | PAPI_PRESET_MASK) /* Conditional branch instructions predicted correctly */
#define PAPI_FMA_INS (PAPI_FMA_INS_idx | PAPI_PRESET_MASK) /* Fused multiply-add instructions */
#define PAPI_TOT_IIS (PAPI_TOT_IIS_idx | PAPI_PRESET_MASK) /* Instructions issued */
#define PAPI_TOT_INS (PAPI_TOT_INS_idx | PAPI_PRESET_MASK) /* Instructions completed */
#define PAPI_INT_INS (PAPI_INT_INS_idx | PAPI_PRESET_MASK) /* Integer instructions */
#define PAPI_FP_INS  (PAPI_FP_INS_idx | PAPI_PRESET_MASK) /* Floating point instructions */
#define PAPI_LD_INS  (PAPI_LD_INS_idx | PAPI_PRESET_MASK) /* Load instructions */
#define PAPI_SR_INS  (PAPI_SR_INS_idx | PAPI_PRESET_MASK) /* Store instructions */
#define PAPI_BR_INS  (PAPI_BR_INS_idx | PAPI_PRESET_MASK) /* Branch instructions */
#define PAPI_VEC_INS (PAPI_VEC_INS_idx | PAPI_PRESET_MASK) /* Vector/SIMD instructions (integer included) */
#define PAPI_RES_STL (PAPI_RES_STL_idx | PAPI_PRESET_MASK) /* Cycles stalled on any resource */
#define PAPI_FP_STAL (PAPI_FP_STAL_idx | PAPI_PRESET_MASK) /* Cycles the floating point units are stalled */
#define PAPI_TOT_CYC (PAPI_TOT_CYC_idx | PAPI_PRESET_MASK) /* Total cycles */
#define PAPI_LST_INS (PAPI_LST_INS_idx | PAPI_PRESET_MASK) /* Load and store instructions */
#define PAPI_SYC_INS (PAPI_SYC_INS_idx | PAPI_PRESET_MASK) /* Synchronisation instructions */
#define PAPI_L1_DCH  (PAPI_L1_DCH_idx | PAPI_PRESET_MASK) /* Level 1 data cache hits */
#define PAPI_L2_DCH  (PAPI_L2_DCH_idx | PAPI_PRESET_MASK) /* Level 2 data cache hits */
#define PAPI_L1_DCA  (PAPI_L1_DCA_idx | PAPI_PRESET_MASK) /* Level 1 data cache accesses */
#define PAPI_L2_DCA  (PAPI_L2_DCA_idx | PAPI_PRESET_MASK) /* Level 2 data cache accesses */
#define PAPI_L3_DCA  (PAPI_L3_DCA_idx | PAPI_PRESET_MASK) /* Level 3 data cache accesses */
#define PAPI_L1_DCR  (PAPI_L1_DCR_idx | PAPI_PRESET_MASK) /* Level 1 data cache reads */
#define PAPI_L2_DCR  (PAPI_L2_DCR_idx | PAPI_PRESET_MASK) /* Level 2 data cache reads */
#define PAPI_L3_DCR  (PAPI_L3_DCR_idx | PAPI_PRESET_MASK) /* Level 3 data cache reads */
#define PAPI_L1_DCW  (PAPI_L1_DCW_idx | PAPI_PRESET_MASK) /* Level 1 data cache writes */
#define PAPI_L2_DCW  (PAPI_L2_DCW_idx | PAPI_PRESET_MASK) /* Level 2 data cache writes */
#define PAPI_L3_DCW  (PAPI_L3_DCW_idx | PAPI_PRESET_MASK) /* Level 3 data cache writes */
#define PAPI_L1_ICH  (PAPI_L1_ICH_idx | PAPI_PRESET_MASK) /* Level 1 instruction cache hits */
#define PAPI_L2_ICH  (PAPI_L2_ICH_idx | PAPI_PRESET_MASK) /* Level 2 instruction cache hits */
#define PAPI_L3_ICH  (PAPI_L3_ICH_idx | PAPI_PRESET_MASK) /* Level 3 instruction cache hits */
#define PAPI_L1_ICA  (PAPI_L1_ICA_idx | PAPI_PRESET_MASK) /* Level 1 instruction cache accesses */
#define PAPI_L2_ICA  (PAPI_L2_ICA_idx | PAPI_PRESET_MASK) /* Level 2 instruction cache accesses */
#define PAPI_L3_ICA  (PAPI_L3_ICA_idx | PAPI_PRESET_MASK) /* Level 3 instruction cache accesses */
#define PAPI_L1_ICR  (PAPI_L1_ICR_idx | PAPI_PRESET_MASK) /* Level 1 instruction cache reads */
#define PAPI_L2_ICR  (PAPI_L2_ICR_idx | PAPI_PRESET_MASK) /* Level 2 instruction cache reads */
#define PAPI_L3_ICR  (PAPI_L3_ICR_idx | PAPI_PRESET_MASK) /* Level 3 instruction cache reads */
#define PAPI_L1_ICW  (PAPI_L1_ICW_idx | PAPI_PRESET_MASK) /* Level 1 instruction cache writes */
#define PAPI_L2_ICW  (PAPI_L2_ICW_idx | PAPI_PRESET_MASK) /* Level 2 instruction cache writes */
#define PAPI_L3_ICW  (PAPI_L3_ICW_idx | PAPI_PRESET_MASK) /* Level 3 instruction cache writes */
#define PAPI_L1_TCH  (PAPI_L1_TCH_idx | PAPI_PRESET_MASK) /* Level 1 cache hits, data and instruction */
#define PAPI_L2_TCH  (PAPI_L2_TCH_idx | PAPI_PRESET_MASK) /* Level 2 cache hits, data and instruction */
#define PAPI_L3_TCH  (PAPI_L3_TCH_idx | PAPI_PRESET_MASK) /* Level 3 cache hits, data and instruction */
#define PAPI_L1_TCA  (PAPI_L1_TCA_idx | PAPI_PRESET_MASK) /* Level 1 cache accesses, data and instruction */
#define PAPI_L2_TCA  (PAPI_L2_TCA_idx | PAPI_PRESET_MASK) /* Level 2 cache accesses, data and instruction */
#define PAPI_L3_TCA  (PAPI_L3_TCA_idx | PAPI_PRESET_MASK) /* Level 3 cache accesses, data and instruction */
#define PAPI_L1_TCR  (PAPI_L1_TCR_idx | PAPI_PRESET_MASK) /* Level 1 cache reads, data and instruction */
#define PAPI_L2_TCR  (PAPI_L2_TCR_idx | PAPI_PRESET_MASK) /* Level 2 cache reads, data and instruction */
#define PAPI_L3_TCR  (PAPI_L3_TCR_idx | PAPI_PRESET_MASK) /* Level 3 cache reads, data and instruction */
#define PAPI_L1_TCW  (PAPI_L1_TCW_idx | PAPI_PRESET_MASK) /* Level 1 cache writes, data and instruction */
#define PAPI_L2_TCW  (PAPI_L2_TCW_idx | PAPI_PRESET_MASK) /* Level 2 cache writes, data and instruction */
#define PAPI_L3_TCW  (PAPI_L3_TCW_idx | PAPI_PRESET_MASK) /* Level 3 cache writes, data and instruction */
#define PAPI_FML_INS (PAPI_FML_INS_idx | PAPI_PRESET_MASK) /* Floating point multiply instructions */
#define PAPI_FAD_INS (PAPI_FAD_INS_idx | PAPI_PRESET_MASK) /* Floating point add instructions */
#define PAPI_FDV_INS (PAPI_FDV_INS_idx | PAPI_PRESET_MASK) /* Floating point divide instructions */
#define PAPI_FSQ_INS (PAPI_FSQ_INS_idx | PAPI_PRESET_MASK) /* Floating point square root instructions */
#define PAPI_FNV_INS (PAPI_FNV_INS_idx | PAPI_PRESET_MASK) /* Floating point inverse instructions */
#define PAPI_FP_OPS  (PAPI_FP_OPS_idx | PAPI_PRESET_MASK) /* Floating point operations */
#define PAPI_SP_OPS  (PAPI_SP_OPS_idx | PAPI_PRESET_MASK) /* Floating point operations, single precision vector operations scaled by width */
#define PAPI_DP_OPS  (PAPI_DP_OPS_idx | PAPI_PRESET_MASK) /* Floating point operations, double precision vector operations scaled by width */
#define PAPI_VEC_SP  (PAPI_VEC_SP_idx | PAPI_PRESET_MASK) /* Single precision vector/SIMD instructions */
#define PAPI_VEC_DP  (PAPI_VEC_DP_idx | PAPI_PRESET_MASK) /* Double precision vector/SIMD instructions */
#define PAPI_REF_CYC (PAPI_REF_CYC_idx | PAPI_PRESET_MASK) /* Reference clock cycles (constant rate) */

#endif
