"""Lab 01 questions: options (each with why it is right or wrong) formatted from scenario values and
computed keys; each question's prompt and hint are in questions.md beside this file.

Options are markdown: a literal dollar is written `\\$` so JupyterLab does not read a pair of them as
LaTeX. The explanations are printed as plain text at the reveal and keep a plain `$`.
Offsets spread the keys over B-D: the notebook prompt shows `qid = "X"` as its format example.
"""
from __future__ import annotations

from labs.authoring import Option, fmt, letters, questions, range_key
from labs.lab01_scale import scenario
from labs.lab01_scale.scenario import (CHEAPEST, COMPUTE_S_FLEET, COSTS, ENERGY_USD_PER_HOUR, FIXED_USD,
                                       FULL_UTILIZATION, LOW_UTILIZATION, N_FLEET, NDR_GBIT,
                                       ON_PREM_LOW_USD_PER_HOUR, RESERVED_DISCOUNT, RING_S_8, RING_S_FLEET,
                                       SPEEDUP, SPEEDUP_CUTS, SPEEDUP_RANGES, SPREAD, STEP_S_1GPU, TIE_SPREAD,
                                       USD_PER_GPU_HOUR, UTILIZATION, YEARS, on_prem_usd)


def _m(usd: float) -> str:
    return f"${fmt(usd, ',.1f', 1e6)}M"


_LO, _MID, _HI = SPEEDUP_CUTS
_STEP = (f"At N = {N_FLEET:,} a step is {COMPUTE_S_FLEET:.2f} s of compute per GPU plus {RING_S_FLEET:.2f} s of "
         f"ring AllReduce: a speedup of {SPEEDUP:,.0f}x.")
_act1 = letters([
    Option(f"{_HI:,}x or more: near-linear scaling, efficiency {_HI / N_FLEET:.0%}+; {NDR_GBIT:.0f} Gb/s keeps up",
           f"{_STEP} Near-linear needs an AllReduce small next to the compute; here it is the larger part."),
    Option(f"{_MID:,}-{_HI:,}x: efficiency {_MID / N_FLEET:.0%}-{_HI / N_FLEET:.0%}, the exchange mostly hides "
           "behind compute",
           f"{_STEP} Nothing overlaps in this model, and the exchange takes longer than the compute."),
    Option(f"{_LO:,}-{_MID:,}x: efficiency {_LO / N_FLEET:.0%}-{_MID / N_FLEET:.0%}, syncing costs about as much "
           "as computing",
           f"{_STEP} The AllReduce costs about as much as the compute (a little more), so about a third of "
           "the ideal speedup is left."),
    Option(f"under {_LO:,}x: efficiency below {_LO / N_FLEET:.0%}, communication dominates every step",
           f"{_STEP} Communication is the larger part, but not so large that the speedup falls under {_LO:,}x."),
], range_key(SPEEDUP, SPEEDUP_RANGES), offset=0)   # ranges stay in descending order

# the premise of the key: the AllReduce hardly changes from one node to the fleet, compute shrinks 1/N
assert RING_S_FLEET < 1.2 * RING_S_8 and STEP_S_1GPU / N_FLEET < RING_S_FLEET
_act1_refl = letters([
    Option("GPUs run slower when many of them share one network, so per-GPU speed falls with N",
           "Per-GPU speed (peak x MFU) is the same at every N in this model; only the step's parts change."),
    Option("The gradient AllReduce takes about as long at any N, while each GPU's compute shrinks as 1/N",
           f"Right: the ring moves 2(N-1)/N of the gradient per GPU, {RING_S_8:.1f} s on 8 GPUs and "
           f"{RING_S_FLEET:.1f} s on {N_FLEET:,}, while the compute falls to {COMPUTE_S_FLEET:.2f} s."),
    Option("Power delivery limits each GPU's clock once a cluster grows past a few hundred GPUs",
           "Power does not enter the scaling model: every GPU runs at the same peak and MFU at any N."),
    Option("Larger models always reach a lower MFU, whatever the size of the cluster they train on",
           "The MFU is fixed at the scenario's value for every N; the loss comes from the AllReduce."),
], 1, offset=2)   # conceptual: index 1, premise asserted above

