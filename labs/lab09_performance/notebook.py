# %% [markdown]
# # Lab 09 — You can't optimise what you can't measure
#
# Implement the functions of `performance.py`. Units: fractions in [0, 1] ({{ UNITS_EXAMPLE | fmt("g") }} is {{ (100 * UNITS_EXAMPLE) | fmt("g") }} %), seconds, bytes, FLOP/s. A speedup S is old time / new time: the step then takes 1 − 1/S less time, while the throughput rises by S − 1 (two different numbers). The instruments and readouts below call *your* functions, so they are only as right as your code; run `pytest` in this folder for the public checks.
#
# ## Act I — The profiling revelation
#
# > *Senior Performance Engineer, LLM training team:* "We spent {{ ACT1_WEEKS }} weeks writing a custom CUDA kernel for multi-head attention. Benchmarked in isolation it is {{ ACT1_KERNEL_FACTOR | fmt("g") }}x faster than our baseline. We shipped it last Thursday, and the training step barely got faster. Barely. My team is demoralised. What did we miss?"
#
# Their Nsight Systems trace of one training step ({{ N_GPUS }} x H100, {{ PARAMS | fmt(".0f", 1e9) }}B transformer):
#
# | part | share of the step |
# |---|---|
# {% for name, share in ACT1_PROFILE.items() %}| {{ name }} | {{ share | fmt(".0%") }} |
# {% endfor %}
#
# Implement `amdahl_speedup`, `amdahl_limit`, `step_time_reduction` and `hotspot`, then commit to a prediction before the explorer opens.

# %%
# Setup (generated): your module, the cited constants, numpy, matplotlib and the instrument toolkit.
import math
import performance
import constants
import numpy as np
import matplotlib.pyplot as plt
from _instruments import Instrument, Dropdown, Slider
from labs.lab09_performance.scenario import ACT1_PROFILE as act1_profile   # Act I trace: part -> share of the step
from labs.lab09_performance.scenario import ACT1_TARGET as act1_target   # the part the team sped up
from labs.lab09_performance.scenario import ACT1_KERNEL_FACTOR as kernel_factor   # the kernel's speedup in isolation
from labs.lab09_performance.scenario import ACT1_FACTOR_RANGE as factor_range
from labs.lab09_performance.scenario import A1_TIME_CUT as measured_cut   # the step-time cut the team measured
from labs.lab09_performance.scenario import ACT2_PROFILE as act2_profile   # Act II trace: part -> share of the step
from labs.lab09_performance.scenario import FACTORS as factors   # the four fixes: part -> speedup of that part
from labs.lab09_performance.scenario import COSTS as costs   # the four fixes: part -> engineer-weeks
from labs.lab09_performance.scenario import LEAD_PLAN as lead_plan   # the lead's three-fix plan
from labs.lab09_performance.scenario import BUDGET_WEEKS as budget_weeks
from labs.lab09_performance.scenario import MFU_TARGET as mfu_target
from labs.lab09_performance.scenario import N_GPUS as n_gpus
from labs.lab09_performance.scenario import TOKENS_PER_S as tokens_per_s
from labs.lab09_performance.scenario import FLOPS_PER_TOKEN as flops_per_token   # 6 N
from labs.lab09_performance.scenario import PEAK_FLOPS as peak_flops   # H100 SXM dense BF16, FLOP/s
from labs.lab09_performance.scenario import MICRO_BATCHES_BASE as microbatches_base
from labs.lab09_performance.scenario import MICRO_BATCHES_RANGE as microbatches_range
from labs.lab09_performance.scenario import COMPRESSION_RANGE as compression_range
from labs.lab09_performance.scenario import COMPRESSION_STEP as compression_step
from labs.lab09_performance.scenario import PREFETCH_BASE as prefetch_base
from labs.lab09_performance.scenario import PREFETCH_RANGE as prefetch_range
from labs.lab09_performance.scenario import LEVER_WEEKS as lever_weeks   # lever -> (fixed weeks, weeks per unit moved)

# %% answer="act1_prediction"

