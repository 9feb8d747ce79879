# %% [markdown]
# # Lab 07 — The Checkpoint Reckoning: fault tolerance at scale
#
# Implement the functions of `fault_tolerance.py` (units in every docstring: seconds, bytes, bytes/s). A synchronous training job stops whenever any one of its GPUs fails and restarts from its last checkpoint: every checkpoint stalls training, every failure redoes the work since the last one. The plots and readouts below call *your* functions, so they are only as right as your code; run `pytest` in this folder for the public checks.
#
# ## Act I — The checkpoint cost blindspot
#
# > *A training platform lead writes:* "We're training a {{ ACT1_PARAMS | fmt(".0f", 1e9) }}B-parameter model on our {{ ACT1_GPUS | fmt(",") }}-GPU cluster. We checkpoint every {{ ACT1_INTERVAL_S | fmt(".0f", 60) }} minutes. Each checkpoint stalls training for {{ ACT1_CHECKPOINT_S | fmt(".0f", 60) }} minutes while it is written to NFS, and the cluster fails on average once every {{ ACT1_MTBF_S | fmt(".0f", 3600) }} hours. An engineer says we checkpoint too often, but I don't want to lose hours of work when we fail. Are we at the right frequency?"
#
# **The model.** Call T the compute time between two checkpoints, C the stall of one checkpoint, M the job's mean time between failures and R the restart time. Failures arrive at random, so one strikes on average halfway through an interval: the work since the last checkpoint is redone. Checkpoint more often and the stalls add up; less often and each failure redoes more.

# %%
# Setup (generated): your module, the cited constants, numpy and the instrument toolkit.
import fault_tolerance
import numpy as np
from _instruments import Instrument, LogSlider, Slider, Steps, Buttons
from labs.lab07_fault_tolerance.scenario import ACT1_CHECKPOINT_S as checkpoint_s   # the lead's stall per checkpoint, s
from labs.lab07_fault_tolerance.scenario import ACT1_MTBF_S as mtbf_s   # the lead's cluster MTBF, s
from labs.lab07_fault_tolerance.scenario import ACT1_INTERVAL_S as interval_s   # every 30 minutes, s
from labs.lab07_fault_tolerance.scenario import ACT1_GPUS as act1_gpus
from labs.lab07_fault_tolerance.scenario import ACT2_GPUS as gpus
from labs.lab07_fault_tolerance.scenario import GPUS_PER_NODE as gpus_per_node
from labs.lab07_fault_tolerance.scenario import ACT2_PARAMS as params   # the Act II model's parameters
from labs.lab07_fault_tolerance.scenario import GPU_MTBF_S as gpu_mtbf_s   # 50,000 hours per GPU, s
from labs.lab07_fault_tolerance.scenario import STORAGE_BANDWIDTH as storage_bandwidth   # bytes/s, all writers
from labs.lab07_fault_tolerance.scenario import NODE_BANDWIDTH as node_bandwidth   # bytes/s a node sends to storage
from labs.lab07_fault_tolerance.scenario import COPY_BANDWIDTH as copy_bandwidth   # GPU -> host, bytes/s
from labs.lab07_fault_tolerance.scenario import RESTART_S as restart_s
from labs.lab07_fault_tolerance.scenario import LEAD_INTERVAL_S as lead_interval_s   # the fleet lead's plan, s
from labs.lab07_fault_tolerance.scenario import OVERHEAD_BUDGET as overhead_budget   # stall share: the failure state

# %% answer="act1_prediction"

# %% requires=["act1_prediction"] tags=["instrument"]
# Instrument: the share of the run lost against the checkpoint interval, split into its two parts.
INTERVALS_S = np.logspace(np.log10(60), np.log10(8 * 3600), 121)   # 1 minute .. 8 hours


def act1(fig, interval_min, checkpoint_min, mtbf_h):
    interval, stall, mtbf = 60 * interval_min, 60 * checkpoint_min, 3600 * mtbf_h
    best = fault_tolerance.young_daly_interval_s(stall, mtbf)
    total = [fault_tolerance.waste_fraction(t, stall, mtbf) for t in INTERVALS_S]
    ax = fig.subplots()
    ax.plot(INTERVALS_S / 60, total, label="lost in all (waste_fraction)")
    ax.plot(INTERVALS_S / 60, [stall / t for t in INTERVALS_S], ":", label="checkpoint stalls C/T")
    ax.plot(INTERVALS_S / 60, [w - stall / t for w, t in zip(total, INTERVALS_S)], ":", label="work redone")
    ax.axvline(best / 60, color="green", linestyle="--", label=f"your young_daly_interval_s: {best / 60:.1f} min")
    ax.plot([interval_min], [fault_tolerance.waste_fraction(interval, stall, mtbf)], "o", color="red")
    ax.set(xscale="log", ylim=(0, 0.5), xlabel="checkpoint interval T (minutes)", ylabel="share of the run lost",
           title=f"C = {checkpoint_min:g} min, M = {mtbf_h:g} h")
    ax.legend(fontsize=8)
    lost, least = fault_tolerance.waste_fraction(interval, stall, mtbf), fault_tolerance.waste_fraction(best, stall, mtbf)
    return "\n".join([f"every {interval_min:g} min: {lost:.1%} of the run lost ({stall / interval:.1%} stalled)",
                      f"every {best / 60:.1f} min (your young_daly_interval_s): {least:.1%} lost",
                      f"on {act1_gpus:,} GPUs for a week: {(lost - least) * act1_gpus * 168:,.0f} GPU-hours apart"])


