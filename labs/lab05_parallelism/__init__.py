"""Lab 05 — the parallelism paradox: the data-parallel wall, 3D parallelism, the pipeline bubble.

Source lab: `source_lab` below (Vol II Lab 05, The Parallelism Paradox). Every number a student reads below is computed
from reference/ at the scenario's parameters; docs/errata/lab05_parallelism.md lists each place
the assignment corrects the lab.
"""
from __future__ import annotations

from functools import partial

from hypothesis import strategies as st

from autograder.engine import spec
from autograder.engine.spec import (Answer, Assignment, Code, Example, FunctionGrades, FunctionItem,
                             Markdown, Property, Question)
from reference import collectives, constants as C, parallelism as ref

from labs.authoring import public_properties
from labs.lab05_parallelism.properties import PROPERTIES
from labs.lab05_parallelism.misconceptions import MISCONCEPTIONS

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
CURVE_GPUS = tuple(2 ** k for k in range(11))  # 1 .. 1024
MFU_FLOOR = 0.40                               # the lab's "practical floor" line
USD_PER_GPU_HOUR = 3.0                         # the price the stakeholder pays (scenario input)
GPN = C.GPUS_PER_DGX_H100


def act1_link(n_gpus: int) -> dict:
    """NVLink inside one DGX node; past the node the ring runs over each GPU's NDR InfiniBand NIC."""
    if n_gpus <= GPN:
        return dict(bandwidth=C.NVLINK4_BANDWIDTH, alpha_s=C.NVLINK_ALPHA_S)
    return dict(bandwidth=C.IB_NDR400_BANDWIDTH, alpha_s=C.IB_ALPHA_S)


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
# Latency share of the largest AllReduce: the ring with an empty message is pure alpha.
LATENCY_SHARE512 = collectives.ring_allreduce_time(0.0, N_LARGE, C.IB_ALPHA_S, C.IB_NDR400_BANDWIDTH) / COMM512
INT8_MFU512 = ref.effective_mfu(ACT1["mfu"], COMPUTE512, collectives.ring_allreduce_time(
    ACT1["params"] * INT8_BYTES, N_LARGE, C.IB_ALPHA_S, C.IB_NDR400_BANDWIDTH))
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
TP_IB_S = tp_comm_s_per_step(ACT2_LAYOUTS[0], C.IB_NDR400_BANDWIDTH, C.IB_ALPHA_S)
ACT2_COMPUTE_S = collectives.compute_time(
    collectives.training_step_flops(ACT2["params"], ACT2["global_batch"] * SEQ_LEN), ACT2["n_gpus"],
    C.H100_PEAK_FLOPS_BF16, ACT1["mfu"])
NVLINK_OVER_IB = C.NVLINK4_BANDWIDTH / C.IB_NDR400_BANDWIDTH
CROSS_LAYOUT = ACT2_LAYOUTS[0]                 # the option whose TP spans nodes
CROSS_NODES = CROSS_LAYOUT["tp"] // GPN


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def gb(x: float) -> str:
    return f"{x / 1e9:.1f} GB"


# --- questions -------------------------------------------------------------------------------------

def key_by_claims(claims: list[tuple[spec.Option, bool]]) -> tuple[list[spec.Option], int]:
    """Options and the index of the one claim the reference numbers make true."""
    true = [i for i, (_, holds) in enumerate(claims) if holds]
    assert len(true) == 1, f"exactly one option must hold, got {true}"
    return [option for option, _ in claims], true[0]


O = spec.Option
_act1_texts, _act1_key = key_by_claims([
    (O("NCCL software overhead: the per-message latency of the ring's 2(N-1) steps grows with the cluster",
      f"Latency is only {pct(LATENCY_SHARE512)} of the {COMM512:.3f} s AllReduce at {N_LARGE} GPUs; the "
      "bytes on the wire, not the message count, set its time."),
     LATENCY_SHARE512 > 0.5),
    (O("Compute per GPU shrinks as 1/N; the gradient AllReduce does not, and past one node it leaves NVLink",
       f"Compute falls from {COMPUTE8:.2f} s to {COMPUTE512:.3f} s, while the ring still sends about "
       f"{RING_FACTOR_LIMIT}x the {GRAD_GB:.0f} GB gradient per GPU, over InfiniBand past {GPN} GPUs: "
       f"comm/compute rises from {COMM8 / COMPUTE8:.3f} to {COMM512 / COMPUTE512:.2f}."),
     COMPUTE512 < COMPUTE8 and COMM512 / COMPUTE512 > 10 * COMM8 / COMPUTE8),
    (O("Larger clusters put more L2-cache and HBM-bandwidth pressure on each GPU, so each computes slower",
       f"Each GPU's share of the batch shrinks from {ACT1['tokens_per_step'] / N_SMALL:,.0f} to "
       f"{ACT1['tokens_per_step'] / N_LARGE:,.0f} tokens; the MFU while computing stays {pct(ACT1['mfu'])}."),
     ACT1["tokens_per_step"] / N_LARGE > ACT1["tokens_per_step"] / N_SMALL),     # per-GPU work only shrinks
    (O("The global batch grows with the cluster until gradient quality degrades and more steps are needed to train",
       f"The scenario fixes the global batch at {ACT1['tokens_per_step']:,.0f} tokens, and MFU counts FLOP/s, "
       "not steps to convergence."),
     False),                                                           # the scenario fixes it
])
_act1_options, _act1_letter, _act1_why = spec.letters(_act1_texts, _act1_key, offset=0)

