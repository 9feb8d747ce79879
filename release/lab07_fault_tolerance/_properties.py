"""Lab 07 public properties, each declared on its check (shipped to students as _properties.py):
standalone, so it imports only the stdlib, hypothesis and labs.property_kit.

Times are seconds. The failure-model strategies draw the interval, the stall and the restart as
shares of the MTBF (st.builds), so the exponentials of `goodput` stay finite however large the MTBF.
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from _property_kit import PublicProperties, kwargs, number, zero_when

HOUR_S = 3600.0
MTBF = st.floats(60.0, 1e9)                         # one minute to ~30 years, seconds
GPU_MTBF = st.floats(HOUR_S, 1e10)
GPUS = st.integers(1, 100_000)
NODES = st.integers(1, 20_000)
DURATION = st.floats(0.0, 1e9)
PARAMS = st.floats(0.0, 1e13)
BYTES_PER_VALUE = st.floats(0.0, 16.0)
CHECKPOINT = st.floats(0.0, 1e15)                   # bytes
BANDWIDTH = st.floats(1e6, 1e13)                    # bytes/s
STALL = st.floats(0.0, 1e5)                         # seconds
SHARE = st.floats(0.001, 1.0)                       # of the MTBF (overhead fractions too)

CLUSTER = kwargs(gpu_mtbf_s=GPU_MTBF, n_gpus=GPUS)
FAILURES = kwargs(duration_s=DURATION, mtbf_s=MTBF)
SIZE = kwargs(params=PARAMS, weight_bytes=BYTES_PER_VALUE, optimizer_bytes=BYTES_PER_VALUE)
WRITE = kwargs(checkpoint_bytes=CHECKPOINT, storage_bandwidth=BANDWIDTH, n_nodes=NODES, node_bandwidth=BANDWIDTH)
SNAPSHOT = kwargs(checkpoint_bytes=CHECKPOINT, n_gpus=GPUS, copy_bandwidth=BANDWIDTH)
INTERVAL = kwargs(checkpoint_s=STALL, mtbf_s=MTBF)
LOSS = st.builds(lambda mtbf, interval, stall, restart: dict(interval_s=interval * mtbf, checkpoint_s=stall * mtbf,
                                                             mtbf_s=mtbf, restart_s=restart * mtbf),
                 MTBF, st.floats(1e-4, 3.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
BANDWIDTH_NEEDED = kwargs(checkpoint_bytes=CHECKPOINT, mtbf_s=MTBF, max_overhead=SHARE)

PROPERTIES = PublicProperties()
public_property = PROPERTIES.declare


def _close(got, want, what: str, rel: float = 1e-9) -> None:
    assert math.isclose(number(got), want, rel_tol=rel, abs_tol=1e-300), f"{what}: got {got!r}, expected {want!r}"


def _scales(argument: str, factor: float, power: float, what: str):
    """A check: `argument` times `factor` multiplies the function by factor ** power."""
    def check(f, d):
        once = number(f(**d))
        _close(f(**{**d, argument: factor * d[argument]}), once * factor ** power,
               f"{argument} x{factor:g} from {d[argument]!r} ({what}; it gave {once!r})")
    return check


# --- cluster_mtbf_s ------------------------------------------------------------------------------

@public_property("cluster_mtbf_s", CLUSTER, name="one GPU is its own cluster")
def _one_gpu(f, d):
    """A job on one GPU fails exactly when that GPU does: its MTBF is the GPU's."""
    _close(f(**{**d, "n_gpus": 1}), d["gpu_mtbf_s"], "n_gpus = 1")


public_property("cluster_mtbf_s", CLUSTER, name="twice the GPUs, half the MTBF",
                meaning="Every GPU added can stop the job: twice the GPUs fail twice as often.")(
    _scales("n_gpus", 2, -1, "twice the GPUs"))


# --- expected_failures ---------------------------------------------------------------------------

