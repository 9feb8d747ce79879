"""Lab 01 questions: options (each with why it is right or wrong) formatted from scenario values and
computed keys; each question's prompt and hint are in questions.md beside this file.

Options are markdown: a literal dollar is written `\\$` so JupyterLab does not read a pair of them as
LaTeX. The explanations are printed as plain text at the reveal and keep a plain `$`.
Offsets spread the keys over B-D: the notebook prompt shows `qid = "X"` as its format example.
"""
from __future__ import annotations

from labs.authoring import Option, fmt, letters, questions, range_key
from labs.lab01_scale import scenario
from labs.lab01_scale.measurements import LLAMA_DAYS, LLAMA_GPUS, LLAMA_HOURS, LLAMA_MFU
from labs.lab01_scale.scenario import (CHEAPEST, COMPUTE_S_FLEET, COSTS, ENERGY_USD_PER_HOUR, FIXED_USD,
                                       FLAT_SPEEDUP, FULL_UTILIZATION, LOW_UTILIZATION, N_FLEET, NICS,
                                       ON_PREM_LOW_USD_PER_HOUR, PEAK_FLOPS, RESERVED_DISCOUNT,
                                       SPARSE_PEAK_FLOPS, SPEEDUP, SPEEDUP_CUTS, SPEEDUP_RANGES, SPREAD, STEP_S_1GPU,
                                       SYNC_S_FIT, SYNC_S_FLEET, FIT_GPUS, COMPUTE_S_FIT, GRAD_BYTES, TIE_SPREAD,
                                       USD_PER_GPU_HOUR, UTILIZATION, WATTS_PER_GPU, YEARS, on_prem_usd)


def _m(usd: float) -> str:
    return f"${fmt(usd, ',.1f', 1e6)}M"


_LO, _MID, _HI = SPEEDUP_CUTS
_STEP = (f"At N = {N_FLEET:,} a step is {COMPUTE_S_FLEET:.2f} s of compute per GPU plus {SYNC_S_FLEET:.2f} s of "
         f"ZeRO-3 ring passes: a speedup of {SPEEDUP:,.0f}x.")
_SHARE = SYNC_S_FLEET / COMPUTE_S_FLEET
_act1 = letters([
    Option(f"{_HI:,}x or more: near-linear scaling, efficiency {_HI / N_FLEET:.0%}+, the network keeps up",
           f"{_STEP} Near-linear needs an exchange small next to the compute; here it adds {_SHARE:.0%} to it."),
    Option(f"{_MID:,}-{_HI:,}x: efficiency {_MID / N_FLEET:.0%}-{_HI / N_FLEET:.0%}, the exchange adds a "
           "fraction of a step",
           f"Right: {_STEP} The {NICS} NICs of each node carry the ring at {NICS}x one port's rate, so the "
           f"exchange adds {_SHARE:.0%} to the compute."),
    Option(f"{_LO:,}-{_MID:,}x: efficiency {_LO / N_FLEET:.0%}-{_MID / N_FLEET:.0%}, syncing costs about as much "
           "as computing",
           f"{_STEP} That would need an exchange as long as the compute; it is {_SHARE:.0%} of it."),
    Option(f"under {_LO:,}x: efficiency below {_LO / N_FLEET:.0%}, communication dominates every step",
           f"{_STEP} Under {_LO:,}x is what a flat ring at one NIC per GPU gives ({FLAT_SPEEDUP:,.0f}x): each "
           f"DGX node has {NICS} NICs and the ring uses them all."),
], range_key(SPEEDUP, SPEEDUP_RANGES), offset=0)   # ranges stay in descending order

