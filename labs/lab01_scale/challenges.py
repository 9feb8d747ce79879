"""Lab 01's open design challenge: a what-if on the CFO's fleet, answered with the student's own
functions (the source lab's sliders for years, price, discount and capex).

The student picks a what-if within small ranges around the story's numbers and writes the
breakeven utilization their `breakeven_utilization` gives for it. The grader recomputes it with
reference/scaling.py at the student's own inputs (so every what-if has its own right value: at
the story's plant, 0.57 at 5 years, never at 1 year) and asks the what-if to make on-prem the
cheapest path at the scheduler's measured utilization. Many what-ifs do.
"""
from __future__ import annotations

import reference.scaling as ref
from autograder.engine.challenges import DesignChallenge, Field, Verdict
from labs.authoring import first_valid, fmt
from labs.lab01_scale.scenario import (CAPEX_PER_GPU, FLEET_GPUS, LONG_YEARS, PLANT, RESERVED_DISCOUNT,
                                       USD_PER_GPU_HOUR, UTILIZATION, YEARS)

# The what-if ranges (scenario inputs stated in the prompt): around the story's 3 years, $2.10 an
# hour, 35 % reserved discount and $40,000 a GPU.
YEARS_RANGE = (1, 7)
USD_PER_GPU_HOUR_RANGE = (1.0, 4.0)
DISCOUNT_RANGE = (0.0, 0.6)
CAPEX_RANGE = (20_000, 60_000)
BREAKEVEN_RANGE = (0.0, 100.0)       # above 1: on-prem never pays off in the years chosen
BREAKEVEN_TOLERANCE = 0.005          # a breakeven rounded to two decimals still counts


def _plant(design) -> dict:
    return dict(PLANT, capex_per_gpu=design["capex_per_gpu"])


def _whatif(years: int, capex_per_gpu: float) -> dict:
    """The story's price and discount over `years` at this capex, with the breakeven the reference gives."""
    plant = dict(PLANT, capex_per_gpu=capex_per_gpu)
    return dict(years=years, usd_per_gpu_hour=USD_PER_GPU_HOUR, reserved_discount=RESERVED_DISCOUNT,
                capex_per_gpu=capex_per_gpu,
                breakeven_utilization=ref.breakeven_utilization(years, USD_PER_GPU_HOUR, **plant))


def check(design) -> list[Verdict]:
    years, price, discount = design["years"], design["usd_per_gpu_hour"], design["reserved_discount"]
    plant = _plant(design)
    breakeven = ref.breakeven_utilization(years, price, **plant)
    costs = {"on_demand": ref.on_demand_cost(FLEET_GPUS, years, price, UTILIZATION),
             "reserved": ref.reserved_cost(FLEET_GPUS, years, price, discount),
             "on_prem": ref.on_prem_cost(FLEET_GPUS, years, plant["capex_per_gpu"], plant["watts_per_gpu"],
                                         plant["pue"], plant["usd_per_kwh"], UTILIZATION,
                                         plant["staff_usd_per_gpu_year"])}
    cheapest = ref.cheapest_option(FLEET_GPUS, years, UTILIZATION, price, discount, **plant)
    yours = design["breakeven_utilization"]
    return [
        Verdict(abs(yours - breakeven) <= BREAKEVEN_TOLERANCE, f"you wrote {yours:.4g}",
                f"the reference gives {breakeven:.4f} at your what-if"),
        Verdict(breakeven < UTILIZATION, f"the measured utilization is {UTILIZATION:.2f}",
                f"the breakeven at your what-if is {breakeven:.3f}"),
        Verdict(cheapest == "on_prem", f"cheapest at {UTILIZATION:.0%}: {cheapest}",
                ", ".join(f"{k} ${fmt(v, ',.1f', 1e6)}M" for k, v in costs.items())),
    ]


LAB01_WHATIF = DesignChallenge(
    id="lab01_whatif", points=2.0,
    prompt=("## Design challenge — your what-if\n\n"
            f"The CFO's answer holds for {YEARS} years at \\${USD_PER_GPU_HOUR:.2f} a GPU-hour, a "  # markdown: a dollar escaped
            f"{RESERVED_DISCOUNT:.0%} reserved discount and \\${CAPEX_PER_GPU:,} a GPU. Change the deal: choose the "
            "years, the on-demand price, the reserved discount and the capex per GPU within the ranges below so "
            f"that owning the {FLEET_GPUS:,}-GPU fleet is the cheapest path at the scheduler's measured "
            f"{UTILIZATION:.0%} utilization (power, PUE, energy price and staff as in the story). Then compute, "
            "with your own `breakeven_utilization`, the utilization above which on-prem beats on-demand in "
            "your what-if, and write it as `breakeven_utilization` (a fraction, two decimals are enough)."),
    fields=(Field("years", "years the fleet runs", *YEARS_RANGE),
            Field("usd_per_gpu_hour", "on-demand price, USD per GPU-hour", *USD_PER_GPU_HOUR_RANGE, integer=False),
            Field("reserved_discount", "reserved discount, a fraction", *DISCOUNT_RANGE, integer=False),
            Field("capex_per_gpu", "purchase price, USD per GPU", *CAPEX_RANGE, integer=False),
            Field("breakeven_utilization", "the breakeven your functions give", *BREAKEVEN_RANGE, integer=False)),
    constraints=("your breakeven_utilization is the physics' at your what-if "
                 f"(within {BREAKEVEN_TOLERANCE:g})",
                 f"on-prem beats on-demand at the measured {UTILIZATION:.0%} (breakeven below it)",
                 f"on-prem is the cheapest of the three paths at {UTILIZATION:.0%} (reserved at your discount too)"),
    check=check,
    # One valid what-if (staff only): the story's deal over the long horizon of Act II's reflection, or,
    # where the measured utilization is lower (another version of the lab), longer or at a lower capex.
    reference_answer=first_valid((_whatif(years, capex) for capex in range(CAPEX_PER_GPU, CAPEX_RANGE[0] - 1, -5_000)
                                  for years in range(LONG_YEARS, YEARS_RANGE[1] + 1)),
                                 lambda design: all(v.met for v in check(design))),
)

CHALLENGES = [LAB01_WHATIF]
