"""Lab 06 graded items: worked examples at the scenario's inputs, hidden domains and hidden properties.

Expected values are never typed: the engine computes them from reference/ at grading time.
"""
from __future__ import annotations

from functools import partial

from hypothesis import strategies as st

from autograder.engine.spec import FunctionItem, Property
from labs.authoring import anchored, close, decades, examples, fmt_bytes, public_properties
from labs.lab06_collectives import properties as public
from labs.lab06_collectives.scenario import (ACT1_MESSAGE_BYTES, ACT1_RING_S, ACT2, ALPHA_S, CHINCHILLA,
                                             FAILURE_FRACTION, LINK, MFU, MIN_RANKS, N_GPUS, NCCL_EXAMPLE, NDR,
                                             NODES, ODD_N, ONE_GB, PEAK_FLOPS, SMALL_BYTES, TOKENS_PER_STEP, WORKLOADS)
from reference.cluster import ring_link
from reference import collectives as ref
from reference import constants as C


_public = partial(public_properties, public.PROPERTIES)

# Graded functions whose stub docstring may state its closed form (issue 29, derive then check): a
# definition or a published count a student is not asked to derive; at most a third of the lab's
# functions (`scalelabs lint`'s derive rule). Every other function's formula is in the reference's
# Formula: paragraph, which the stub leaves out.
DEFINITIONS = ("bus_bandwidth", "training_step_flops", "compute_time", "comm_fraction")


# --- hidden properties (they may call the trusted reference) ------------------------------------------

def _crossover_equal_times(f, d):
    # trusted reference times at the student's crossover: ring and tree must agree there
    m = f(**d)
    close(ref.ring_allreduce_time(m, **d), ref.tree_allreduce_time(m, **d), "ring vs tree time at the crossover")


def _naive_not_faster_than_ring(f, d):
    got = f(**d)
    assert got >= ref.ring_allreduce_time(**d) * (1 - 1e-9), f"naive {got!r} beats ring AllReduce"


def _rabenseifner_not_slower_than_ring(f, d):
    got = f(**d)
    assert got <= ref.ring_allreduce_time(**d) * (1 + 1e-9), f"Rabenseifner {got!r} is slower than the ring"


def _fraction_failure_iff_comm_exceeds_compute(f, d):
    got = f(**d)
    assert (got > FAILURE_FRACTION) == (d["comm_s"] > d["compute_s"]), \
        f"comm_fraction = {got!r} with comm_s = {d['comm_s']!r}, compute_s = {d['compute_s']!r}"


# --- hidden domains: wider than the released strategies (properties.py) and drawn differently -------
# Messages from 0 to 10 TB (more weight on KB..GB), clusters of 1 to 16,384 ranks (half of the draws
# up to 64), latencies 0 or 10 ns .. 1 ms, links of 100 MB/s .. 10 TB/s. Zero (an empty message, no
# latency) is an edge, drawn for every student, and rare in random draws (a bound of a linear range).
_BYTES = st.one_of(decades(0, 13), decades(3, 9), st.floats(0.0, 1e12))
_POSITIVE_BYTES = st.one_of(decades(0, 13), decades(3, 9))
_RANKS = st.one_of(st.integers(1, 64), st.integers(1, 16_384))
_MANY_RANKS = st.one_of(st.integers(2, 64), st.integers(2, 16_384))
_ALPHA = st.one_of(decades(-8, -3), decades(-7, -5), st.floats(0.0, 1e-4))
_POSITIVE_ALPHA = st.one_of(decades(-8, -3), decades(-7, -5))
_BANDWIDTH = st.one_of(decades(8, 13), decades(10, 12))
_SECONDS = st.one_of(decades(-7, 4), decades(-3, 1))

_H_P2P = st.fixed_dictionaries({"message_bytes": _BYTES, "alpha_s": _ALPHA, "bandwidth": _BANDWIDTH})
_H_ALLREDUCE = st.fixed_dictionaries({"message_bytes": _BYTES, "n": _RANKS, "alpha_s": _ALPHA, "bandwidth": _BANDWIDTH})
_H_RABENSEIFNER = st.fixed_dictionaries({"message_bytes": _BYTES, "n": st.integers(0, 14).map(lambda k: 2 ** k),
                                         "alpha_s": _ALPHA, "bandwidth": _BANDWIDTH})
