"""Lab 05 scenario: the named inputs (the lab's, corrected where labs/lab05_parallelism/errata.md says
so) and every number derived from reference/ at them. No text: questions.py and notebook.py format
these values.
"""
from __future__ import annotations

from reference import collectives, constants as C, parallelism as ref
from reference.cluster import ring_link

# --- Act I scenario: a 7B model, a fixed global batch spread over more and more GPUs ---------------
# The lab fixes the per-GPU batch and counts samples; a fixed global batch in tokens (2^21, 1,024
# sequences of 2,048 tokens) makes the collapse real. 0.52 is the lab's MFU while computing.
SEQ_LEN = 2048
ACT1_SEQUENCES = 1024                          # the fixed global batch, in sequences
ACT1 = dict(params=7e9, tokens_per_step=float(ACT1_SEQUENCES * SEQ_LEN), peak_flops=C.H100_PEAK_FLOPS_BF16,
            mfu=0.52, bytes_per_grad=C.FP16_BYTES)
ACT1_GPUS = (8, 64, 512)                       # the stakeholder's three measurements
N_SMALL, N_MID, N_LARGE = ACT1_GPUS
HOURS_PER_DAY = 24
INT8_BYTES = 1                                 # the reflection's INT8 gradients, bytes per value
FAST_GPU_PEAK_FACTOR = 2                       # the reflection's faster GPU: twice the peak
FLOPS_PER_PARAM_TOKEN = collectives.training_step_flops(1, 1)      # the 6 of 6 x params x tokens
RING_FACTOR_LIMIT = round(collectives.ring_bytes_per_rank(1.0, 10**9))  # 2(N-1)/N as N grows: 2
MFU_FLOOR = 0.40                               # the lab's "practical floor" line
USD_PER_GPU_HOUR = 3.0                         # the price the stakeholder pays (an assumption: docs/physics.md)
GPN = C.GPUS_PER_DGX_H100


def act1_link(n_gpus: int) -> dict:
    """The ring's link on DGX H100 nodes (reference/cluster.py): NVLink inside one node; past it, one ring
    per NIC at once with 7 of every 8 hops on NVLink, so each rank sees the node's 8 NDR NICs together
    (the source lab, and this project until issue 30, ran it at one NIC's 50 GB/s: errata)."""
    return ring_link(n_gpus)


def act1_kwargs(n_gpus: int) -> dict:
    return dict(ACT1, n_gpus=n_gpus, **act1_link(n_gpus))


def act1_times(n_gpus: int) -> tuple[float, float]:
    """(compute_s, comm_s) of one step at n_gpus, from the reference pieces of the step time."""
    k = act1_kwargs(n_gpus)
    compute_s = collectives.compute_time(collectives.training_step_flops(k["params"], k["tokens_per_step"]),
                                         n_gpus, k["peak_flops"], k["mfu"])
    comm_s = collectives.ring_allreduce_time(k["params"] * k["bytes_per_grad"], n_gpus, k["alpha_s"],
                                             k["bandwidth"])
    assert abs(compute_s + comm_s - ref.data_parallel_step_time(**k)) <= 1e-9 * (compute_s + comm_s)
    return compute_s, comm_s


def act1_mfu(n_gpus: int) -> float:
    return ref.effective_mfu(ACT1["mfu"], *act1_times(n_gpus))


# (names end in the stakeholder's GPU counts; the values come from ACT1_GPUS)
MFU8, MFU64, MFU512 = (act1_mfu(n) for n in ACT1_GPUS)
COMPUTE8, COMM8 = act1_times(N_SMALL)
COMPUTE64, COMM64 = act1_times(N_MID)
COMPUTE512, COMM512 = act1_times(N_LARGE)
IDLE_USD_PER_DAY = collectives.comm_fraction(COMM512, COMPUTE512) * N_LARGE * HOURS_PER_DAY * USD_PER_GPU_HOUR
GRAD_GB = ACT1["params"] * ACT1["bytes_per_grad"] / 1e9
# Act I is about time, not memory: with plain data parallelism the model states would not fit, so the
# story shards the optimizer states with ZeRO stage 1, which keeps DP's communication volume (ZeRO sec. 7).
ACT1_ZERO_STAGE = 1
ACT1_STATES_GB_NO_ZERO = ref.model_state_bytes_per_gpu(ACT1["params"], dp=N_SMALL) / 1e9
ACT1_STATES_GB_ZERO = ref.model_state_bytes_per_gpu(ACT1["params"], dp=N_SMALL, zero_stage=ACT1_ZERO_STAGE) / 1e9
# ... and each GPU keeps one sequence's activations (micro-batches of one sequence, accumulated): the 7B's
# shape is LLaMA 7B's (Touvron et al. 2023, arXiv:2302.13971, Table 2: 32 layers, hidden 4,096, 32 heads)
ACT1_SHAPE = dict(layers=32, hidden=4096, heads=32)


