"""Lab 01 — scaling.py, half-edited when the deadline hit (demo class: `broken`)."""
from _domain import check_count
from constants import HOURS_PER_YEAR


def training_time_s(total_flops, n_gpus, peak_flops, mfu):
    return total_flops / (n_gpus * peak_flops * mfu)


def data_parallel_speedup(compute_s_1gpu, n, grad_bytes, alpha_s, bandwidth)
    comm = 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * grad_bytes / bandwidth
    return compute_s_1gpu / (compute_s_1gpu / n + comm)
