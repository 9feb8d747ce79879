# %% [markdown]
# # Lab 01 — The scale illusion and fleet TCO
#
# Implement the functions of `scaling.py` (SI units in every docstring: seconds, bytes, FLOP, watts, US dollars; fractions, never percent). The plots, instruments and readouts below call *your* functions, so they are only as right as your code; run `pytest` in this folder for the public checks.
#
# ## Act I: the scale illusion
#
# *From the VP of Engineering:* "We need to train a {{ PARAMS | fmt(".0f", 1e9) }}B-parameter model on {{ TOKENS | fmt(".1f", 1e12) }}T tokens, Chinchilla's recipe. That is {{ FLOPS_PER_PARAM_TOKEN | fmt("g") }} x parameters x tokens = {{ TOTAL_FLOPS | fmt(".3g") }} FLOP. At {{ MFU | percent }} of an H100's dense {{ PEAK_FLOPS | fmt(",.0f", 1e12) }} TFLOP/s that is {{ YEARS_1GPU | fmt(".1f") }} years of one GPU's work. We can get {{ N_FLEET | fmt(",") }} H100s, so I expect {{ IDEAL_DAYS | fmt(".1f") }} days. Is that realistic?"
#
# The cluster trains data parallel: each GPU computes its share of every {{ TOKENS_PER_STEP | fmt(".0f", 1e6) }}M-token step ({{ SEQ_LEN | fmt(",") }}-token sequences) through the whole model. The model does not fit on one GPU: mixed-precision Adam keeps {{ C.ADAM_MIXED_PRECISION_BYTES_PER_PARAM }} bytes a parameter, {{ REPLICATED_STATE_BYTES | bytes }} in all, and the bf16 weights alone are {{ GRAD_BYTES | bytes }}, more than an H100's {{ CAPACITY_BYTES | fmt(".1f", 1e9) }} GB ({{ (CAPACITY_BYTES / 2**30) | fmt(".0f") }} GiB). So the GPUs shard everything with **ZeRO-3**: each keeps 1/{{ N_FLEET | fmt(",") }} of the weights, gradients and optimizer states ({{ STATE_BYTES | fmt(".2f", 1e9) }} GB), gathers each layer's weights when it computes that layer, and keeps only each layer's input, recomputing the rest of its activations in the backward pass (kept whole, one sequence's activations would take {{ ACTIVATION_BYTES_KEPT_WHOLE | fmt(".0f", 1e9) }} GB): about {{ MEMORY_BYTES | fmt(".1f", 1e9) }} GB per GPU. (MFU counts the model's 6 × parameters × tokens FLOP, not the recomputed forward pass, as PaLM's MFU does.)
#
# Sharding costs traffic: every step the GPUs all-gather the {{ GRAD_BYTES | bytes }} of bf16 weights twice (for the forward and the backward pass) and reduce-scatter the {{ GRAD_BYTES | bytes }} of gradients, {{ ZERO3_PASSES }} ring passes of (N−1)/N × {{ GRAD_BYTES | bytes }} each where a ring AllReduce of the gradients makes {{ ALLREDUCE_PASSES }}: they move what a ring AllReduce of {{ SYNC_BYTES | bytes }} moves, which is what the notebook passes as `grad_bytes`. The fleet is {{ NODES }} DGX H100 nodes: {{ GPN }} GPUs on NVLink and {{ NICS }} InfiniBand NDR NICs of {{ NDR_GBIT | fmt(".0f") }} Gb/s each. A ring across the nodes runs as {{ NICS }} rings at once, one per NIC, 7 of every 8 hops on NVLink, so each rank sees a link of {{ BANDWIDTH | fmt(".0f", 1e9) }} GB/s per direction with {{ ALPHA_S | fmt(".2f", 1e-6) }} µs per step (`cluster.ring_link`, shipped beside your module). A step ends when both the compute and the exchange are done: nothing overlaps.
#
# Implement `training_time_s`, `data_parallel_speedup` and `scaling_efficiency` in `scaling.py`, then predict before you run the cells after the question.

