"""Lab 05 — the parallelism paradox: the data-parallel wall, 3D parallelism, the pipeline bubble.

Conventions (all functions): SI units — bytes, seconds, bytes/s (per direction), FLOP, FLOP/s.
Fractions are in [0, 1], never percent. Counts (GPUs, stages, microbatches) are positive ints.
Functions are pure: no printing, no globals. 1 GB = 1e9 bytes.
Models: data-parallel step = compute (6 * params * tokens, Kaplan et al. 2020) + a ring AllReduce
of the gradient (Thakur et al. 2005), nothing overlapped; model states of mixed-precision Adam,
16 bytes/param, sharded by ZeRO (Rajbhandari et al., SC'20); activations per layer after
Korthikanti et al. 2022; pipeline bubble of GPipe / 1F1B with v interleaved chunks
(Narayanan et al., SC'21).
"""
from __future__ import annotations

from ._domain import check_count, check_fraction, check_nonneg, check_positive
from .constants import ADAM_MIXED_PRECISION_BYTES_PER_PARAM, FP16_BYTES

__all__ = [
    "data_parallel_step_time", "effective_mfu", "model_state_bytes_per_gpu",
    "activation_bytes_per_layer", "pipeline_bubble_fraction", "tp_crosses_node",
    "fits_in_memory", "peak_memory_bytes_per_gpu", "best_3d_config",
]

ZERO_STAGES = (0, 1, 2, 3)


def _check_zero_stage(zero_stage) -> int:
    stage = check_count("zero_stage", zero_stage, minimum=0)
    if stage not in ZERO_STAGES:
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    return stage


def data_parallel_step_time(params: float, tokens_per_step: float, n_gpus: int, peak_flops: float,
                            mfu: float, bandwidth: float, alpha_s: float,
                            bytes_per_grad: float = 2) -> float:
    """Seconds for one data-parallel training step with a fixed global batch, no overlap.

    Formula: compute: 6 * params * tokens_per_step / (n_gpus * peak_flops * mfu)   (Kaplan et al. 2020)
    comm:    2(n-1) * alpha_s + 2(n-1)/n * params * bytes_per_grad / bandwidth   (Thakur et al. 2005)
    Derive: the batch's training FLOP (6 per parameter per token) split over n_gpus GPUs at mfu of
    the dense peak, then a ring AllReduce of the whole gradient (one value of bytes_per_grad per
    parameter) over n_gpus ranks, after the compute (nothing overlaps). tokens_per_step is the
    global batch in tokens (not samples); peak_flops is the dense peak in FLOP/s (the source lab's
    sparse figure is twice too high); bandwidth in bytes/s per direction; alpha_s in s. One GPU has
    no AllReduce.
    """
    check_nonneg("params", params)
    check_nonneg("tokens_per_step", tokens_per_step)
    check_count("n_gpus", n_gpus)
    check_positive("peak_flops", peak_flops)
    check_fraction("mfu", mfu, open_low=True)
    check_positive("bandwidth", bandwidth)
    check_nonneg("alpha_s", alpha_s)
    check_nonneg("bytes_per_grad", bytes_per_grad)
    ### BEGIN SOLUTION
    # Written out, not imported from collectives.py: a student's module has only _domain and
    # constants beside it. labs/lab05_parallelism/scenario.py checks it equals the collectives pieces.
    compute_s = 6 * params * tokens_per_step / (n_gpus * peak_flops * mfu)
    comm_s = 2 * (n_gpus - 1) * alpha_s + 2 * (n_gpus - 1) / n_gpus * params * bytes_per_grad / bandwidth
    return compute_s + comm_s
    ### END SOLUTION


def effective_mfu(base_mfu: float, compute_s: float, comm_s: float) -> float:
    """Model-FLOP utilisation of a step that also waits comm_s seconds for communication:
    base_mfu * compute_s / (compute_s + comm_s)   (no overlap; base_mfu is the MFU while computing).

    A definition: useful FLOP over the peak FLOP of the whole step. When comm_s == compute_s the MFU
    halves. compute_s and comm_s must not both be 0.
    """
    check_fraction("base_mfu", base_mfu)
    check_nonneg("compute_s", compute_s)
    check_nonneg("comm_s", comm_s)
    if compute_s + comm_s == 0:
        raise ValueError("compute_s and comm_s must not both be 0")
    ### BEGIN SOLUTION
    return base_mfu * compute_s / (compute_s + comm_s)
    ### END SOLUTION


