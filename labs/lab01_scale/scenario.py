"""Lab 01 scenario: the named inputs (the source lab's, corrected where labs/lab01_scale/errata.md says
so) and every number derived from reference/ at them. No text: questions.py and notebook.py format
these values.
"""
from __future__ import annotations

import reference.scaling as ref
from reference import constants as C
from reference.cluster import ring_link
from reference.collectives import ring_allreduce_time, training_step_flops

# --- Act I inputs: a Chinchilla-scale model (Hoffmann et al. 2022, arXiv:2203.15556) -------------------
PARAMS = 70e9                  # Chinchilla 70B
TOKENS = 1.4e12                # its training set, 20 tokens per parameter
TOKENS_PER_STEP = 3e6          # Chinchilla's batch grew from 1.5M to 3M tokens (Table 4); we use 3M
MFU = 0.5                      # the lab's 50%, now of the dense peak (PaLM reached 46.2%)
PEAK_FLOPS = C.H100_PEAK_FLOPS_BF16
N_FLEET = 1000
FP16_BYTES = C.FP16_BYTES
GRAD_BYTES = PARAMS * FP16_BYTES              # bf16 gradients, all-reduced every step
# The fleet is DGX H100 nodes: 8 GPUs on NVLink and 8 NDR NICs each. A ring across them runs one ring per
# NIC at once, 7 of every 8 hops on NVLink (reference/cluster.py): per rank it sees LINK_FLEET. The source
# lab (and this project until issue 30) ran it at one NIC's 50 GB/s per GPU: 8x too slow (errata).
GPN, NICS = C.GPUS_PER_DGX_H100, C.IB_NICS_PER_DGX_H100
NIC_BANDWIDTH, NVLINK_BANDWIDTH = C.IB_NDR400_BANDWIDTH, C.NVLINK4_BANDWIDTH   # bytes/s per direction, as the story states them
HOURS_PER_YEAR = C.HOURS_PER_YEAR
NODES = N_FLEET // GPN
LINK_FLEET = ring_link(N_FLEET)
ALPHA_S, BANDWIDTH = LINK_FLEET["alpha_s"], LINK_FLEET["bandwidth"]
NDR_GBIT = C.IB_NDR400_BANDWIDTH * 8 / 1e9  # one NIC's rating in Gb/s, from the cited bytes/s
FLAT_LINK = dict(alpha_s=C.IB_ALPHA_S, bandwidth=C.IB_NDR400_BANDWIDTH)   # the flat model: one NIC per GPU
SECONDS_PER_DAY = 86400
SECONDS_PER_YEAR = C.HOURS_PER_YEAR * 3600
FLOPS_PER_PARAM_TOKEN = training_step_flops(1, 1)   # the 6 of 6ND, from the reference formula
LAB_TOTAL_FLOPS = 2.2e24       # the lab's "GPT-4 scale" figure (errata: not used for the story)
SPARSE_PEAK_FLOPS = C.H100_PEAK_FLOPS_BF16_SPARSE
# Worked-example inputs (each formatted into its example's label, never typed twice)
NODE_GPUS = C.GPUS_PER_DGX_H100  # one DGX H100 node
LARGE_FLEET = 4096
LAB_SPEEDUP, LAB_N = 320.0, 1000  # the source lab's default speedup and cluster
LAB_IDLE_POWER_FRACTION = 0.5  # the source lab's reflection claim: idle GPUs draw half their TDP
SHORT_YEARS, LONG_YEARS = 1, 5
# Act I prediction: ranges of the speedup on N_FLEET GPUs (option design); the key holds the value
SPEEDUP_CUTS = (300, 600, 900)
SPEEDUP_RANGES = ((SPEEDUP_CUTS[2], float("inf")), (SPEEDUP_CUTS[1], SPEEDUP_CUTS[2]),
                  (SPEEDUP_CUTS[0], SPEEDUP_CUTS[1]), (0, SPEEDUP_CUTS[0]))
# Act I instrument: the cluster sizes the curves span (powers of two and the fleet)
INSTRUMENT_GPUS = sorted({2 ** k for k in range(13)} | {N_FLEET})

# --- Act I, derived -------------------------------------------------------------------------------------
TOTAL_FLOPS = training_step_flops(PARAMS, TOKENS)          # 6ND = 5.88e23 FLOP
STEP_FLOPS = training_step_flops(PARAMS, TOKENS_PER_STEP)
STEP_S_1GPU = ref.training_time_s(STEP_FLOPS, 1, PEAK_FLOPS, MFU)
SPEEDUP = ref.data_parallel_speedup(STEP_S_1GPU, N_FLEET, GRAD_BYTES, **LINK_FLEET)
FLAT_SPEEDUP = ref.data_parallel_speedup(STEP_S_1GPU, N_FLEET, GRAD_BYTES, **FLAT_LINK)   # the flat model's answer
EFFICIENCY = ref.scaling_efficiency(SPEEDUP, N_FLEET)
YEARS_1GPU = ref.training_time_s(TOTAL_FLOPS, 1, PEAK_FLOPS, MFU) / SECONDS_PER_YEAR
IDEAL_DAYS = ref.training_time_s(TOTAL_FLOPS, N_FLEET, PEAK_FLOPS, MFU) / SECONDS_PER_DAY
REAL_DAYS = ref.training_time_s(TOTAL_FLOPS, 1, PEAK_FLOPS, MFU) / SPEEDUP / SECONDS_PER_DAY
RING_S_8 = ring_allreduce_time(GRAD_BYTES, GPN, **ring_link(GPN))            # one node: NVLink
RING_S_FLEET = ring_allreduce_time(GRAD_BYTES, N_FLEET, **LINK_FLEET)
COMPUTE_S_FLEET = STEP_S_1GPU / N_FLEET                     # one step's compute per GPU on the fleet
LARGE_FLEET_EFFICIENCY = ref.scaling_efficiency(
    ref.data_parallel_speedup(STEP_S_1GPU, LARGE_FLEET, GRAD_BYTES, **ring_link(LARGE_FLEET)), LARGE_FLEET)

