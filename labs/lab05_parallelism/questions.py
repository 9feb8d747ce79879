"""Lab 05 questions: options (each with why it is right or wrong) formatted from scenario values and
computed keys; each question's prompt and hint are in questions.md beside this file. Offsets are
chosen so the keys differ."""
from __future__ import annotations

from functools import partial

from labs.authoring import Option, fmt, fmt_bytes, letters, questions, render
from labs.lab05_parallelism import scenario
from labs.lab05_parallelism.measurements import (MEGATRON_BASE_MFU, MEGATRON_GPUS, MEGATRON_SEQUENCES, REPLICA_GPUS,
                                                 STRONG_SCALING)
from labs.lab05_parallelism.scenario import (
    ACT1, ACT2, ACT2_COMPUTE_S, ACT2_KEY_INDEX, CROSS_LAYOUT, CROSS_NODES, ACT2_LAYOUTS, COMM512, COMM8, COMPUTE512, COMPUTE8, FAST_GPU_MFU512,
    FAST_GPU_PEAK_FACTOR, GPN, GRAD_GB, INT8_BYTES, INT8_MFU512, LATENCY_SHARE512, MFU512, NVLINK_OVER_IB, N_LARGE,
    N_SMALL, RING_FACTOR_LIMIT, TP_ALLREDUCES_BWD, TP_ALLREDUCES_FWD, TP_IB_CALL_S, TP_IB_LINK,
    TP_IB_S, TP_NVLINK_CALL_S, TP_NVLINK_S)
from reference import parallelism as ref

pct = partial(fmt, spec=".1%")


def key_by_claims(claims: list[tuple[Option, bool]]) -> tuple[list[Option], int]:
    """Options and the index of the one claim the reference numbers make true."""
    true = [i for i, (_, holds) in enumerate(claims) if holds]
    assert len(true) == 1, f"exactly one option must hold, got {true}"
    return [option for option, _ in claims], true[0]


_act1_texts, _act1_key = key_by_claims([
    (Option("NCCL software overhead: the per-message latency of the ring's 2(N-1) steps grows with the cluster",
      f"Latency is only {pct(LATENCY_SHARE512)} of the {COMM512:.3f} s AllReduce at {N_LARGE} GPUs; the "
      "bytes on the wire, not the message count, set its time."),
     LATENCY_SHARE512 > 0.5),
    (Option("Compute per GPU shrinks as 1/N; the gradient AllReduce does not, and past one node it leaves NVLink",
       f"Compute falls from {COMPUTE8:.2f} s to {COMPUTE512:.3f} s, while the ring still sends about "
       f"{RING_FACTOR_LIMIT}x the {GRAD_GB:.0f} GB gradient per GPU, over the nodes' NICs past {GPN} GPUs: "
       f"comm/compute rises from {COMM8 / COMPUTE8:.3f} to {COMM512 / COMPUTE512:.2f}."),
     COMPUTE512 < COMPUTE8 and COMM512 / COMPUTE512 > 10 * COMM8 / COMPUTE8),
    (Option("Larger clusters put more L2-cache and HBM-bandwidth pressure on each GPU, so each computes slower",
       f"Each GPU's share of the batch shrinks from {ACT1['tokens_per_step'] / N_SMALL:,.0f} to "
       f"{ACT1['tokens_per_step'] / N_LARGE:,.0f} tokens; the MFU while computing stays {pct(ACT1['mfu'])}."),
     ACT1["tokens_per_step"] / N_LARGE > ACT1["tokens_per_step"] / N_SMALL),     # per-GPU work only shrinks
    (Option("The global batch grows with the cluster until gradient quality degrades and more steps are needed to train",
       f"The scenario fixes the global batch at {ACT1['tokens_per_step']:,.0f} tokens, and MFU counts FLOP/s, "
       "not steps to convergence."),
     False),                                                           # the scenario fixes it
])
_act1 = letters(_act1_texts, _act1_key, offset=0)

