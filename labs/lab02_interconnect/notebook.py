# %% [markdown]
# # Lab 02 — The Interconnect Wall
#
# ## Act I — The interconnect cliff
#
# **Infrastructure Architect:** *"We need to gradient-sync a {{ PARAMS | fmt("g", 1e9) }}B model ({{ MESSAGE_BYTES | bytes }} FP16) across {{ GPUS }} GPUs. We have two options: a single NVLink DGX H100 node, or {{ GPUS }} separate PCIe servers. The PCIe option is {{ PCIE_DISCOUNT | fmt(".0%") }} cheaper. My manager is asking whether the bandwidth difference actually matters in practice. Can you model this out before we sign the purchase order?"*
#
# The model is GPT-3 {{ PARAMS | fmt("g", 1e9) }}B ({{ LAYERS }} layers, hidden size {{ HIDDEN | fmt(",") }}), trained data parallel: every GPU holds the whole model, {{ STATE_BYTES | bytes }} of mixed-precision Adam states ({{ C.ADAM_MIXED_PRECISION_BYTES_PER_PARAM }} bytes a parameter) and one sequence's activations, {{ MEMORY_BYTES | fmt(".0f", 1e9) }} GB of an H100's {{ CAPACITY_BYTES | fmt(".1f", 1e9) }} GB; only the gradients travel. (The source lab's {{ SOURCE_PARAMS | fmt("g", 1e9) }}B model would need {{ SOURCE_STATE_BYTES | bytes }} on every GPU: data parallelism alone cannot train it. The lab's ratios do not depend on the model's size: its compute and its gradient grow together.)
#
# Every bandwidth here is **per direction**, the rate a ring AllReduce runs at:
#
# | link | per GPU, per direction |
# |---|---|
# | NVLink 4 inside a DGX H100 ("{{ (2 * NVLINK_BW) | bytes }}/s" is both directions added) | {{ NVLINK_BW | bytes }}/s |
# | InfiniBand NDR port, {{ NDR_GBIT }} Gb/s = {{ NDR_GBIT }} × 1e9 bits/s ÷ 8 bits per byte (not "{{ NDR_GBIT }} GB/s") | {{ LINK_BW | bytes }}/s |
# | PCIe Gen4 x16 slot: every byte a PCIe server's GPU sends crosses it, even on the way to a network card | {{ PCIE_BW | bytes }}/s |
#
# NVLink to PCIe is a {{ CLIFF | fmt(".1f") }}× cliff in bandwidth. Each step every GPU computes on one {{ TOKENS_PER_GPU_STEP }}-token sequence, {{ FLOPS_PER_PARAM_TOKEN | fmt("g") }} × params × tokens = {{ STEP_FLOP | fmt(".3g") }} FLOP at {{ PEAK_FLOPS | fmt("g", 1e12) }} TFLOP/s (dense BF16) and {{ MFU | fmt(".0%") }} MFU: **{{ COMPUTE_S | seconds }} of compute**. Then the {{ GPUS }} GPUs AllReduce the {{ MESSAGE_BYTES | bytes }} gradient in a ring (reduce-scatter, then all-gather), and nothing overlaps.
#
# Implement `gradient_bytes`, `gbit_to_bytes_per_s`, `transfer_time`, `intra_node_allreduce_time` and `comm_overhead_ratio` in `interconnect.py` (run `pytest` in this folder to check them), then predict.

