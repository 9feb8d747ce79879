"""Lab 06 scenario: the named inputs (the lab's, corrected where labs/lab06_collectives/errata.md says
so) and every number derived from reference/ at them. No text: questions.py and notebook.py format
these values.
"""
from __future__ import annotations

from reference import collectives as ref
from reference import constants as C
from reference.cluster import ring_link
from reference.parallelism import peak_memory_bytes_per_gpu

# --- inputs -------------------------------------------------------------------------------------------
N_GPUS = 128                                   # the lab's default cluster: 16 DGX H100 nodes
GPN = C.GPUS_PER_DGX_H100
NODES = N_GPUS // GPN
NICS = C.IB_NICS_PER_DGX_H100                  # NDR NICs per node
ALPHA_S = C.IB_ALPHA_S                         # one message over one NDR port
NDR = C.IB_NDR400_BANDWIDTH                    # bytes/s per port, per direction
# A ring over the 16 nodes runs 8 rings at once, one per NIC, 7 of every 8 hops on NVLink: per rank it
# sees the link ring_link computes (errata C5: the lab's flat ring at one port's 50 GB/s is 8x too slow).
CLUSTER = ring_link(N_GPUS)
CLUSTER_ALPHA_S, CLUSTER_BW = CLUSTER["alpha_s"], CLUSTER["bandwidth"]
LINK = dict(n=N_GPUS, **CLUSTER)
ONE_NIC = dict(nics_per_node=1)                # the same nodes with one NDR NIC each (a cheaper build)
ONE_NIC_LINK = dict(n=N_GPUS, **ring_link(N_GPUS, **ONE_NIC))
FP16_BYTES = C.FP16_BYTES

# The models the story trains, data parallel over the 128 GPUs. A ring AllReduce of M bytes leaves M bytes on
# every rank and every GPU keeps its model: the lab's 140 GB (70B) and 350 GB (175B) gradients fit on no
# 80 GiB GPU (errata, issue 43). Their optimizer states are sharded with ZeRO stage 1, which keeps the
# gradient AllReduce whole (Rajbhandari et al. 2020, sec. 7.2.1). Shapes: LLaMA 7B (Touvron et al. 2023,
# arXiv:2302.13971, Table 2: 32 layers, hidden 4,096, 32 heads); GPT-3 2.7B (Brown et al. 2020, Table 2.1).
ZERO_STAGE = 1
SHAPES = {7e9: dict(layers=32, hidden=4096, heads=32), 2.7e9: dict(layers=32, hidden=2560, heads=32)}
SOURCE_ACT1_PARAMS, SOURCE_BIG_PARAMS = 70e9, 175e9     # the lab's: 140 GB and 350 GB gradients

# Act I: the lab's 140 GB default gradient was a 70B-parameter model in FP16 (the lab gives no origin).
ACT1_PARAMS = 7e9
ACT1_MESSAGE_BYTES = ACT1_PARAMS * FP16_BYTES

# Act II: the lab's three workloads; FP16 gradients are 2 bytes/param (the lab's 280 GB for 175B is
# 1.6 bytes/param). The sub-MB embedding update belongs to the lab's 0.1B-parameter model; only the
# rows a step touches are synchronised, so its message is far smaller than its parameter count.
GRADIENT_PARAMS = (7e9, 2.7e9)
WORKLOADS = (
    *((f"{p / 1e9:g}B model gradient", p, p * FP16_BYTES) for p in GRADIENT_PARAMS),
    ("embedding-table update", 0.1e9, 0.5e6),
)
SEQ_LEN = 2048                                  # the lab's sequence length
# The lab's global batch of 16 sequences cannot spread over 128 data-parallel GPUs; one sequence per
# GPU is the smallest step pure data parallelism can run.
TOKENS_PER_STEP = N_GPUS * SEQ_LEN
MFU = 0.5                                       # the lab's "50% MFU", now of the dense peak
PEAK_FLOPS = C.H100_PEAK_FLOPS_BF16             # dense; the lab's 1979 TFLOPS is the sparse figure
FAILURE_FRACTION = 0.5                          # the lab's failure state: comm above half the step

# Act I prediction: ranges of the naive/ring traffic ratio (option design, not physics).
ACT1_RANGES = ((1, 4), (4, 40), (40, 100), (100, 400))
DISTRACTOR_GPUS = 64                            # option design: the false "ring above N GPUs" rule's cutoff

