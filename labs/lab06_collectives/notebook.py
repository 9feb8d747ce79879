# %% [markdown]
# # Lab 06 — The Bandwidth Invariant: collective communication
#
# Implement the functions of `collectives.py` (units in every docstring: bytes, seconds, bytes/s per direction). Every time uses the α-β model: one message of M bytes costs α + M/B. The plots and readouts below call *your* functions, so they are only as right as your code; run `pytest` in this folder for the public checks.
#
# ## Act I — The ring efficiency revelation
#
# > *A systems researcher writes:* "Our naive AllReduce — gather to a master, then broadcast from the master — of a {{ ACT1_PARAMS | fmt(".0f", 1e9) }}B-parameter model's FP16 gradient ({{ ACT1_MESSAGE_BYTES | bytes }}) takes {{ ACT1_NAIVE_S | fmt(",.0f") }} s per step on our {{ N_GPUS }} GPUs: {{ NODES }} DGX H100 nodes of {{ GPN }} GPUs on NVLink, each node with {{ NICS }} InfiniBand NDR NICs ({{ NDR | fmt(".0f", 1e9) }} GB/s per port and direction). Ring AllReduce on the same cluster is far faster. We thought our implementation was fine because it 'just works'. Can you show me the bandwidth ratio so I can explain it to leadership: how much traffic does the master absorb, versus what ring sends from every node?"
#
# The model trains data parallel: every GPU keeps the whole model and its own copy of the gradient, with the optimizer states sharded (ZeRO stage {{ ZERO_STAGE }}, which leaves the gradient AllReduce whole): {{ MEMORY_BYTES[ACT1_PARAMS] | fmt(".0f", 1e9) }} GB per GPU of an H100's {{ CAPACITY_BYTES | fmt(".1f", 1e9) }} GB with one sequence's activations. (The source lab's gradient, {{ (SOURCE_ACT1_PARAMS * FP16_BYTES) | bytes }}, fits on no GPU.)
#
# **The setup.** Each of the n GPUs holds a gradient of M bytes; afterwards each must hold the sum.
# - *Naive:* each of the n−1 workers sends its M bytes to the master, which adds them and sends the M-byte result back to each worker. All of it crosses the master's one link, one message after another.
# - *Ring:* reduce-scatter then all-gather, n−1 steps each. In every step each rank sends one M/n chunk to its right neighbour while receiving one from its left.
# - *Binary tree:* reduce up a tree of ⌈log2 n⌉ levels, then broadcast down; each hop carries the whole message.
#
# **The cluster's link.** A ring across the nodes is really {{ NICS }} rings at once, one per NIC, each visiting the {{ GPN }} GPUs of a node over NVLink before it crosses to the next node; so a node's NICs together carry what one rank sends, and of the ring's 2(n−1) steps only 2(k−1) cross the network (k nodes). Per rank the ring then sees one link of B = {{ CLUSTER_BW | fmt(".0f", 1e9) }} GB/s ({{ NICS }} × {{ NDR | fmt(".0f", 1e9) }} GB/s) with α = {{ CLUSTER_ALPHA_S | fmt(".2f", 1e-6) }} µs per step (the mean of NVLink's {{ C.NVLINK_ALPHA_S | fmt(".1f", 1e-6) }} µs and the network's {{ C.IB_ALPHA_S | fmt(".1f", 1e-6) }} µs steps, NCCL's own cost model). `cluster.ring_link(n)` computes it; every time below uses it. Both schemes are charged on that link.

# %%
# Setup (generated): your module, the cited constants, numpy and the instrument toolkit.
import collectives
import constants
import numpy as np
from _instruments import Instrument, Steps, LogSlider, Dropdown
from labs.lab06_collectives.scenario import N_GPUS as n
import cluster
from labs.lab06_collectives.scenario import CLUSTER_ALPHA_S as alpha_s   # the cluster ring's latency per step, s
from labs.lab06_collectives.scenario import CLUSTER_BW as bandwidth   # the cluster ring's bytes/s per rank per direction
from labs.lab06_collectives.scenario import ACT1_MESSAGE_BYTES as message_bytes   # Act I: the model's parameters x 2 bytes (FP16)
from labs.lab06_collectives.scenario import WORKLOAD_SIZES as workloads   # Act II: label -> (params, message_bytes)
from labs.lab06_collectives.scenario import SEQ_LEN as seq_len   # tokens per sequence; one sequence per GPU
from labs.lab06_collectives.scenario import PEAK_FLOPS as peak_flops   # H100 SXM dense BF16/FP16, FLOP/s
from labs.lab06_collectives.scenario import MFU as mfu
from labs.lab06_collectives.scenario import FAILURE_FRACTION as failure_fraction   # comm share of the step