# %%
# Setup (generated): your module, the instrument toolkit, numpy and matplotlib, the scenario's values.
import interconnect
import numpy as np
import matplotlib.pyplot as plt
from _instruments import Instrument, Buttons, Slider, Steps
from labs.lab02_interconnect.scenario import PARAMS as params   # the model's parameters, all of them on every GPU
from labs.lab02_interconnect.scenario import FP16_BYTES as fp16_bytes
from labs.lab02_interconnect.scenario import GPUS as gpus   # GPUs per DGX H100 node (or PCIe servers)
from labs.lab02_interconnect.scenario import COMPUTE_S as compute_s   # one sequence per GPU per step, s
from labs.lab02_interconnect.scenario import ACT1_LINKS as links   # interconnect -> bytes/s per GPU per direction
from labs.lab02_interconnect.scenario import NVLINK as nvlink_name
from labs.lab02_interconnect.scenario import PCIE as pcie_name
from labs.lab02_interconnect.scenario import NVLINK_BW as nvlink   # bytes/s per GPU per direction
from labs.lab02_interconnect.scenario import LINK_BW as link   # one NDR link, bytes/s per direction
from labs.lab02_interconnect.scenario import DANGER_RATIO as danger_ratio   # comm / compute above this: danger
from labs.lab02_interconnect.scenario import STORY_NODES as story_nodes
from labs.lab02_interconnect.scenario import STORY_LINKS as story_links
from labs.lab02_interconnect.scenario import STORY_SEQUENCES as story_sequences   # sequences per GPU per step
from labs.lab02_interconnect.scenario import MAX_SEQUENCES as max_sequences
from labs.lab02_interconnect.scenario import MAX_NODES as max_nodes
from labs.lab02_interconnect.scenario import MAX_LINKS as max_links
from labs.lab02_interconnect.scenario import DESIGN_NODES as design_nodes
from labs.lab02_interconnect.scenario import DESIGN_NIC_EFFICIENCY as design_nic_efficiency   # the share of line rate the lead plans for

# %% answer="act1_prediction"

# %% requires=["act1_prediction"] tags=["instrument"]
# Instrument: one training step per interconnect, computed with YOUR functions.
message_bytes = interconnect.gradient_bytes(params, fp16_bytes)


def act1_step(interconnect_name, sequences):
    compute = sequences * compute_s   # compute grows with the batch; the gradient does not
    comm = interconnect.intra_node_allreduce_time(message_bytes, gpus, links[interconnect_name])
    return compute, comm


def draw_act1(fig, interconnect_name, sequences):
    steps = {name: act1_step(name, sequences) for name in links}
    ax = fig.subplots()
    names = list(steps)
    ax.bar(names, [steps[n][0] for n in names], label="compute")
    ax.bar(names, [steps[n][1] for n in names], bottom=[steps[n][0] for n in names], label="AllReduce")
    for bar in ax.patches[names.index(interconnect_name)::len(names)]:   # the chosen one's two bars
        bar.set_edgecolor("black")
        bar.set_linewidth(2)
    ax.set_xticks(range(len(names)), [n.replace(" (", "\n(") for n in names], fontsize=8)
    ax.set(ylabel="seconds per training step", title=f"{gpus} GPUs, {sequences} sequence(s) per GPU per step")
    ax.legend()
    compute, comm = steps[interconnect_name]
    ratio = interconnect.comm_overhead_ratio(comm, compute)
    state = "DANGER: communication exceeds compute" if ratio > danger_ratio else "compute-bound enough"
    return (f"{interconnect_name}: step {compute + comm:.3f} s, communication {comm / (compute + comm):.0%} "
            f"of it (comm/compute {ratio:.2f}): {state}")


short_names = {name.split(" (")[0]: name for name in links}   # button labels -> interconnect
Instrument(draw_act1, interconnect_name=Buttons("interconnect", short_names, value=pcie_name.split(" (")[0]),
           sequences=Slider("sequences per GPU (batch)", 1, max_sequences, value=story_sequences)).show()

# %% requires=["act1_prediction"]
# Prediction vs reality at the scenario (your functions).
step_s = {name: sum(act1_step(name, story_sequences)) for name in links}
slowdown = interconnect.speedup(step_s[pcie_name], step_s[nvlink_name])
for name in links:
    print(f"{name:34s} step {step_s[name]:6.3f} s, computing {compute_s / step_s[name]:.0%} of the time")
