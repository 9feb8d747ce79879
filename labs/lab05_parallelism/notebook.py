# %% [markdown]
# # Lab 05 — The Parallelism Paradox
#
# ## Act I — The data-parallel wall
#
# > **Training Infrastructure Lead:** "We are training a {{ ACT1.params | fmt(".0f", 1e9) }}B-parameter model with pure data parallelism on H100s. Every step processes the same global batch: {{ ACT1.tokens_per_step | fmt(",.0f") }} tokens ({{ ACT1_SEQUENCES | fmt(",") }} sequences of {{ SEQ_LEN | fmt(",") }} tokens). I measured MFU at {{ N_SMALL }} GPUs = {{ MFU8 | fmt(".1%") }}. At {{ N_MID }} GPUs it dropped to {{ MFU64 | fmt(".1%") }}. At {{ N_LARGE }} GPUs it is {{ MFU512 | fmt(".1%") }}. The model has not changed. We just added GPUs and it got worse, and we pay \${{ USD_PER_GPU_HOUR | fmt(".2f") }} per GPU-hour for all of them. Why does MFU fall as we scale?"
#
# A data-parallel step computes the forward and backward pass on each GPU's share of the batch ({{ FLOPS_PER_PARAM_TOKEN | fmt("g") }} x params x tokens FLOP in all, at {{ ACT1.mfu | fmt(".1%") }} MFU of the dense {{ H100_PEAK_TFLOPS | fmt(".0f") }} TFLOP/s peak), then AllReduces the {{ GRAD_GB | fmt(".0f") }} GB fp16 gradient with a ring. Inside a DGX node the ring runs on NVLink ({{ NVLINK_GBPS | fmt(".0f") }} GB/s per direction); past {{ GPN }} GPUs it leaves the node through its {{ NICS }} InfiniBand NDR NICs ({{ IB_GBPS | fmt(".0f") }} GB/s each): NCCL runs one ring per NIC at once, 7 of every 8 hops on NVLink, so each rank sees the node's NICs together, {{ CLUSTER_GBPS | fmt(".0f") }} GB/s (`cluster.ring_link`, shipped beside your module). Nothing overlaps: MFU = base MFU x compute / (compute + comm). Memory is not the wall in this act: plain data parallelism would need {{ ACT1_STATES_GB_NO_ZERO | fmt(".0f") }} GB of model states per GPU, more than the {{ HBM_BYTES | fmt(".0f", 1e9) }} GB of an H100, so the optimizer states are sharded with ZeRO stage {{ ACT1_ZERO_STAGE }} ({{ ACT1_STATES_GB_ZERO | fmt(".1f") }} GB per GPU at {{ N_SMALL }} GPUs; {{ ACT1_MEMORY_GB | fmt(".1f") }} GB with one sequence's activations, micro-batches of one sequence), which leaves the gradient AllReduce, and so every time below, unchanged.

# %%
# Setup (generated): your module, the cited constants, numpy and matplotlib.
import parallelism
import constants
import cluster
import numpy as np
import matplotlib.pyplot as plt
from _instruments import Instrument, Slider, Steps
from labs.lab05_parallelism.scenario import ACT1 as act1   # Act I: the model and its fixed global batch
from labs.lab05_parallelism.scenario import CURVE_GPUS as gpus
from labs.lab05_parallelism.scenario import ACT1_GPUS as measured_gpus   # the stakeholder's measurements
from labs.lab05_parallelism.scenario import N_LARGE as n_large
from labs.lab05_parallelism.scenario import MFU_FLOOR as mfu_floor   # the lab's "practical floor"
from labs.lab05_parallelism.scenario import ACT2 as act2   # Act II: GPT-3 on the H100 cluster
from labs.lab05_parallelism.scenario import MODEL_SHAPE as model_shape
from labs.lab05_parallelism.scenario import SCENARIO_ARGS as scenario_args   # best_3d_config's inputs
from labs.lab05_parallelism.scenario import BEST_TP as best_tp
from labs.lab05_parallelism.scenario import BEST_PP as best_pp
from labs.lab05_parallelism.scenario import BEST_M as best_m
from labs.lab05_parallelism.scenario import TP_STEPS as tp_steps
from labs.lab05_parallelism.scenario import PP_STEPS as pp_steps
from labs.lab05_parallelism.scenario import M_STEPS as m_steps   # divisors of the global batch
from labs.lab05_parallelism.questions import OPTION_LAYOUTS as options   # letter -> (TP, PP, DP)


# %% answer="act1_prediction"