# Conceptual: bucketing is the only option that overlaps the AllReduce instead of resizing a term.
_refl1_texts = [
    Option("Buy faster GPUs, so that the compute time, and with it the whole step, gets shorter",
      f"{FAST_GPU_PEAK_FACTOR}x the peak divides compute but not the AllReduce: MFU at {N_LARGE} GPUs drops "
      f"from {pct(MFU512)} to {pct(FAST_GPU_MFU512)}, and nothing overlaps."),
    Option("Gradient bucketing: AllReduce the last layers' gradients while backward computes earlier layers",
      "Right: PyTorch DDP reduces each bucket as soon as its gradients are ready, so the transfer runs "
      "behind the rest of the backward pass."),
    Option("Reduce the per-GPU batch, which shrinks the gradient tensor and so the AllReduce",
      "The gradient has one value per parameter whatever the batch; a smaller batch only shrinks compute."),
    Option("Quantize gradients to INT8 for the AllReduce and dequantize them before the optimizer step",
      f"{INT8_BYTES} byte per value instead of {ACT1['bytes_per_grad']} shortens the AllReduce "
      f"({pct(INT8_MFU512)} MFU) but the step still waits for it: a smaller term, not an overlap."),
]
_act1_refl = letters(_refl1_texts, 1, offset=3)   # documented conceptual choice

ACT2_OFFSET = 3
_ACT2_BLURBS = [
    "tensor parallelism across {{ nodes }} DGX nodes, to split every layer's weights and activations further",
    "tensor parallelism inside a node, {{ layers_per_stage }} layers per pipeline stage, DP for throughput",
    "tensor parallelism inside a node, {{ layers_per_stage }} layers per pipeline stage, DP for throughput",
    "no tensor parallelism at all: {{ layers_per_stage }} layers per stage, no per-layer AllReduces",
]


def layout_why(lay: dict) -> str:
    """Why one Act II layout meets or misses the three limits, measured with the reference."""
    verdicts = [f"{fmt_bytes(lay['memory'])} per GPU ({'fits' if lay['fits'] else 'out of memory'})",
                f"TP {'crosses' if lay['crosses'] else 'stays inside'} a node",
                f"bubble {pct(lay['bubble'])} with m={lay['m']}"
                + (" (over the ceiling)" if lay["bubble"] > ACT2["bubble_ceiling"] else "")]
    return ("Right: " if lay["feasible"] else "") + "; ".join(verdicts) + "."