Instrument(act1, figsize=(8, 4.5), interval_min=Slider("interval T (min)", 5, 240, value=interval_s / 60, step=5),
           checkpoint_min=Slider("checkpoint stall C (min)", 0.5, 30, value=checkpoint_s / 60, step=0.5),
           mtbf_h=Slider("cluster MTBF M (h)", 1, 100, value=mtbf_s / 3600, step=1)).show();

# %% requires=["act1_prediction"]
best_s = fault_tolerance.young_daly_interval_s(checkpoint_s, mtbf_s)
print(f"Your young_daly_interval_s: {best_s / 60:.1f} min; the lead checkpoints every {interval_s / 60:.0f} min "
      f"({interval_s / best_s:.2f} of it)")
for label, t in (("every 30 min", interval_s), ("at your interval", best_s)):
    print(f"  {label:17s} lost {fault_tolerance.waste_fraction(t, checkpoint_s, mtbf_s):.1%} of the run, "
          f"{checkpoint_s / t:.1%} of it in checkpoint stalls")

# %% [markdown] reveal="act1_prediction"
# <details><summary>Check your derivation: the Act I equations</summary>
#
# - **Lost per unit of time** (Young 1974): one stall C per interval T, and per failure (one per M) half an interval redone and a restart R: w(T) = C/T + (T/2 + R)/M.
# - **The balance:** dw/dT = −C/T² + 1/(2M) = 0 gives T* = √(2·C·M). There the stall share and the rework share are equal, √(C/2M) each; R moves neither.
# - **The cluster:** any of n GPUs stops the job and failures are independent, so the failure rates add: M = M_gpu / n.
# - **Exact, not first order** (Daly 2006): under exponential failures an interval succeeds only if no failure strikes during T + C, so the share of wall-clock time spent on useful work is goodput = T / (M·e^{R/M}·(e^{(T+C)/M} − 1)); its best interval is near Daly's √(2CM)·(1 + √x/3 + x/9) − C with x = C/2M.
#
# </details>

# %% answer="act1_reflection"

# %% [markdown]
# ## Act II — Fleet-scale checkpointing
#
# > *A fleet training lead writes:* "We are training a {{ ACT2_PARAMS | fmt(".0f", 1e12) }}-trillion-parameter model with mixed-precision Adam on {{ ACT2_GPUS | fmt(",") }} H100s ({{ ACT2_NODES | fmt(",") }} nodes). Each GPU fails once in {{ GPU_MTBF_S | fmt(",.0f", 3600) }} hours on average. Our Lustre storage absorbs {{ STORAGE_BANDWIDTH | fmt(".0f", 1e9) }} GB/s from all nodes together, each node sending up to {{ NODE_BANDWIDTH | fmt(".0f", 1e9) }} GB/s; a restart after a failure takes {{ RESTART_S | fmt(".0f", 60) }} minutes. I'd checkpoint synchronously every {{ LEAD_INTERVAL_S | fmt(".0f", 60) }} minutes to be safe. Checkpoint stalls must stay under {{ OVERHEAD_BUDGET | percent }} of training time."
#
# **Failure state:** checkpoint stalls above {{ OVERHEAD_BUDGET | percent }} of the time. The source lab tells this story with a {{ LAB_GPU_MTBF_S | fmt(".0f", 3600) }}-hour GPU and a "roughly {{ LAB_CHECKPOINT_BYTES | bytes }}" checkpoint; the errata explain both.

# %% answer="act2_prediction"

