"""broken: half-edited when the deadline hit; one missing colon, so the whole module fails to import."""


def data_parallel_speedup(compute_s_1gpu, n, grad_bytes, alpha_s, bandwidth)
    comm = 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * grad_bytes / bandwidth
    return compute_s_1gpu / (compute_s_1gpu / n + comm)