print(f"Your functions: the PCIe servers train {slowdown:.2f}x slower than the NVLink node.")

# %% [markdown]
# Every GPU in the ring sends the same number of bytes whatever the interconnect; only how long they take changes. Now look at how many bytes that is.

# %% answer="act1_reflection"

# %% [markdown] reveal="act1_prediction"
# <details><summary>Check your derivation: the ring AllReduce and the step</summary>
#
# A ring of n GPUs moves an M-byte gradient at bandwidth B per direction in
#
# t_comm = 2(n−1)/n · M / B,   t_compute = 6 · P · T / (peak · MFU),   step = t_compute + t_comm
#
# and the throughput ratio of two systems is the ratio of their step times, not of their bandwidths.
# </details>

# %% [markdown]
# ## Act II — The multi-node scaling wall
#
# **ML Infrastructure Lead:** *"We're scaling from 1 DGX H100 node ({{ GPUS }} GPUs, NVLink) to {{ STORY_NODES }} nodes ({{ STORY_NODES * GPUS }} GPUs, InfiniBand, {{ STORY_LINKS }} NDR link per node). We expected {{ STORY_NODES }}× more throughput — we budgeted {{ BUDGET_MONTHS }} months to hit this target. First week of benchmarking shows we're only getting {{ STORY_SPEEDUP | fmt(".1f") }}× throughput on {{ STORY_NODES * GPUS }} GPUs versus 1 DGX node. The engineering team is pointing at software bugs in distributed PyTorch. But I'm not convinced. What is actually happening?"*
#
# Each node keeps its {{ TOKENS_PER_GPU_STEP }}-token sequence per GPU ({{ COMPUTE_S | seconds }} of compute), so {{ STORY_NODES }} nodes do {{ STORY_NODES }}× the work per step. The gradient is reduced **hierarchically**: a reduce-scatter over NVLink inside each node, an AllReduce of each GPU's 1/{{ GPUS }} shard across the nodes over InfiniBand, and an all-gather over NVLink. The message goes through in chunks, so the NVLink stages and the network stage work at once (as NCCL's own two-level algorithms pipeline them): the slower of the two sets the time. A single node has no inter-node stage. When communication takes longer than compute (`comm_overhead_ratio` > {{ DANGER_RATIO | fmt("g") }}) the cluster is in the **danger state**: it spends more time waiting on the network than training.
#
# Implement `hierarchical_allreduce_time`, `speedup`, `scaling_efficiency` and `min_ib_links`, then predict.

# %% answer="act2_prediction"

# %% requires=["act2_prediction"] tags=["instrument"]
# Instrument: scaling from 1 to max_nodes nodes, computed with YOUR functions.
def act2_step(nodes, links_per_node, sequences):
    compute = sequences * compute_s
    comm = interconnect.hierarchical_allreduce_time(message_bytes, gpus, int(nodes), nvlink, links_per_node * link)
    return compute, comm


def draw_act2(fig, nodes, links_per_node, sequences):
    ks = np.arange(1, max_nodes + 1)
    one = sum(act2_step(1, links_per_node, sequences))
    steps = [act2_step(k, links_per_node, sequences) for k in ks]
    speedups = [interconnect.speedup(k * one, sum(s)) for k, s in zip(ks, steps)]
    ratios = [interconnect.comm_overhead_ratio(comm, compute) for compute, comm in steps]
    left, right = fig.subplots(1, 2)
    left.plot(ks, ks, "k--", label="ideal")
    left.plot(ks, speedups, label=f"{links_per_node} NDR link(s) per node")
    left.plot([nodes], [speedups[nodes - 1]], "o", color="black")
    left.set(xlabel=f"nodes ({gpus} GPUs each)", ylabel="throughput speedup over 1 node")
    left.legend(fontsize=8)
    right.plot(ks, ratios)
    right.axhline(danger_ratio, color="red", linestyle=":", label="danger: comm > compute")
    right.plot([nodes], [ratios[nodes - 1]], "o", color="black")
    right.set(xlabel="nodes", ylabel="comm / compute", ylim=(0, 1.6 * max(max(ratios), danger_ratio)))
    right.legend(fontsize=8)
    compute, comm = steps[nodes - 1]
    ratio = ratios[nodes - 1]
    state = "DANGER: communication exceeds compute" if ratio > danger_ratio else "out of the danger state"
    efficiency = interconnect.scaling_efficiency(speedups[nodes - 1], nodes)
    return (f"{nodes} nodes x {links_per_node} link(s), {sequences} sequence(s) per GPU: step {compute + comm:.3f} s, "
            f"communication {comm / (compute + comm):.0%} of it, speedup {speedups[nodes - 1]:.1f}x "
            f"(efficiency {efficiency:.0%}): {state}")


