"""Lab 01 scenario: the named inputs (the source lab's, corrected where labs/lab01_scale/errata.md says
so) and every number derived from reference/ at them. No text: questions.py and notebook.py format
these values.
"""
from __future__ import annotations

import reference.scaling as ref
from reference import constants as C
from reference.cluster import ring_link
from reference.collectives import ring_allreduce_time, training_step_flops
from reference.parallelism import activation_bytes_per_layer, model_state_bytes_per_gpu

# --- Act I inputs: a Chinchilla-scale model (Hoffmann et al. 2022, arXiv:2203.15556) -------------------
PARAMS = 70e9                  # Chinchilla 70B
TOKENS = 1.4e12                # its training set, 20 tokens per parameter
TOKENS_PER_STEP = 3e6          # Chinchilla's batch grew from 1.5M to 3M tokens (Table 4); we use 3M
LAYERS, HIDDEN, HEADS = 80, 8192, 64   # Chinchilla 70B's shape (Table 4: layers, d_model, heads)
SEQ_LEN = 2048                 # its sequences' length (the context of Gopher and Chinchilla)
MFU = 0.5                      # the lab's 50%, now of the dense peak (PaLM reached 46.2%, its activations recomputed too)
PEAK_FLOPS = C.H100_PEAK_FLOPS_BF16
N_FLEET = 1000
FP16_BYTES = C.FP16_BYTES
GRAD_BYTES = PARAMS * FP16_BYTES              # bf16 gradients (and bf16 weights): 140 GB
CAPACITY_BYTES = C.H100_HBM_CAPACITY_BYTES
# Memory: the model states of mixed-precision Adam are 16 bytes a parameter, 1.12 TB; the bf16 weights alone
# (140 GB) exceed one H100, so data parallelism must shard them too: ZeRO-3 (Rajbhandari et al. 2020). It
# moves more: every step it all-gathers the weights twice (forward, backward) and reduce-scatters the
# gradients, three ring passes of (N-1)/N x 140 GB where an AllReduce makes two (sec. 7.2.2).
ZERO_STAGE = 3
ZERO3_PASSES, ALLREDUCE_PASSES = 3, 2
SYNC_BYTES = GRAD_BYTES * ZERO3_PASSES / ALLREDUCE_PASSES   # the AllReduce that moves what ZeRO-3 moves: 210 GB
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
MAX_DP_GPUS = int(TOKENS_PER_STEP // SEQ_LEN)   # one whole sequence per GPU: as far as one batch splits
LARGE_FLEET = MAX_DP_GPUS
LAB_SPEEDUP, LAB_N = 320.0, 1000  # the source lab's default speedup and cluster
LAB_IDLE_POWER_FRACTION = 0.5  # the source lab's reflection claim: idle GPUs draw half their TDP
SHORT_YEARS, LONG_YEARS = 1, 5
# Act I prediction: ranges of the speedup on N_FLEET GPUs (option design); the key holds the value
SPEEDUP_CUTS = (300, 600, 900)
SPEEDUP_RANGES = ((SPEEDUP_CUTS[2], float("inf")), (SPEEDUP_CUTS[1], SPEEDUP_CUTS[2]),
                  (SPEEDUP_CUTS[0], SPEEDUP_CUTS[1]), (0, SPEEDUP_CUTS[0]))

# --- Act I, memory per GPU (what the story names; tests/labs/lab01_scale checks it against the capacity) ----
REPLICATED_STATE_BYTES = model_state_bytes_per_gpu(PARAMS)                 # plain data parallelism: 1.12 TB
STATE_BYTES = model_state_bytes_per_gpu(PARAMS, N_FLEET, ZERO_STAGE)       # ZeRO-3: 1/N of it each
# Activations, recomputed: each layer keeps only its input (s x h values of 2 bytes, one sequence) and
# recomputes the rest in the backward pass, one layer at a time (Korthikanti et al. 2022, sec. 5); kept
# whole, one sequence's activations would need LAYERS x LAYER_ACTIVATION_BYTES = 153 GB.
KEPT_ACTIVATION_BYTES = LAYERS * SEQ_LEN * HIDDEN * FP16_BYTES
LAYER_ACTIVATION_BYTES = activation_bytes_per_layer(SEQ_LEN, 1, HIDDEN, HEADS)
GATHERED_BYTES = 2 * GRAD_BYTES / LAYERS     # the layer being computed: its gathered weights and whole gradient
MEMORY_BYTES = STATE_BYTES + KEPT_ACTIVATION_BYTES + LAYER_ACTIVATION_BYTES + GATHERED_BYTES
ACTIVATION_BYTES_KEPT_WHOLE = LAYERS * LAYER_ACTIVATION_BYTES
# The fewest GPUs (a power of two) whose ZeRO-3 shards leave room for the rest: the instrument starts there
FIT_GPUS = min(2 ** k for k in range(1, 20) if model_state_bytes_per_gpu(PARAMS, 2 ** k, ZERO_STAGE)
               + MEMORY_BYTES - STATE_BYTES <= CAPACITY_BYTES)
assert MEMORY_BYTES <= CAPACITY_BYTES < model_state_bytes_per_gpu(PARAMS, N_FLEET, ZERO_STAGE - 1)
# Act I instrument: the cluster sizes the curves span (powers of two from the fewest that hold the model to
# the most one batch feeds, the fleet, and that most)
INSTRUMENT_GPUS = sorted({2 ** k for k in range(13) if FIT_GPUS <= 2 ** k <= MAX_DP_GPUS} | {N_FLEET, MAX_DP_GPUS})

# --- Act I, derived -------------------------------------------------------------------------------------
TOTAL_FLOPS = training_step_flops(PARAMS, TOKENS)          # 6ND = 5.88e23 FLOP
STEP_FLOPS = training_step_flops(PARAMS, TOKENS_PER_STEP)
STEP_S_1GPU = ref.training_time_s(STEP_FLOPS, 1, PEAK_FLOPS, MFU)
SPEEDUP = ref.data_parallel_speedup(STEP_S_1GPU, N_FLEET, SYNC_BYTES, **LINK_FLEET)
FLAT_SPEEDUP = ref.data_parallel_speedup(STEP_S_1GPU, N_FLEET, SYNC_BYTES, **FLAT_LINK)   # the flat model's answer
EFFICIENCY = ref.scaling_efficiency(SPEEDUP, N_FLEET)
YEARS_1GPU = ref.training_time_s(TOTAL_FLOPS, 1, PEAK_FLOPS, MFU) / SECONDS_PER_YEAR
IDEAL_DAYS = ref.training_time_s(TOTAL_FLOPS, N_FLEET, PEAK_FLOPS, MFU) / SECONDS_PER_DAY
REAL_DAYS = ref.training_time_s(TOTAL_FLOPS, 1, PEAK_FLOPS, MFU) / SPEEDUP / SECONDS_PER_DAY
SYNC_S_FIT = ring_allreduce_time(SYNC_BYTES, FIT_GPUS, **ring_link(FIT_GPUS))   # the fewest GPUs that hold it
SYNC_S_FLEET = ring_allreduce_time(SYNC_BYTES, N_FLEET, **LINK_FLEET)
# the latency of ZeRO-3's third pass, which an AllReduce of SYNC_BYTES does not count: (N-1) alpha
ZERO3_EXTRA_LATENCY_S = ring_allreduce_time(0.0, N_FLEET, **LINK_FLEET) / ALLREDUCE_PASSES
ZERO3_EXTRA_LATENCY_SHARE = ZERO3_EXTRA_LATENCY_S / SYNC_S_FLEET
COMPUTE_S_FLEET = STEP_S_1GPU / N_FLEET                     # one step's compute per GPU on the fleet
COMPUTE_S_FIT = STEP_S_1GPU / FIT_GPUS
LARGE_FLEET_EFFICIENCY = ref.scaling_efficiency(
    ref.data_parallel_speedup(STEP_S_1GPU, LARGE_FLEET, SYNC_BYTES, **ring_link(LARGE_FLEET)), LARGE_FLEET)

# --- Act II inputs: the CFO's 3-year fleet (the lab's defaults, stated in the story) ------------------
FLEET_GPUS = N_FLEET            # the VP's fleet of Act I
YEARS = 3
USD_PER_GPU_HOUR = 2.10        # the on-demand price the CFO holds (an assumption: docs/physics.md)
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
# Where the CFO's assumptions sit among public figures (each source in docs/physics.md, Lab 01's inputs)
PUBLIC_USD_PER_GPU_HOUR = (2.0, 98.32 / 8)   # GPU clouds' on-demand H100 (about $2-4) .. AWS p5.48xlarge, 8 H100, 2023
PUBLIC_CAPEX_PER_GPU = (25_000, 40_000)      # an H100 SXM's market price, 2023-2024 estimates (the GPU alone)
PUBLIC_PUE = (1.1, 1.58)                     # hyperscale (Google's fleet: 1.10) .. Uptime Institute's 2023 average
PUBLIC_USD_PER_KWH = (0.08, 0.13)            # US averages, industrial .. commercial (EIA, 2023)
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