_act2_texts = [Option(f"TP={lay['tp']}, PP={lay['pp']}, DP={lay['dp']}: "
                 + render(blurb, layers_per_stage=ACT2["layers"] // lay["pp"], nodes=lay["tp"] // GPN), layout_why(lay))
               for lay, blurb in zip(ACT2_LAYOUTS, _ACT2_BLURBS)]
_act2 = letters(_act2_texts, ACT2_KEY_INDEX, offset=ACT2_OFFSET)

# Conceptual: the per-layer TP AllReduces, on the critical path, leave NVLink for the nodes' NICs (numbers in the why).
_refl2_texts = [
    Option("PyTorch's distributed primitives do not support tensor parallelism across the nodes of a cluster",
      "torch.distributed and NCCL run the same collectives over InfiniBand as over NVLink."),
    Option("Its AllReduces run in every layer for every microbatch, and InfiniBand is far slower than NVLink",
      f"Right: {TP_ALLREDUCES_FWD + TP_ALLREDUCES_BWD} AllReduces per layer per microbatch, each on the critical "
      f"path, cost {TP_NVLINK_S:.2f} s per step inside a node. Across {CROSS_NODES} nodes each leaves NVLink: a NIC "
      f"carries {NVLINK_OVER_IB:.0f}x less than a GPU's NVLink, and only because the ring runs over all the nodes' "
      f"NICs at once ({TP_IB_LINK['bandwidth'] / 1e9:.0f} GB/s a rank) does one take {TP_IB_CALL_S * 1e3:.3f} ms "
      f"instead of {TP_NVLINK_CALL_S * 1e3:.3f} ms. With {ACT2['layers'] // CROSS_LAYOUT['pp']} layers a GPU at "
      f"TP={CROSS_LAYOUT['tp']}, PP={CROSS_LAYOUT['pp']} that is {TP_IB_S:.2f} s, {TP_IB_S / ACT2_COMPUTE_S:.0%} of "
      f"the {ACT2_COMPUTE_S:.2f} s of compute, nothing overlapped."),
    Option("Tensor parallelism needs GPU memory shared between the ranks, which separate nodes do not have",
      "TP ranks exchange messages (AllReduces of activations), not shared memory."),
    Option("Cross-node tensor parallelism makes training numerically unstable through rounding across nodes",
      "The sums are the same whichever link carries them; the cost is time, not precision."),
]
# the premise of the key: across nodes each TP AllReduce is slower than on NVLink (like for like: one call),
# and the cross-node layout's AllReduces cost over a quarter of the compute, all on the critical path
assert TP_IB_CALL_S > TP_NVLINK_CALL_S and TP_IB_S > 0.25 * ACT2_COMPUTE_S
_act2_refl = letters(_refl2_texts, 1, offset=1)

# --- Model vs measurement (measurements.py): what the strong-scaling agreement does and does not show -----
MEGATRON_MODEL_MFU = STRONG_SCALING.reference_value()
MEGATRON_MFU = STRONG_SCALING.published
_stages = 6                                                       # the assumed TP 8 x PP 6 replica
_sequences = {n: MEGATRON_SEQUENCES // (n // REPLICA_GPUS) for n in (2 * REPLICA_GPUS, MEGATRON_GPUS)}
BUBBLE_96, BUBBLE_4608 = (ref.pipeline_bubble_fraction(_stages, m) for m in _sequences.values())
_measured = letters([
    Option("Not that its mechanism is right: Megatron hides the reduce while the bubble grows",
           f"Right: Megatron overlaps the data-parallel reduce, which the model does not; with {_sequences[MEGATRON_GPUS]} "
           f"sequences per replica a 6-stage pipeline idles {pct(BUBBLE_4608)} of the step against "
           f"{pct(BUBBLE_96)} at 96 GPUs. Two effects land on one number."),
    Option("That Megatron's overlapping of the data-parallel reduce does nothing at thousands of GPUs",
           "The agreement cannot tell: the model leaves overlap out and the bubble out, and the two errors can "
           "cancel."),
    Option("That an AllReduce can never be hidden behind compute, whatever the framework does",
           "Gradient bucketing hides a reduce behind the backward pass; Act I's reflection is about exactly that."),
    Option("That the model is exact: agreement within one percent proves every assumption it makes",
           f"{pct(MEGATRON_MODEL_MFU)} against {MEGATRON_MFU:.0%} agrees, but the layout is assumed and two "
           "mechanisms are missing: agreement is evidence, not proof."),
], 0, offset=2)   # conceptual: index 0; premises below
assert abs(MEGATRON_MODEL_MFU / MEGATRON_MFU - 1) < 0.05 and BUBBLE_4608 > 10 * BUBBLE_96

QUESTIONS = questions(__file__, vars(scenario) | vars(), {   # id: (kind, points, letters(...)) in order
    "act1_prediction": ("prediction", 1.0, _act1), "act1_reflection": ("reflection", 1.0, _act1_refl),
    "act2_prediction": ("prediction", 1.0, _act2), "act2_reflection": ("reflection", 1.0, _act2_refl),
    "measurement_reflection": ("reflection", 1.0, _measured)})
ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION, MEASUREMENT_REFLECTION = QUESTIONS
# the options the readouts echo (the student's own choice, never the key)
ACT1_OPTIONS = dict(ACT1_PREDICTION.options)
# letter -> (TP, PP, DP), laid out with the same rotation as the option texts
OPTION_LAYOUTS, _ = letters([(lay["tp"], lay["pp"], lay["dp"]) for lay in ACT2_LAYOUTS], ACT2_KEY_INDEX,
                            offset=ACT2_OFFSET)
LETTER_KEYED = {"OPTION_LAYOUTS": "act2_prediction"}   # each version keys it by the letters it shows (labs/variants.py)