_H_VOLUME = st.fixed_dictionaries({"message_bytes": _BYTES, "n": _RANKS})
_H_BUSBW = st.fixed_dictionaries({"message_bytes": _POSITIVE_BYTES, "time_s": _SECONDS, "n": _MANY_RANKS})
_H_CRITICAL = st.fixed_dictionaries({"alpha_s": _POSITIVE_ALPHA, "bandwidth": _BANDWIDTH})
_H_CROSSOVER = st.fixed_dictionaries({"n": _MANY_RANKS, "alpha_s": _POSITIVE_ALPHA, "bandwidth": _BANDWIDTH})
_H_FLOPS = st.fixed_dictionaries({"params": decades(5, 13), "tokens": st.one_of(decades(2, 8), st.integers(1, 10 ** 7))})
_H_COMPUTE = st.fixed_dictionaries({"flops": decades(10, 27), "n_gpus": st.one_of(st.integers(1, 64), st.integers(1, 100_000)),
                                    "peak_flops": decades(12, 16.5), "mfu": st.floats(0.01, 1.0)})
# comm exactly equal to compute: the share sits exactly on its failure limit (FAILURE_FRACTION)
_H_FRACTION = anchored(st.fixed_dictionaries({"comm_s": st.one_of(_SECONDS, st.floats(0.0, 10.0)), "compute_s": _SECONDS}),
                       {"comm_s": 2.5, "compute_s": 2.5}, {"comm_s": 1e-6, "compute_s": 1e-6},
                       {"comm_s": 0.0, "compute_s": 3.0}, {"comm_s": 3.0, "compute_s": 0.0})


def _best_domain():
    # messages 1.15 to 20 times either side of the ring-tree crossover, where every correct form of
    # the two times agrees on which is smaller (at the crossover itself the last bit decides), and
    # where the message alone tells little (the crossover spans decades): a fixed size threshold is
    # right about as often as a coin (scoring.input_blind_matches). Anchors: exact ties, which go to
    # the ring (an empty message on 1 or 2 ranks, or on a link without latency).
    def with_message(d):
        cross = ref.ring_tree_crossover_bytes(d["n"], d["alpha_s"], d["bandwidth"])
        if cross == 0:
            return _POSITIVE_BYTES.map(lambda m: {**d, "message_bytes": m})
        factor = st.one_of(st.floats(-1.3, -0.06).map(lambda e: 10.0 ** e), st.floats(0.06, 1.3).map(lambda e: 10.0 ** e))
        return factor.map(lambda k: {**d, "message_bytes": k * cross})
    base = st.fixed_dictionaries({"n": _MANY_RANKS, "alpha_s": _POSITIVE_ALPHA, "bandwidth": _BANDWIDTH})
    link = dict(alpha_s=1.5e-6, bandwidth=5e10)
    return anchored(base.flatmap(with_message),
                    dict(message_bytes=0.0, n=1, **link), dict(message_bytes=0.0, n=2, **link),
                    dict(message_bytes=0.0, n=128, alpha_s=0.0, bandwidth=5e10),
                    dict(message_bytes=1e6, n=1, **link))


# --- graded items ------------------------------------------------------------------------------------

_CLUSTER = f"{N_GPUS} GPUs ({NODES} DGX H100 nodes)"
_ACT1 = f"Act I: {fmt_bytes(ACT1_MESSAGE_BYTES)} gradient over {_CLUSTER}"
_BIG, _MID, _SMALL = (dict(message_bytes=m, **LINK) for _, _, m in WORKLOADS)
_NCCL = NCCL_EXAMPLE
_NCCL_LABEL = (f"{fmt_bytes(_NCCL['message_bytes'])}, {_NCCL['n']} ranks, {_NCCL['bandwidth'] / 1e9:g} GB/s, "
               f"{_NCCL['alpha_s'] * 1e6:g} µs")
_GRAD_LABEL = lambda i: f"{fmt_bytes(WORKLOADS[i][2])} ({WORKLOADS[i][1] / 1e9:g}B FP16) gradient"
_ACT1_LINK = dict(message_bytes=ACT1_MESSAGE_BYTES, **LINK)
_BIG_PARAMS, _SMALL_PARAMS = WORKLOADS[0][1], WORKLOADS[2][1]
_BIG_COMPUTE_S, _BIG_RING_S = ACT2[0][3]["compute_s"], ACT2[0][3]["times"]["ring"]
_SMALL_COMPUTE_S, _SMALL_TREE_S = ACT2[2][3]["compute_s"], ACT2[2][3]["times"]["tree"]