# %% answer="act1_prediction"

# %% requires=["act1_prediction"] tags=["instrument"]
# Instrument: naive against ring AllReduce, each time split into its latency and bandwidth terms.
# The clusters the dropdowns offer: DGX H100 nodes with their 8 NDR NICs, the same nodes with one NIC each,
# and one GPU per server on one HDR NIC (cluster.ring_link's arguments; up to 8 GPUs all are one NVLink node
# but the last).
CLUSTERS = {"DGX H100, 8 NDR NICs per node": {},
            "DGX H100, 1 NDR NIC per node": {"nics_per_node": 1},
            "1 GPU per server, 1 HDR NIC": {"gpus_per_node": 1, "nics_per_node": 1,
                                            "nic_bandwidth": constants.IB_HDR200_BANDWIDTH}}
DGX = list(CLUSTERS)[0]
RANKS = [2 ** k for k in range(1, 13)]


def link(name, ranks):
    """(alpha_s, bandwidth) a ring over `ranks` GPUs sees on the named cluster."""
    ring = cluster.ring_link(ranks, **CLUSTERS[name])
    return ring["alpha_s"], ring["bandwidth"]


def terms(allreduce, size, ranks, alpha, beta):
    """(total, latency term, bandwidth term) of one AllReduce, all three from your function:
    the latency term is its time for an empty message, the bandwidth term its time at alpha = 0."""
    return allreduce(size, ranks, alpha, beta), allreduce(0.0, ranks, alpha, beta), allreduce(size, ranks, 0.0, beta)


def act1(fig, n, message_bytes, machine):
    alpha, beta = link(machine, n)
    left, right = fig.subplots(1, 2)
    algorithms = {"naive": collectives.naive_allreduce_time, "ring": collectives.ring_allreduce_time}
    for name, allreduce in algorithms.items():
        left.loglog(RANKS, [allreduce(message_bytes, r, *link(machine, r)) for r in RANKS], "o-", label=name)
    left.axvline(n, color="grey", linestyle=":")
    left.set(xlabel="GPUs n", ylabel="AllReduce time (s)", title=f"{message_bytes / 1e9:.3g} GB, {machine}")
    left.legend()
    split = {name: terms(allreduce, message_bytes, n, alpha, beta) for name, allreduce in algorithms.items()}
    x = np.arange(len(split))
    right.bar(x - 0.2, [t[1] for t in split.values()], 0.4, label="latency term")
    right.bar(x + 0.2, [t[2] for t in split.values()], 0.4, label="bandwidth term")
    right.set(xticks=x, xticklabels=list(split), yscale="log", ylabel="seconds", title=f"the two terms at n = {n}")
    right.legend()
    master = collectives.naive_master_bytes(message_bytes, n)
    rank = collectives.ring_bytes_per_rank(message_bytes, n)
    busbw = collectives.bus_bandwidth(message_bytes, split["ring"][0], n)
    lines = [f"n = {n}, {message_bytes:.4g} bytes, {machine} (alpha {alpha * 1e6:.3g} us, {beta / 1e9:g} GB/s per rank)"]
    lines += [f"{name:6s} {t[0]:.4g} s = latency {t[1]:.4g} s + bandwidth {t[2]:.4g} s" for name, t in split.items()]
    lines += [f"master's link carries {master:.4g} bytes, one ring rank sends {rank:.4g} ({master / rank:.4g}x)",
              f"ring bus bandwidth {busbw / 1e9:.4g} GB/s, {busbw / beta:.1%} of the link"]
    return "\n".join(lines)


Instrument(act1, figsize=(10, 4), n=Steps("GPUs n", RANKS, value=n),
           message_bytes=LogSlider("message (bytes)", 1e3, 1e12, value=message_bytes),
           machine=Dropdown("cluster", list(CLUSTERS), value=DGX)).show();

