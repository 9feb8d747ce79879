"""Plausible wrong parallelism.py: other common mistakes, each function wrong differently."""
import math


def data_parallel_step_time(params, tokens_per_step, n_gpus, peak_flops, mfu, bandwidth, alpha_s,
                            bytes_per_grad=2):
    # The lab's pure-bandwidth AllReduce: no per-message latency term.
    compute = 6 * params * tokens_per_step / (n_gpus * peak_flops * mfu)
    return compute + 2 * (n_gpus - 1) / n_gpus * params * bytes_per_grad / bandwidth


def effective_mfu(base_mfu, compute_s, comm_s):
    # Forgets the base MFU: the busy share of the step is not the MFU.
    return compute_s / (compute_s + comm_s)


def model_state_bytes_per_gpu(params, dp=1, zero_stage=0, tp=1, pp=1):
    # Stages off by one: stage 1 already shards the gradients, stage 2 the weights too.
    psi = params / (tp * pp)
    if zero_stage == 0:
        return 16 * psi
    if zero_stage == 1:
        return 2 * psi + 14 * psi / dp
    return 16 * psi / dp


def activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, tp=1):
    # Divides everything by tp (the sequence-parallel formula, without sequence parallelism).
    return seq_len * micro_batch * hidden * (34 + 5 * heads * seq_len / hidden) / tp


def pipeline_bubble_fraction(p, m, v=1):
    # Megatron's bubble relative to the ideal step, not the share of the whole step.
    return (p - 1) / (v * m)


def tp_crosses_node(tp, gpus_per_node):
    # The lab's constant: a DGX node has 8 GPUs, whatever gpus_per_node says.
    return tp > 8


def fits_in_memory(bytes_needed, capacity_bytes):
    # Mixes units: bytes against a capacity read as GB.
    return bytes_needed / 1e9 <= capacity_bytes


def peak_memory_bytes_per_gpu(params, layers, seq_len, micro_batch, hidden, heads, tp=1, pp=1, dp=1,
                              microbatches=1, zero_stage=0):
    # Forgets the microbatches in flight: one microbatch's activations for the stage's layers.
    psi = params / (tp * pp)
    states = {0: 16 * psi, 1: 4 * psi + 12 * psi / dp, 2: 2 * psi + 14 * psi / dp, 3: 16 * psi / dp}[zero_stage]
    act = seq_len * micro_batch * hidden * (10 + 24 / tp + 5 * heads * seq_len / (hidden * tp))
    return states + act * math.ceil(layers / pp)


def best_3d_config(params, layers, seq_len, hidden, heads, global_batch, n_gpus, gpus_per_node,
                   capacity_bytes, bubble_ceiling, micro_batch=1, zero_stage=0):
    # The rule of thumb: TP fills a node, then the fewest pipeline stages whose model states fit;
    # the activations, the bubble ceiling and the layer and head counts are never checked.
    tp = gpus_per_node
    for pp in range(1, n_gpus // tp + 1):
        if n_gpus % (tp * pp) == 0 and model_state_bytes_per_gpu(params, 1, zero_stage, tp, pp) <= capacity_bytes:
            return f"TP={tp} PP={pp} DP={n_gpus // (tp * pp)}"
    return "none"
