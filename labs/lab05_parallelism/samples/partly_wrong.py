"""partly_wrong: the source lab's own readings (docs/errata/lab05_parallelism.md): compute that does not
split over the GPUs, 10 bytes of model states per parameter, the bubble (p-1)/(p*m); domain checks kept.
peak_memory_bytes_per_gpu and best_3d_config inherit the wrong states and bubble."""

def data_parallel_step_time(params: float, tokens_per_step: float, n_gpus: int, peak_flops: float,
                            mfu: float, bandwidth: float, alpha_s: float,
                            bytes_per_grad: float = 2) -> float:
    """Seconds for one data-parallel training step with a fixed global batch, no overlap.

    compute: 6 * params * tokens_per_step / (n_gpus * peak_flops * mfu)   (Kaplan et al. 2020)
    comm:    ring AllReduce of params * bytes_per_grad bytes over n_gpus ranks:
             2(n-1) * alpha_s + 2(n-1)/n * params * bytes_per_grad / bandwidth   (Thakur et al. 2005)
    tokens_per_step is the global batch in tokens (not samples); peak_flops is the dense peak
    in FLOP/s; bandwidth in bytes/s per direction; alpha_s in s. One GPU has no AllReduce.
    """
    check_nonneg("params", params)
    check_nonneg("tokens_per_step", tokens_per_step)
    check_count("n_gpus", n_gpus)
    check_positive("peak_flops", peak_flops)
    check_fraction("mfu", mfu, open_low=True)
    check_positive("bandwidth", bandwidth)
    check_nonneg("alpha_s", alpha_s)
    check_nonneg("bytes_per_grad", bytes_per_grad)
    # compute per GPU: the per-GPU batch does not change when we add GPUs (as in the lab)
    per_gpu_compute_s = 6 * params * tokens_per_step / (peak_flops * mfu)
    grad_bytes = params * bytes_per_grad
    allreduce_s = 2 * (n_gpus - 1) * alpha_s + 2 * (n_gpus - 1) / n_gpus * grad_bytes / bandwidth
    return per_gpu_compute_s + allreduce_s


def model_state_bytes_per_gpu(params: float, dp: int = 1, zero_stage: int = 0, tp: int = 1,
                              pp: int = 1) -> float:
    """Bytes of model states (weights, gradients, Adam states) per GPU, mixed precision.

    Each GPU holds the TP x PP shard psi = params / (tp * pp); 16 bytes/param = fp16 weights (2)
    + fp16 gradients (2) + fp32 master weights, momentum, variance (12). ZeRO shards across dp:
    stage 0: 16 psi;  1: 4 psi + 12 psi/dp;  2: 2 psi + 14 psi/dp;  3: 16 psi/dp
    (Rajbhandari et al., ZeRO, SC'20, sec. 5; 7.5e9 params, dp = 64: 120 / 31.4 / 16.6 / 1.9 GB).
    """
    check_nonneg("params", params)
    check_count("dp", dp)
    _check_zero_stage(zero_stage)
    check_count("tp", tp)
    check_count("pp", pp)
    shard = params / (tp * pp)
    # fp16 weights (2) + fp32 optimizer states (8), as the lab says
    bytes_per_param = {0: 10, 1: 2 + 8 / dp, 2: 2 + 8 / dp, 3: 10 / dp}[zero_stage]
    return shard * bytes_per_param


def pipeline_bubble_fraction(p: int, m: int, v: int = 1) -> float:
    """Share of a pipeline step the GPUs sit idle (GPipe and 1F1B alike), p stages, m microbatches
    per step, v interleaved model chunks per GPU:

    (p - 1) / (v * m + p - 1)   (Narayanan et al., SC'21, sec. 2.2: bubble / ideal = (p-1)/(v m);
    p = 8, m = 32: 0.17949 of the step, 0.21875 of the ideal). Zero for p = 1.
    """
    check_count("p", p)
    check_count("m", m)
    check_count("v", v)
    # bubble = (PP - 1) / (PP * m), from the lab's reading
    return (p - 1) / (p * m * v)