_COSTS = ", ".join(f"{path} {_m(usd)}" for path, usd in COSTS.items())
_act2 = letters([
    Option("On-demand is cheapest: you pay only for the hours the fleet is busy",
           f"At {UTILIZATION:.0%}: {_COSTS}. Paying list price for {UTILIZATION:.0%} of the hours beats "
           f"{1 - RESERVED_DISCOUNT:.0%} of list for all of them."),
    Option(f"On-prem is cheapest: a busy GPU-hour costs only {ENERGY_USD_PER_HOUR * 100:.1f} cents of energy",
           f"At {UTILIZATION:.0%}: {_COSTS}. The energy is cheap, but capex and staff ({_m(FIXED_USD)}) are paid "
           "for every hour, busy or not."),
    Option("Reserved is cheapest: the discount on every hour beats list price for the hours used",
           f"At {UTILIZATION:.0%}: {_COSTS}. Reserved pays for the idle {1 - UTILIZATION:.0%} too; it wins only "
           f"above {1 - RESERVED_DISCOUNT:.0%} utilization."),
    Option(f"All three paths are within {TIE_SPREAD:.0%} of each other over {YEARS} years",
           f"At {UTILIZATION:.0%}: {_COSTS}; the dearest is {SPREAD:.0%} above the cheapest."),
], 3 if SPREAD < TIE_SPREAD else {"on_demand": 0, "on_prem": 1, "reserved": 2}[CHEAPEST], offset=3)

# Conceptual reflection, key chosen by hand (index 1, the fixed cost); its premises, checked: the fixed
# capex + staff is most of the bill at low utilization, and energy does fall with utilization (option 3 false)
assert FIXED_USD > 0.5 * on_prem_usd(LOW_UTILIZATION) and on_prem_usd(LOW_UTILIZATION) < on_prem_usd(FULL_UTILIZATION)
_act2_refl = letters([
    Option("On-prem hardware wears out faster at low utilization, so maintenance grows",
           "Wear is not in the cost model: on-prem is capex + staff + energy, none of which rises when idle."),
    Option(f"Capex and staff (\\{_m(FIXED_USD)}) are paid busy or idle, so fewer busy "
           "hours share them",
           f"Right: at {LOW_UTILIZATION:.0%} the fixed {_m(FIXED_USD)} is {FIXED_USD / on_prem_usd(LOW_UTILIZATION):.0%} "
           "of the bill and is spread over few productive hours."),
    Option("Both bills scale with utilization, so their cost per busy hour stays the same",
           f"Only on-demand scales with the busy hours (${USD_PER_GPU_HOUR:.2f} each); on-prem's fixed part "
           f"does not, so it costs ${ON_PREM_LOW_USD_PER_HOUR:.2f} per busy hour at {LOW_UTILIZATION:.0%}."),
    Option("Idle GPUs keep drawing full power, so the energy bill does not fall with utilization",
           f"In this model an idle GPU draws nothing: energy is ${ENERGY_USD_PER_HOUR:.3f} per busy GPU-hour "
           "and falls with utilization."),
], 1, offset=3)

QUESTIONS = questions(__file__, vars(scenario) | vars(), {   # id: (kind, points, letters(...)) in order
    "act1_prediction": ("prediction", 1.0, _act1), "act1_reflection": ("reflection", 1.0, _act1_refl),
    "act2_prediction": ("prediction", 1.0, _act2), "act2_reflection": ("reflection", 1.0, _act2_refl)})
ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION = QUESTIONS
# what the readouts echo: the student's own choice, never the key
ACT1_OPTIONS, ACT2_OPTIONS = (dict(q.options) for q in (ACT1_PREDICTION, ACT2_PREDICTION))
