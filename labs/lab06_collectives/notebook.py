# %% [markdown]
# # Lab 06 — The Bandwidth Invariant: collective communication
#
# Implement the functions of `collectives.py` (units in every docstring: bytes, seconds, bytes/s per direction). Every time uses the α-β model: one message of M bytes costs α + M/B. The plots and readouts below call *your* functions, so they are only as right as your code; run `pytest` in this folder for the public checks.
#
# ## Act I — The ring efficiency revelation
#
# > *A systems researcher writes:* "Our naive AllReduce — gather to a master, then broadcast from the master — of a {{ ACT1_PARAMS | fmt(".0f", 1e9) }}B-parameter model's FP16 gradient ({{ ACT1_MESSAGE_BYTES | bytes }}) takes {{ ACT1_NAIVE_S | fmt(",.0f") }} s per step on {{ N_GPUS }} GPUs over InfiniBand NDR ({{ NDR | fmt(".0f", 1e9) }} GB/s per port and direction, α = {{ ALPHA_S | fmt(".1f", 1e-6) }} µs). Ring AllReduce on the same cluster is far faster. We thought our implementation was fine because it 'just works'. Can you show me the bandwidth ratio so I can explain it to leadership: how much traffic does the master absorb, versus what ring sends from every node?"
#
# **The setup.** Each of the n GPUs holds a gradient of M bytes; afterwards each must hold the sum.
# - *Naive:* each of the n−1 workers sends its M bytes to the master, which adds them and sends the M-byte result back to each worker. All of it crosses the master's one link, one message after another.
# - *Ring:* reduce-scatter then all-gather, n−1 steps each. In every step each rank sends one M/n chunk to its right neighbour while receiving one from its left.
# - *Binary tree:* reduce up a tree of ⌈log2 n⌉ levels, then broadcast down; each hop carries the whole message.

# %%
# Setup (generated): your module, the cited constants, numpy and matplotlib.
import collectives
import constants
import numpy as np
import matplotlib.pyplot as plt
from labs.lab06_collectives.scenario import N_GPUS as n
from labs.lab06_collectives.scenario import ALPHA_S as alpha_s   # InfiniBand latency per message, s
from labs.lab06_collectives.scenario import NDR as bandwidth   # InfiniBand NDR, bytes/s per port per direction
from labs.lab06_collectives.scenario import ACT1_MESSAGE_BYTES as message_bytes   # Act I: 70B params x 2 bytes (FP16)
from labs.lab06_collectives.scenario import SMALL_BYTES as small_bytes   # a latency-bound message
from labs.lab06_collectives.scenario import WORKLOAD_SIZES as workloads   # Act II: label -> (params, message_bytes)
from labs.lab06_collectives.scenario import TOKENS_PER_STEP as tokens_per_step   # one sequence per GPU
from labs.lab06_collectives.scenario import PEAK_FLOPS as peak_flops   # H100 SXM dense BF16/FP16, FLOP/s
from labs.lab06_collectives.scenario import MFU as mfu
from labs.lab06_collectives.scenario import FAILURE_FRACTION as failure_fraction   # comm share of the step
from labs.lab06_collectives.questions import ACT1_OPTIONS as act1_options
from labs.lab06_collectives.questions import ACT2_OPTIONS as act2_options

# %% answer="act1_prediction"

# %% requires=["act1_prediction"] tags=["instrument"]
ranks = [2 ** k for k in range(1, 11)]
naive_s = [collectives.naive_allreduce_time(message_bytes, r, alpha_s, bandwidth) for r in ranks]
ring_s = [collectives.ring_allreduce_time(message_bytes, r, alpha_s, bandwidth) for r in ranks]
tree_s = [collectives.tree_allreduce_time(message_bytes, r, alpha_s, bandwidth) for r in ranks]
factor = [collectives.ring_bytes_per_rank(1.0, r) for r in ranks]
# bus bandwidth of the ring as a share of the link: ~1 for the big gradient, less once latency shows
share_big = [collectives.bus_bandwidth(message_bytes, t, r) / bandwidth for t, r in zip(ring_s, ranks)]
share_small = [collectives.bus_bandwidth(small_bytes, collectives.ring_allreduce_time(small_bytes, r, alpha_s, bandwidth), r)
               / bandwidth for r in ranks]

fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
left.loglog(ranks, naive_s, "o-", label="naive (master)")
left.loglog(ranks, tree_s, "s-", label="binary tree")
left.loglog(ranks, ring_s, "^-", label="ring")
left.set(xlabel="GPUs n", ylabel="AllReduce time (s)", title=f"{message_bytes / 1e9:.0f} GB gradient on NDR")
left.legend()
right.semilogx(ranks, factor, "o-", label="ring bytes per rank / M = 2(n-1)/n")
right.semilogx(ranks, share_big, "^-", label=f"ring busbw / link, {message_bytes / 1e9:.0f} GB")
right.semilogx(ranks, share_small, "v-", label=f"ring busbw / link, {small_bytes / 1e6:g} MB")
right.set(xlabel="GPUs n", ylim=(0, 2.1), title="ring: bytes per rank and bus bandwidth")
right.legend(loc="center right")
plt.show()

# %% requires=["act1_prediction"]
master_bytes = collectives.naive_master_bytes(message_bytes, n)
rank_bytes = collectives.ring_bytes_per_rank(message_bytes, n)
naive = collectives.naive_allreduce_time(message_bytes, n, alpha_s, bandwidth)
ring = collectives.ring_allreduce_time(message_bytes, n, alpha_s, bandwidth)
print(f"You predicted {act1_prediction}: {act1_options.get(act1_prediction, '(not one of the options)')}")
print(f"Your functions at n = {n}: the master's link carries {master_bytes / 1e9:,.1f} GB, "
      f"a ring rank sends {rank_bytes / 1e9:,.2f} GB: {master_bytes / rank_bytes:.2f}x")
print(f"Time: naive {naive:,.1f} s vs ring {ring:.2f} s, {naive / ring:.2f}x "
      f"(both pay 2(n-1) latencies, a sliver of either time at this size)")

# %% answer="act1_reflection"

# %% [markdown]
# **Efficiency, read right.** The lab quotes the ring's "efficiency" (n−1)/n = {{ RING_EFFICIENCY | fmt(".1%") }} at n = {{ N_GPUS }}. That is not a loss: 2(n−1)/n · M is the least any AllReduce can send per rank, and nccl-tests report it as *bus bandwidth*, busbw = (M/t) · 2(n−1)/n, which equals the link bandwidth when the ring runs at the bound.

# %% [markdown]
# ## Act II — Algorithm selection under constraints
#
# > *An MLOps lead writes:* "We run three gradient synchronisation workloads on the same {{ N_GPUS }}-GPU NDR cluster: (1) a {{ WORKLOADS[0][1] | fmt("g", 1e9) }}B model's FP16 gradient, {{ WORKLOADS[0][2] | bytes }} per step; (2) a {{ WORKLOADS[1][1] | fmt("g", 1e9) }}B model's FP16 gradient, {{ WORKLOADS[1][2] | bytes }}; (3) embedding-table updates of a {{ WORKLOADS[2][1] | fmt(".1f", 1e9) }}B-parameter recommender, {{ WORKLOADS[2][2] | bytes }} per message. Our engineers want ring AllReduce for everything because 'ring is always fastest'. Show whether that is right and, if not, what each workload should use."
#
# Each training step processes one {{ SEQ_LEN }}-token sequence per GPU ({{ TOKENS_PER_STEP | fmt(",") }} tokens) at MFU {{ MFU }} of the H100's dense {{ PEAK_FLOPS | fmt(".0f", 1e12) }} TFLOP/s; compute is {{ FLOPS_PER_PARAM_TOKEN | fmt("g") }} · params · tokens (the {{ WORKLOADS[0][1] | fmt("g", 1e9) }}B step computes for {{ BIG.compute_s | seconds }}). Communication does not overlap compute. **Failure state:** communication above {{ FAILURE_FRACTION | fmt(".0%") }} of the step — the cluster spends more time talking than computing.
#
# Rabenseifner's AllReduce (recursive-halving reduce-scatter, recursive-doubling all-gather, n a power of two) sends the ring's 2(n−1)/n · M per rank in 2 log2 n latency steps; the instrument plots it next to ring and tree.