public_property("expected_failures", FAILURES, name="none in no time",
                meaning="A run that lasts no time expects no failure.")(
    zero_when("duration_s = 0: got {got!r}, expected 0.0", duration_s=0.0))

public_property("expected_failures", FAILURES, name="twice as long, twice the failures",
                meaning="Failures arrive at a steady rate: a run twice as long expects twice as many.")(
    _scales("duration_s", 2, 1, "twice the duration"))


# --- checkpoint_bytes ----------------------------------------------------------------------------

public_property("checkpoint_bytes", SIZE, name="nothing for no parameters",
                meaning="A model without parameters has nothing to checkpoint.")(
    zero_when("params = 0: got {got!r}, expected 0.0", params=0.0))

public_property("checkpoint_bytes", SIZE, name="twice the parameters, twice the bytes",
                meaning="Every parameter saves the same bytes: twice the parameters, twice the checkpoint.")(
    _scales("params", 2, 1, "twice the parameters"))


@public_property("checkpoint_bytes", SIZE, name="the optimizer state counts")
def _optimizer_state_counts(f, d):
    """A restart needs the optimizer's state of every parameter as well as its weight: one more byte of
    state per parameter adds `params` bytes."""
    more = {**d, "optimizer_bytes": d["optimizer_bytes"] + 1}
    _close(number(f(**more)) - number(f(**d)), d["params"], "one more optimizer byte per parameter", rel=1e-6)


# --- checkpoint_write_time_s ---------------------------------------------------------------------

public_property("checkpoint_write_time_s", WRITE, name="zero for an empty checkpoint",
                meaning="Nothing to write takes no time.")(
    zero_when("checkpoint_bytes = 0: got {got!r}, expected 0.0", checkpoint_bytes=0.0))


@public_property("checkpoint_write_time_s", WRITE, name="the slower stage sets the pace")
def _slower_stage(f, d):
    """Storage that absorbs more than all the nodes can send does not speed the write up, and neither
    do faster nodes when the storage is the limit."""
    nodes = d["n_nodes"] * d["node_bandwidth"]
    base = number(f(**d))
    if d["storage_bandwidth"] >= nodes:
        _close(f(**{**d, "storage_bandwidth": 2 * d["storage_bandwidth"]}), base, "twice the storage, nodes the limit")
    else:
        _close(f(**{**d, "node_bandwidth": 2 * d["node_bandwidth"]}), base, "twice the node bandwidth, storage the limit")


# --- snapshot_stall_s ----------------------------------------------------------------------------

public_property("snapshot_stall_s", SNAPSHOT, name="zero for an empty checkpoint",
                meaning="Nothing to copy takes no time.")(
    zero_when("checkpoint_bytes = 0: got {got!r}, expected 0.0", checkpoint_bytes=0.0))

public_property("snapshot_stall_s", SNAPSHOT, name="twice the GPUs, half the stall",
                meaning="Every GPU copies its own shard at once: twice the GPUs, half the bytes each.")(
    _scales("n_gpus", 2, -1, "twice the GPUs"))


# --- young_daly_interval_s -----------------------------------------------------------------------

public_property("young_daly_interval_s", INTERVAL, name="zero for a free checkpoint",
                meaning="A checkpoint that costs nothing is best taken continually.")(
    zero_when("checkpoint_s = 0: got {got!r}, expected 0.0", checkpoint_s=0.0))

public_property("young_daly_interval_s", INTERVAL, name="four times the MTBF, twice the interval",
                meaning="The best interval grows as the square root of the MTBF: failures four times rarer "
                        "double it.")(
    _scales("mtbf_s", 4, 0.5, "four times the MTBF"))

public_property("young_daly_interval_s", INTERVAL, name="four times the stall, twice the interval",
                meaning="The best interval grows as the square root of the checkpoint's stall too.")(
    _scales("checkpoint_s", 4, 0.5, "four times the stall"))


# --- daly_interval_s -----------------------------------------------------------------------------

