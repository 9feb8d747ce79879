"""Lab 07 graded items: worked examples at the scenario's inputs, hidden domains and hidden properties.

Expected values are never typed: the engine computes them from reference/ at grading time.
"""
from __future__ import annotations

import math
from functools import partial

from hypothesis import strategies as st

from autograder.engine.spec import FunctionItem, Property
from labs.authoring import anchored, decades, examples, fmt_bytes, public_properties
from labs.lab07_fault_tolerance import properties as public
from labs.lab07_fault_tolerance.scenario import (ACT1_CHECKPOINT_S, ACT1_GPU_MTBF_S, ACT1_GPUS, ACT1_INTERVAL_S,
                                                 ACT1_MTBF_S, ACT1_PARAMS, ACT1_YOUNG_S, ACT2_CHECKPOINT_BYTES,
                                                 ACT2_GPUS, ACT2_MTBF_S, ACT2_NODES, ACT2_PARAMS, ACT2_SNAPSHOT_S,
                                                 ACT2_WRITE_S, ACT2_YOUNG_S, COPY_BANDWIDTH, DAY_S, GPU_MTBF_S,
                                                 HOUR_S, LAB_GPU_MTBF_S, LAB_MTBF_S, LEAD_INTERVAL_S, LLAMA3_DAYS,
                                                 MINUTE_S, NODE_BANDWIDTH, RESTART_S, STORAGE_BANDWIDTH, WEEK_H)
from reference import fault_tolerance as ref

_public = partial(public_properties, public.PROPERTIES)

# Graded functions whose stub docstring may state its closed form (issue 29, derive then check): a
# definition or a published count a student is not asked to derive; at most a third of the lab's
# functions (`scalelabs lint`'s derive rule). Every other function's formula is in the reference's
# Formula: paragraph, which the stub leaves out.
DEFINITIONS = ("daly_interval_s", "goodput")   # published models: Daly 2006


# --- hidden properties (they may call the trusted reference) ------------------------------------------

def _young_minimises_the_reference_waste(f, d):
    # the trusted first-order waste is no lower half or twice the student's interval away
    interval = f(**d)
    if d["checkpoint_s"] == 0:
        return
    at = ref.waste_fraction(interval, d["checkpoint_s"], d["mtbf_s"])
    for k in (0.9, 1.1):
        assert at <= ref.waste_fraction(k * interval, d["checkpoint_s"], d["mtbf_s"]) * (1 + 1e-9), \
            f"the reference's waste is lower at {k} x your interval {interval!r}"


def _goodput_is_first_order_waste_when_failures_are_rare(f, d):
    # every time far below the MTBF and the stall far below the interval: 1 - goodput is the trusted
    # first-order waste (they differ in second-order terms, here 1e-4 of it)
    small = {**d, "interval_s": d["mtbf_s"] * 1e-6, "checkpoint_s": d["mtbf_s"] * 1e-10, "restart_s": d["mtbf_s"] * 2e-7}
    got, want = 1 - f(**small), ref.waste_fraction(**small)
    assert math.isclose(got, want, rel_tol=1e-3), f"1 - goodput = {got!r}, first-order waste {want!r}, all times tiny"


# --- hidden domains: wider than the released strategies (properties.py) and drawn differently -------
# Times over decades (a second to three centuries), half of the counts small, zero (no checkpoint, no
# restart, nothing to write) a bound drawn for every student rather than part of the random draws.
_MTBF = st.one_of(decades(1, 10), decades(3, 6))
_GPU_MTBF = st.one_of(decades(3, 10.5), decades(5, 7))
_GPUS = st.one_of(st.integers(1, 64), st.integers(1, 200_000))
_NODES = st.one_of(st.integers(1, 64), st.integers(1, 25_000))
_BYTES = st.one_of(decades(3, 15.5), st.floats(0.0, 1e12))
_LINK = st.one_of(decades(5, 13.5), decades(9, 11))
_STALL = st.one_of(decades(-2, 5), st.floats(0.0, 3600.0))
_H_CLUSTER = st.fixed_dictionaries({"gpu_mtbf_s": _GPU_MTBF, "n_gpus": _GPUS})
_H_FAILURES = st.fixed_dictionaries({"duration_s": st.one_of(decades(0, 9.5), st.floats(0.0, 1e7)), "mtbf_s": _MTBF})
_H_SIZE = st.fixed_dictionaries({"params": st.one_of(decades(5, 13.5), st.floats(0.0, 1e9)),
                                 "weight_bytes": st.one_of(st.sampled_from([2.0, 4.0, 1.0]), st.floats(0.0, 16.0)),
                                 "optimizer_bytes": st.one_of(st.sampled_from([12.0, 0.0, 8.0]), st.floats(0.0, 20.0))})
_H_WRITE = st.fixed_dictionaries({"checkpoint_bytes": _BYTES, "storage_bandwidth": _LINK, "n_nodes": _NODES,
                                  "node_bandwidth": _LINK})
