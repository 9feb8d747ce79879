"""Lab 07 — The Checkpoint Reckoning: fault tolerance of synchronous training at scale.

Conventions (all functions): SI units: seconds (an MTBF too: hours are converted where the story
gives them), bytes, bytes/s. Counts are positive ints; fractions in [0, 1]. Functions are pure.
Model: every GPU fails independently at random (exponential lifetimes) and any one failure stops the
synchronous job, which restarts from its last checkpoint. A checkpoint interval T is the compute time
between two checkpoints; C the time training stalls to take one; R the time to restart after a failure.
Sources: Young, CACM 17(9) 1974 (the first-order interval); Daly, FGCS 22(3) 2006 (its higher-order
form and the exponential model of the wall-clock time); Rajbhandari et al., ZeRO, SC'20 sec. 3.1 (the
training state of mixed-precision Adam); Mohan et al., CheckFreq, FAST'21 (snapshot, then persist).
"""
from __future__ import annotations

import math

from ._domain import check_count, check_fraction, check_nonneg, check_positive

__all__ = [
    "cluster_mtbf_s", "expected_failures", "checkpoint_bytes", "checkpoint_write_time_s", "snapshot_stall_s",
    "young_daly_interval_s", "daly_interval_s", "waste_fraction", "goodput", "min_storage_bandwidth",
]


def cluster_mtbf_s(gpu_mtbf_s: float, n_gpus: int) -> float:
    """Mean seconds between failures of one synchronous job on n_gpus GPUs, each GPU failing at random
    with a mean of gpu_mtbf_s seconds between failures.

    Formula: MTBF_cluster = gpu_mtbf_s / n_gpus (a series system of exponential lifetimes; Daly 2006).
    Derive: any one GPU's failure stops the whole job, and failures are independent, so what adds up
    across the GPUs is how often each fails (a rate, failures per second), not the waits between
    failures: more GPUs, shorter waits. One GPU: its own MTBF.
    """
    check_positive("gpu_mtbf_s", gpu_mtbf_s)
    n_gpus = check_count("n_gpus", n_gpus)
    ### BEGIN SOLUTION
    return gpu_mtbf_s / n_gpus
    ### END SOLUTION


def expected_failures(duration_s: float, mtbf_s: float) -> float:
    """How many failures a run of duration_s seconds expects, failures arriving at random with a mean
    of mtbf_s seconds between them (the mean of a Poisson count). Not rounded: 0.5 is one run in two.

    Formula: N = duration_s / mtbf_s (the mean of a Poisson process of rate 1 / mtbf_s).
    Derive: failures arrive at a steady rate, one per mtbf_s seconds on average; count how many such
    waits fit in the run. Both times in seconds; a run of zero seconds expects none.
    """
    check_nonneg("duration_s", duration_s)
    check_positive("mtbf_s", mtbf_s)
    ### BEGIN SOLUTION
    return duration_s / mtbf_s
    ### END SOLUTION


def checkpoint_bytes(params: float, weight_bytes: float = 2.0, optimizer_bytes: float = 12.0) -> float:
    """Bytes of one checkpoint of a model of `params` parameters trained with mixed-precision Adam.

    Formula: bytes = params * (weight_bytes + optimizer_bytes), 2 + 12 = 14 bytes per parameter (ZeRO, sec. 3.1).
    Derive: what a restart needs of every parameter: its 16-bit weight (weight_bytes) and its
    optimizer state (optimizer_bytes: an FP32 master copy, momentum and variance, 4 bytes each). The
    gradients are not saved: the next step computes them afresh. The source lab's "roughly 2 TB" for its
    1T-parameter model is the 16-bit weights alone (14 TB in all); its 2.1 TB for GPT-3's 175B parameters is
    the optimizer state without the weights (2.45 TB in all).
    """
    check_nonneg("params", params)
    check_nonneg("weight_bytes", weight_bytes)
    check_nonneg("optimizer_bytes", optimizer_bytes)
    ### BEGIN SOLUTION
    return params * (weight_bytes + optimizer_bytes)
    ### END SOLUTION


def checkpoint_write_time_s(checkpoint_bytes: float, storage_bandwidth: float, n_nodes: int,
                            node_bandwidth: float) -> float:
    """Seconds to write one checkpoint to shared storage, every node writing its own shard at once.

    Formula: T = checkpoint_bytes / min(storage_bandwidth, n_nodes * node_bandwidth).
    Derive: storage_bandwidth is what the file system absorbs from all writers together (bytes/s),
    node_bandwidth what one node can send to it (bytes/s); all nodes write at once, so their links
    add up, and the slower of the two limits sets the pace of the whole write.
    """
    check_nonneg("checkpoint_bytes", checkpoint_bytes)
    check_positive("storage_bandwidth", storage_bandwidth)
    n_nodes = check_count("n_nodes", n_nodes)
    check_positive("node_bandwidth", node_bandwidth)
    ### BEGIN SOLUTION
    return checkpoint_bytes / min(storage_bandwidth, n_nodes * node_bandwidth)
    ### END SOLUTION