# %%
# Setup (generated): your module, the cited constants, numpy and matplotlib.
import scaling
import constants
import cluster
import numpy as np
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, NullFormatter
from _instruments import Instrument, Slider, Steps
from labs.lab01_scale.scenario import STEP_FLOPS as step_flops   # 6 x params x tokens of one step
from labs.lab01_scale.scenario import TOTAL_FLOPS as total_flops   # 6 x params x tokens of the whole run
from labs.lab01_scale.scenario import SYNC_BYTES as sync_bytes   # ZeRO-3's exchange, as the bytes of one ring AllReduce
from labs.lab01_scale.scenario import MFU as mfu
from labs.lab01_scale.scenario import PEAK_FLOPS as peak_flops   # H100 SXM dense BF16, FLOP/s
from labs.lab01_scale.scenario import N_FLEET as n_fleet
from labs.lab01_scale.scenario import INSTRUMENT_GPUS as gpus   # the cluster sizes the curves span
from labs.lab01_scale.scenario import SECONDS_PER_DAY as seconds_per_day
from labs.lab01_scale.scenario import FLEET_GPUS as n_gpus
from labs.lab01_scale.scenario import YEARS as years
from labs.lab01_scale.scenario import USD_PER_GPU_HOUR as usd_per_gpu_hour   # the CFO's on-demand price
from labs.lab01_scale.scenario import RESERVED_DISCOUNT as discount
from labs.lab01_scale.scenario import PLANT as plant   # capex, watts, PUE, $/kWh, staff per GPU-year
from labs.lab01_scale.scenario import UTILIZATION as utilization   # the scheduler's measured busy share
from labs.lab01_scale.scenario import FULL_UTILIZATION as full_utilization   # the CFO's plan
from labs.lab01_scale.scenario import BUDGET_USD as budget_usd   # the board's cap on cloud spend
from labs.lab01_scale.challenges import YEARS_RANGE as years_range
from labs.lab01_scale.challenges import USD_PER_GPU_HOUR_RANGE as price_range
from labs.lab01_scale.challenges import DISCOUNT_RANGE as discount_range
from labs.lab01_scale.challenges import CAPEX_RANGE as capex_range

# %% answer="act1_prediction"

# %% requires=["act1_prediction"] tags=["instrument"]
step_s_1gpu = scaling.training_time_s(step_flops, 1, peak_flops, mfu)   # one step's compute on one GPU
# plain tick labels on the log axes (matplotlib's 10^k labels need math fonts a student may not have)
plain, no_label = FuncFormatter(lambda x, _: f"{x:,g}"), NullFormatter()