_H_SNAPSHOT = st.fixed_dictionaries({"checkpoint_bytes": _BYTES, "n_gpus": _GPUS, "copy_bandwidth": _LINK})
# Daly's interval switches to the MTBF itself at a checkpoint of two MTBFs: anchors exactly there
_H_INTERVAL = anchored(st.fixed_dictionaries({"checkpoint_s": _STALL, "mtbf_s": _MTBF}),
                       {"checkpoint_s": 7200.0, "mtbf_s": 3600.0}, {"checkpoint_s": 2.0, "mtbf_s": 1.0},
                       {"checkpoint_s": 0.0, "mtbf_s": 3600.0})
# times as shares of the MTBF, as the released strategy, but over wider shares and drawn over decades
_H_LOSS = st.builds(lambda mtbf, interval, stall, restart: dict(interval_s=interval * mtbf, checkpoint_s=stall * mtbf,
                                                                mtbf_s=mtbf, restart_s=restart * mtbf),
                    _MTBF, decades(-5, 0.7), st.one_of(decades(-6, 0.3), st.floats(0.0, 0.5)),
                    st.one_of(decades(-6, 0.3), st.floats(0.0, 0.5)))
_H_BANDWIDTH_NEEDED = st.fixed_dictionaries({"checkpoint_bytes": _BYTES, "mtbf_s": _MTBF,
                                             "max_overhead": st.one_of(decades(-4, 0), st.floats(0.01, 1.0))})


# --- graded items ------------------------------------------------------------------------------------

_H = lambda seconds: f"{seconds / HOUR_S:,.0f} h"   # noqa: E731 -- a label's hours
_ACT2 = f"Act II: {ACT2_GPUS:,} GPUs"
_ACT2_WRITE = dict(checkpoint_bytes=ACT2_CHECKPOINT_BYTES, storage_bandwidth=STORAGE_BANDWIDTH, n_nodes=ACT2_NODES,
                   node_bandwidth=NODE_BANDWIDTH)