# Worked-example inputs (each formatted into its label, never typed twice)
NCCL_EXAMPLE = dict(message_bytes=1e9, n=8, alpha_s=5e-6, bandwidth=100e9)   # the lab's own worked example (anchors E.1)
ONE_GB = 1e9
SMALL_BYTES = 1e6                               # a latency-bound message (also the instrument's small curve)
ODD_N = 24                                      # three DGX nodes: not a power of two
MIN_RANKS = 2
CHINCHILLA = dict(params=70e9, tokens=1.4e12)   # Hoffmann et al. 2022


# --- derived from reference/ --------------------------------------------------------------------------

# What one GPU holds for each model: its ZeRO-1 model states and one sequence's activations
MEMORY_BYTES = {params: peak_memory_bytes_per_gpu(params, seq_len=SEQ_LEN, micro_batch=1, dp=N_GPUS,
                                                  zero_stage=ZERO_STAGE, **shape) for params, shape in SHAPES.items()}
CAPACITY_BYTES = C.H100_HBM_CAPACITY_BYTES
assert max(MEMORY_BYTES.values()) <= CAPACITY_BYTES < SOURCE_ACT1_PARAMS * FP16_BYTES

def _workload_numbers(params: float, message_bytes: float, link: dict = LINK) -> dict:
    times = {name: fn(message_bytes, **link) for name, fn in
             (("ring", ref.ring_allreduce_time), ("tree", ref.tree_allreduce_time),
              ("rabenseifner", ref.rabenseifner_allreduce_time))}
    best = ref.best_allreduce_algorithm(message_bytes, **link)
    compute_s = ref.compute_time(ref.training_step_flops(params, TOKENS_PER_STEP), N_GPUS, PEAK_FLOPS, MFU)
    fraction = ref.comm_fraction(times[best], compute_s)
    return dict(times=times, best=best, compute_s=compute_s, fraction=fraction)


ACT1_NAIVE_S = ref.naive_allreduce_time(ACT1_MESSAGE_BYTES, **LINK)
ACT1_RING_S = ref.ring_allreduce_time(ACT1_MESSAGE_BYTES, **LINK)
ACT1_RATIO = ref.naive_master_bytes(ACT1_MESSAGE_BYTES, N_GPUS) / ref.ring_bytes_per_rank(ACT1_MESSAGE_BYTES, N_GPUS)
RING_EFFICIENCY = ref.ring_bytes_per_rank(1.0, N_GPUS) / 2                # the lab's (n-1)/n
CRITICAL_BYTES = ref.critical_message_size(CLUSTER_ALPHA_S, CLUSTER_BW)
CROSSOVER_BYTES = ref.ring_tree_crossover_bytes(**LINK)
FLOPS_PER_PARAM_TOKEN = ref.training_step_flops(1, 1)              # the 6 of 6 · params · tokens
RING_FACTOR_LIMIT = round(ref.ring_bytes_per_rank(1.0, 10**9))     # 2(n-1)/n as n grows: 2
ACT2 = [(label, params, message, _workload_numbers(params, message)) for label, params, message in WORKLOADS]
WORKLOAD_SIZES = {label: (params, message) for label, params, message in WORKLOADS}   # (params, message_bytes)
BIG = ACT2[0][3]                                                  # the largest gradient's numbers
# The same workloads on nodes with one NIC each: the failure state the per-node NIC count decides.
ONE_NIC_ACT2 = [(label, params, message, _workload_numbers(params, message, ONE_NIC_LINK))
                for label, params, message in WORKLOADS]
ONE_NIC_BIG = ONE_NIC_ACT2[0][3]
# compute grows with tokens: the tokens per step at which the big step's compute matches its AllReduce
# on the one-NIC nodes (on eight NICs compute already outweighs it)
TOKENS_FOR_HALF = TOKENS_PER_STEP * ONE_NIC_BIG["times"][ONE_NIC_BIG["best"]] / ONE_NIC_BIG["compute_s"]

# The story's claims, true at the lab's numbers and at every version's (variants.py; lint's variants rule):
# the big gradients' shares are under the failure line and almost equal, one NIC per node puts them over it,
# and Act II's workloads sit far from the ring-tree crossover (its key does not hinge on a rounding).
assert BIG["fraction"] < FAILURE_FRACTION < ONE_NIC_BIG["fraction"]
assert abs(ACT2[1][3]["fraction"] / BIG["fraction"] - 1) < 0.2
assert min(m for _, _, m in WORKLOADS[:2]) > 4 * CROSSOVER_BYTES > 16 * WORKLOADS[2][2]
