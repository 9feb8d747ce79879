"""partly_wrong: the source lab's own formulas (labs/lab07_fault_tolerance/errata.md), input checks kept:
the checkpoint as the 16-bit weights alone, terabytes of 1,024 GB, and T/2 + C lost per failure."""
_right_write_time = checkpoint_write_time_s


def checkpoint_bytes(params: float, weight_bytes: float = 2.0, optimizer_bytes: float = 12.0) -> float:
    check_nonneg("params", params)
    check_nonneg("weight_bytes", weight_bytes)
    check_nonneg("optimizer_bytes", optimizer_bytes)
    return params * weight_bytes                      # "roughly 2 TB" for 1T parameters


def checkpoint_write_time_s(checkpoint_bytes: float, storage_bandwidth: float, n_nodes: int,
                            node_bandwidth: float) -> float:
    return 1.024 * _right_write_time(checkpoint_bytes, storage_bandwidth, n_nodes, node_bandwidth)   # TB x 1024 GB


def waste_fraction(interval_s: float, checkpoint_s: float, mtbf_s: float, restart_s: float = 0.0) -> float:
    check_positive("interval_s", interval_s)
    check_nonneg("checkpoint_s", checkpoint_s)
    check_positive("mtbf_s", mtbf_s)
    check_nonneg("restart_s", restart_s)
    return checkpoint_s / interval_s + (interval_s / 2 + checkpoint_s) / mtbf_s   # the lab's lambda (T/2 + C)