# %% requires=["act1_prediction"]
master_bytes = collectives.naive_master_bytes(message_bytes, n)
rank_bytes = collectives.ring_bytes_per_rank(message_bytes, n)
naive = collectives.naive_allreduce_time(message_bytes, n, alpha_s, bandwidth)
ring = collectives.ring_allreduce_time(message_bytes, n, alpha_s, bandwidth)
print(f"Your functions at n = {n}: the master's link carries {master_bytes / 1e9:,.1f} GB, "
      f"a ring rank sends {rank_bytes / 1e9:,.2f} GB: {master_bytes / rank_bytes:.2f}x")
print(f"Time: naive {naive:,.1f} s vs ring {ring:.2f} s, {naive / ring:.2f}x "
      f"(both pay 2(n-1) latencies, a sliver of either time at this size)")

# %% [markdown] reveal="act1_prediction"
# <details><summary>Check your derivation: the Act I equations</summary>
#
# One message of M bytes costs α + M/B (Hockney's α-β model).
#
# - **Naive:** the master receives n−1 messages and sends n−1 back, one after another over its link: T = 2(n−1)·(α + M/B), and 2(n−1)·M bytes cross that link.
# - **Ring:** 2(n−1) steps of one M/n chunk each: T = 2(n−1)·α + 2(n−1)/n · M/B; each rank sends 2(n−1)/n · M, the least any AllReduce built from point-to-point sends can (Patarasuk & Yuan 2009; nccl-tests doc/PERFORMANCE.md). A switch that adds the data itself (NVLink SHARP, in-switch reduction) is not point to point and beats it: the model vs measurement section below shows one.
# - **Their ratio of bytes:** 2(n−1)·M ÷ (2(n−1)/n · M) = n, whatever M is. The latency terms are equal (2(n−1)·α each), so at {{ ACT1_MESSAGE_BYTES | bytes }} the times differ by almost exactly the byte ratio.
# - **Bus bandwidth** (nccl-tests): busbw = (M/t) · 2(n−1)/n; at the bound it equals B.
# - **The cluster's link:** B = min(NICs × NIC bandwidth, g/(g−1) × NVLink) per rank for a ring over k ≥ 2 nodes of g GPUs, α the mean of 2(k−1) network steps and 2(n−k) NVLink steps (`cluster.py`).
#
# </details>
#
# **Efficiency, read right.** The lab quotes the ring's "efficiency" (n−1)/n = {{ RING_EFFICIENCY | fmt(".1%") }} at n = {{ N_GPUS }}. That is not a loss: 2(n−1)/n · M is the least any point-to-point AllReduce can send per rank, and nccl-tests report it as *bus bandwidth*, busbw = (M/t) · 2(n−1)/n, which equals the link bandwidth when the ring runs at the bound.

# %% answer="act1_reflection"

# %% [markdown]
# ## Act II — Algorithm selection under constraints
#
# > *An MLOps lead writes:* "We run three gradient synchronisation workloads on the same {{ N_GPUS }}-GPU cluster ({{ NODES }} DGX H100 nodes, {{ NICS }} NDR NICs each): (1) a {{ WORKLOADS[0][1] | fmt("g", 1e9) }}B model's FP16 gradient, {{ WORKLOADS[0][2] | bytes }} per step; (2) a {{ WORKLOADS[1][1] | fmt("g", 1e9) }}B model's FP16 gradient, {{ WORKLOADS[1][2] | bytes }}; (3) embedding-table updates of a {{ WORKLOADS[2][1] | fmt(".1f", 1e9) }}B-parameter recommender, {{ WORKLOADS[2][2] | bytes }} per message. Our engineers want ring AllReduce for everything because 'ring is always fastest'. Show whether that is right and, if not, what each workload should use."
#
# Both models train data parallel with ZeRO stage {{ ZERO_STAGE }}, as in Act I: {{ MEMORY_BYTES[WORKLOADS[0][1]] | fmt(".0f", 1e9) }} and {{ MEMORY_BYTES[WORKLOADS[1][1]] | fmt(".0f", 1e9) }} GB per GPU. (The source lab's largest workload, a {{ SOURCE_BIG_PARAMS | fmt("g", 1e9) }}B model's {{ (SOURCE_BIG_PARAMS * FP16_BYTES) | bytes }} gradient, fits on no GPU: a model that size trains with tensor and pipeline parallelism, Lab 05.)
#
# Each training step processes one {{ SEQ_LEN }}-token sequence per GPU ({{ TOKENS_PER_STEP | fmt(",") }} tokens) at MFU {{ MFU }} of the H100's dense {{ PEAK_FLOPS | fmt(".0f", 1e12) }} TFLOP/s; compute is {{ FLOPS_PER_PARAM_TOKEN | fmt("g") }} · params · tokens (the {{ WORKLOADS[0][1] | fmt("g", 1e9) }}B step computes for {{ BIG.compute_s | seconds }}). Communication does not overlap compute. **Failure state:** communication above {{ FAILURE_FRACTION | fmt(".0%") }} of the step — the cluster spends more time talking than computing.
#
# Rabenseifner's AllReduce (recursive-halving reduce-scatter, recursive-doubling all-gather, n a power of two) sends the ring's 2(n−1)/n · M per rank in 2 log2 n latency steps; the instrument plots it next to ring and tree.