_STORAGE = f"{fmt_bytes(ACT2_CHECKPOINT_BYTES)} at {STORAGE_BANDWIDTH / 1e9:g} GB/s"
# nodes whose links together carry half of what the storage absorbs: the nodes, not the storage, set the write
_FEW_NODES = int(STORAGE_BANDWIDTH // NODE_BANDWIDTH) // 2

FUNCTIONS = (
    FunctionItem("cluster_mtbf_s", 1, examples(
        (f"Act I: {ACT1_GPUS:,} GPUs of {_H(ACT1_GPU_MTBF_S)} each", dict(gpu_mtbf_s=ACT1_GPU_MTBF_S, n_gpus=ACT1_GPUS)),
        (f"{_ACT2} of {_H(GPU_MTBF_S)} each", dict(gpu_mtbf_s=GPU_MTBF_S, n_gpus=ACT2_GPUS)),
        (f"the source lab's {ACT2_GPUS:,} GPUs of {_H(LAB_GPU_MTBF_S)} each", dict(gpu_mtbf_s=LAB_GPU_MTBF_S, n_gpus=ACT2_GPUS)),
    ), domain=_H_CLUSTER, properties=_public("cluster_mtbf_s")),
    FunctionItem("expected_failures", 1, examples(
        (f"{LLAMA3_DAYS} days on {ACT2_GPUS:,} GPUs of {_H(GPU_MTBF_S)}", dict(duration_s=LLAMA3_DAYS * DAY_S, mtbf_s=ACT2_MTBF_S)),
        (f"{LLAMA3_DAYS} days at the source lab's cluster MTBF", dict(duration_s=LLAMA3_DAYS * DAY_S, mtbf_s=LAB_MTBF_S)),
        ("Act I: one week", dict(duration_s=WEEK_H * HOUR_S, mtbf_s=ACT1_MTBF_S)),
    ), domain=_H_FAILURES, properties=_public("expected_failures")),
    FunctionItem("checkpoint_bytes", 1, examples(
        (f"Act I: {ACT1_PARAMS / 1e9:g}B parameters", dict(params=ACT1_PARAMS)),
        (f"Act II: {ACT2_PARAMS / 1e12:g}T parameters", dict(params=ACT2_PARAMS)),
        ("FP32 weights, plain SGD", dict(params=ACT1_PARAMS, weight_bytes=4.0, optimizer_bytes=0.0)),
    ), domain=_H_SIZE, properties=_public("checkpoint_bytes")),
    FunctionItem("checkpoint_write_time_s", 2, examples(
        (f"Act II: {_STORAGE} from {ACT2_NODES:,} nodes", _ACT2_WRITE),
        (f"Act II's checkpoint from {_FEW_NODES} nodes: their {_FEW_NODES * NODE_BANDWIDTH / 1e9:g} GB/s, the nodes "
         "are the limit", {**_ACT2_WRITE, "n_nodes": _FEW_NODES}),
    ), domain=_H_WRITE, properties=_public("checkpoint_write_time_s")),
    FunctionItem("snapshot_stall_s", 1, examples(
        (f"{_ACT2}, PCIe Gen5 x16 each", dict(checkpoint_bytes=ACT2_CHECKPOINT_BYTES, n_gpus=ACT2_GPUS,
                                              copy_bandwidth=COPY_BANDWIDTH)),
        ("one GPU holding it all", dict(checkpoint_bytes=ACT2_CHECKPOINT_BYTES, n_gpus=1, copy_bandwidth=COPY_BANDWIDTH)),
    ), domain=_H_SNAPSHOT, properties=_public("snapshot_stall_s")),
    FunctionItem("young_daly_interval_s", 2, examples(
        (f"Act I: a {ACT1_CHECKPOINT_S / MINUTE_S:g}-minute stall, a failure every {ACT1_MTBF_S / HOUR_S:g} h",
         dict(checkpoint_s=ACT1_CHECKPOINT_S, mtbf_s=ACT1_MTBF_S)),
        (f"{_ACT2}: {_STORAGE}", dict(checkpoint_s=ACT2_WRITE_S, mtbf_s=ACT2_MTBF_S)),
        (f"{_ACT2}, asynchronous", dict(checkpoint_s=ACT2_SNAPSHOT_S, mtbf_s=ACT2_MTBF_S)),
    ), domain=_H_INTERVAL, properties=[
        *_public("young_daly_interval_s"),
        Property("minimises the first-order waste", "The interval you return loses the least time of the "
                 "intervals around it, in the first-order model of waste_fraction.", public.INTERVAL,
                 _young_minimises_the_reference_waste, public=False),
    ]),
    FunctionItem("daly_interval_s", 2, examples(
        ("Daly 2006: C = 5 min, M = 24 h", dict(checkpoint_s=5 * MINUTE_S, mtbf_s=24 * HOUR_S)),
        ("Daly 2006: C = 5 min, M = 15 min", dict(checkpoint_s=5 * MINUTE_S, mtbf_s=15 * MINUTE_S)),
        ("the source lab's cluster: a 35 s stall, a failure every 44 s", dict(checkpoint_s=ACT2_WRITE_S, mtbf_s=LAB_MTBF_S)),
        ("a checkpoint longer than two MTBFs", dict(checkpoint_s=3 * HOUR_S, mtbf_s=HOUR_S)),
    ), domain=_H_INTERVAL, properties=_public("daly_interval_s")),
    FunctionItem("waste_fraction", 2, examples(
        ("Act I: every 30 minutes", dict(interval_s=ACT1_INTERVAL_S, checkpoint_s=ACT1_CHECKPOINT_S, mtbf_s=ACT1_MTBF_S)),
        ("Act I: at Young's interval", dict(interval_s=ACT1_YOUNG_S, checkpoint_s=ACT1_CHECKPOINT_S, mtbf_s=ACT1_MTBF_S)),
        (f"{_ACT2} at Young's interval, a {RESTART_S / MINUTE_S:g}-minute restart",
         dict(interval_s=ACT2_YOUNG_S, checkpoint_s=ACT2_WRITE_S, mtbf_s=ACT2_MTBF_S, restart_s=RESTART_S)),
    ), domain=_H_LOSS, properties=_public("waste_fraction")),
    FunctionItem("goodput", 2, examples(
        (f"{_ACT2}, synchronous at Young's interval", dict(interval_s=ACT2_YOUNG_S, checkpoint_s=ACT2_WRITE_S,
                                                           mtbf_s=ACT2_MTBF_S, restart_s=RESTART_S)),
        (f"{_ACT2}, the lead's every {LEAD_INTERVAL_S / MINUTE_S:g} minutes", dict(
            interval_s=LEAD_INTERVAL_S, checkpoint_s=ACT2_WRITE_S, mtbf_s=ACT2_MTBF_S, restart_s=RESTART_S)),
        ("the source lab's cluster at Young's interval", dict(
            interval_s=ref.young_daly_interval_s(ACT2_WRITE_S, LAB_MTBF_S), checkpoint_s=ACT2_WRITE_S, mtbf_s=LAB_MTBF_S)),
    ), domain=_H_LOSS, properties=[
        *_public("goodput"),
        Property("one minus the waste when failures are rare", "When every time is far below the MTBF, the time "
                 "lost is the first-order waste of waste_fraction.", public.LOSS,
                 _goodput_is_first_order_waste_when_failures_are_rare, public=False),
    ]),
    FunctionItem("min_storage_bandwidth", 1, examples(
        (f"{_ACT2}: {fmt_bytes(ACT2_CHECKPOINT_BYTES)}, stalls at most 2 %",
         dict(checkpoint_bytes=ACT2_CHECKPOINT_BYTES, mtbf_s=ACT2_MTBF_S, max_overhead=0.02)),
        (f"Act I: {fmt_bytes(ref.checkpoint_bytes(ACT1_PARAMS))}, stalls at most 5 %",
         dict(checkpoint_bytes=ref.checkpoint_bytes(ACT1_PARAMS), mtbf_s=ACT1_MTBF_S, max_overhead=0.05)),
    ), domain=_H_BANDWIDTH_NEEDED, properties=_public("min_storage_bandwidth")),
)