def act1_memory_bytes(n_gpus: int) -> float:
    return ref.peak_memory_bytes_per_gpu(ACT1["params"], seq_len=SEQ_LEN, micro_batch=1, dp=n_gpus,
                                         zero_stage=ACT1_ZERO_STAGE, **ACT1_SHAPE)


ACT1_MEMORY_GB = act1_memory_bytes(N_SMALL) / 1e9
# The instrument's cluster sizes: powers of two up to one sequence per GPU, from the fewest that hold the model
CURVE_GPUS = tuple(2 ** k for k in range(11)
                   if act1_memory_bytes(2 ** k) <= C.H100_HBM_CAPACITY_BYTES and 2 ** k <= ACT1_SEQUENCES)
# Latency share of the largest AllReduce: the ring with an empty message is pure alpha.
LATENCY_SHARE512 = collectives.ring_allreduce_time(0.0, N_LARGE, **act1_link(N_LARGE)) / COMM512
INT8_MFU512 = ref.effective_mfu(ACT1["mfu"], COMPUTE512, collectives.ring_allreduce_time(
    ACT1["params"] * INT8_BYTES, N_LARGE, **act1_link(N_LARGE)))
# The flat model (one NIC per GPU, the source lab's): the MFU it gave at the largest cluster
FLAT_MFU512 = ref.effective_mfu(ACT1["mfu"], COMPUTE512, collectives.ring_allreduce_time(
    ACT1["params"] * ACT1["bytes_per_grad"], N_LARGE, C.IB_ALPHA_S, C.IB_NDR400_BANDWIDTH))
CLUSTER_GBPS = act1_link(N_LARGE)["bandwidth"] / 1e9     # the ring's per-rank link past one node
NICS = C.IB_NICS_PER_DGX_H100
FAST_GPU_MFU512 = ref.effective_mfu(ACT1["mfu"], COMPUTE512 / FAST_GPU_PEAK_FACTOR, COMM512)

# --- Act II scenario: GPT-3 175B on 1,024 H100s (Brown et al. 2020, Table 2.1) ----------------------
# No ZeRO (every DP replica keeps its optimizer states, as in the lab), micro-batch 1, 1F1B, a
# global batch of 1,536 sequences (~3.1M tokens; GPT-3 used 3.2M), the lab's 10% bubble ceiling.
ACT2 = dict(params=175e9, layers=96, seq_len=SEQ_LEN, hidden=12288, heads=96, global_batch=1536,
            n_gpus=1024, gpus_per_node=GPN, capacity_bytes=C.H100_HBM_CAPACITY_BYTES,
            bubble_ceiling=0.10, micro_batch=1, zero_stage=0)
BEST = ref.best_3d_config(**ACT2)


def parse_config(config: str) -> tuple[int, int, int]:
    parts = dict(kv.split("=") for kv in config.split())
    return int(parts["TP"]), int(parts["PP"]), int(parts["DP"])


def layout(tp: int, pp: int) -> dict:
    """One TP x PP layout of the Act II scenario measured with the reference functions."""
    dp = ACT2["n_gpus"] // (tp * pp)
    m = ACT2["global_batch"] // (dp * ACT2["micro_batch"])
    shape = {k: ACT2[k] for k in ("params", "layers", "seq_len", "micro_batch", "hidden", "heads", "zero_stage")}
    memory = ref.peak_memory_bytes_per_gpu(**shape, tp=tp, pp=pp, dp=dp, microbatches=m)
    states = ref.model_state_bytes_per_gpu(ACT2["params"], dp, ACT2["zero_stage"], tp, pp)
    bubble = ref.pipeline_bubble_fraction(pp, m)
    crosses = ref.tp_crosses_node(tp, ACT2["gpus_per_node"])
    fits = ref.fits_in_memory(memory, ACT2["capacity_bytes"])
    return dict(tp=tp, pp=pp, dp=dp, m=m, memory=memory, states=states, bubble=bubble, crosses=crosses,
                fits=fits, feasible=fits and not crosses and bubble <= ACT2["bubble_ceiling"],
                config=f"TP={tp} PP={pp} DP={dp}")


# The options: the enumerated best and three infeasible layouts, each failing for its own reason.
BEST_TP, BEST_PP, BEST_DP = parse_config(BEST)
ACT2_LAYOUTS = [layout(16, 8), layout(8, 4), layout(BEST_TP, BEST_PP), layout(1, 32)]
assert [lay["feasible"] for lay in ACT2_LAYOUTS].count(True) == 1
ACT2_KEY_INDEX = next(i for i, lay in enumerate(ACT2_LAYOUTS) if lay["config"] == BEST)
assert ACT2_LAYOUTS[ACT2_KEY_INDEX]["feasible"]
LAB_LAYOUT = ACT2_LAYOUTS[1]                   # TP=8 PP=4: the lab's keyed answer
BEST_LAYOUT = ACT2_LAYOUTS[ACT2_KEY_INDEX]
BEST_M = BEST_LAYOUT["m"]                      # micro-batches per replica of the best layout
FULL_STATES_TB = ref.model_state_bytes_per_gpu(ACT2["params"]) / 1e12
ACT_LAYER_T1_GB = ref.activation_bytes_per_layer(SEQ_LEN, 1, ACT2["hidden"], ACT2["heads"], 1) / 1e9