# %% answer="act2_prediction"

# %% requires=["act2_prediction"] tags=["instrument"]
# Instrument: ring, binary tree and Rabenseifner over message size, latency and bandwidth terms apart.
SIZES = np.logspace(3, 12, 91)   # 1 KB .. 1 TB
ALGORITHMS = {"ring": collectives.ring_allreduce_time, "tree": collectives.tree_allreduce_time,
              "Rabenseifner": collectives.rabenseifner_allreduce_time}


def workload_rows(ranks, alpha, beta):
    """(label, pick, comm s, compute s, comm share) of each workload, one sequence per GPU."""
    rows = []
    for label, (params, size) in workloads.items():
        pick = collectives.best_allreduce_algorithm(size, ranks, alpha, beta)
        comm = ALGORITHMS[pick](size, ranks, alpha, beta)
        compute = collectives.compute_time(collectives.training_step_flops(params, ranks * seq_len), ranks,
                                           peak_flops, mfu)
        rows.append((label, pick, comm, compute, collectives.comm_fraction(comm, compute)))
    return rows


def act2(fig, message_bytes, n, machine):
    alpha, beta = link(machine, n)
    ax = fig.subplots()
    for name, allreduce in ALGORITHMS.items():
        ax.loglog(SIZES, [allreduce(size, n, alpha, beta) for size in SIZES], label=name)
    critical = collectives.critical_message_size(alpha, beta)
    crossover = collectives.ring_tree_crossover_bytes(n, alpha, beta)
    ax.axvline(critical, color="grey", linestyle=":", label=f"critical size alpha*B = {critical:.3g} bytes")
    ax.axvline(crossover, color="black", linestyle="--", label=f"ring-tree crossover = {crossover:.3g} bytes")
    ax.axvline(message_bytes, color="red", label=f"message = {message_bytes:.3g} bytes")
    for label, (params, size) in workloads.items():
        ax.text(size, ax.get_ylim()[1], label, rotation=90, va="top", fontsize=8, color="firebrick")
    ax.set(xlabel="message bytes", ylabel="AllReduce time (s)", title=f"n = {n} GPUs, {machine}")
    ax.legend(loc="lower right", fontsize=8)
    lines = [f"{message_bytes:.4g} bytes, n = {n}, {machine}:"]
    for name, allreduce in ALGORITHMS.items():
        total, latency, transfer = terms(allreduce, message_bytes, n, alpha, beta)
        lines.append(f"  {name:12s} {total:.4g} s = latency {latency:.4g} s + bandwidth {transfer:.4g} s")
    lines.append(f"  your pick of ring or tree: {collectives.best_allreduce_algorithm(message_bytes, n, alpha, beta)}"
                 f" (crossover {crossover:.4g} bytes, critical size {critical:.4g} bytes)")
    lines.append(f"the workloads at n = {n}, {machine}:")
    for label, pick, comm, compute, share in workload_rows(n, alpha, beta):
        flag = "  FAILURE" if share > failure_fraction else ""
        lines.append(f"  {label:22s} {pick:4s} {comm:.3g} s, compute {compute:.3g} s: share {share:.2f}{flag}")
    return "\n".join(lines)


