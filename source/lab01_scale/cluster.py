# Shipped by `scalelabs release` from the course's reference/cluster.py, for the notebook: read it, nothing to implement here.
"""The link a ring AllReduce sees per rank on a cluster of nodes: NVLink inside a node, NICs between.

Shipped to students as a provided module (like constants.py): it is the hardware the labs name,
put together, not a graded function. Units: seconds, bytes/s per direction.

A ring over n GPUs on nodes of g GPUs (k = ceil(n / g) nodes) is NCCL's ring: it visits the g GPUs
of a node over NVLink, then crosses to the next node, and it runs as several rings at once
(channels), one per NIC of the node, each carrying its share of the message. So each node's NICs
together carry what one rank sends, 2(n-1)/n * M, and each GPU's NVLink carries (g-1)/g of its
share. The ring then runs as if every rank had one link of

    bandwidth = min(nics * nic_bandwidth, g / (g - 1) * nvlink_bandwidth)   (nics * nic_bandwidth for g = 1)

(on a DGX H100 cluster 8 x 50e9 = 400e9 bytes/s; measured: "up to ~396GB/s with the RING
protocol", NVIDIA in nccl-tests#319). Of the ring's 2(n-1) steps, 2(k-1) cross the network and the
rest stay on NVLink (NCCL src/graph/tuning.cc, the ring's latency), so its per-step latency is the
mean alpha_s = (2(k-1) * nic_alpha_s + (2(n-1) - 2(k-1)) * nvlink_alpha_s) / (2(n-1)).
One node (n <= g) is NVLink alone. A ring with one GPU per node (g = 1, e.g. the data-parallel
rings of a layout whose tensor parallelism fills each node) gets the NICs it is given.
"""
from __future__ import annotations

from _domain import check_count, check_nonneg, check_positive
from constants import (GPUS_PER_DGX_H100, IB_ALPHA_S, IB_NDR400_BANDWIDTH, IB_NICS_PER_DGX_H100,
                        NVLINK4_BANDWIDTH, NVLINK_ALPHA_S)

__all__ = ["ring_link"]


def ring_link(n_gpus: int, gpus_per_node: int = GPUS_PER_DGX_H100, nics_per_node: int = IB_NICS_PER_DGX_H100,
              nic_bandwidth: float = IB_NDR400_BANDWIDTH, nvlink_bandwidth: float = NVLINK4_BANDWIDTH,
              nic_alpha_s: float = IB_ALPHA_S, nvlink_alpha_s: float = NVLINK_ALPHA_S) -> dict[str, float]:
    """{"alpha_s": s, "bandwidth": bytes/s} of a ring AllReduce over n_gpus GPUs on nodes of
    gpus_per_node GPUs joined by nics_per_node NICs each (defaults: DGX H100 nodes on NDR
    InfiniBand), to pass as the alpha_s and bandwidth of the ring formulas:
    ring_allreduce_time(M, n, **ring_link(n)). The formulas and their sources: the module docstring."""
    n = check_count("n_gpus", n_gpus)
    g = check_count("gpus_per_node", gpus_per_node)
    nics = check_count("nics_per_node", nics_per_node)
    check_positive("nic_bandwidth", nic_bandwidth)
    check_positive("nvlink_bandwidth", nvlink_bandwidth)
    check_nonneg("nic_alpha_s", nic_alpha_s)
    check_nonneg("nvlink_alpha_s", nvlink_alpha_s)
    if n <= g:
        return {"alpha_s": float(nvlink_alpha_s), "bandwidth": float(nvlink_bandwidth)}
    nodes = -(-n // g)
    network = nics * nic_bandwidth
    bandwidth = network if g == 1 else min(network, g / (g - 1) * nvlink_bandwidth)
    steps, network_steps = 2 * (n - 1), 2 * (nodes - 1)
    alpha_s = (network_steps * nic_alpha_s + (steps - network_steps) * nvlink_alpha_s) / steps
    return {"alpha_s": alpha_s, "bandwidth": float(bandwidth)}