# %% requires=["act1_prediction"] tags=["instrument"]
# Instrument: effective MFU against the number of GPUs (your functions)
def plain_log_ticks(ax, axis="x"):
    """Log-axis tick labels as plain numbers (no mathtext)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(NullFormatter())


peak, gpus_per_node = constants.H100_PEAK_FLOPS_BF16, constants.GPUS_PER_DGX_H100


def link(n):
    # NVLink inside one node; past it the ring's link on DGX H100 nodes (cluster.py)
    ring = cluster.ring_link(n)
    return ring["bandwidth"], ring["alpha_s"]


def times(n, base_mfu=act1["mfu"]):
    bw, alpha = link(n)
    step = parallelism.data_parallel_step_time(act1["params"], act1["tokens_per_step"], n, peak, base_mfu, bw, alpha)
    # one GPU has no AllReduce, and compute splits evenly: compute(n) = step(1) / n
    compute = parallelism.data_parallel_step_time(act1["params"], act1["tokens_per_step"], 1, peak, base_mfu,
                                                  bw, alpha) / n
    return compute, step - compute


def draw_wall(fig, n_gpus, base_mfu):
    curve = [times(n, base_mfu) for n in gpus]
    mfus = [parallelism.effective_mfu(base_mfu, c, m) for c, m in curve]
    ax1, ax2 = fig.subplots(1, 2)
    ax1.plot(gpus, [100 * x for x in mfus], "o-", label="effective MFU")
    ax1.axhline(100 * mfu_floor, ls="--", c="gray", label=f"{mfu_floor:.0%} practical floor")
    ax1.axvline(gpus_per_node + 0.5, ls=":", c="red", label="node boundary: NVLink -> the nodes' NICs")
    ax2.plot(gpus, [c for c, _ in curve], "o-", label="compute per step")
    ax2.plot(gpus, [m for _, m in curve], "s-", label="gradient AllReduce")
    ax2.set_yscale("log")
    plain_log_ticks(ax2, "y")
    for ax in (ax1, ax2):
        ax.axvline(n_gpus, c="black", alpha=0.4)
        ax.set_xscale("log", base=2)
        plain_log_ticks(ax)
        ax.legend(fontsize=7)
    ax1.set(xlabel="GPUs (fixed global batch)", ylabel="MFU (%)", title="The data-parallel wall")
    ax2.set(xlabel="GPUs", ylabel="seconds", title="Where the step goes")
    compute, comm = times(n_gpus, base_mfu)
    mfu = parallelism.effective_mfu(base_mfu, compute, comm)
    banner = "  BELOW THE PRACTICAL FLOOR" if mfu < mfu_floor else ""
    return (f"{n_gpus} GPUs: compute {compute:.3f} s + AllReduce {comm:.3f} s per step, "
            f"effective MFU {100 * mfu:.1f}%{banner}")


Instrument(draw_wall, figsize=(11, 4), n_gpus=Steps("GPUs", list(gpus), value=n_large),
           base_mfu=Slider("MFU while computing", 0.2, 0.8, value=act1["mfu"], step=0.02)).show();

# %% requires=["act1_prediction"]
# Prediction vs reality (your functions)
for n in measured_gpus:
    compute, comm = times(n)
    print(f"{n:4d} GPUs: compute {compute:8.3f} s, AllReduce {comm:6.3f} s, "
          f"comm/compute {comm / compute:6.3f}, MFU {100 * parallelism.effective_mfu(act1['mfu'], compute, comm):5.1f}%")

# %% answer="act1_reflection"

# %% [markdown] reveal="act1_prediction"
# <details><summary>Check your derivation: the data-parallel step</summary>
#
# compute = {{ FLOPS_PER_PARAM_TOKEN | fmt("g") }} · P · T / (N · peak · MFU), ring AllReduce = 2(N−1)·α + 2(N−1)/N · P·b / B, effective MFU = MFU · compute / (compute + AllReduce). Compute falls as 1/N; the AllReduce tends to 2·P·b/B. Past one node B is the ring's per-rank link, min({{ NICS }} NICs × {{ IB_GBPS | fmt(".0f") }} GB/s, 8/7 × NVLink) = {{ CLUSTER_GBPS | fmt(".0f") }} GB/s; a flat ring at one NIC's {{ IB_GBPS | fmt(".0f") }} GB/s per GPU (the source lab's model) would put MFU at {{ N_LARGE }} GPUs at {{ FLAT_MFU512 | fmt(".1%") }}, not {{ MFU512 | fmt(".1%") }}.
# </details>

# %% [markdown]
# ## Act II — 3D parallelism design challenge
#
# > **MLOps Architect:** "We need to train GPT-3 ({{ ACT2.params | fmt(".0f", 1e9) }}B parameters, {{ ACT2.layers }} layers, hidden {{ ACT2.hidden | fmt(",") }}, {{ ACT2.heads }} heads) on {{ ACT2.n_gpus | fmt(",") }} H100s in {{ (ACT2.n_gpus // GPN) }} DGX nodes. Each H100 has {{ HBM_BYTES | bytes }} of HBM3. Mixed-precision Adam needs {{ ADAM_BYTES_PER_PARAM }} bytes per parameter ({{ FULL_STATES_TB | fmt(".1f") }} TB of model states), and one layer's activations for a single {{ SEQ_LEN | fmt(",") }}-token sequence take {{ ACT_LAYER_T1_GB | fmt(".2f") }} GB. Design the TP x PP x DP layout that does not run out of memory, keeps tensor parallelism on NVLink and keeps the pipeline bubble at or below {{ ACT2.bubble_ceiling | fmt(".1%") }}."
#
# The global batch is {{ ACT2.global_batch | fmt(",") }} sequences; each DP replica runs m = {{ ACT2.global_batch | fmt(",") }} / DP microbatches of {{ ACT2.micro_batch }} sequence through a 1F1B pipeline. **Out of memory is the failure state:** a layout that needs more than {{ ACT2.capacity_bytes | bytes }} on its busiest GPU does not train at all.

# %% answer="act2_prediction"

# %% requires=["act2_prediction"] tags=["instrument"]
# Instrument: TP, PP and micro-batches of GPT-3 (your functions)
capacity, ceiling = constants.H100_HBM_CAPACITY_BYTES, act2["bubble_ceiling"]


def measure(tp, pp, m):
    """The layout with DP = GPUs / (TP x PP), each replica's share of the batch cut into m micro-batches."""
    dp = act2["n_gpus"] // tp // pp                 # the data-parallel replicas
    micro_batch = act2["global_batch"] // dp // m   # sequences per micro-batch
    total = parallelism.peak_memory_bytes_per_gpu(**model_shape, micro_batch=micro_batch, tp=tp, pp=pp, dp=dp,
                                                  microbatches=m)
    states = parallelism.model_state_bytes_per_gpu(act2["params"], dp, act2["zero_stage"], tp, pp)
    return dict(dp=dp, micro_batch=micro_batch, total=total, states=states, activations=total - states,
                bubble=parallelism.pipeline_bubble_fraction(pp, m))