def model_state_bytes_per_gpu(params: float, dp: int = 1, zero_stage: int = 0, tp: int = 1,
                              pp: int = 1) -> float:
    """Bytes of model states (weights, gradients, Adam states) per GPU, mixed precision.

    Formula: with psi = params / (tp * pp): stage 0: 16 psi;  1: 4 psi + 12 psi/dp;  2: 2 psi + 14 psi/dp;
    3: 16 psi/dp  (Rajbhandari et al., ZeRO, SC'20, sec. 5).
    Derive: tensor and pipeline parallelism give each GPU its tp x pp shard of the parameters. Per
    parameter mixed-precision Adam keeps fp16 weights (2 bytes), fp16 gradients (2) and fp32 master
    weights, momentum and variance (12). ZeRO stage 1 shards the optimizer states across the dp
    replicas, stage 2 the gradients too, stage 3 the weights too. Check: 7.5e9 params, dp = 64,
    tp = pp = 1 give 120 / 31.4 / 16.6 / 1.9 GB for stages 0-3.
    """
    check_nonneg("params", params)
    check_count("dp", dp)
    _check_zero_stage(zero_stage)
    check_count("tp", tp)
    check_count("pp", pp)
    ### BEGIN SOLUTION
    psi = params / (tp * pp)
    total = ADAM_MIXED_PRECISION_BYTES_PER_PARAM          # 16 bytes/param
    # Bytes/param kept whole on every DP rank at each stage; the rest is split over dp.
    # Stage 1 shards the 12 optimizer bytes, 2 also the fp16 gradients, 3 also the fp16 weights.
    replicated = {0: total, 1: 2 * FP16_BYTES, 2: FP16_BYTES, 3: 0}[zero_stage]
    return psi * replicated + psi * (total - replicated) / dp
    ### END SOLUTION


def activation_bytes_per_layer(seq_len: int, micro_batch: int, hidden: int, heads: int,
                               tp: int = 1) -> float:
    """Bytes of activations one transformer layer stores for the backward pass, per microbatch,
    16-bit, tensor parallel over tp GPUs, no sequence parallelism, no recomputation:

    s * b * h * (10 + 24/tp + 5 * a * s / (h * tp))   (Korthikanti et al. 2022, eq. 2 and sec. 4.1;
    s = seq_len, b = micro_batch, h = hidden, a = heads; s = 2048, b = 1, h = 12288, a = 96, tp = 1
    gives 2.869e9 bytes). A published count of every tensor a layer keeps: the one formula given.
    """
    check_count("seq_len", seq_len)
    check_count("micro_batch", micro_batch)
    check_count("hidden", hidden)
    check_count("heads", heads)
    check_count("tp", tp)
    ### BEGIN SOLUTION
    s, b, h, a, t = seq_len, micro_batch, hidden, heads, tp
    # 10 sbh is replicated on every TP rank (layer-norm and dropout inputs); 24 sbh and the
    # attention scores 5 a s^2 b are split over the tp ranks.
    return s * b * h * (10 + 24 / t + 5 * a * s / (h * t))
    ### END SOLUTION


def pipeline_bubble_fraction(p: int, m: int, v: int = 1) -> float:
    """Share of a pipeline step the GPUs sit idle (GPipe and 1F1B alike), p stages, m microbatches
    per step, v interleaved model chunks per GPU.

    Formula: (p - 1) / (v * m + p - 1)   (Narayanan et al., SC'21, sec. 2.2).
    Derive: draw the schedule: the first microbatch needs p-1 stage-times to reach the last stage,
    and the last one leaves the first stage p-1 stage-times before the end, while the useful work
    is m microbatches per stage; v chunks per GPU make each stage-time v times shorter. This is the
    share of the step; the paper's bubble-over-ideal ratio is a different number (check: p = 8,
    m = 32: 0.17949 of the step, 0.21875 of the ideal). Zero for p = 1.
    """
    check_count("p", p)
    check_count("m", m)
    check_count("v", v)
    ### BEGIN SOLUTION
    return (p - 1) / (v * m + p - 1)
    ### END SOLUTION


def tp_crosses_node(tp: int, gpus_per_node: int) -> bool:
    """True when a tensor-parallel group of tp GPUs cannot fit inside one node (more GPUs than
    gpus_per_node), so its per-layer AllReduces leave NVLink for InfiniBand.
    """
    check_count("tp", tp)
    check_count("gpus_per_node", gpus_per_node)
    ### BEGIN SOLUTION
    return tp > gpus_per_node
    ### END SOLUTION