# the premise of the key: the exchange hardly changes from the fewest GPUs that hold the model to the fleet,
# while the compute shrinks as 1/N
assert SYNC_S_FLEET < 1.5 * SYNC_S_FIT and COMPUTE_S_FLEET < COMPUTE_S_FIT / 10
# and the key keeps a margin to both cuts of its range (10 %)
assert all(abs(SPEEDUP - cut) > 0.1 * cut for cut in SPEEDUP_CUTS)
_act1_refl = letters([
    Option("GPUs run slower when many of them share one network, so per-GPU speed falls with N",
           "Per-GPU speed (peak x MFU) is the same at every N in this model; only the step's parts change."),
    Option("Each step's exchange lasts about as long at any N, while the work per GPU shrinks as 1/N",
           f"Right: each ring pass moves (N-1)/N of the {GRAD_BYTES / 1e9:.0f} GB per GPU, {SYNC_S_FIT:.2f} s on {FIT_GPUS} GPUs (the "
           f"fewest that hold the model) and {SYNC_S_FLEET:.2f} s on {N_FLEET:,}, while the compute falls from "
           f"{COMPUTE_S_FIT:.0f} s to {COMPUTE_S_FLEET:.2f} s."),
    Option("Power delivery limits each GPU's clock once a cluster grows past a few hundred GPUs",
           "Power does not enter the scaling model: every GPU runs at the same peak and MFU at any N."),
    Option("Larger models always reach a lower MFU, whatever the size of the cluster they train on",
           "The MFU is fixed at the scenario's value for every N; the loss comes from the exchange."),
], 1, offset=2)   # conceptual: index 1, premise asserted above

_COSTS = ", ".join(f"{path} {_m(usd)}" for path, usd in COSTS.items())
_act2 = letters([
    Option("On-demand is cheapest: you pay only for the hours the fleet is busy",
           f"At {UTILIZATION:.0%}: {_COSTS}. Paying the full price for {UTILIZATION:.0%} of the hours beats "
           f"{1 - RESERVED_DISCOUNT:.0%} of it for all of them."),
    Option(f"On-prem is cheapest: a busy GPU-hour costs only {ENERGY_USD_PER_HOUR * 100:.1f} cents of energy",
           f"At {UTILIZATION:.0%}: {_COSTS}. The energy is cheap, but it is a small part of on-prem's bill: "
           "the reflection below asks what the rest is."),
    Option("Reserved is cheapest: the discount on every hour beats full price for the hours used",
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

# --- Model vs measurement (measurements.py): why the model's GPU-hours come out below the model card's ------
MODEL_GPU_HOURS_M = LLAMA_HOURS.reference_value() / 1e6
PUBLISHED_GPU_HOURS_M = LLAMA_HOURS.published / 1e6
_sparse_hours_m = MODEL_GPU_HOURS_M * PEAK_FLOPS / SPARSE_PEAK_FLOPS     # the same at the sparse "peak"
_measured = letters([
    Option("MFU was measured over training steps; the run's hours also paid restarts, checkpoints, evals",
           f"Right: {MODEL_GPU_HOURS_M:.1f}M GPU-hours of steps against {PUBLISHED_GPU_HOURS_M:.2f}M in all; the "
           "paper reports 466 job interruptions in 54 days and a long-context stage at 38% MFU."),
    Option(f"The model card's hours are counted at the {WATTS_PER_GPU:.0f} W TDP, below what an H100 draws while it trains",
           "Power does not enter GPU-hours: an hour of a GPU is an hour whatever it draws."),
    Option(f"The H100's real dense peak is {SPARSE_PEAK_FLOPS / 1e12:,.0f} TFLOP/s, so at {PEAK_FLOPS / 1e12:.0f} the model "
           "counts too few FLOP/s",
           f"1,979 TFLOP/s is the 2:4-sparse figure; with it the model would give {_sparse_hours_m:.1f}M hours, "
           "further from the card, not closer."),
    Option("The model assumes perfect scaling, and data-parallel AllReduces are missing from its time",
           "The 41% MFU was measured on all 16,384 GPUs: the AllReduces and pipeline bubbles are already in it."),
], 0, offset=2)   # conceptual: index 0; premise: the model is below the card, and the sparse peak moves it further
assert MODEL_GPU_HOURS_M < 0.95 * PUBLISHED_GPU_HOURS_M and _sparse_hours_m < MODEL_GPU_HOURS_M

QUESTIONS = questions(__file__, vars(scenario) | vars(), {   # id: (kind, points, letters(...)) in order
    "act1_prediction": ("prediction", 1.0, _act1), "act1_reflection": ("reflection", 1.0, _act1_refl),
    "act2_prediction": ("prediction", 1.0, _act2), "act2_reflection": ("reflection", 1.0, _act2_refl),
    "measurement_reflection": ("reflection", 1.0, _measured)})
ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION, MEASUREMENT_REFLECTION = QUESTIONS
# what the readouts echo: the student's own choice, never the key
ACT1_OPTIONS, ACT2_OPTIONS = (dict(q.options) for q in (ACT1_PREDICTION, ACT2_PREDICTION))