# %% requires=["act2_prediction"] tags=["instrument"]
# Instrument: the fleet's checkpointing plan, every number from your functions.
def fleet(n_gpus, mtbf_h, storage_gb_s, mode, interval_min):
    mtbf = fault_tolerance.cluster_mtbf_s(3600 * mtbf_h, n_gpus)
    size = fault_tolerance.checkpoint_bytes(params)
    write = fault_tolerance.checkpoint_write_time_s(size, storage_gb_s * 1e9, max(1, n_gpus // gpus_per_node),
                                                    node_bandwidth)
    stall = fault_tolerance.snapshot_stall_s(size, n_gpus, copy_bandwidth) if mode == "asynchronous" else write
    best = fault_tolerance.young_daly_interval_s(stall, mtbf)
    return mtbf, size, write, stall, best, fault_tolerance.goodput(60 * interval_min, stall, mtbf, restart_s)


def act2(fig, n_gpus, mtbf_h, storage_gb_s, mode, interval_min):
    mtbf, size, write, stall, best, good = fleet(n_gpus, mtbf_h, storage_gb_s, mode, interval_min)
    ax = fig.subplots()
    minutes = np.logspace(-1, 3, 121)
    ax.plot(minutes, [fault_tolerance.goodput(60 * m, stall, mtbf, restart_s) for m in minutes], label="goodput")
    ax.axvline(best / 60, color="green", linestyle="--", label=f"young_daly_interval_s {best / 60:.3g} min")
    ax.plot([interval_min], [good], "o", color="red", label=f"your plan: every {interval_min:g} min")
    ax.set(xscale="log", ylim=(0, 1), xlabel="checkpoint interval (minutes)", ylabel="goodput",
           title=f"{n_gpus:,} GPUs, {mode}")
    ax.legend(fontsize=8)
    share = stall / (60 * interval_min)
    lines = [f"cluster MTBF {mtbf / 3600:.3g} h ({mtbf:,.0f} s); checkpoint {size / 1e12:.3g} TB, written in {write:.3g} s",
             f"stall per checkpoint {stall:.3g} s ({mode}); your young_daly_interval_s {best / 60:.3g} min",
             f"every {interval_min:g} min: stalls {share:.1%} of the time, goodput {good:.1%}"]
    if share > overhead_budget:
        lines.append(f"FAILURE: checkpoint stalls above {overhead_budget:.0%} of the time")
    if mode == "asynchronous" and write > 60 * interval_min:
        lines.append("the background write takes longer than the interval: snapshots would pile up")
    return "\n".join(lines)


Instrument(act2, figsize=(8, 4.5), n_gpus=Steps("GPUs", [1024, 2048, 4096, 8192, 16384, 32768], value=gpus),
           mtbf_h=LogSlider("per-GPU MTBF (h)", 100, 1e6, value=gpu_mtbf_s / 3600),
           storage_gb_s=LogSlider("storage (GB/s)", 50, 5000, value=storage_bandwidth / 1e9),
           mode=Buttons("checkpoints", ["synchronous", "asynchronous"], value="synchronous"),
           interval_min=LogSlider("interval (min)", 0.5, 600, value=lead_interval_s / 60)).show();

# %% requires=["act2_prediction"]
mtbf, size, write, stall, best, good = fleet(gpus, gpu_mtbf_s / 3600, storage_bandwidth / 1e9, "synchronous",
                                             lead_interval_s / 60)
print(f"Your functions: the cluster fails every {mtbf / 3600:.2f} h; a {size / 1e12:.3g} TB checkpoint takes {write:.3g} s")
print(f"  the lead's every {lead_interval_s / 60:.0f} min: stalls {write / lead_interval_s:.1%} of the time"
      f"{'  FAILURE: over the budget' if write / lead_interval_s > overhead_budget else ''}, goodput {good:.1%}")
print(f"  your young_daly_interval_s: every {best / 60:.1f} min, goodput "
      f"{fault_tolerance.goodput(best, write, mtbf, restart_s):.1%}")

# %% [markdown] reveal="act2_prediction"
# <details><summary>Check your derivation: the Act II numbers</summary>
#
# - **The checkpoint** of mixed-precision Adam holds, per parameter, its 16-bit weight and the optimizer's FP32 master copy, momentum and variance: {{ WEIGHT_BYTES | fmt("g") }} + {{ (BYTES_PER_PARAM - WEIGHT_BYTES) | fmt("g") }} = {{ BYTES_PER_PARAM | fmt("g") }} bytes, {{ ACT2_CHECKPOINT_BYTES | bytes }} for {{ ACT2_PARAMS | fmt(".0f", 1e12) }}T parameters (ZeRO, sec. 3.1); the source lab's {{ LAB_CHECKPOINT_BYTES | bytes }} is the weights alone.
# - **The write** goes at the slower of the storage ({{ STORAGE_BANDWIDTH | fmt(".0f", 1e9) }} GB/s) and what all nodes send ({{ (ACT2_NODES * NODE_BANDWIDTH) | fmt(",.0f", 1e9) }} GB/s): {{ ACT2_WRITE_S | seconds }}. Synchronous, that is C; at √(2CM) the stall share is √(C/2M).
# - **Asynchronous** (CheckFreq): each GPU copies its {{ (ACT2_CHECKPOINT_BYTES / ACT2_GPUS) | bytes }} shard to host memory over PCIe in {{ ACT2_SNAPSHOT_S | seconds }}; C becomes that stall, while the write runs in the background and must end before the next snapshot.
#
# </details>

# %% answer="act2_reflection"

# %% measurements=true

# %% answer="measurement_reflection"

# %% [markdown]
# The 1/n law is not what the source lab got wrong: its input was. Llama 3's record implies about {{ (LLAMA3_MTBF_S * LLAMA3_GPUS) | fmt(",.0f", 3600) }} hours per GPU, counting every cause (GPUs, their memory, hosts, network) as the GPU's; the lab's own learning objective states {{ GPU_MTBF_S | fmt(",.0f", 3600) }}, and at the source lab's per-GPU MTBF, {{ LAB_GPU_MTBF_S | fmt(".0f", 3600) }} hours, a {{ ACT2_GPUS | fmt(",") }}-GPU job would stop every {{ LAB_MTBF_S | fmt(".0f") }} seconds.

# %% challenge="lab07_plan"

# %% grades=true