def fits_in_memory(bytes_needed: float, capacity_bytes: float) -> bool:
    """True when bytes_needed fits in capacity_bytes (exactly full still fits); False is out of memory.
    """
    check_nonneg("bytes_needed", bytes_needed)
    check_nonneg("capacity_bytes", capacity_bytes)
    ### BEGIN SOLUTION
    return bytes_needed <= capacity_bytes
    ### END SOLUTION


def peak_memory_bytes_per_gpu(params: float, layers: int, seq_len: int, micro_batch: int, hidden: int,
                              heads: int, tp: int = 1, pp: int = 1, dp: int = 1, microbatches: int = 1,
                              zero_stage: int = 0) -> float:
    """Peak bytes on the busiest GPU (the first pipeline stage) of a TP x PP x DP layout, 1F1B.

    Formula: model_state_bytes_per_gpu(params, dp, zero_stage, tp, pp)
      + activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, tp) * ceil(layers / pp) * min(microbatches, pp)
    Derive: the model states of the GPU's shard, plus the activations it keeps: with 1F1B the first
    stage holds up to pp microbatches in flight (fewer if there are fewer microbatches), each for
    every layer of its stage, and a stage has the layers split pp ways, rounded up (Korthikanti et
    al. 2022, sec. 4.2.3; Narayanan et al. 2021, sec. 2.2). The source lab's keyed layout ignored
    the activations and is out of memory.
    """
    check_nonneg("params", params)
    check_count("layers", layers)
    check_count("microbatches", microbatches)
    for name, value in (("seq_len", seq_len), ("micro_batch", micro_batch), ("hidden", hidden),
                        ("heads", heads), ("tp", tp), ("pp", pp), ("dp", dp)):
        check_count(name, value)
    _check_zero_stage(zero_stage)
    ### BEGIN SOLUTION
    states = model_state_bytes_per_gpu(params, dp, zero_stage, tp, pp)
    per_layer = activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, tp)
    layers_per_stage = -(-layers // pp)          # ceil for ints, exact
    in_flight = min(microbatches, pp)
    return states + per_layer * layers_per_stage * in_flight
    ### END SOLUTION


def best_3d_config(params: float, layers: int, seq_len: int, hidden: int, heads: int,
                   global_batch: int, n_gpus: int, gpus_per_node: int, capacity_bytes: float,
                   bubble_ceiling: float, micro_batch: int = 1, zero_stage: int = 0) -> str:
    """The best TP x PP x DP layout of n_gpus GPUs, as "TP=<tp> PP=<pp> DP=<dp>", or "none".

    Derive: candidates are the tp, pp and dp that multiply to n_gpus, with tp dividing heads, pp
    dividing layers, and the global batch (in sequences) splitting into a whole number m of
    microbatches of micro_batch per DP replica. Feasible: TP stays inside a node (not
    tp_crosses_node), the peak memory (peak_memory_bytes_per_gpu with m microbatches) fits in
    capacity_bytes, and pipeline_bubble_fraction(pp, m) is at most bubble_ceiling. Best: the
    smallest bubble; equal bubbles (compared exactly) go to the smaller tp, then the smaller pp
    (less model-parallel traffic).
    """
    check_nonneg("params", params)
    for name, value in (("layers", layers), ("seq_len", seq_len), ("hidden", hidden),
                        ("heads", heads), ("global_batch", global_batch), ("n_gpus", n_gpus),
                        ("gpus_per_node", gpus_per_node), ("micro_batch", micro_batch)):
        check_count(name, value)
    check_nonneg("capacity_bytes", capacity_bytes)
    check_fraction("bubble_ceiling", bubble_ceiling)
    _check_zero_stage(zero_stage)
    ### BEGIN SOLUTION
    best = None
    for tp in range(1, n_gpus + 1):
        if n_gpus % tp or heads % tp or tp_crosses_node(tp, gpus_per_node):
            continue
        for pp in range(1, n_gpus // tp + 1):
            if (n_gpus // tp) % pp or layers % pp:
                continue
            dp = n_gpus // (tp * pp)
            if global_batch % (dp * micro_batch):
                continue
            m = global_batch // (dp * micro_batch)
            bubble = pipeline_bubble_fraction(pp, m)
            memory = peak_memory_bytes_per_gpu(params, layers, seq_len, micro_batch, hidden, heads,
                                               tp, pp, dp, m, zero_stage)
            if bubble > bubble_ceiling or not fits_in_memory(memory, capacity_bytes):
                continue
            # (p-1)/(m+p-1) of ints is correctly rounded, so equal bubbles compare equal.
            rank = (bubble, tp, pp)
            if best is None or rank < best[0]:
                best = (rank, f"TP={tp} PP={pp} DP={dp}")
    return "none" if best is None else best[1]
    ### END SOLUTION