Instrument(act2, figsize=(8, 5), message_bytes=LogSlider("message (bytes)", 1e3, 1e12, value=message_bytes),
           n=Steps("GPUs n", RANKS, value=n), machine=Dropdown("cluster", list(CLUSTERS), value=DGX)).show();

# %% requires=["act2_prediction"]
for machine in list(CLUSTERS)[:2]:   # the DGX cluster, then the same nodes with one NIC each
    print(f"Your functions at n = {n}, {machine}:")
    for label, pick, comm, compute, share in workload_rows(n, *link(machine, n)):
        flag = "  FAILURE: communication over half the step" if share > failure_fraction else ""
        print(f"  {label:24s} {pick:4s} {comm:10.4g} s vs compute {compute:10.4g} s: share {share:.3f}{flag}")
print(f"ring-tree crossover at n = {n}: {collectives.ring_tree_crossover_bytes(n, alpha_s, bandwidth) / 1e6:.2f} MB")

# %% [markdown] reveal="act2_prediction"
# <details><summary>Check your derivation: the Act II equations</summary>
#
# With L = ⌈log2 n⌉ and one message costing α + M/B:
#
# | algorithm | latency term | bandwidth term |
# |---|---|---|
# | ring | 2(n−1)·α | 2(n−1)/n · M/B |
# | binary tree | 2L·α | 2L · M/B |
# | Rabenseifner (n = 2^L) | 2L·α | 2(n−1)/n · M/B |
#
# - **Critical size:** one message's latency equals its transfer time at M* = α·B ({{ CRITICAL_BYTES | bytes }} on the cluster's link).
# - **Ring–tree crossover:** setting the two times equal gives M = α·B·(n−1−L) / (L − (n−1)/n): {{ CROSSOVER_BYTES | bytes }} at n = {{ N_GPUS }} on the cluster. Above it ring wins, below it tree.
# - **The tree here is not pipelined**, a teaching simplification: NCCL's trees send the message down a pipeline in chunks, which keeps them competitive far above this crossover (the model vs measurement section shows NCCL picking a tree for a message this model gives to the ring).
# - **The fixed cost per collective.** NCCL's own cost model also charges every collective a fixed {{ C.NCCL_RING_BASE_LATENCY_S | fmt(".1f", 1e-6) }} µs (ring; kernel launch and synchronisation) that the α-β model has no term for. Next to a large gradient it is nothing; next to the {{ WORKLOADS[2][2] | bytes }} update's {{ ACT2[2][3].times.tree | seconds }} tree it is {{ (C.NCCL_RING_BASE_LATENCY_S / ACT2[2][3].times.tree) | fmt(".0%") }} more: small messages are where the α-β model is most optimistic.
# - **Communication share** (no overlap): comm / (comm + compute), with compute = 6 · params · tokens / (n · peak · MFU).
#
# </details>
#
# **The failure state and the NICs.** For a dense model with FP16 gradients the ring moves about {{ RING_FACTOR_LIMIT * FP16_BYTES }} bytes per parameter and the step computes {{ FLOPS_PER_PARAM_TOKEN | fmt("g") }} FLOP per parameter per token, so the parameter count cancels: the {{ WORKLOADS[0][1] | fmt("g", 1e9) }}B and the {{ WORKLOADS[1][1] | fmt("g", 1e9) }}B gradients have almost the same communication share, {{ BIG.fraction | fmt(".0%") }} of the step on the DGX cluster: under the failure line, but not free. On the same nodes with one NDR NIC each (the second cluster of the dropdown) the ring runs {{ NICS }}× slower and the share is {{ ONE_NIC_BIG.fraction | fmt(".0%") }}, the failure state: there the {{ WORKLOADS[0][1] | fmt("g", 1e9) }}B step needs {{ TOKENS_FOR_HALF | fmt(",.0f") }} tokens ({{ (TOKENS_FOR_HALF / N_GPUS / SEQ_LEN) | fmt(".1f") }} sequences per GPU) before compute matches communication. Other ways out: overlap the AllReduce with the backward pass or compress the gradients.

# %% answer="act2_reflection"

# %% measurements=true

# %% answer="measurement_reflection"

# %% grades=true
