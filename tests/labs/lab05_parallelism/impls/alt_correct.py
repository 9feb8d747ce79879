"""A correct parallelism.py written differently from the reference (other algebra, numpy,
ints, Fractions), which must get full marks on every function item."""
from fractions import Fraction
import math

import numpy as np



def data_parallel_step_time(params, tokens_per_step, n_gpus, peak_flops, mfu, bandwidth, alpha_s,
                            bytes_per_grad=2):
    per_gpu_flops = 6.0 * params * (tokens_per_step / n_gpus)
    grad = params * bytes_per_grad
    ring = (n_gpus - 1) * (2.0 * alpha_s + 2.0 * grad / (n_gpus * bandwidth))
    return float(per_gpu_flops / (peak_flops * mfu) + ring)


def effective_mfu(base_mfu, compute_s, comm_s):
    return float(base_mfu / (1.0 + comm_s / compute_s)) if compute_s else 0.0


def model_state_bytes_per_gpu(params, dp=1, zero_stage=0, tp=1, pp=1):
    shard = params / tp / pp
    weights, grads, optim = 2 * shard, 2 * shard, 12 * shard
    if zero_stage >= 1:
        optim /= dp
    if zero_stage >= 2:
        grads /= dp
    if zero_stage >= 3:
        weights /= dp
    return weights + grads + optim


def activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, tp=1):
    sbh = seq_len * micro_batch * hidden
    replicated = 10 * sbh
    split = 24 * sbh + 5 * heads * seq_len * seq_len * micro_batch
    return float(replicated + split / tp)


def pipeline_bubble_fraction(p, m, v=1):
    idle_over_ideal = Fraction(p - 1, v * m)
    return float(idle_over_ideal / (1 + idle_over_ideal))


def tp_crosses_node(tp, gpus_per_node):
    return not tp <= gpus_per_node


def fits_in_memory(bytes_needed, capacity_bytes):
    return bool(np.float64(capacity_bytes) - np.float64(bytes_needed) >= 0)


def peak_memory_bytes_per_gpu(params, layers, seq_len, micro_batch, hidden, heads, tp=1, pp=1, dp=1,
                              microbatches=1, zero_stage=0):
    act = activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, tp)
    stored = math.ceil(layers / pp) * (pp if microbatches >= pp else microbatches)
    return model_state_bytes_per_gpu(params, dp, zero_stage, tp, pp) + act * stored


def best_3d_config(params, layers, seq_len, hidden, heads, global_batch, n_gpus, gpus_per_node,
                   capacity_bytes, bubble_ceiling, micro_batch=1, zero_stage=0):
    candidates = []
    for tp in range(1, gpus_per_node + 1):
        if n_gpus % tp or heads % tp:
            continue
        for pp in range(1, layers + 1):
            if layers % pp or n_gpus % (tp * pp):
                continue
            dp = n_gpus // (tp * pp)
            m, rest = divmod(global_batch, dp * micro_batch)
            if rest:
                continue
            bubble = Fraction(pp - 1, m + pp - 1)
            if bubble > Fraction(bubble_ceiling):
                continue
            need = peak_memory_bytes_per_gpu(params, layers, seq_len, micro_batch, hidden, heads,
                                             tp, pp, dp, m, zero_stage)
            if need > capacity_bytes:
                continue
            candidates.append((bubble, tp, pp, dp))
    if not candidates:
        return "none"
    _, tp, pp, dp = min(candidates)
    return f"TP={tp} PP={pp} DP={dp}"