Instrument(draw_act2, figsize=(11, 4),
           nodes=Slider("nodes", 1, max_nodes, value=story_nodes),
           links_per_node=Steps("NDR links per node", list(range(1, max_links + 1)), value=story_links),
           sequences=Slider("sequences per GPU (batch)", 1, max_sequences, value=story_sequences)).show()

# %% requires=["act2_prediction"]
# Prediction vs reality at the story's nodes and links (your functions).
one_node_s = sum(act2_step(1, story_links, story_sequences))
compute_story, comm_story = act2_step(story_nodes, story_links, story_sequences)
gain = interconnect.speedup(story_nodes * one_node_s, compute_story + comm_story)
ratio = interconnect.comm_overhead_ratio(comm_story, compute_story)
print(f"speedup {gain:.2f}x of an ideal {story_nodes}x, efficiency {interconnect.scaling_efficiency(gain, story_nodes):.0%}")
print(f"AllReduce {comm_story:.3f} s vs compute {compute_story:.3f} s: comm/compute {ratio:.2f}"
      + ("  -> DANGER: communication exceeds compute" if ratio > danger_ratio else ""))

# %% [markdown] reveal="act2_prediction"
# <details><summary>Check your derivation: hierarchical AllReduce</summary>
#
# With g GPUs per node, k nodes, NVLink bandwidth B_nv per GPU and InfiniBand bandwidth B_ib per node:
#
# t = max( 2(g−1)/g · M / B_nv  (reduce-scatter and all-gather inside each node),  2(k−1)/k · M / B_ib  (the shards' AllReduce across nodes) )
#
# Pipelined, the two stages overlap and the slower one sets the time; run one after the other they would add up ({{ STORY_ADDED_S | seconds }} instead of {{ STORY_COMM_S | seconds }} at the story's {{ STORY_NODES }} nodes), which bounds the time from above. Measured AllReduces across DGX H100 nodes lie between the two (the model vs measurement section below). The inter-node term carries almost 2M per node however many nodes join, through links far slower than NVLink: it does not shrink as k grows, while each node's compute stays the same.
# </details>

# %% answer="act2_reflection"

# %% requires=["act2_reflection"]
# Design: the fewest NDR links per node that keep comm/compute <= danger_ratio (your min_ib_links), with
# each link at its line rate and at the share of it the lead plans for.
for k in design_nodes:
    needs = [interconnect.min_ib_links(message_bytes, gpus, k, nvlink, e * link, compute_s, danger_ratio, max_links)
             for e in (1.0, design_nic_efficiency)]
    print(f"{k:3d} nodes: " + ", ".join(f"{need} link(s) per node at {e:.0%} of line rate" if need
                                        else f"no count up to {max_links} at {e:.0%} of line rate"
                                        for need, e in zip(needs, (1.0, design_nic_efficiency))))

# %% challenge="lab02_pipeline"

# %% measurements=true

# %% answer="measurement_reflection"

# %% [markdown]
# ## Your functions
#
# Each function below is graded on the worked examples, hidden inputs compared with the reference, and the named properties (run `pytest` here to see the public ones).

# %% grades=true
