"""Lab 05 questions: prompts, options (each with why it is right or wrong) and hints formatted from
scenario values; keys computed. Offsets are chosen so the keys differ."""
from __future__ import annotations

from functools import partial

from autograder.engine import spec
from autograder.engine.spec import Question
from labs.authoring import fmt, fmt_bytes as gb, render
from labs.lab05_parallelism.scenario import (
    ACT1, ACT2, ACT2_COMPUTE_S, ACT2_KEY_INDEX, ACT2_LAYOUTS, COMM512, COMM8, COMPUTE512, COMPUTE8,
    CROSS_LAYOUT, CROSS_NODES, FAST_GPU_MFU512, FAST_GPU_PEAK_FACTOR, FLOPS_PER_PARAM_TOKEN, GPN,
    GRAD_GB, INT8_BYTES, INT8_MFU512, LATENCY_SHARE512, MFU512, MFU8, NVLINK_OVER_IB, N_LARGE,
    N_SMALL, RING_FACTOR_LIMIT, SEQ_LEN, TP_ALLREDUCES_BWD, TP_ALLREDUCES_FWD, TP_IB_S, TP_NVLINK_S)
from reference import constants as C

pct = partial(fmt, spec=".1%")


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
    "tensor parallelism across {{ nodes }} DGX nodes, to split every layer's weights and activations further",
    "tensor parallelism inside a node, {{ layers_per_stage }} layers per pipeline stage, DP for throughput",
    "tensor parallelism inside a node, {{ layers_per_stage }} layers per pipeline stage, DP for throughput",
    "no tensor parallelism at all: {{ layers_per_stage }} layers per stage, no per-layer AllReduces",
]


def layout_why(lay: dict) -> str:
    """Why one Act II layout meets or misses the three limits, measured with the reference."""
    verdicts = [f"{gb(lay['memory'])} per GPU ({'fits' if lay['fits'] else 'out of memory'})",
                f"TP {'crosses' if lay['crosses'] else 'stays inside'} a node",
                f"bubble {pct(lay['bubble'])} with m={lay['m']}"
                + (" (over the ceiling)" if lay["bubble"] > ACT2["bubble_ceiling"] else "")]
    return ("Right: " if lay["feasible"] else "") + "; ".join(verdicts) + "."


_act2_texts = [O(f"TP={lay['tp']}, PP={lay['pp']}, DP={lay['dp']}: "
                 + render(blurb, layers_per_stage=ACT2["layers"] // lay["pp"], nodes=lay["tp"] // GPN), layout_why(lay))
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

ACT1_OPTIONS = dict(_act1_options)
# letter -> (TP, PP, DP), laid out with the same rotation as the option texts
OPTION_LAYOUTS, _ = spec.letters([(lay["tp"], lay["pp"], lay["dp"]) for lay in ACT2_LAYOUTS], ACT2_KEY_INDEX,
                                 offset=ACT2_OFFSET)