# Conceptual: bucketing is the only option that overlaps the AllReduce instead of resizing a term.
_refl1_texts = [
    O("Buy faster GPUs, so that the compute time, and with it the whole step, gets shorter",
      f"{FAST_GPU_PEAK_FACTOR}x the peak divides compute but not the AllReduce: MFU at {N_LARGE} GPUs drops "
      f"from {pct(MFU512)} to {pct(FAST_GPU_MFU512)}, and nothing overlaps."),
    O("Gradient bucketing: AllReduce the last layers' gradients while backward computes earlier layers",
      "Right: PyTorch DDP reduces each bucket as soon as its gradients are ready, so the transfer runs "
      "behind the rest of the backward pass."),
    O("Reduce the per-GPU batch, which shrinks the gradient tensor and so the AllReduce",
      "The gradient has one value per parameter whatever the batch; a smaller batch only shrinks compute."),
    O("Quantize gradients to INT8 for the AllReduce and dequantize them before the optimizer step",
      f"{INT8_BYTES} byte per value instead of {ACT1['bytes_per_grad']} shortens the AllReduce "
      f"({pct(INT8_MFU512)} MFU) but the step still waits for it: a smaller term, not an overlap."),
]
_refl1_options, _refl1_letter, _refl1_why = spec.letters(_refl1_texts, 1, offset=3)   # documented conceptual choice

ACT2_OFFSET = 3
_ACT2_BLURBS = [
    "tensor parallelism across {nodes} DGX nodes, to split every layer's weights and activations further",
    "tensor parallelism inside a node, {layers_per_stage} layers per pipeline stage, DP for throughput",
    "tensor parallelism inside a node, {layers_per_stage} layers per pipeline stage, DP for throughput",
    "no tensor parallelism at all: {layers_per_stage} layers per stage, no per-layer AllReduces",
]


def layout_why(lay: dict) -> str:
    """Why one Act II layout meets or misses the three limits, measured with the reference."""
    verdicts = [f"{gb(lay['memory'])} per GPU ({'fits' if lay['fits'] else 'out of memory'})",
                f"TP {'crosses' if lay['crosses'] else 'stays inside'} a node",
                f"bubble {pct(lay['bubble'])} with m={lay['m']}"
                + (" (over the ceiling)" if lay["bubble"] > ACT2["bubble_ceiling"] else "")]
    return ("Right: " if lay["feasible"] else "") + "; ".join(verdicts) + "."