# %% requires=["act1_prediction"] tags=["instrument"]
# The Profile-Guided Amdahl Explorer: pick the part to speed up and by how much.
def explorer(fig, part, factor):
    share = act1_profile[part]
    hot = performance.hotspot(profile=act1_profile)
    speedup = performance.amdahl_speedup(fraction=share, factor=factor)
    hot_speedup = performance.amdahl_speedup(fraction=act1_profile[hot], factor=factor)
    left, right = fig.subplots(1, 2)
    after = {n: s / (factor if n == part else 1) for n, s in act1_profile.items()}
    for row, shares in ((1, act1_profile), (0, after)):
        start = 0.0
        for color, (n, s) in enumerate(shares.items()):
            left.barh(row, 100 * s, left=start, color=f"C{color}", edgecolor="black" if n == part else "white",
                      label=n if row == 1 else None)
            start += 100 * s
    left.set(yticks=[0, 1], yticklabels=["after", "before"], xlabel="% of the old step time",
             title=f"{factor:g}x on {part}")
    left.legend(fontsize=8, loc="lower right")
    ks = np.linspace(*factor_range, 91)
    for n in dict.fromkeys((part, hot)):   # once when the chosen part is the hotspot
        line, = right.plot(ks, [performance.amdahl_speedup(fraction=act1_profile[n], factor=float(k)) for k in ks],
                           label=f"{n} ({act1_profile[n]:.0%})")
        right.axhline(performance.amdahl_limit(fraction=act1_profile[n]), ls="--", lw=0.8, color=line.get_color())
    right.axvline(factor, color="grey", ls=":")
    right.set(xlabel="speedup k of one part", ylabel="end-to-end speedup S", title="dashed: ceiling 1/(1 - f)")
    right.legend(fontsize=8)
    badge = "optimal target: the hotspot" if part == hot else f"suboptimal target: the hotspot is {hot}"
    return (f"{factor:g}x on {part} ({share:.0%}): step time "
            f"-{performance.step_time_reduction(fraction=share, factor=factor):.1%}, throughput {speedup - 1:+.1%}, "
            f"ceiling {performance.amdahl_limit(fraction=share):.3f}x\n"
            f"the same {factor:g}x on {hot} ({act1_profile[hot]:.0%}): throughput {hot_speedup - 1:+.1%}\n{badge}")


Instrument(explorer, figsize=(12, 4.5),
           part=Dropdown("part sped up", list(act1_profile), value=act1_target),
           factor=Slider("its speedup k", *factor_range, value=kernel_factor, step=0.5)).show();

# %% requires=["act1_prediction"]
cut = performance.step_time_reduction(fraction=act1_profile[act1_target], factor=kernel_factor)
print(f"Your functions: {kernel_factor:g}x on {act1_profile[act1_target]:.0%} of the step cuts the step time by "
      f"{cut:.1%}; the team's trace measured {measured_cut:.0%}: the kernel works")

# %% answer="act1_reflection"

# %% [markdown] reveal="act1_prediction"
# <details><summary>Check your derivation: Amdahl's ceiling, many parts, Gustafson and the roofline</summary>
#
# * **Ceiling.** A part taking a share f that gets infinitely fast leaves 1 − f: S ≤ 1/(1 − f). For attention that is {{ A1_CEILING | fmt(".3f") }}x; for AllReduce ({{ ACT1_PROFILE[A1_HOT] | fmt(".0%") }}) {{ (1 / (1 - ACT1_PROFILE[A1_HOT])) | fmt(".2f") }}x.
# * **Many parts.** Parts with shares fᵢ sped up by kᵢ: S = 1 / Σ fᵢ/kᵢ (`multi_component_speedup`); a part left at k = 1 bounds S.
# * **Amdahl at scale.** n GPUs sharing work with a serial share s: S = amdahl_speedup(fraction = 1 − s, factor = n). With s = {{ (100 * SERIAL_SHARE) | fmt("g") }} % on {{ N_GPUS }} GPUs that is {{ AMDAHL_AT_SCALE | fmt(".1f") }}x, below the ceiling {{ AMDAHL_AT_SCALE_LIMIT | fmt(".0f") }}x. **Gustafson** (the work grows with n, the serial time does not): n − s(n − 1) = {{ GUSTAFSON_AT_SCALE | fmt(".1f") }}x.
# * **Roofline** (Williams et al. 2009): attainable FLOP/s = min(peak, intensity x bandwidth). The H100's ridge point is {{ PEAK_FLOPS | fmt(".0f", 1e12) }} TFLOP/s / {{ HBM_BANDWIDTH | fmt(".2f", 1e12) }} TB/s = {{ RIDGE | fmt(".0f") }} FLOP/byte: a kernel below it is memory-bound, and a faster compute kernel does not help it.
#
# Implement `gustafson_speedup`, `roofline_flops` and `ridge_point` too: they are graded like the others.
# </details>