@public_property("daly_interval_s", INTERVAL, name="the MTBF once a checkpoint costs two")
def _costly_checkpoint(f, d):
    """When a checkpoint stalls for two MTBFs or more, checkpoint once per MTBF."""
    _close(f(**{**d, "checkpoint_s": 3 * d["mtbf_s"]}), d["mtbf_s"], "checkpoint_s = 3 mtbf_s")


@public_property("daly_interval_s", INTERVAL, name="Young's interval for a cheap checkpoint")
def _cheap_checkpoint(f, d):
    """For a checkpoint a million times shorter than the MTBF the higher-order terms vanish: the interval
    is within 1 % of Young's first-order √(2CM)."""
    stall = d["mtbf_s"] * 1e-6
    _close(f(**{**d, "checkpoint_s": stall}), math.sqrt(2 * stall * d["mtbf_s"]), "checkpoint_s = 1e-6 mtbf_s",
           rel=0.01)


# --- waste_fraction ------------------------------------------------------------------------------

@public_property("waste_fraction", LOSS, name="least at the balance")
def _least_at_balance(f, d):
    """Checkpointing at the interval where the stall share equals the rework share, √(2CM), loses no
    more than half or twice that interval does."""
    best = math.sqrt(2 * d["checkpoint_s"] * d["mtbf_s"])
    if best <= 0:
        return
    at_best = number(f(**{**d, "interval_s": best}))
    for k in (0.5, 2.0):
        other = number(f(**{**d, "interval_s": k * best}))
        assert at_best <= other * (1 + 1e-9), f"interval {best!r}: {at_best!r}, but {k * best!r}: {other!r}"


public_property("waste_fraction", LOSS, name="the restart costs its share of the MTBF",
                meaning="Each failure adds one restart: one more MTBF of restart time adds 1 to the share lost.")(
    lambda f, d: _close(number(f(**{**d, "restart_s": d["restart_s"] + d["mtbf_s"]})) - number(f(**d)), 1.0,
                        "restart_s + mtbf_s", rel=1e-6))


# --- goodput -------------------------------------------------------------------------------------

@public_property("goodput", LOSS, name="a share of the time")
def _share(f, d):
    """Goodput is the share of the wall-clock time that advances training: above 0, at most 1."""
    got = number(f(**d))
    assert 0 < got <= 1, f"goodput {got!r} is not in (0, 1]"


@public_property("goodput", LOSS, name="rarer failures never hurt")
def _rarer_failures(f, d):
    """With every time the same, failures half as frequent never lower the goodput."""
    once, rarer = number(f(**d)), number(f(**{**d, "mtbf_s": 2 * d["mtbf_s"]}))
    assert rarer >= once * (1 - 1e-9), f"mtbf_s {d['mtbf_s']!r}: {once!r}; twice the MTBF: {rarer!r}"


@public_property("goodput", LOSS, name="a longer stall never helps")
def _longer_stall(f, d):
    """With every other time the same, a checkpoint that stalls longer never raises the goodput."""
    once, longer = number(f(**d)), number(f(**{**d, "checkpoint_s": d["checkpoint_s"] + d["mtbf_s"] / 10}))
    assert longer <= once * (1 + 1e-9), f"checkpoint_s {d['checkpoint_s']!r}: {once!r}; longer: {longer!r}"


# --- min_storage_bandwidth -----------------------------------------------------------------------

public_property("min_storage_bandwidth", BANDWIDTH_NEEDED, name="half the overhead, four times the bandwidth",
                meaning="At the best interval the stall share goes as the square root of the write time: "
                        "halving it takes a write four times faster.")(
    _scales("max_overhead", 0.5, -2, "half the allowed overhead"))

public_property("min_storage_bandwidth", BANDWIDTH_NEEDED, name="twice the bytes, twice the bandwidth",
                meaning="The same write time for twice the bytes needs twice the bandwidth.")(
    _scales("checkpoint_bytes", 2, 1, "twice the bytes"))