def snapshot_stall_s(checkpoint_bytes: float, n_gpus: int, copy_bandwidth: float) -> float:
    """Seconds training stalls for an asynchronous checkpoint (CheckFreq's snapshot, Mohan et al. 2021).

    Formula: T = checkpoint_bytes / n_gpus / copy_bandwidth.
    Derive: every GPU copies its own shard of the checkpoint into host memory at copy_bandwidth
    (bytes/s, its PCIe link), all GPUs at once; the write to storage then runs in the background
    while training goes on, so only the copy stalls it. How big is one GPU's shard?
    """
    check_nonneg("checkpoint_bytes", checkpoint_bytes)
    n_gpus = check_count("n_gpus", n_gpus)
    check_positive("copy_bandwidth", copy_bandwidth)
    ### BEGIN SOLUTION
    return checkpoint_bytes / n_gpus / copy_bandwidth
    ### END SOLUTION


def young_daly_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    """The checkpoint interval (seconds of compute between checkpoints) that loses the least time to
    first order (Young 1974; the first-order model of Daly 2006).

    Formula: T_opt = sqrt(2 * checkpoint_s * mtbf_s).
    Derive: checkpointing more often stalls more (checkpoint_s per interval), less often redoes more
    work after a failure (half an interval on average, once per mtbf_s). Write the share of time lost
    to each as a function of the interval and minimise their sum. Valid while checkpoint_s is well
    below mtbf_s; zero when a checkpoint costs nothing.
    """
    check_nonneg("checkpoint_s", checkpoint_s)
    check_positive("mtbf_s", mtbf_s)
    ### BEGIN SOLUTION
    return math.sqrt(2 * checkpoint_s * mtbf_s)
    ### END SOLUTION


def daly_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    """Daly's higher-order estimate of the optimal checkpoint interval (seconds) under exponential
    failures: Young's interval corrected by the series in x = checkpoint_s / (2 mtbf_s),
    sqrt(2CM) (1 + sqrt(x)/3 + x/9) - C while C < 2M, and M itself beyond (Daly 2006).
    """
    check_nonneg("checkpoint_s", checkpoint_s)
    check_positive("mtbf_s", mtbf_s)
    ### BEGIN SOLUTION
    if checkpoint_s >= 2 * mtbf_s:
        return mtbf_s
    x = checkpoint_s / (2 * mtbf_s)
    return math.sqrt(2 * checkpoint_s * mtbf_s) * (1 + math.sqrt(x) / 3 + x / 9) - checkpoint_s
    ### END SOLUTION


def waste_fraction(interval_s: float, checkpoint_s: float, mtbf_s: float, restart_s: float = 0.0) -> float:
    """The share of the run lost to fault tolerance, to first order (Young 1974).

    Formula: W = checkpoint_s / interval_s + (interval_s / 2 + restart_s) / mtbf_s.
    Derive: the stalls of the checkpoints themselves (one per interval), plus, once per mtbf_s, the
    work redone after a failure (half an interval on average) and the restart; each a share of the
    time. Valid while all three times are well below mtbf_s; above 1 it only says the job would
    never finish.
    """
    check_positive("interval_s", interval_s)
    check_nonneg("checkpoint_s", checkpoint_s)
    check_positive("mtbf_s", mtbf_s)
    check_nonneg("restart_s", restart_s)
    ### BEGIN SOLUTION
    return checkpoint_s / interval_s + (interval_s / 2 + restart_s) / mtbf_s
    ### END SOLUTION


def goodput(interval_s: float, checkpoint_s: float, mtbf_s: float, restart_s: float = 0.0) -> float:
    """The share of wall-clock time that advances training under exponential failures, in (0, 1]: Daly's
    model (2006), stated, not derived here (failures may strike during a restart too):
    G = (interval_s / mtbf_s) * exp(-restart_s / mtbf_s) / (exp((interval_s + checkpoint_s) / mtbf_s) - 1).

    Derive: each interval of compute plus its checkpoint succeeds only if no failure strikes during
    it; a failure costs the restart and the interval is retried; goodput is the interval's compute
    over the expected wall-clock time. Far past the MTBF it is tiny but not zero: work with
    logarithms so it does not underflow.
    """
    check_positive("interval_s", interval_s)
    check_nonneg("checkpoint_s", checkpoint_s)
    check_positive("mtbf_s", mtbf_s)
    check_nonneg("restart_s", restart_s)
    ### BEGIN SOLUTION
    x = (interval_s + checkpoint_s) / mtbf_s
    # log(e^x - 1) without overflow for large x
    log_retries = x + math.log1p(-math.exp(-x)) if x > 1 else math.log(math.expm1(x))
    return math.exp(math.log(interval_s / mtbf_s) - restart_s / mtbf_s - log_retries)
    ### END SOLUTION


def min_storage_bandwidth(checkpoint_bytes: float, mtbf_s: float, max_overhead: float) -> float:
    """The least storage write bandwidth (bytes/s) for synchronous checkpoints taken at Young's interval
    to stall training for at most max_overhead of the time.

    Formula: B = checkpoint_bytes / (2 * mtbf_s * max_overhead ** 2).
    Derive: at Young's interval, what share of the time do the checkpoint stalls take, as a function
    of the write time C and the MTBF? Capping that share caps C; the bandwidth is the checkpoint's
    bytes over the longest C allowed.
    """
    check_nonneg("checkpoint_bytes", checkpoint_bytes)
    check_positive("mtbf_s", mtbf_s)
    check_fraction("max_overhead", max_overhead, open_low=True)
    ### BEGIN SOLUTION
    return checkpoint_bytes / (2 * mtbf_s * max_overhead ** 2)
    ### END SOLUTION