# %% [markdown]
# ## Act II — Distributed performance analysis
#
# > *Production ML Lead, foundation-model team:* "Our {{ N_GPUS }}-GPU H100 cluster trains a {{ PARAMS | fmt(".0f", 1e9) }}B LLM at {{ TOKENS_PER_S | fmt(",.0f") }} tokens/s. The best published runs reach {{ (100 * PUBLISHED_MFU[0]) | fmt(".0f") }}-{{ (100 * PUBLISHED_MFU[1]) | fmt(".0f") }} % MFU (Llama 3 405B on {{ PUBLISHED_MFU_GPUS[0] | fmt(",") }} H100s, Megatron-LM's GPT-3 on {{ PUBLISHED_MFU_GPUS[1] }} H100s); leadership wants {{ MFU_TARGET | percent }} from us. I have {{ BUDGET_WEEKS | fmt("g") }} engineer-weeks this quarter and my recommendation to leadership is due Friday. My plan: do the pipeline, AllReduce and data-loading fixes below, all three."
#
# **MFU** (Chowdhery et al. 2022, PaLM App. B) = tokens/s x FLOP/token / (GPUs x peak). With {{ FLOPS_PER_PARAM_TOKEN | fmt("g") }}N = {{ FLOPS_PER_TOKEN | fmt(".2e") }} FLOP per token and the H100's dense BF16 peak of {{ PEAK_FLOPS | fmt(".0f", 1e12) }} TFLOP/s, the cluster runs at **{{ BASE_MFU | fmt(".1%") }}** MFU ({{ (BASE_MFU * PEAK_FLOPS) | fmt(".0f", 1e12) }} TFLOP/s of useful work per GPU). At a fixed number of FLOP per step, MFU scales as 1 / step time.
#
# Nsight trace of one step and the candidate fixes (each speeds up one part):
#
# | part | share | fix | speedup of that part | engineer-weeks |
# |---|---|---|---|---|
# {% for name in A2_ORDER %}| {{ name }} | {{ ACT2_PROFILE[name] | fmt(".0%") }} | {{ FIX_NAMES[name] }} | {{ FACTORS[name] | fmt(".2g") }}x | {{ COSTS[name] | fmt("g") }} |
# {% endfor %}
#
# The lead's plan costs {{ PLAN_WEEKS | fmt("g") }} engineer-weeks against a budget of {{ BUDGET_WEEKS | fmt("g") }}: **{{ (-PLAN_LEFT) | fmt(".1f") }} weeks over budget** — the plan cannot be delivered this quarter. One fix has to be chosen first.
#
# Implement `mfu`, `mfu_gain`, `multi_component_speedup`, `best_fix` (the single fix with the most MFU per engineer-week within the budget) and `budget_left_weeks`, then predict.

# %% answer="act2_prediction"

# %% requires=["act2_prediction"]
base_mfu = performance.mfu(tokens_per_s=tokens_per_s, flops_per_token=flops_per_token, n_gpus=n_gpus,
                           peak_flops=peak_flops)
print(f"Your best_fix: {performance.best_fix(profile=act2_profile, factors=factors, cost_weeks=costs, budget_weeks=budget_weeks)}"
      f" (MFU {base_mfu:.1%} before any fix)")
for name in factors:
    gain = performance.mfu_gain(base_mfu=base_mfu, fraction=act2_profile[name], factor=factors[name])
    print(f"  {name:16s} {100 * gain:+5.2f} MFU points  {costs[name]:4.1f} weeks  {100 * gain / costs[name]:5.2f} points/week")
left = performance.budget_left_weeks(cost_weeks={n: costs[n] for n in lead_plan}, budget_weeks=budget_weeks)
plan_mfu = base_mfu * performance.multi_component_speedup(profile=act2_profile,
                                                          factors={n: factors[n] for n in lead_plan})
print(f"the lead's plan {list(lead_plan)}: MFU {plan_mfu:.1%}, {left:+.1f} weeks left", "(OVER BUDGET)" if left < 0 else "")

# %% requires=["act2_prediction"] tags=["instrument"]
# The Distributed Performance Optimizer: move the three levers, watch MFU and the cost against the budget.
def lever_plan(microbatches, compression, prefetch_workers):
    """(part -> speedup, part -> engineer-weeks) of a lever setting. The bubble's time goes as 1/m at a
    fixed global batch, compression r divides the AllReduce time, w prefetch workers speed data loading by
    sqrt(w/w0); a moved lever costs its fixed weeks plus its weeks per unit above the baseline."""
    plan_factors = {"pipeline_bubble": microbatches / microbatches_base, "allreduce": compression,
                    "data_loading": max(1.0, math.sqrt(prefetch_workers / prefetch_base))}
    above = {"pipeline_bubble": microbatches - microbatches_base, "allreduce": compression - 1,
             "data_loading": prefetch_workers - prefetch_base}
    moved = {"pipeline_bubble": microbatches != microbatches_base, "allreduce": compression != 1,
             "data_loading": prefetch_workers > prefetch_base}
    plan_costs = {part: lever_weeks[part][0] + lever_weeks[part][1] * max(0, above[part])
                  for part in plan_factors if moved[part]}
    return plan_factors, plan_costs


