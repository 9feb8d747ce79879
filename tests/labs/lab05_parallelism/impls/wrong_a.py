"""Plausible wrong parallelism.py: mostly the source lab's own formulas (see docs/errata)."""


def data_parallel_step_time(params, tokens_per_step, n_gpus, peak_flops, mfu, bandwidth, alpha_s,
                            bytes_per_grad=2):
    # The lab: compute per GPU does not depend on N (its per-GPU batch is fixed).
    compute = 6 * params * tokens_per_step / (peak_flops * mfu)
    ring = 2 * (n_gpus - 1) * alpha_s + 2 * (n_gpus - 1) / n_gpus * params * bytes_per_grad / bandwidth
    return compute + ring


def effective_mfu(base_mfu, compute_s, comm_s):
    # Linearised: subtracts the comm/compute ratio instead of dividing by (1 + ratio).
    return base_mfu * (1 - comm_s / compute_s)


def model_state_bytes_per_gpu(params, dp=1, zero_stage=0, tp=1, pp=1):
    # The lab: 2 bytes of fp16 weights + "8 bytes" of optimizer states, no gradients, no ZeRO.
    return params / (tp * pp) * (2 + 8)


def activation_bytes_per_layer(seq_len, micro_batch, hidden, heads, tp=1):
    # The lab: activations replicated and multiplied by TP.
    return seq_len * micro_batch * hidden * (34 + 5 * heads * seq_len / hidden) * tp


def pipeline_bubble_fraction(p, m, v=1):
    # The lab: (PP-1)/(PP*m), and no interleaving.
    return (p - 1) / (p * m)


def tp_crosses_node(tp, gpus_per_node):
    # Off by one at the boundary: a full node "crosses".
    return tp >= gpus_per_node


def fits_in_memory(bytes_needed, capacity_bytes):
    # Strict: exactly full counts as out of memory.
    return bytes_needed < capacity_bytes


def peak_memory_bytes_per_gpu(params, layers, seq_len, micro_batch, hidden, heads, tp=1, pp=1, dp=1,
                              microbatches=1, zero_stage=0):
    # Keeps the activations of every microbatch of the step, not only the pp in flight (GPipe-style).
    states = model_state_bytes_per_gpu_ok(params, dp, zero_stage, tp, pp)
    act = seq_len * micro_batch * hidden * (10 + 24 / tp + 5 * heads * seq_len / (hidden * tp))
    return states + act * -(-layers // pp) * microbatches


def model_state_bytes_per_gpu_ok(params, dp, zero_stage, tp, pp):
    psi = params / (tp * pp)
    return {0: 16 * psi, 1: 4 * psi + 12 * psi / dp, 2: 2 * psi + 14 * psi / dp, 3: 16 * psi / dp}[zero_stage]


def best_3d_config(params, layers, seq_len, hidden, heads, global_batch, n_gpus, gpus_per_node,
                   capacity_bytes, bubble_ceiling, micro_batch=1, zero_stage=0):
    # Ignores memory: the smallest bubble with TP inside a node, whatever it needs.
    best = None
    for tp in range(1, gpus_per_node + 1):
        for pp in range(1, layers + 1):
            if n_gpus % (tp * pp) or layers % pp or heads % tp:
                continue
            dp = n_gpus // (tp * pp)
            if global_batch % (dp * micro_batch):
                continue
            m = global_batch // (dp * micro_batch)
            bubble = (pp - 1) / (m + pp - 1)
            if bubble <= bubble_ceiling and (best is None or (bubble, tp, pp) < best[:3]):
                best = (bubble, tp, pp, dp)
    return "none" if best is None else f"TP={best[1]} PP={best[2]} DP={best[3]}"
