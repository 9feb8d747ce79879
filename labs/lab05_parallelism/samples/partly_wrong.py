"""partly_wrong: the source lab's own readings (labs/lab05_parallelism/errata.md), each the reference
with one slip (domain checks are the reference's): compute that does not split over the GPUs, 10 bytes
of model states per parameter, the bubble (p-1)/(p*m). peak_memory_bytes_per_gpu and best_3d_config
inherit the wrong states and bubble."""
_right_step_time = data_parallel_step_time
_right_state_bytes = model_state_bytes_per_gpu
_right_bubble = pipeline_bubble_fraction


def data_parallel_step_time(params: float, tokens_per_step: float, n_gpus: int, peak_flops: float,
                            mfu: float, bandwidth: float, alpha_s: float,
                            bytes_per_grad: float = 2) -> float:
    # the per-GPU batch does not change when we add GPUs (as in the lab): n_gpus x the global batch
    return _right_step_time(params, tokens_per_step * n_gpus, n_gpus, peak_flops, mfu, bandwidth,
                            alpha_s, bytes_per_grad)


def model_state_bytes_per_gpu(params: float, dp: int = 1, zero_stage: int = 0, tp: int = 1,
                              pp: int = 1) -> float:
    # fp16 weights (2) + fp32 optimizer states (8) = 10 bytes a parameter, as the lab says, not 16
    return 10 / 16 * _right_state_bytes(params, dp, zero_stage, tp, pp)


def pipeline_bubble_fraction(p: int, m: int, v: int = 1) -> float:
    _right_bubble(p, m, v)  # only for its domain checks
    # bubble = (PP - 1) / (PP * m), from the lab's reading
    return (p - 1) / (p * m * v)