_act2_texts = [O(f"TP={lay['tp']}, PP={lay['pp']}, DP={lay['dp']}: "
                 + blurb.format(layers_per_stage=ACT2["layers"] // lay["pp"], nodes=lay["tp"] // GPN), layout_why(lay))
               for lay, blurb in zip(ACT2_LAYOUTS, _ACT2_BLURBS)]
_act2_options, _act2_letter, _act2_why = spec.letters(_act2_texts, ACT2_KEY_INDEX, offset=ACT2_OFFSET)

# Conceptual: the per-layer TP AllReduce volume at InfiniBand bandwidth (numbers in the why).
_refl2_texts = [
    O("PyTorch's distributed primitives do not support tensor parallelism across the nodes of a cluster",
      "torch.distributed and NCCL run the same collectives over InfiniBand as over NVLink."),
    O("Its AllReduces run in every layer for every microbatch, and InfiniBand is far slower than NVLink",
      f"Right: {TP_ALLREDUCES_FWD + TP_ALLREDUCES_BWD} AllReduces per layer per microbatch cost {TP_NVLINK_S:.2f} s "
      f"per step on NVLink but {TP_IB_S:.1f} s at InfiniBand's {NVLINK_OVER_IB:.0f}x lower bandwidth, against "
      f"{ACT2_COMPUTE_S:.2f} s of compute."),
    O("Tensor parallelism needs GPU memory shared between the ranks, which separate nodes do not have",
      "TP ranks exchange messages (AllReduces of activations), not shared memory."),
    O("Cross-node tensor parallelism makes training numerically unstable through rounding across nodes",
      "The sums are the same whichever link carries them; the cost is time, not precision."),
]
assert TP_IB_S > ACT2_COMPUTE_S > TP_NVLINK_S   # the premise of the key: across nodes TP dominates the step
_refl2_options, _refl2_letter, _refl2_why = spec.letters(_refl2_texts, 1, offset=1)

QUESTIONS = [
    Question(
        id="act1_prediction", kind="prediction", points=1.0,
        prompt=("**Act I prediction.** The global batch is fixed at "
                f"{ACT1['tokens_per_step']:,.0f} tokens. Why does MFU fall from {pct(MFU8)} at {N_SMALL} GPUs "
                f"to {pct(MFU512)} at {N_LARGE} GPUs?"),
        options=_act1_options, key=_act1_letter, why=_act1_why,
        hint=(f"Split the step into its two parts. Compute per GPU is {FLOPS_PER_PARAM_TOKEN:g}*P*tokens/(N*peak*MFU): "
              f"{COMPUTE8:.2f} s at {N_SMALL} GPUs, {COMPUTE512:.3f} s at {N_LARGE}. The ring moves 2(N-1)/N of the "
              f"{GRAD_GB:.0f} GB gradient whatever N is: {COMM8:.3f} s on NVLink at {N_SMALL} GPUs, "
              f"{COMM512:.3f} s on InfiniBand at {N_LARGE}, of which latency is only "
              f"{pct(LATENCY_SHARE512)}. Which ratio changed?"),
    ),
    Question(
        id="act1_reflection", kind="reflection", points=1.0,
        prompt=("**Act I reflection.** What is the primary technique to *overlap* the gradient "
                "AllReduce with computation in data-parallel training?"),
        options=_refl1_options, key=_refl1_letter, why=_refl1_why,
        hint=(f"Ask of each option whether communication and compute run at the same time. "
              f"{FAST_GPU_PEAK_FACTOR}x the peak FLOP/s divides compute by {FAST_GPU_PEAK_FACTOR} but not the "
              f"AllReduce: MFU at {N_LARGE} GPUs would drop from "
              f"{pct(MFU512)} to {pct(FAST_GPU_MFU512)}. The gradient has one value per parameter, "
              f"whatever the batch. INT8 sends {INT8_BYTES} byte per value instead of {ACT1['bytes_per_grad']} "
              f"({pct(INT8_MFU512)} MFU) but still waits "
              f"for them. Only one option hides the transfer behind the backward pass."),
    ),
    Question(
        id="act2_prediction", kind="prediction", points=1.0,
        prompt=(f"**Act II prediction.** Which layout of GPT-3 {ACT2['params'] / 1e9:.0f}B on {ACT2['n_gpus']:,} H100s fits in "
                f"{gb(ACT2['capacity_bytes'])} per GPU, keeps tensor parallelism inside one "
                f"{GPN}-GPU DGX node and keeps the pipeline bubble at or below "
                f"{pct(ACT2['bubble_ceiling'])}? (Global batch {ACT2['global_batch']:,} sequences of "
                f"{SEQ_LEN:,} tokens, micro-batch {ACT2['micro_batch']}, 1F1B schedule, no ZeRO.)"),
        options=_act2_options, key=_act2_letter, why=_act2_why,
        hint=("Check each layout against all three limits. Without ZeRO the model states are "
              f"{C.ADAM_MIXED_PRECISION_BYTES_PER_PARAM} bytes per parameter of the TP x PP shard; with 1F1B the first stage holds the activations of "
              "pp microbatches of layers/pp layers, i.e. of all the layers, so only TP shrinks them. "
              "m = global batch / DP sets the bubble (p-1)/(m+p-1). The failing layouts fail "
              "for different reasons."),
    ),
    Question(
        id="act2_reflection", kind="reflection", points=1.0,
        prompt=f"**Act II reflection.** Why must tensor parallelism stay inside one DGX node (TP <= {GPN})?",
        options=_refl2_options, key=_refl2_letter, why=_refl2_why,
        hint=(f"Count the bytes. Each TP AllReduce carries one microbatch's fp16 activations "
              f"(s*b*h*{C.FP16_BYTES} bytes), {TP_ALLREDUCES_FWD + TP_ALLREDUCES_BWD} times per layer per microbatch. "
              f"In the feasible layout that costs {TP_NVLINK_S:.2f} s per step over NVLink; "
              f"TP={CROSS_LAYOUT['tp']} across {CROSS_NODES} nodes over InfiniBand would "
              f"cost {TP_IB_S:.1f} s, against {ACT2_COMPUTE_S:.2f} s of compute. NCCL runs over "
              f"InfiniBand as well as NVLink, and TP ranks exchange messages, not shared memory."),
    ),
]

# --- function items --------------------------------------------------------------------------------

_POWERS2 = st.sampled_from([1, 2, 4, 8, 16, 32, 64])


_wrap = partial(public_properties, PROPERTIES)


def _best_is_feasible(f, d):
    """Hidden: the student's chosen layout really satisfies the limits (checked with the reference)."""
    got = f(**d)
    if got == "none":
        return
    tp, pp, dp = parse_config(got)
    m = d["global_batch"] // (dp * d["micro_batch"])
    memory = ref.peak_memory_bytes_per_gpu(d["params"], d["layers"], d["seq_len"], d["micro_batch"],
                                           d["hidden"], d["heads"], tp, pp, dp, m, d["zero_stage"])
    assert memory <= d["capacity_bytes"], f"{got} needs {gb(memory)} per GPU, over {gb(d['capacity_bytes'])}"
    bubble = ref.pipeline_bubble_fraction(pp, m)
    assert bubble <= d["bubble_ceiling"], f"{got} has a bubble of {bubble:.4f} > {d['bubble_ceiling']:.4f}"


def _gpt_shape(layers: int, hidden: int) -> st.SearchStrategy:
    """A GPT-like model: 128-wide heads and about 12 * layers * hidden^2 parameters, so that
    realistic clusters have feasible layouts (random sizes are mostly "none")."""
    return st.fixed_dictionaries({
        "params": st.floats(0.8, 1.2).map(lambda k: k * 12 * layers * hidden ** 2),
        "layers": st.just(layers), "hidden": st.just(hidden), "heads": st.just(hidden // 128)})


_CONFIG_DOMAIN = st.tuples(
    st.sampled_from([24, 32, 40, 48, 64, 80, 96, 128]).flatmap(
        lambda layers: st.sampled_from([2048, 4096, 5120, 8192, 12288]).flatmap(
            lambda hidden: _gpt_shape(layers, hidden))),
    st.fixed_dictionaries({
        "seq_len": st.sampled_from([1024, 2048]),
        "global_batch": st.sampled_from([256, 512, 768, 1024, 1536, 2048]),
        "n_gpus": st.sampled_from([64, 128, 256, 512, 1024]), "gpus_per_node": st.sampled_from([4, 8]),
        "capacity_bytes": st.sampled_from([80e9, 96e9, 141e9]), "bubble_ceiling": st.floats(0.02, 0.3),
        "micro_batch": st.sampled_from([1, 2]), "zero_stage": st.integers(0, 3)}),
).map(lambda parts: {**parts[0], **parts[1]})

# Worked-example inputs (each formatted into its label)
ZERO_PAPER = dict(params=7.5e9, dp=64)         # Rajbhandari et al. 2020, Fig. 1
BUBBLE_EXAMPLES = [("Megatron-LM", dict(p=8, m=32)), ("Megatron-LM interleaved", dict(p=8, m=32, v=2)),
                   ("the lab's default", dict(p=4, m=8))]
ZERO_STAGE_EXAMPLE = 1
TIGHT_BUBBLE_CEILING = 0.01

_ACT2_SHAPE = {k: ACT2[k] for k in ("params", "layers", "seq_len", "micro_batch", "hidden", "heads", "zero_stage")}

FUNCTIONS = [
    FunctionItem(
        name="data_parallel_step_time", points=2.0,
        examples=[Example(f"Act I: {ACT1['params'] / 1e9:.0f}B, {n} GPUs on {'NVLink' if n <= GPN else 'InfiniBand NDR'}", act1_kwargs(n))
                  for n in ACT1_GPUS],
        domain=st.fixed_dictionaries({
            "params": st.floats(1e8, 1e12), "tokens_per_step": st.floats(1e4, 1e8),
            "n_gpus": st.integers(1, 4096), "peak_flops": st.floats(1e14, 2e15), "mfu": st.floats(0.05, 0.8),
            "bandwidth": st.floats(1e10, 1e12), "alpha_s": st.floats(0.0, 1e-5),
            "bytes_per_grad": st.sampled_from([1, 2, 4])}),
        properties=_wrap("data_parallel_step_time"),
    ),
    FunctionItem(
        name="effective_mfu", points=1.0,
        examples=[Example(f"Act I: {n} GPUs", dict(base_mfu=ACT1["mfu"], compute_s=cs, comm_s=ms))
                  for n, (cs, ms) in ((n, act1_times(n)) for n in ACT1_GPUS)],
        domain=st.fixed_dictionaries({"base_mfu": st.floats(0.05, 0.8), "compute_s": st.floats(1e-3, 100.0),
                                      "comm_s": st.floats(0.0, 100.0)}),
        properties=_wrap("effective_mfu"),
    ),
    FunctionItem(
        name="model_state_bytes_per_gpu", points=1.5,
        examples=[Example(f"ZeRO paper: {ZERO_PAPER['params'] / 1e9:g}B params, dp={ZERO_PAPER['dp']}, stage {s}",
                          dict(ZERO_PAPER, zero_stage=s))
                  for s in range(4)]
        + [Example(f"Act II: {lay['config']}, no ZeRO",
                   dict(params=ACT2["params"], dp=lay["dp"], zero_stage=0, tp=lay["tp"], pp=lay["pp"]))
           for lay in (LAB_LAYOUT, BEST_LAYOUT)],
        domain=st.fixed_dictionaries({"params": st.floats(1e8, 1e12), "dp": st.integers(1, 1024),
                                      "zero_stage": st.integers(0, 3), "tp": _POWERS2, "pp": st.integers(1, 96)}),
        properties=_wrap("model_state_bytes_per_gpu"),
    ),
    FunctionItem(
        name="activation_bytes_per_layer", points=1.0,
        examples=[Example(f"GPT-3 layer, s={SEQ_LEN}, b={ACT2['micro_batch']}, tp={t}",
                          dict(seq_len=SEQ_LEN, micro_batch=ACT2["micro_batch"], hidden=ACT2["hidden"], heads=ACT2["heads"], tp=t))
                  for t in (1, 8)],
        domain=st.fixed_dictionaries({"seq_len": st.sampled_from([512, 1024, 2048, 4096, 8192]),
                                      "micro_batch": st.integers(1, 16),
                                      "hidden": st.sampled_from([2048, 4096, 5120, 8192, 12288, 16384]),
                                      "heads": st.sampled_from([16, 32, 40, 64, 96, 128]), "tp": _POWERS2}),
        properties=_wrap("activation_bytes_per_layer"),
    ),
    FunctionItem(
        name="pipeline_bubble_fraction", points=1.0,
        examples=[Example(f"{label}: " + ", ".join(f"{k}={v}" for k, v in kw.items()), kw)
                  for label, kw in BUBBLE_EXAMPLES] + [
                  Example(f"Act II: p={BEST_LAYOUT['pp']}, m={BEST_LAYOUT['m']}",
                          dict(p=BEST_LAYOUT["pp"], m=BEST_LAYOUT["m"]))],
        domain=st.fixed_dictionaries({"p": st.integers(1, 128), "m": st.integers(1, 1024), "v": st.integers(1, 8)}),
        properties=_wrap("pipeline_bubble_fraction"),
    ),
    FunctionItem(
        name="tp_crosses_node", points=0.5,
        examples=[Example(f"TP={t} on {GPN}-GPU DGX nodes", dict(tp=t, gpus_per_node=GPN)) for t in (8, 16)],
        # Half the draws sit at the boundary, where >= and > differ.
        domain=st.integers(1, 32).flatmap(lambda gpn: st.fixed_dictionaries({
            "tp": st.sampled_from([gpn, gpn + 1]) | st.integers(1, 128), "gpus_per_node": st.just(gpn)})),
        properties=_wrap("tp_crosses_node"),
    ),
    FunctionItem(
        name="fits_in_memory", points=0.5,
        examples=[Example(f"Act II: {lay['config']} in {gb(ACT2['capacity_bytes'])}",
                          dict(bytes_needed=lay["memory"], capacity_bytes=ACT2["capacity_bytes"]))
                  for lay in (LAB_LAYOUT, BEST_LAYOUT)],
        # Sizes a few GB either side of realistic HBM capacities, and exactly full.
        domain=st.sampled_from([16e9, 40e9, 80e9, 141e9]).flatmap(lambda cap: st.fixed_dictionaries({
            "bytes_needed": st.just(cap) | st.floats(0.5 * cap, 1.5 * cap), "capacity_bytes": st.just(cap)})),
        properties=_wrap("fits_in_memory"),
    ),
    FunctionItem(
        name="peak_memory_bytes_per_gpu", points=2.0,
        examples=[Example(f"Act II: {lay['config']}, m={lay['m']}",
                          dict(_ACT2_SHAPE, tp=lay["tp"], pp=lay["pp"], dp=lay["dp"], microbatches=lay["m"]))
                  for lay in ACT2_LAYOUTS],
        domain=st.fixed_dictionaries({
            "params": st.floats(1e9, 1e12), "layers": st.sampled_from([24, 32, 40, 48, 80, 96, 128]),
            "seq_len": st.sampled_from([1024, 2048, 4096]), "micro_batch": st.integers(1, 8),
            "hidden": st.sampled_from([4096, 8192, 12288]), "heads": st.sampled_from([32, 64, 96]),
            "tp": st.sampled_from([1, 2, 4, 8]), "pp": st.sampled_from([1, 2, 3, 4, 8, 16, 32]),
            "dp": st.integers(1, 128), "microbatches": st.integers(1, 512), "zero_stage": st.integers(0, 3)}),
        properties=_wrap("peak_memory_bytes_per_gpu"),
    ),
    FunctionItem(
        name="best_3d_config", points=2.0,
        examples=[Example(f"Act II: GPT-3 {ACT2['params'] / 1e9:.0f}B on {ACT2['n_gpus']:,} H100s, no ZeRO", ACT2),
                  Example(f"Act II with ZeRO stage {ZERO_STAGE_EXAMPLE}", dict(ACT2, zero_stage=ZERO_STAGE_EXAMPLE)),
                  Example(f"Act II with a {TIGHT_BUBBLE_CEILING:.0%} bubble ceiling",
                          dict(ACT2, bubble_ceiling=TIGHT_BUBBLE_CEILING))],
        domain=_CONFIG_DOMAIN,
        properties=_wrap("best_3d_config") + [Property(
            name="the chosen layout fits and meets the bubble ceiling",
            meaning="Whatever layout you return must fit in memory and keep the bubble under the ceiling.",
            strategy=_CONFIG_DOMAIN, check=_best_is_feasible, public=False)],
    ),
]

# --- the notebook ---------------------------------------------------------------------------------

_STORY1 = f"""# Lab 05 — The Parallelism Paradox

## Act I — The data-parallel wall

> **Training Infrastructure Lead:** "We are training a {ACT1['params'] / 1e9:.0f}B-parameter model with pure data parallelism
> on H100s. Every step processes the same global batch: {ACT1['tokens_per_step']:,.0f} tokens
> ({ACT1_SEQUENCES:,} sequences of {SEQ_LEN:,} tokens). I measured MFU at {N_SMALL} GPUs = {pct(MFU8)}. At {N_MID} GPUs it
> dropped to {pct(MFU64)}. At {N_LARGE} GPUs it is {pct(MFU512)}. The model has not changed. We just added
> GPUs and it got worse, and we pay \\${USD_PER_GPU_HOUR:.2f} per GPU-hour for all of them. Why does MFU fall
> as we scale?"

A data-parallel step computes the forward and backward pass on each GPU's share of the batch
({FLOPS_PER_PARAM_TOKEN:g} x params x tokens FLOP in all, at {pct(ACT1['mfu'])} MFU of the dense
{C.H100_PEAK_FLOPS_BF16 / 1e12:.0f} TFLOP/s peak), then AllReduces the {GRAD_GB:.0f} GB fp16 gradient
with a ring. Inside a DGX node the ring runs on NVLink ({C.NVLINK4_BANDWIDTH / 1e9:.0f} GB/s per
direction); past {GPN} GPUs it runs on each GPU's InfiniBand NDR NIC
({C.IB_NDR400_BANDWIDTH / 1e9:.0f} GB/s). Nothing overlaps: MFU = base MFU x compute / (compute + comm).
Memory is not the wall in this act: plain data parallelism would need {ACT1_STATES_GB_NO_ZERO:.0f} GB of model
states per GPU, more than the {C.H100_HBM_CAPACITY_BYTES / 1e9:.0f} GB of an H100, so the optimizer states are
sharded with ZeRO stage {ACT1_ZERO_STAGE} ({ACT1_STATES_GB_ZERO:.1f} GB per GPU at {N_SMALL} GPUs), which leaves the
gradient AllReduce, and so every time below, unchanged.
"""

_INSTRUMENT1 = f"""# Instrument: effective MFU against the number of GPUs (your functions)
from _instruments import Instrument, Steps, Slider
params, tokens = {ACT1['params']!r}, {ACT1['tokens_per_step']!r}
peak, gpus_per_node = constants.H100_PEAK_FLOPS_BF16, constants.GPUS_PER_DGX_H100
gpus = {list(CURVE_GPUS)!r}

def link(n):
    # NVLink inside one node, InfiniBand NDR past the node boundary
    if n <= gpus_per_node:
        return constants.NVLINK4_BANDWIDTH, constants.NVLINK_ALPHA_S
    return constants.IB_NDR400_BANDWIDTH, constants.IB_ALPHA_S

def times(n, base_mfu={ACT1['mfu']!r}):
    bw, alpha = link(n)
    step = parallelism.data_parallel_step_time(params, tokens, n, peak, base_mfu, bw, alpha)
    # one GPU has no AllReduce, and compute splits evenly: compute(n) = step(1) / n
    compute = parallelism.data_parallel_step_time(params, tokens, 1, peak, base_mfu, bw, alpha) / n
    return compute, step - compute

def draw(fig, n_gpus, base_mfu):
    curve = [times(n, base_mfu) for n in gpus]
    mfus = [parallelism.effective_mfu(base_mfu, c, m) for c, m in curve]
    ax1, ax2 = fig.subplots(1, 2)
    ax1.plot(gpus, [100 * x for x in mfus], "o-", label="effective MFU")
    ax1.axhline(100 * {MFU_FLOOR!r}, ls="--", c="gray", label="{MFU_FLOOR:.0%} practical floor")
    ax1.axvline(gpus_per_node + 0.5, ls=":", c="red", label="node boundary: NVLink -> InfiniBand")
    ax1.axvline(n_gpus, c="black", alpha=0.4)
    ax1.set_xscale("log", base=2); ax1.set_xlabel("GPUs (fixed global batch)"); ax1.set_ylabel("MFU (%)")
    ax1.legend(fontsize=7); ax1.set_title("The data-parallel wall")
    ax2.plot(gpus, [c for c, _ in curve], "o-", label="compute per step")
    ax2.plot(gpus, [m for _, m in curve], "s-", label="gradient AllReduce")
    ax2.axvline(n_gpus, c="black", alpha=0.4)
    ax2.set_xscale("log", base=2); ax2.set_yscale("log"); ax2.set_xlabel("GPUs"); ax2.set_ylabel("seconds")
    ax2.legend(fontsize=7); ax2.set_title("Where the step goes")
    compute, comm = times(n_gpus, base_mfu)
    mfu = parallelism.effective_mfu(base_mfu, compute, comm)
    banner = "  BELOW THE PRACTICAL FLOOR" if mfu < {MFU_FLOOR!r} else ""
    return (f"{{n_gpus}} GPUs: compute {{compute:.3f}} s + AllReduce {{comm:.3f}} s per step, "
            f"effective MFU {{100 * mfu:.1f}}%{{banner}}")

Instrument(draw, figsize=(11, 4), n_gpus=Steps("GPUs", gpus, value={N_LARGE!r}),
           base_mfu=Slider("MFU while computing", 0.2, 0.8, value={ACT1['mfu']!r}, step=0.02)).show();
"""

_REALITY1 = f"""# Prediction vs reality (your functions)
print("Your prediction:", act1_prediction)
base_mfu = {ACT1['mfu']!r}
for n in {list(ACT1_GPUS)!r}:
    compute, comm = times(n)
    print(f"{{n:4d}} GPUs: compute {{compute:8.3f}} s, AllReduce {{comm:6.3f}} s, "
          f"comm/compute {{comm / compute:6.3f}}, MFU {{100 * parallelism.effective_mfu(base_mfu, compute, comm):5.1f}}%")
"""

_STORY2 = f"""## Act II — 3D parallelism design challenge

> **MLOps Architect:** "We need to train GPT-3 ({ACT2['params'] / 1e9:.0f}B parameters, {ACT2['layers']}
> layers, hidden {ACT2['hidden']:,}, {ACT2['heads']} heads) on {ACT2['n_gpus']:,} H100s in
> {ACT2['n_gpus'] // GPN} DGX nodes. Each H100 has {gb(C.H100_HBM_CAPACITY_BYTES)} of HBM3. Mixed-precision
> Adam needs {C.ADAM_MIXED_PRECISION_BYTES_PER_PARAM} bytes per parameter ({FULL_STATES_TB:.1f} TB of model states), and one layer's activations
> for a single {SEQ_LEN:,}-token sequence take {ACT_LAYER_T1_GB:.2f} GB. Design the TP x PP x DP layout
> that does not run out of memory, keeps tensor parallelism on NVLink and keeps the pipeline bubble at or
> below {pct(ACT2['bubble_ceiling'])}."

The global batch is {ACT2['global_batch']:,} sequences; each DP replica runs m = {ACT2['global_batch']:,} / DP
microbatches of {ACT2['micro_batch']} sequence through a 1F1B pipeline. **Out of memory is the failure
state:** a layout that needs more than {gb(ACT2['capacity_bytes'])} on its busiest GPU does not train at all.
"""

# letter -> (TP, PP, DP), laid out with the same rotation as the option texts
_OPTION_LAYOUTS, _ = spec.letters([(lay["tp"], lay["pp"], lay["dp"]) for lay in ACT2_LAYOUTS], ACT2_KEY_INDEX, offset=ACT2_OFFSET)

_MODEL_SHAPE = ", ".join(f"{k}={ACT2[k]!r}" for k in ("params", "layers", "seq_len", "micro_batch", "hidden", "heads"))

_SHAPE2 = ", ".join(f"{k}={ACT2[k]!r}" for k in ("params", "layers", "seq_len", "hidden", "heads", "zero_stage"))
_PP_STEPS = [p for p in (1, 2, 4, 8, 16, 32) if ACT2["layers"] % p == 0]
_M_STEPS = [m for m in range(1, ACT2["global_batch"] + 1) if ACT2["global_batch"] % m == 0]

_INSTRUMENT2 = f"""# Instrument: TP, PP and micro-batches of GPT-3 on {ACT2['n_gpus']:,} H100s (your functions)
from _instruments import Instrument, Steps
n_gpus, global_batch, gpus_per_node = {ACT2['n_gpus']!r}, {ACT2['global_batch']!r}, {ACT2['gpus_per_node']!r}
capacity, ceiling = constants.H100_HBM_CAPACITY_BYTES, {ACT2['bubble_ceiling']!r}

def measure(tp, pp, m):
    \"\"\"The layout with DP = GPUs / (TP x PP), each replica's share of the batch cut into m micro-batches.\"\"\"
    dp = n_gpus // tp // pp                 # the data-parallel replicas
    micro_batch = global_batch // dp // m   # sequences per micro-batch
    total = parallelism.peak_memory_bytes_per_gpu({_SHAPE2}, micro_batch=micro_batch,
                                                  tp=tp, pp=pp, dp=dp, microbatches=m)
    states = parallelism.model_state_bytes_per_gpu({ACT2['params']!r}, dp, {ACT2['zero_stage']!r}, tp, pp)
    return dict(dp=dp, micro_batch=micro_batch, total=total, states=states, activations=total - states,
                bubble=parallelism.pipeline_bubble_fraction(pp, m))

def draw(fig, tp, pp, m):
    if n_gpus % (tp * pp) or global_batch % (n_gpus // (tp * pp) * m):
        return (f"TP x PP = {{tp * pp}} and m = {{m}} do not split {{n_gpus}} GPUs and {{global_batch}} sequences "
                "into whole replicas and micro-batches: move a control")
    r = measure(tp, pp, m)
    ax1, ax2 = fig.subplots(1, 2)
    ax1.bar(["busiest GPU"], [r["states"] / 1e9], label="model states")
    ax1.bar(["busiest GPU"], [r["activations"] / 1e9], bottom=[r["states"] / 1e9], label="activations (1F1B)")
    ax1.axhline(capacity / 1e9, c="red", ls="--", label=f"{{capacity / 1e9:.0f}} GB HBM")
    ax1.set_ylabel("GB per GPU"); ax1.set_title("Memory"); ax1.legend(fontsize=7)
    ax2.bar(["bubble"], [100 * r["bubble"]], color="tab:orange")
    ax2.axhline(100 * ceiling, c="red", ls="--", label="bubble ceiling")
    ax2.set_ylabel("% of step"); ax2.set_title("Pipeline bubble"); ax2.legend(fontsize=7)
    lines = [f"TP={{tp}} PP={{pp}} DP={{r['dp']}}, m={{m}} micro-batches of {{r['micro_batch']}} sequence(s)",
             f"memory {{r['total'] / 1e9:.1f}} GB (states {{r['states'] / 1e9:.1f}} + activations {{r['activations'] / 1e9:.1f}})",
             f"bubble {{100 * r['bubble']:.2f}}% (ceiling {{100 * ceiling:.0f}}%)"]
    if not parallelism.fits_in_memory(r["total"], capacity):
        lines.insert(0, "OUT OF MEMORY: this layout cannot train.")
    if parallelism.tp_crosses_node(tp, gpus_per_node):
        lines.append(f"WARNING: TP={{tp}} crosses the {{gpus_per_node}}-GPU node: its AllReduces leave NVLink.")
    return "\\n".join(lines)

Instrument(draw, figsize=(8, 3.5), tp=Steps("TP", {[2 ** k for k in range(7)]!r}, value={BEST_TP!r}),
           pp=Steps("PP", {_PP_STEPS!r}, value={BEST_PP!r}),
           m=Steps("micro-batches m", {_M_STEPS!r}, value={BEST_M!r})).show();
"""

# letter -> (TP, PP, DP), laid out with the same rotation as the option texts
_OPTION_LAYOUTS, _ = spec.letters([(lay["tp"], lay["pp"], lay["dp"]) for lay in ACT2_LAYOUTS], ACT2_KEY_INDEX, offset=ACT2_OFFSET)
_SCENARIO_ARGS = ", ".join(f"{k}={v!r}" for k, v in ACT2.items() if k != "capacity_bytes")

_REALITY2 = f"""# Prediction vs reality (your functions)
options = {_OPTION_LAYOUTS!r}   # letter -> (TP, PP, DP)
if act2_prediction not in options:
    raise ValueError(f"act2_prediction must be one of {{list(options)}}, got {{act2_prediction!r}}")
for letter, (tp, pp, dp) in options.items():
    m = global_batch // ({ACT2['micro_batch']!r} * dp)
    r = measure(tp, pp, m)
    print(f"{{letter}}{{' (yours)' if letter == act2_prediction else ''}}: TP={{tp}} PP={{pp}} DP={{dp}}, m={{m}}: "
          f"memory {{r['total'] / 1e9:.1f}} GB, fits: {{parallelism.fits_in_memory(r['total'], capacity)}}, "
          f"TP crosses a node: {{parallelism.tp_crosses_node(tp, gpus_per_node)}}, bubble {{100 * r['bubble']:.2f}}%")
print("Your best_3d_config says:", parallelism.best_3d_config({_SCENARIO_ARGS}, capacity_bytes=capacity))
"""

_TAKEAWAY1 = f"""**Takeaway.** Adding GPUs divides the compute of a fixed batch but not the gradient AllReduce, which
past one node also runs on InfiniBand: at {N_LARGE} GPUs the step spends {pct(collectives.comm_fraction(COMM512, COMPUTE512))}
of its time communicating. At \\${USD_PER_GPU_HOUR:.2f} per GPU-hour that is \\${IDLE_USD_PER_DAY:,.0f} a day of GPUs
waiting on the network. Overlap (bucketing) hides it; a larger batch per GPU shrinks its share.

<details><summary>Math peek: the data-parallel step</summary>

compute = {FLOPS_PER_PARAM_TOKEN:g} · P · T / (N · peak · MFU), ring AllReduce = 2(N−1)·α + 2(N−1)/N · P·b / B,
effective MFU = MFU · compute / (compute + AllReduce). Compute falls as 1/N; the AllReduce tends to 2·P·b/B.
</details>
"""

_TAKEAWAY2 = f"""**Takeaway.** Three limits pick the layout: tensor parallelism shrinks every layer's states and
activations but must stay on NVLink (TP ≤ {GPN}); pipeline stages shrink the states but not the first
stage's 1F1B activations, and each stage adds to the bubble; data parallelism takes the remaining GPUs
and sets how many micro-batches hide the bubble.

<details><summary>Math peek: memory and bubble</summary>

model states per GPU = {C.ADAM_MIXED_PRECISION_BYTES_PER_PARAM} · P / (TP · PP) without ZeRO; the first 1F1B stage holds PP micro-batches of
L/PP layers of activations; bubble = (p − 1) / (m + p − 1) with m = global batch / (DP · micro-batch).
</details>
"""

NOTEBOOK = [
    Markdown(_STORY1),
    Answer("act1_prediction"),
    Code(_INSTRUMENT1, requires=("act1_prediction",), hidden=True),
    Code(_REALITY1, requires=("act1_prediction",)),
    Answer("act1_reflection"),
    Markdown(_TAKEAWAY1),
    Markdown(_STORY2),
    Answer("act2_prediction"),
    Code(_INSTRUMENT2, requires=("act2_prediction",), hidden=True),
    Code(_REALITY2, requires=("act2_prediction",)),
    Answer("act2_reflection"),
    Markdown(_TAKEAWAY2),
    Markdown("## Your functions' grades"),
    FunctionGrades(),
]

from labs.lab05_parallelism.challenges import CHALLENGES  # noqa: E402 (it reads the scenario above)

ASSIGNMENT = Assignment(
    id="lab05_parallelism",
    title="Lab 05 — The Parallelism Paradox: the data-parallel wall, 3D parallelism, the pipeline bubble",
    module="parallelism",
    reference=ref,
    functions=FUNCTIONS,
    questions=QUESTIONS,
    notebook=NOTEBOOK,
    source_lab=("Vol II Lab 05, The Parallelism Paradox: "
                "the Lab 05 Marimo notebook in labs/vol2/ of https://github.com/harvard-edge/cs249r_book"),
    misconceptions=MISCONCEPTIONS,
    challenges=CHALLENGES,
)