FUNCTIONS = (
    FunctionItem("p2p_time", 1, examples(
        (f"one {fmt_bytes(WORKLOADS[2][2])} update over one NDR port", dict(message_bytes=WORKLOADS[2][2], alpha_s=ALPHA_S, bandwidth=NDR)),
        (f"the {fmt_bytes(WORKLOADS[1][2])} gradient over one NDR port", dict(message_bytes=WORKLOADS[1][2], alpha_s=ALPHA_S, bandwidth=NDR)),
    ), domain=_H_P2P, properties=_public("p2p_time")),
    FunctionItem("naive_allreduce_time", 2, examples(
        (_ACT1, _ACT1_LINK),
        (f"one DGX H100 node ({C.GPUS_PER_DGX_H100} GPUs) over NVLink, {fmt_bytes(ONE_GB)}",
         dict(message_bytes=ONE_GB, n=C.GPUS_PER_DGX_H100, alpha_s=C.NVLINK_ALPHA_S, bandwidth=C.NVLINK4_BANDWIDTH)),
    ), domain=_H_ALLREDUCE, properties=[
        *_public("naive_allreduce_time"),
        Property("never faster than ring", "The master's link carries n times the ring's bytes, so naive "
                 "AllReduce is never faster than ring AllReduce.", public.ALLREDUCE, _naive_not_faster_than_ring,
                 public=False),
    ]),
    FunctionItem("ring_allreduce_time", 3, examples(
        (_ACT1, _ACT1_LINK),
        (f"Act II: {_GRAD_LABEL(0)} over {_CLUSTER}", _BIG),
        (f"the lab's own worked example: {_NCCL_LABEL}", _NCCL),
    ), domain=_H_ALLREDUCE, properties=_public("ring_allreduce_time")),
    FunctionItem("tree_allreduce_time", 2, examples(
        (_ACT1, _ACT1_LINK),
        (f"Act II: {fmt_bytes(WORKLOADS[2][2])} update over {_CLUSTER}", _SMALL),
        (f"{ODD_N} GPUs ({ODD_N // C.GPUS_PER_DGX_H100} DGX nodes), {fmt_bytes(SMALL_BYTES)}: not a power of two",
         dict(message_bytes=SMALL_BYTES, n=ODD_N, **ring_link(ODD_N))),
    ), domain=_H_ALLREDUCE, properties=_public("tree_allreduce_time")),
    FunctionItem("rabenseifner_allreduce_time", 2, examples(
        (f"Act II: {_GRAD_LABEL(0)} over {_CLUSTER}", _BIG),
        (f"Act II: {fmt_bytes(WORKLOADS[2][2])} update over {_CLUSTER}", _SMALL),
    ), domain=_H_RABENSEIFNER, properties=[
        *_public("rabenseifner_allreduce_time"),
        Property("never slower than ring", "Rabenseifner moves the ring's bytes in log2 n instead of n-1 "
                 "latency steps per phase, so it is never slower than the ring.", public.RABENSEIFNER,
                 _rabenseifner_not_slower_than_ring, public=False),
    ]),
    FunctionItem("ring_bytes_per_rank", 1, examples(
        (_ACT1, dict(message_bytes=ACT1_MESSAGE_BYTES, n=N_GPUS)),
        (f"{MIN_RANKS} ranks, {fmt_bytes(ONE_GB)}", dict(message_bytes=ONE_GB, n=MIN_RANKS)),
    ), domain=_H_VOLUME, properties=_public("ring_bytes_per_rank")),
    FunctionItem("naive_master_bytes", 1, examples(
        (_ACT1, dict(message_bytes=ACT1_MESSAGE_BYTES, n=N_GPUS)),
        (f"{MIN_RANKS} ranks, {fmt_bytes(ONE_GB)}", dict(message_bytes=ONE_GB, n=MIN_RANKS)),
    ), domain=_H_VOLUME, properties=_public("naive_master_bytes")),
    FunctionItem("bus_bandwidth", 2, examples(
        (f"the lab's own example: {fmt_bytes(_NCCL['message_bytes'])}, {_NCCL['n']} ranks, ideal time on a "
         f"{_NCCL['bandwidth'] / 1e9:g} GB/s link",
         dict(message_bytes=_NCCL["message_bytes"], n=_NCCL["n"],
              time_s=ref.ring_allreduce_time(_NCCL["message_bytes"], _NCCL["n"], 0.0, _NCCL["bandwidth"]))),
        (f"{_ACT1}, ring time with latency",
         dict(message_bytes=ACT1_MESSAGE_BYTES, time_s=ACT1_RING_S, n=N_GPUS)),
    ), domain=_H_BUSBW, properties=_public("bus_bandwidth")),
    FunctionItem("critical_message_size", 1, examples(
        ("InfiniBand NDR", dict(alpha_s=ALPHA_S, bandwidth=NDR)),
        ("InfiniBand HDR", dict(alpha_s=ALPHA_S, bandwidth=C.IB_HDR200_BANDWIDTH)),
        ("NVLink 4", dict(alpha_s=C.NVLINK_ALPHA_S, bandwidth=C.NVLINK4_BANDWIDTH)),
    ), domain=_H_CRITICAL, properties=_public("critical_message_size")),
    FunctionItem("ring_tree_crossover_bytes", 3, examples(
        (_CLUSTER, LINK),
        (f"one DGX H100 node ({C.GPUS_PER_DGX_H100} GPUs) over NVLink",
         dict(n=C.GPUS_PER_DGX_H100, alpha_s=C.NVLINK_ALPHA_S, bandwidth=C.NVLINK4_BANDWIDTH)),
        (f"{ODD_N} GPUs ({ODD_N // C.GPUS_PER_DGX_H100} DGX nodes)", dict(n=ODD_N, **ring_link(ODD_N))),
    ), domain=_H_CROSSOVER, properties=[
        *_public("ring_tree_crossover_bytes"),
        Property("ring and tree tie at the crossover", "At the crossover message size ring and tree AllReduce "
                 "take the same time.", public.CROSSOVER, _crossover_equal_times, public=False),
    ]),
    FunctionItem("best_allreduce_algorithm", 2, examples(
        *((f"Act II: {label}, {fmt_bytes(message)}", dict(message_bytes=message, **LINK))
          for label, _, message in WORKLOADS),
    ), domain=_best_domain(), properties=_public("best_allreduce_algorithm")),
    FunctionItem("training_step_flops", 1, examples(
        (f"Act II: {_BIG_PARAMS / 1e9:g}B params, {TOKENS_PER_STEP} tokens", dict(params=_BIG_PARAMS, tokens=TOKENS_PER_STEP)),
        (f"Chinchilla: {CHINCHILLA['params'] / 1e9:g}B params, {CHINCHILLA['tokens'] / 1e12:g}T tokens", CHINCHILLA),
    ), domain=_H_FLOPS, properties=_public("training_step_flops")),
    FunctionItem("compute_time", 1, examples(
        (f"Act II: {_BIG_PARAMS / 1e9:g}B step on {N_GPUS} H100 at MFU {MFU}",
         dict(flops=ref.training_step_flops(_BIG_PARAMS, TOKENS_PER_STEP), n_gpus=N_GPUS, peak_flops=PEAK_FLOPS, mfu=MFU)),
        (f"Act II: embedding-model step on {N_GPUS} H100 at MFU {MFU}",
         dict(flops=ref.training_step_flops(_SMALL_PARAMS, TOKENS_PER_STEP), n_gpus=N_GPUS, peak_flops=PEAK_FLOPS, mfu=MFU)),
    ), domain=_H_COMPUTE, properties=_public("compute_time")),
    FunctionItem("comm_fraction", 1, examples(
        (f"Act II: {_BIG_PARAMS / 1e9:g}B step, ring AllReduce", dict(comm_s=_BIG_RING_S, compute_s=_BIG_COMPUTE_S)),
        ("Act II: embedding update, tree AllReduce", dict(comm_s=_SMALL_TREE_S, compute_s=_SMALL_COMPUTE_S)),
    ), domain=_H_FRACTION, properties=[
        *_public("comm_fraction"),
        Property("failure exactly when comm exceeds compute", f"The share passes {FAILURE_FRACTION:g} exactly when "
                 "communication takes longer than compute.", public.FRACTION, _fraction_failure_iff_comm_exceeds_compute,
                 public=False),
    ]),
)