# --- Act II inputs: the CFO's 3-year fleet (the lab's defaults, stated in the story) ------------------
FLEET_GPUS = N_FLEET            # the VP's fleet of Act I
YEARS = 3
USD_PER_GPU_HOUR = 2.10        # on-demand list price
RESERVED_DISCOUNT = 0.35
CAPEX_PER_GPU = 40_000
WATTS_PER_GPU = C.H100_TDP_W
PUE = 1.4                      # facility / IT power, cooling included
USD_PER_KWH = 0.10
STAFF_USD_PER_ENGINEER = 200_000  # a year
GPUS_PER_ENGINEER = 100
STAFF_USD_PER_GPU_YEAR = STAFF_USD_PER_ENGINEER / GPUS_PER_ENGINEER
UTILIZATION = 0.60             # the scheduler's measured busy share: the question's stated utilization
BUDGET_USD = 50e6              # the board's cap on cloud spend: the failure state
LOW_UTILIZATION = 0.20         # the Act II reflection's example
FULL_UTILIZATION = 1.0         # the CFO's plan: the fleet runs continuously (the failure state)
TIE_SPREAD = 0.20              # Act II option design: "all three within 20%" holds below this spread
PLANT = dict(capex_per_gpu=CAPEX_PER_GPU, watts_per_gpu=WATTS_PER_GPU, pue=PUE, usd_per_kwh=USD_PER_KWH,
             staff_usd_per_gpu_year=STAFF_USD_PER_GPU_YEAR)


# --- Act II, derived ------------------------------------------------------------------------------------
def on_demand_usd(utilization: float, years: float = YEARS) -> float:
    return ref.on_demand_cost(FLEET_GPUS, years, USD_PER_GPU_HOUR, utilization)


def on_prem_usd(utilization: float, years: float = YEARS) -> float:
    return ref.on_prem_cost(FLEET_GPUS, years, CAPEX_PER_GPU, WATTS_PER_GPU, PUE, USD_PER_KWH, utilization,
                            STAFF_USD_PER_GPU_YEAR)


def usd_per_productive_gpu_hour(total_usd: float, utilization: float) -> float:
    return total_usd / (FLEET_GPUS * YEARS * C.HOURS_PER_YEAR * utilization)


RESERVED_USD = ref.reserved_cost(FLEET_GPUS, YEARS, USD_PER_GPU_HOUR, RESERVED_DISCOUNT)
COSTS = {"on_demand": on_demand_usd(UTILIZATION), "reserved": RESERVED_USD, "on_prem": on_prem_usd(UTILIZATION)}
CHEAPEST = ref.cheapest_option(FLEET_GPUS, YEARS, UTILIZATION, USD_PER_GPU_HOUR, RESERVED_DISCOUNT, **PLANT)
SPREAD = (max(COSTS.values()) - min(COSTS.values())) / min(COSTS.values())
BREAKEVEN = ref.breakeven_utilization(YEARS, USD_PER_GPU_HOUR, **PLANT)
BREAKEVEN_SHORT = ref.breakeven_utilization(SHORT_YEARS, USD_PER_GPU_HOUR, **PLANT)
BREAKEVEN_LONG = ref.breakeven_utilization(LONG_YEARS, USD_PER_GPU_HOUR, **PLANT)
FIXED_USD = on_prem_usd(0.0)                      # capex + staff: what an idle fleet costs
ENERGY_USD_PER_HOUR = (on_prem_usd(FULL_UTILIZATION) - FIXED_USD) / (FLEET_GPUS * YEARS * C.HOURS_PER_YEAR)
ON_DEMAND_FULL_USD = on_demand_usd(FULL_UTILIZATION)
BUDGET_UTILIZATION = BUDGET_USD / ON_DEMAND_FULL_USD  # on-demand is linear in U: the highest U within budget
ON_PREM_LOW_USD_PER_HOUR = usd_per_productive_gpu_hour(on_prem_usd(LOW_UTILIZATION), LOW_UTILIZATION)
ON_PREM_FULL_USD_PER_HOUR = usd_per_productive_gpu_hour(on_prem_usd(FULL_UTILIZATION), FULL_UTILIZATION)