def draw_layout(fig, tp, pp, m):
    if act2["n_gpus"] % (tp * pp) or act2["global_batch"] % (act2["n_gpus"] // (tp * pp) * m):
        return (f"TP x PP = {tp * pp} and m = {m} do not split {act2['n_gpus']} GPUs and {act2['global_batch']} "
                "sequences into whole replicas and micro-batches: move a control")
    r = measure(tp, pp, m)
    ax1, ax2 = fig.subplots(1, 2)
    ax1.bar(["busiest GPU"], [r["states"] / 1e9], label="model states")
    ax1.bar(["busiest GPU"], [r["activations"] / 1e9], bottom=[r["states"] / 1e9], label="activations (1F1B)")
    ax1.axhline(capacity / 1e9, c="red", ls="--", label=f"{capacity / 1e9:.0f} GB HBM")
    ax1.set(ylabel="GB per GPU", title="Memory")
    ax2.bar(["bubble"], [100 * r["bubble"]], color="tab:orange")
    ax2.axhline(100 * ceiling, c="red", ls="--", label="bubble ceiling")
    ax2.set(ylabel="% of step", title="Pipeline bubble")
    for ax in (ax1, ax2):
        ax.legend(fontsize=7)
    lines = [f"TP={tp} PP={pp} DP={r['dp']}, m={m} micro-batches of {r['micro_batch']} sequence(s)",
             f"memory {r['total'] / 1e9:.1f} GB (states {r['states'] / 1e9:.1f} + activations {r['activations'] / 1e9:.1f})",
             f"bubble {100 * r['bubble']:.2f}% (ceiling {100 * ceiling:.0f}%)"]
    if not parallelism.fits_in_memory(r["total"], capacity):
        lines.insert(0, "OUT OF MEMORY: this layout cannot train.")
    if parallelism.tp_crosses_node(tp, act2["gpus_per_node"]):
        lines.append(f"WARNING: TP={tp} crosses the {act2['gpus_per_node']}-GPU node: its AllReduces leave NVLink.")
    return "\n".join(lines)


Instrument(draw_layout, figsize=(8, 3.5), tp=Steps("TP", list(tp_steps), value=best_tp),
           pp=Steps("PP", list(pp_steps), value=best_pp),
           m=Steps("micro-batches m", list(m_steps), value=best_m)).show();

# %% requires=["act2_prediction"]
# Prediction vs reality (your functions)
if act2_prediction not in options:
    raise ValueError(f"act2_prediction must be one of {list(options)}, got {act2_prediction!r}")
for letter, (tp, pp, dp) in options.items():
    m = act2["global_batch"] // act2["micro_batch"] // dp
    r = measure(tp, pp, m)
    print(f"{letter}{' (yours)' if letter == act2_prediction else ''}: TP={tp} PP={pp} DP={dp}, m={m}: "
          f"memory {r['total'] / 1e9:.1f} GB, fits: {parallelism.fits_in_memory(r['total'], capacity)}, "
          f"TP crosses a node: {parallelism.tp_crosses_node(tp, act2['gpus_per_node'])}, "
          f"bubble {100 * r['bubble']:.2f}%")
print("Your best_3d_config says:", parallelism.best_3d_config(**scenario_args, capacity_bytes=capacity))

# %% answer="act2_reflection"

# %% [markdown] reveal="act2_prediction"
# <details><summary>Check your derivation: memory and bubble</summary>
#
# model states per GPU = {{ ADAM_BYTES_PER_PARAM }} · P / (TP · PP) without ZeRO; the first 1F1B stage holds PP micro-batches of L/PP layers of activations; bubble = (p − 1) / (m + p − 1) with m = global batch / (DP · micro-batch).
# </details>

# %% challenge="lab05_layout"

# %% measurements=true

# %% answer="measurement_reflection"

# %% grades=true