TP_ALLREDUCES_FWD = TP_ALLREDUCES_BWD = 2     # per layer (Shoeybi et al. 2019, Fig. 4)


def tp_comm_s_per_step(lay: dict, bandwidth: float, alpha_s: float) -> float:
    """Seconds one GPU spends in tensor-parallel AllReduces per step: Megatron does 2 in the forward
    and 2 in the backward pass of every layer (Shoeybi et al. 2019, Fig. 4), each on the fp16
    activations s*b*h of one microbatch, for its layers/pp layers and all m microbatches."""
    message_bytes = ACT2["seq_len"] * ACT2["micro_batch"] * ACT2["hidden"] * C.FP16_BYTES
    calls = (TP_ALLREDUCES_FWD + TP_ALLREDUCES_BWD) * (ACT2["layers"] // lay["pp"]) * lay["m"]
    return calls * collectives.ring_allreduce_time(message_bytes, lay["tp"], alpha_s, bandwidth)


TP_NVLINK_S = tp_comm_s_per_step(BEST_LAYOUT, C.NVLINK4_BANDWIDTH, C.NVLINK_ALPHA_S)
# TP=16 spans 2 nodes: its AllReduces run on the cluster's ring link over 16 GPUs (the nodes' NICs)
TP_IB_LINK = ring_link(ACT2_LAYOUTS[0]["tp"])
TP_IB_S = tp_comm_s_per_step(ACT2_LAYOUTS[0], **TP_IB_LINK)
# one of those AllReduces (one microbatch's activations) each way: on NVLink inside a node, and on the ring
# across the 2 nodes, whose 16 NICs carry it together (reference/cluster.py): slower, but not by NVLink/NIC
TP_MESSAGE_BYTES = ACT2["seq_len"] * ACT2["micro_batch"] * ACT2["hidden"] * C.FP16_BYTES
TP_NVLINK_CALL_S = collectives.ring_allreduce_time(TP_MESSAGE_BYTES, BEST_TP, C.NVLINK_ALPHA_S, C.NVLINK4_BANDWIDTH)
TP_IB_CALL_S = collectives.ring_allreduce_time(TP_MESSAGE_BYTES, ACT2_LAYOUTS[0]["tp"], **TP_IB_LINK)
ACT2_COMPUTE_S = collectives.compute_time(
    collectives.training_step_flops(ACT2["params"], ACT2["global_batch"] * SEQ_LEN), ACT2["n_gpus"],
    C.H100_PEAK_FLOPS_BF16, ACT1["mfu"])
NVLINK_OVER_IB = C.NVLINK4_BANDWIDTH / C.IB_NDR400_BANDWIDTH
CROSS_LAYOUT = ACT2_LAYOUTS[0]                 # the option whose TP spans nodes
CROSS_NODES = CROSS_LAYOUT["tp"] // GPN

IDLE_FRACTION512 = collectives.comm_fraction(COMM512, COMPUTE512)
ADAM_BYTES_PER_PARAM = C.ADAM_MIXED_PRECISION_BYTES_PER_PARAM
FP16_BYTES = C.FP16_BYTES
H100_PEAK_TFLOPS = C.H100_PEAK_FLOPS_BF16 / 1e12
NVLINK_GBPS = C.NVLINK4_BANDWIDTH / 1e9
IB_GBPS = C.IB_NDR400_BANDWIDTH / 1e9
HBM_BYTES = C.H100_HBM_CAPACITY_BYTES
TP_ALLREDUCES = TP_ALLREDUCES_FWD + TP_ALLREDUCES_BWD

# The instruments' controls (the source lab's sliders) and the notebook's literals
TP_STEPS = tuple(2 ** k for k in range(7))
PP_STEPS = tuple(p for p in (1, 2, 4, 8, 16, 32) if ACT2["layers"] % p == 0)
M_STEPS = tuple(m for m in range(1, ACT2["global_batch"] + 1) if ACT2["global_batch"] % m == 0)
MODEL_SHAPE = {k: ACT2[k] for k in ("params", "layers", "seq_len", "hidden", "heads", "zero_stage")}
SCENARIO_ARGS = {k: v for k, v in ACT2.items() if k != "capacity_bytes"}

# Worked-example inputs (each formatted into its label)
ZERO_PAPER = dict(params=7.5e9, dp=64)         # Rajbhandari et al. 2020, Fig. 1
BUBBLE_EXAMPLES = [("Megatron-LM", dict(p=8, m=32)), ("Megatron-LM interleaved", dict(p=8, m=32, v=2)),
                   ("the lab's default", dict(p=4, m=8))]
ZERO_STAGE_EXAMPLE = 1
TIGHT_BUBBLE_CEILING = 0.01