# %% answer="act2_prediction"

# %% requires=["act2_prediction"] tags=["instrument"]
sizes = np.logspace(3, 12, 200)   # 1 KB .. 1 TB
curves = {name: [fn(m, n, alpha_s, bandwidth) for m in sizes] for name, fn in (
    ("ring", collectives.ring_allreduce_time), ("binary tree", collectives.tree_allreduce_time),
    ("Rabenseifner", collectives.rabenseifner_allreduce_time))}
critical = collectives.critical_message_size(alpha_s, bandwidth)
crossover = collectives.ring_tree_crossover_bytes(n, alpha_s, bandwidth)
fig, ax = plt.subplots(figsize=(8, 5))
for name, times in curves.items():
    ax.loglog(sizes, times, label=name)
ax.axvline(critical, color="grey", linestyle=":", label=f"critical size alpha*B = {critical / 1e3:.0f} KB")
ax.axvline(crossover, color="black", linestyle="--", label=f"ring-tree crossover = {crossover / 1e6:.2f} MB")
for label, (params, message) in workloads.items():
    ax.axvline(message, color="red", alpha=0.3)
    ax.text(message, ax.get_ylim()[1], label, rotation=90, va="top", fontsize=8)
ax.set(xlabel="message bytes", ylabel="AllReduce time (s)", title=f"n = {n} GPUs on InfiniBand NDR")
ax.legend()
plt.show()

print(f"{'workload':24s} {'ring':>10s} {'tree':>10s} {'Rabenseifner':>13s} {'pick':>5s} {'compute':>10s} {'comm share':>10s}")
for label, (params, message) in workloads.items():
    ring = collectives.ring_allreduce_time(message, n, alpha_s, bandwidth)
    tree = collectives.tree_allreduce_time(message, n, alpha_s, bandwidth)
    rab = collectives.rabenseifner_allreduce_time(message, n, alpha_s, bandwidth)
    pick = collectives.best_allreduce_algorithm(message, n, alpha_s, bandwidth)
    compute = collectives.compute_time(collectives.training_step_flops(params, tokens_per_step), n, peak_flops, mfu)
    share = collectives.comm_fraction(ring if pick == "ring" else tree, compute)
    flag = "  FAILURE: communication over half the step" if share > failure_fraction else ""
    print(f"{label:24s} {ring:10.4g} {tree:10.4g} {rab:13.4g} {pick:>5s} {compute:10.4g} {share:10.3f}{flag}")

# %% requires=["act2_prediction"]
print(f"You predicted {act2_prediction}: {act2_options.get(act2_prediction, '(not one of the options)')}")
for label, (params, message) in workloads.items():
    print(f"Your functions pick {collectives.best_allreduce_algorithm(message, n, alpha_s, bandwidth)} "
          f"for the {label} ({message:.3g} bytes)")
print(f"ring-tree crossover at n = {n}: {collectives.ring_tree_crossover_bytes(n, alpha_s, bandwidth) / 1e6:.2f} MB")

# %% answer="act2_reflection"

# %% [markdown]
# **Out of the failure state.** For a dense model with FP16 gradients the ring moves about {{ RING_FACTOR_LIMIT * FP16_BYTES }} bytes per parameter and the step computes {{ FLOPS_PER_PARAM_TOKEN | fmt("g") }} FLOP per parameter per token, so the parameter count cancels: the {{ WORKLOADS[0][1] | fmt("g", 1e9) }}B and the {{ WORKLOADS[1][1] | fmt("g", 1e9) }}B gradients have almost the same communication share. What moves it is the tokens per step: the {{ WORKLOADS[0][1] | fmt("g", 1e9) }}B step needs {{ TOKENS_FOR_HALF | fmt(",.0f") }} tokens ({{ (TOKENS_FOR_HALF / N_GPUS / SEQ_LEN) | fmt(".1f") }} sequences per GPU) before compute matches communication. Other ways out: overlap the AllReduce with the backward pass, compress gradients, or reduce inside each node over NVLink first (hierarchical AllReduce).

# %% grades=true