def scale(fig, n):
    # each cluster size on its own ring link: NVLink inside one node, the nodes' NICs past it
    speedups = [scaling.data_parallel_speedup(step_s_1gpu, k, sync_bytes, **cluster.ring_link(k)) for k in gpus]
    left, right = fig.subplots(1, 2)
    left.loglog(gpus, gpus, "k--", label="ideal: speedup = N")
    left.loglog(gpus, speedups, "o-", label="data parallel (ZeRO-3), ring passes")
    left.set(xlabel="GPUs N", ylabel="speedup of one step")
    right.semilogx(gpus, [scaling.scaling_efficiency(s, k) for s, k in zip(speedups, gpus)], "o-")
    right.set(xlabel="GPUs N", ylabel="scaling efficiency", ylim=(0, 1.05))
    for axis in (left.xaxis, left.yaxis, right.xaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(no_label)
    for ax in (left, right):
        ax.axvline(n, color="grey", linestyle=":")
        ax.grid(True, which="both", alpha=0.3)
    left.legend()
    speedup = scaling.data_parallel_speedup(step_s_1gpu, n, sync_bytes, **cluster.ring_link(n))
    compute_s = step_s_1gpu / n
    days = scaling.training_time_s(total_flops, 1, peak_flops, mfu) / speedup / seconds_per_day
    ideal_days = scaling.training_time_s(total_flops, n, peak_flops, mfu) / seconds_per_day
    return (f"N = {n:,}: speedup {speedup:,.0f}x, efficiency {scaling.scaling_efficiency(speedup, n):.1%}\n"
            f"one step: {compute_s:.2f} s of compute per GPU + {step_s_1gpu / speedup - compute_s:.2f} s of exchange\n"
            f"the whole run: {days:,.1f} days ({ideal_days:,.1f} with perfect scaling)")


Instrument(scale, figsize=(11, 4), n=Steps("GPUs N", gpus, value=n_fleet)).show();

# %% requires=["act1_prediction"]
speedup = scaling.data_parallel_speedup(step_s_1gpu, n_fleet, sync_bytes, **cluster.ring_link(n_fleet))
print(f"Your functions: {speedup:,.0f}x on {n_fleet:,} GPUs, scaling efficiency "
      f"{scaling.scaling_efficiency(speedup, n_fleet):.1%}")

# %% [markdown] reveal="act1_prediction"
# <details><summary>Check your derivation: strong scaling with a ring AllReduce</summary>
#
# One step takes T₁ seconds of compute at one GPU's pace. On N GPUs each computes T₁/N, then a ring AllReduce of G bytes takes T_ring = 2(N−1)·α + 2(N−1)/N · G/B (Thakur et al. 2005). ZeRO-3's two all-gathers and one reduce-scatter of the {{ GRAD_BYTES | bytes }} are three ring passes of (N−1)·α + (N−1)/N · {{ GRAD_BYTES | bytes }}/B each: the bandwidth term of an AllReduce of G = {{ SYNC_BYTES | bytes }} (Rajbhandari et al. 2020, sec. 7.2.2). Its latency term has {{ ZERO3_PASSES }}(N−1) steps where that AllReduce counts {{ ALLREDUCE_PASSES }}(N−1): {{ ZERO3_EXTRA_LATENCY_S | fmt(".1f", 1e-3) }} ms more at {{ N_FLEET | fmt(",") }} GPUs, about {{ ZERO3_EXTRA_LATENCY_SHARE | fmt(".1%") }} of the exchange, which the model leaves out. The speedup is S(N) = T₁ / (T₁/N + T_ring) and the efficiency S(N)/N. As N grows, T₁/N → 0 while T_ring → 2G/B, so S(N) approaches T₁ / T_ring: a ceiling set by the network, not by the number of GPUs.
#
# B is the link one rank of the ring sees. On DGX H100 nodes it is min({{ NICS }} × {{ NIC_BANDWIDTH | fmt(".0f", 1e9) }} GB/s, {{ GPN }}/{{ GPN - 1 }} × {{ NVLINK_BANDWIDTH | fmt(".0f", 1e9) }} GB/s) = {{ BANDWIDTH | fmt(".0f", 1e9) }} GB/s: the node's NICs together carry what one rank sends, because NCCL runs one ring per NIC and 7 of every 8 hops stay on NVLink. Taking one NIC's {{ NIC_BANDWIDTH | fmt(".0f", 1e9) }} GB/s per GPU instead (a flat ring, the source lab's model) gives {{ FLAT_SPEEDUP | fmt(",.0f") }}× at {{ N_FLEET | fmt(",") }} GPUs: 8× too slow a network (docs/errata).
# </details>

# %% answer="act1_reflection"

# %% [markdown]
# ## Act II: the fleet cost model
#
# *From the CFO:* "We will train and serve a {{ PARAMS | fmt(".0f", 1e9) }}B model for {{ YEARS }} years on {{ FLEET_GPUS | fmt(",") }} H100s. Our scheduler logs say the fleet is busy {{ UTILIZATION | percent }} of the hours. The options:
# (1) on-demand cloud at \${{ USD_PER_GPU_HOUR | fmt(".2f") }} per GPU-hour, paying only for busy hours;
# (2) reserved cloud at a {{ RESERVED_DISCOUNT | percent }} discount, paying for every committed hour;
# (3) buying the cluster at \${{ CAPEX_PER_GPU | fmt(",.0f") }} per GPU, plus {{ WATTS_PER_GPU | fmt(".0f") }} W per busy GPU at \${{ USD_PER_KWH | fmt(".2f") }}/kWh with a PUE of {{ PUE }} (cooling included), plus staff at \${{ STAFF_USD_PER_ENGINEER | fmt(",.0f") }} a year per {{ GPUS_PER_ENGINEER }} GPUs (\${{ STAFF_USD_PER_GPU_YEAR | fmt(",.0f") }} per GPU-year).
# The board caps cloud spend at \${{ BUDGET_USD | fmt(",.1f", 1e6) }}M. Which path is cheapest, and at what utilization does buying pay off?"
#
# The CFO's prices are this story's assumptions, each within what is public: on-demand H100s rent for about \${{ PUBLIC_USD_PER_GPU_HOUR[0] | fmt(".2f") }} (GPU clouds) to \${{ PUBLIC_USD_PER_GPU_HOUR[1] | fmt(".2f") }} (AWS's p5 instances at launch) per GPU-hour, an H100 has sold for \${{ PUBLIC_CAPEX_PER_GPU[0] | fmt(",.0f") }}–{{ PUBLIC_CAPEX_PER_GPU[1] | fmt(",.0f") }}, data centres run at a PUE of {{ PUBLIC_PUE[0] }} (hyperscale) to {{ PUBLIC_PUE[1] }} (the industry's average), and US industry and commerce pay \${{ PUBLIC_USD_PER_KWH[0] | fmt(".2f") }}–{{ PUBLIC_USD_PER_KWH[1] | fmt(".2f") }} per kWh (sources: docs/physics.md). Your answer holds for the CFO's numbers; the instrument below moves the price, the capex, the discount and the horizon.
#
# Implement `on_demand_cost`, `reserved_cost`, `on_prem_cost`, `breakeven_utilization` and `cheapest_option`, then predict.

# %% answer="act2_prediction"

# %% requires=["act2_prediction"] tags=["instrument"]
def tco(fig, utilization, years, usd_per_gpu_hour, discount, capex_per_gpu):
    deal = dict(plant, capex_per_gpu=capex_per_gpu)

    def costs_usd(u):
        return {"on_demand": scaling.on_demand_cost(n_gpus, years, usd_per_gpu_hour, u),
                "reserved": scaling.reserved_cost(n_gpus, years, usd_per_gpu_hour, discount),
                "on_prem": scaling.on_prem_cost(n_gpus, years, deal["capex_per_gpu"], deal["watts_per_gpu"],
                                                deal["pue"], deal["usd_per_kwh"], u, deal["staff_usd_per_gpu_year"])}

    now = costs_usd(utilization)
    us = np.linspace(0, 1, 101)
    curves = [costs_usd(float(u)) for u in us]
    breakeven = scaling.breakeven_utilization(years, usd_per_gpu_hour, **deal)
    ax = fig.subplots()
    for path in now:
        ax.plot(us, [c[path] / 1e6 for c in curves], label=path)
    ax.axhline(budget_usd / 1e6, color="red", linestyle=":", label="cloud budget")
    ax.axvline(utilization, color="grey", linestyle=":")
    if breakeven <= 1:
        ax.axvline(breakeven, color="black", linestyle="--", label=f"on-demand = on-prem at {breakeven:.0%}")
    ax.set(xlabel="utilization (fraction of hours busy)", ylabel=f"{years}-year TCO, $M")
    ax.legend()
    ax.grid(True, alpha=0.3)
    cheapest = scaling.cheapest_option(n_gpus, years, utilization, usd_per_gpu_hour, discount, **deal)
    per_year = ", ".join(f"{path} ${usd / years / 1e6:,.1f}M" for path, usd in now.items())
    pays_off = (f"on-prem beats on-demand above {breakeven:.0%} utilization" if breakeven <= 1
                else f"on-prem never beats on-demand in {years} years (breakeven {breakeven:.2f})")
    return (f"at {utilization:.0%} over {years} years, per year: {per_year}\n"
            f"cheapest: {cheapest}; {pays_off}")


Instrument(tco, figsize=(8, 4.5),
           utilization=Slider("utilization", 0.0, 1.0, value=utilization, step=0.01),
           years=Slider("years", *years_range, value=years),
           usd_per_gpu_hour=Slider("on-demand $/GPU-hour", *price_range, value=usd_per_gpu_hour, step=0.05),
           discount=Slider("reserved discount", *discount_range, value=discount, step=0.05),
           capex_per_gpu=Slider("capex $/GPU", *capex_range, value=plant["capex_per_gpu"], step=1000)).show();

# %% requires=["act2_prediction"]
print(f"Your cheapest_option at {utilization:.0%}: "
      f"{scaling.cheapest_option(n_gpus, years, utilization, usd_per_gpu_hour, discount, **plant)}")
full = scaling.on_demand_cost(n_gpus, years, usd_per_gpu_hour, full_utilization)
if full > budget_usd:   # the failure state: the CFO's plan to run the fleet continuously
    print(f"OVER BUDGET: on-demand running continuously costs ${full / 1e6:,.1f}M against ${budget_usd / 1e6:,.0f}M; "
          f"on-demand stays within budget only below {budget_usd / full:.1%} utilization.")
else:
    print(f"Within budget: on-demand running continuously costs ${full / 1e6:,.1f}M.")

# %% [markdown] reveal="act2_prediction"
# <details><summary>Check your derivation: the three bills and the breakeven</summary>
#
# Per GPU, with H = years × {{ HOURS_PER_YEAR }} hours, price p per GPU-hour, utilization U and e = watts/1000 × PUE × \$/kWh (the energy of a busy GPU-hour):
# on-demand = H·U·p; reserved = H·p·(1 − discount); on-prem = capex + years·staff + H·U·e.
# On-demand and on-prem cost the same at U* = (capex + years·staff) / (H·(p − e)). Above U* owning is cheaper; U* > 1 means it never pays off in that many years, and when p ≤ e it never pays off at all.
# </details>

# %% [markdown]
# **Failure state.** The board caps cloud spend at \${{ BUDGET_USD | fmt(",.1f", 1e6) }}M; the readout above says whether on-demand stays under it when the fleet runs continuously. Move the instrument's utilization to see where owning starts to pay, and its years to see how the horizon moves that point.

# %% answer="act2_reflection"

# %% challenge="lab01_whatif"

# %% measurements=true

# %% answer="measurement_reflection"

# %% grades=true