def optimizer(fig, microbatches, compression, prefetch_workers):
    plan_factors, plan_costs = lever_plan(microbatches, compression, prefetch_workers)
    base_mfu = performance.mfu(tokens_per_s=tokens_per_s, flops_per_token=flops_per_token, n_gpus=n_gpus,
                               peak_flops=peak_flops)
    speedup = performance.multi_component_speedup(profile=act2_profile, factors=plan_factors)
    left = performance.budget_left_weeks(cost_weeks=plan_costs, budget_weeks=budget_weeks)
    new_mfu = base_mfu * speedup
    steps, weeks = fig.subplots(1, 2)
    after = {n: s / plan_factors.get(n, 1.0) for n, s in act2_profile.items()}
    for row, shares in ((1, act2_profile), (0, after)):
        start = 0.0
        for color, (n, s) in enumerate(shares.items()):
            steps.barh(row, 100 * s, left=start, color=f"C{color}", label=n if row == 1 else None)
            start += 100 * s
    steps.set(yticks=[0, 1], yticklabels=["plan", "today"], xlabel="% of today's step time",
              title=f"MFU {base_mfu:.1%} -> {new_mfu:.1%} (target {mfu_target:.0%})")
    steps.legend(fontsize=8, loc="lower right")
    weeks.bar(list(plan_costs) or ["(no lever moved)"], list(plan_costs.values()) or [0], color="tab:blue")
    weeks.axhline(budget_weeks, color="tab:red", ls="--", label=f"budget {budget_weeks:g} weeks")
    weeks.set(ylabel="engineer-weeks", title=f"cost {budget_weeks - left:.2f} weeks")
    weeks.legend(fontsize=8)
    roi = 100 * (new_mfu - base_mfu) / (budget_weeks - left) if plan_costs else 0.0
    state = ("OVER BUDGET" if left < 0 else
             "target reached within budget" if new_mfu >= mfu_target else "within budget, below the target")
    return (f"speedup {speedup:.3f}x: MFU {base_mfu:.1%} -> {new_mfu:.1%} (target {mfu_target:.0%})\n"
            f"cost {budget_weeks - left:.2f} of {budget_weeks:g} engineer-weeks ({left:+.2f} left), "
            f"{roi:.2f} MFU points per week\n{state}")


Instrument(optimizer, figsize=(12, 4.5),
           microbatches=Slider("micro-batches m", *microbatches_range, value=microbatches_base),
           compression=Slider("gradient compression r", *compression_range, value=1.0, step=compression_step),
           prefetch_workers=Slider("prefetch workers w", *prefetch_range, value=prefetch_base)).show();

# %% answer="act2_reflection"

# %% [markdown] reveal="act2_prediction"
# <details><summary>Check your derivation: distributed Amdahl, the bubble, MFU and return per week</summary>
#
# * **Distributed Amdahl.** The step's parts (compute, AllReduce, bubble, data loading) each have their own speedup: S = 1 / Σ fᵢ/kᵢ. Compute left at k = 1 bounds S at 1/{{ ACT2_PROFILE["compute"] | fmt(".2f") }} = {{ (1 / ACT2_PROFILE["compute"]) | fmt(".2f") }}x.
# * **The bubble.** With p pipeline stages and m micro-batches the bubble's time is (p − 1)/m of the ideal time (Narayanan et al. 2021): at a fixed global batch, m {{ MICRO_BATCHES_BASE }} → {{ MICRO_BATCHES_NEW }} halves it.
# * **MFU** scales as 1/step time at a fixed number of FLOP per step, so a fix gains base MFU x (S − 1) points.
# * **Return per week.** Gain ÷ engineer-weeks ranks the fixes; a cheap small gain can beat a costly large one.
# * **Plans.** The lead's plan would reach MFU {{ PLAN_MFU | fmt(".1%") }} (target {{ MFU_TARGET | fmt(".0%") }}) and does not fit the budget; every fix in the table at once would reach {{ ALL_MFU | fmt(".1%") }} for {{ ALL_WEEKS | fmt("g") }} engineer-weeks.
# </details>

# %% challenge="lab09_plan"

# %% measurements=true

# %% answer="measurement_reflection"

# %% grades=true
