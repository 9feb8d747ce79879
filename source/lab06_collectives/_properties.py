"""Lab 06 (collective communication): the public properties of `collectives.py`.

Standalone (stdlib + hypothesis only): shipped to students as `_properties.py` and run by the
released public tests. Each property relates a function to itself (limits, identities, bounds,
scaling), so it needs no reference solution. `check(f, drawn)` calls the student's function with
keyword arguments and raises AssertionError with a short message when the property fails.

Units: bytes, seconds, bytes/s (per direction), FLOP, FLOP/s; fractions in [0, 1].
"""
from __future__ import annotations

import math
from numbers import Real

from hypothesis import strategies as st

REL_TOL = 1e-9      # float forms of one formula differ in the last bits, never by more
ABS_TOL = 1e-12


def _decades(low_exp: float, high_exp: float) -> st.SearchStrategy:
    """Floats spread evenly over decades (1 KB and 1 TB messages are both realistic)."""
    return st.floats(low_exp, high_exp, allow_nan=False, allow_infinity=False).map(lambda e: 10.0 ** e)


MESSAGE_BYTES = st.one_of(st.just(0.0), _decades(0, 12))        # 0 .. 1 TB
POSITIVE_BYTES = _decades(0, 12)                                 # 1 B .. 1 TB
RANKS = st.integers(1, 4096)
MANY_RANKS = st.integers(2, 4096)
POWER_OF_TWO_RANKS = st.integers(0, 12).map(lambda k: 2 ** k)   # Rabenseifner needs 2^k ranks
ALPHA_S = st.one_of(st.just(0.0), _decades(-7, -4))             # 0, 0.1 us .. 100 us
POSITIVE_ALPHA_S = _decades(-7, -4)
BANDWIDTH = _decades(9, 12)                                      # 1 GB/s .. 1 TB/s
SECONDS = _decades(-6, 3)
PARAMS = _decades(6, 12)                                         # 1M .. 1T parameters
TOKENS = _decades(3, 7)                                          # tokens per step
PEAK_FLOPS = _decades(13, 16)
MFU = st.floats(0.05, 1.0)
GPUS = st.integers(1, 16384)


def _number(value) -> float:
    assert isinstance(value, Real) and not isinstance(value, bool), f"expected a number, got {value!r}"
    return float(value)


def _close(got, want, what: str) -> None:
    got = _number(got)
    assert math.isclose(got, want, rel_tol=REL_TOL, abs_tol=ABS_TOL), f"{what}: got {got!r}, expected {want!r}"


def _link(d: dict, **changes) -> dict:
    return {**d, **changes}


# --- strategies of keyword arguments -------------------------------------------------------------

P2P = st.fixed_dictionaries({"message_bytes": MESSAGE_BYTES, "alpha_s": ALPHA_S, "bandwidth": BANDWIDTH})
ALLREDUCE = st.fixed_dictionaries({"message_bytes": MESSAGE_BYTES, "n": RANKS, "alpha_s": ALPHA_S,
                                   "bandwidth": BANDWIDTH})
ALLREDUCE_MANY = st.fixed_dictionaries({"message_bytes": POSITIVE_BYTES, "n": MANY_RANKS,
                                        "alpha_s": ALPHA_S, "bandwidth": BANDWIDTH})
RABENSEIFNER = st.fixed_dictionaries({"message_bytes": MESSAGE_BYTES, "n": POWER_OF_TWO_RANKS,
                                      "alpha_s": ALPHA_S, "bandwidth": BANDWIDTH})
RABENSEIFNER_MANY = st.fixed_dictionaries({"message_bytes": POSITIVE_BYTES,
                                           "n": POWER_OF_TWO_RANKS.filter(lambda n: n >= 2),
                                           "alpha_s": ALPHA_S, "bandwidth": BANDWIDTH})
VOLUME = st.fixed_dictionaries({"message_bytes": MESSAGE_BYTES, "n": RANKS})
VOLUME_MANY = st.fixed_dictionaries({"message_bytes": POSITIVE_BYTES, "n": MANY_RANKS})
BUSBW = st.fixed_dictionaries({"message_bytes": POSITIVE_BYTES, "time_s": SECONDS, "n": MANY_RANKS})
CRITICAL = st.fixed_dictionaries({"alpha_s": POSITIVE_ALPHA_S, "bandwidth": BANDWIDTH})
CROSSOVER = st.fixed_dictionaries({"n": MANY_RANKS, "alpha_s": POSITIVE_ALPHA_S, "bandwidth": BANDWIDTH})
SELECT_LARGE = st.fixed_dictionaries({"factor": st.floats(4.0, 1e3), "n": MANY_RANKS,
                                      "alpha_s": ALPHA_S, "bandwidth": BANDWIDTH})
SELECT_EMPTY = st.fixed_dictionaries({"n": st.integers(4, 4096), "alpha_s": POSITIVE_ALPHA_S,
                                      "bandwidth": BANDWIDTH})
FLOPS = st.fixed_dictionaries({"params": PARAMS, "tokens": TOKENS})
COMPUTE = st.fixed_dictionaries({"flops": _decades(12, 24), "n_gpus": GPUS, "peak_flops": PEAK_FLOPS,
                                 "mfu": MFU})
FRACTION = st.fixed_dictionaries({"comm_s": SECONDS, "compute_s": SECONDS})


# --- checks ----------------------------------------------------------------------------------------

def _single_rank_is_free(f, d):
    _close(f(**_link(d, n=1)), 0.0, "n = 1")


def _affine_in_message(f, d):
    # T(M1 + M2) + T(0) == T(M1) + T(M2): a fixed latency part plus a part proportional to M
    m1 = d["message_bytes"]
    m2 = 0.5 * m1 + 1.0
    left = _number(f(**_link(d, message_bytes=m1 + m2))) + _number(f(**_link(d, message_bytes=0.0)))
    right = _number(f(**_link(d, message_bytes=m1))) + _number(f(**_link(d, message_bytes=m2)))
    _close(left, right, "T(M1+M2) + T(0) vs T(M1) + T(M2)")


def _p2p_empty_is_latency(f, d):
    _close(f(**_link(d, message_bytes=0.0)), d["alpha_s"], "message_bytes = 0")


def _p2p_one_second_of_bytes(f, d):
    # units: a link of B bytes/s moves B bytes in one second (a Gb/s or GB slip is off by 8 or 1e9)
    _close(f(message_bytes=d["bandwidth"], alpha_s=0.0, bandwidth=d["bandwidth"]), 1.0,
           "message_bytes = bandwidth, alpha_s = 0")


def _naive_linear_in_others(f, d):
    n = max(d["n"], 2)
    two = _number(f(**_link(d, n=2)))
    _close(f(**_link(d, n=n)), (n - 1) * two, f"T(n={n}) vs (n-1) * T(n=2)")


def _empty_costs_latencies(steps):
    def check(f, d):
        n = d["n"]
        _close(f(**_link(d, message_bytes=0.0)), steps(n) * d["alpha_s"], f"message_bytes = 0, n = {n}")
    return check


def _bandwidth_term_at_lower_bound(f, d):
    # alpha = 0: an AllReduce must move at least 2(n-1)/n * M per rank, which lies in [M, 2M)
    m, b = d["message_bytes"], d["bandwidth"]
    t = _number(f(**_link(d, alpha_s=0.0)))
    assert m / b * (1 - REL_TOL) <= t < 2 * m / b, \
        f"alpha_s = 0, n = {d['n']}: got {t!r}, expected between M/B = {m / b!r} and 2M/B = {2 * m / b!r}"


def _next_power_of_two(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _tree_full_levels(f, d):
    # a binary tree over n ranks has ceil(log2 n) levels; a partly filled level costs a whole one
    up = _next_power_of_two(d["n"])
    _close(f(**d), _number(f(**_link(d, n=up))), f"T(n={d['n']}) vs T(n={up})")


def _tree_doubling_adds_a_level(f, d):
    n = min(d["n"], 2048)
    added = _number(f(**_link(d, n=2 * n))) - _number(f(**_link(d, n=n)))
    _close(added, 2 * (d["alpha_s"] + d["message_bytes"] / d["bandwidth"]), f"T(n={2 * n}) - T(n={n})")


def _doubling_adds_two_latencies(f, d):
    n = min(d["n"], 2048)
    empty = _link(d, message_bytes=0.0)
    added = _number(f(**_link(empty, n=2 * n))) - _number(f(**_link(empty, n=n)))
    _close(added, 2 * d["alpha_s"], f"message_bytes = 0: T(n={2 * n}) - T(n={n})")


def _volume_single_rank(f, d):
    _close(f(**_link(d, n=1)), 0.0, "n = 1")


def _ring_volume_bounds(f, d):
    m = d["message_bytes"]
    v = _number(f(**d))
    assert m * (1 - REL_TOL) <= v < 2 * m, f"n = {d['n']}: got {v!r}, expected between M and 2M"


def _ring_volume_shortfall(f, d):
    m, n = d["message_bytes"], d["n"]
    _close(2 * m - _number(f(**d)), 2 * m / n, f"2M - bytes at n = {n}")


def _naive_volume_linear(f, d):
    n = max(d["n"], 2)
    _close(f(**_link(d, n=n)), (n - 1) * _number(f(**_link(d, n=2))), f"bytes(n={n}) vs (n-1) * bytes(n=2)")


def _naive_volume_two_ranks(f, d):
    # two ranks: the master receives the other's M and sends M back; it sends nothing to itself
    _close(f(**_link(d, n=2)), 2 * d["message_bytes"], "n = 2")


def _busbw_two_ranks(f, d):
    _close(f(**_link(d, n=2)), d["message_bytes"] / d["time_s"], "n = 2 (busbw equals algbw M/t)")


def _busbw_bounds(f, d):
    algbw = d["message_bytes"] / d["time_s"]
    got = _number(f(**d))
    assert algbw * (1 - REL_TOL) <= got < 2 * algbw, \
        f"n = {d['n']}: got {got!r}, expected between algbw M/t = {algbw!r} and 2 algbw"


def _busbw_single_rank(f, d):
    _close(f(**_link(d, n=1)), 0.0, "n = 1")


def _critical_latency_equals_transfer(f, d):
    m_star = _number(f(**d))
    _close(m_star / d["bandwidth"], d["alpha_s"], "transfer time of M* vs alpha_s")


def _scales_with(key):
    def check(f, d):
        _close(f(**_link(d, **{key: 2 * d[key]})), 2 * _number(f(**d)), f"doubling {key}")
    return check


def _crossover_small_rings(f, d):
    # 2 or 3 ranks: the tree has as many latency steps as the ring and more bytes, so ring never loses
    n = 2 + d["n"] % 2
    _close(f(**_link(d, n=n)), 0.0, f"n = {n}")


def _select_answers_a_name(f, d):
    got = f(message_bytes=d["factor"], n=d["n"], alpha_s=d["alpha_s"], bandwidth=d["bandwidth"])
    assert got in ("ring", "tree"), f"expected 'ring' or 'tree', got {got!r}"


def _select_large_is_ring(f, d):
    # far above the crossover (which is below 2 * alpha * B * n) the ring's bandwidth term wins
    m = max(1.0, d["factor"] * d["alpha_s"] * d["bandwidth"] * d["n"])
    got = f(message_bytes=m, n=d["n"], alpha_s=d["alpha_s"], bandwidth=d["bandwidth"])
    assert got == "ring", f"message_bytes = {m!r}, n = {d['n']}: got {got!r}, expected 'ring'"


def _select_empty_is_tree(f, d):
    # nothing to move: only latency steps count, 2 ceil(log2 n) for the tree vs 2(n-1) for the ring
    got = f(message_bytes=0.0, **d)
    assert got == "tree", f"message_bytes = 0, n = {d['n']}: got {got!r}, expected 'tree'"


def _six_flop_per_param_token(f, d):
    _close(f(params=1.0, tokens=1.0), 6.0, "params = 1, tokens = 1")


def _compute_strong_scaling(f, d):
    one = _number(f(**_link(d, n_gpus=1)))
    _close(_number(f(**d)) * d["n_gpus"], one, f"n_gpus * T(n_gpus={d['n_gpus']}) vs T(1)")


def _compute_inverse_mfu(f, d):
    _close(f(**_link(d, mfu=d["mfu"] / 2)), 2 * _number(f(**d)), "halving mfu")


def _compute_peak_second(f, d):
    _close(f(flops=d["peak_flops"], n_gpus=1, peak_flops=d["peak_flops"], mfu=1.0), 1.0,
           "flops = peak_flops, one GPU, mfu = 1")


def _fraction_bounds(f, d):
    got = _number(f(**d))
    assert 0.0 <= got <= 1.0, f"got {got!r}, expected a fraction in [0, 1]"


def _fraction_half(f, d):
    _close(f(comm_s=d["comm_s"], compute_s=d["comm_s"]), 0.5, "comm_s == compute_s")


def _fraction_complement(f, d):
    both = _number(f(**d)) + _number(f(comm_s=d["compute_s"], compute_s=d["comm_s"]))
    _close(both, 1.0, "f(comm, compute) + f(compute, comm)")


def _free_for_one_rank(item: str, strategy=ALLREDUCE) -> dict:
    """The property every AllReduce algorithm shares: one rank has nothing to reduce."""
    return dict(item=item, name="zero for a single rank",
                meaning="With one rank there is nothing to reduce, so the time is 0.",
                strategy=strategy, check=_single_rank_is_free)


PROPERTIES = [
    # p2p_time
    dict(item="p2p_time", name="an empty message costs the latency",
         meaning="Sending 0 bytes still pays the per-message latency alpha_s, and nothing more.",
         strategy=P2P, check=_p2p_empty_is_latency),
    dict(item="p2p_time", name="affine in message size",
         meaning="Time is a fixed latency plus a part proportional to the bytes: T(M1+M2) + T(0) = T(M1) + T(M2).",
         strategy=P2P, check=_affine_in_message),
    dict(item="p2p_time", name="B bytes take one second at B bytes/s",
         meaning="Bandwidth is in bytes/s: with no latency a link of B bytes/s moves B bytes in 1 s.",
         strategy=P2P, check=_p2p_one_second_of_bytes),
    # naive_allreduce_time
    _free_for_one_rank("naive_allreduce_time"),
    dict(item="naive_allreduce_time", name="linear in the other ranks",
         meaning="The master exchanges one message each way with each of the n-1 other ranks: T(n) = (n-1) T(2).",
         strategy=ALLREDUCE, check=_naive_linear_in_others),
    dict(item="naive_allreduce_time", name="every message pays the latency",
         meaning="An empty message still costs 2(n-1) latencies: n-1 sends to the master and n-1 back.",
         strategy=ALLREDUCE, check=_empty_costs_latencies(lambda n: 2 * (n - 1))),
    # ring_allreduce_time
    _free_for_one_rank("ring_allreduce_time"),
    dict(item="ring_allreduce_time", name="bandwidth term at the AllReduce lower bound",
         meaning="With no latency the ring moves 2(n-1)/n M per rank: between M/B and 2M/B, never the full 2M.",
         strategy=ALLREDUCE_MANY, check=_bandwidth_term_at_lower_bound),
    dict(item="ring_allreduce_time", name="2(n-1) latency steps",
         meaning="Reduce-scatter and all-gather take n-1 steps each, so an empty message costs 2(n-1) alpha_s.",
         strategy=ALLREDUCE, check=_empty_costs_latencies(lambda n: 2 * (n - 1))),
    dict(item="ring_allreduce_time", name="affine in message size",
         meaning="Time is a fixed latency plus a part proportional to the bytes: T(M1+M2) + T(0) = T(M1) + T(M2).",
         strategy=ALLREDUCE, check=_affine_in_message),
    # tree_allreduce_time
    _free_for_one_rank("tree_allreduce_time"),
    dict(item="tree_allreduce_time", name="whole tree levels",
         meaning="A binary tree over n ranks has ceil(log2 n) levels: n ranks cost as much as the next power of two.",
         strategy=ALLREDUCE, check=_tree_full_levels),
    dict(item="tree_allreduce_time", name="doubling the ranks adds one level",
         meaning="Twice the ranks is one more level up and one more down, each moving the whole message: +2(alpha + M/B).",
         strategy=ALLREDUCE, check=_tree_doubling_adds_a_level),
    # rabenseifner_allreduce_time
    _free_for_one_rank("rabenseifner_allreduce_time", RABENSEIFNER),
    dict(item="rabenseifner_allreduce_time", name="bandwidth term at the AllReduce lower bound",
         meaning="No AllReduce moves less than 2(n-1)/n M per rank: with no latency the time lies in [M/B, 2M/B).",
         strategy=RABENSEIFNER_MANY, check=_bandwidth_term_at_lower_bound),
    dict(item="rabenseifner_allreduce_time", name="doubling the ranks adds two latency steps",
         meaning="One more halving step and one more doubling step: an empty message costs 2 alpha_s more.",
         strategy=RABENSEIFNER, check=_doubling_adds_two_latencies),
    # ring_bytes_per_rank
    dict(item="ring_bytes_per_rank", name="zero for a single rank",
         meaning="One rank sends nothing.", strategy=VOLUME, check=_volume_single_rank),
    dict(item="ring_bytes_per_rank", name="between M and 2M",
         meaning="Each rank sends 2(n-1)/n of the message: M at two ranks, approaching but never reaching 2M.",
         strategy=VOLUME_MANY, check=_ring_volume_bounds),
    dict(item="ring_bytes_per_rank", name="2M minus 2M/n",
         meaning="Each rank keeps its own 1/n chunk in both phases, so it sends 2M/n less than 2M.",
         strategy=VOLUME_MANY, check=_ring_volume_shortfall),
    # naive_master_bytes
    dict(item="naive_master_bytes", name="zero for a single rank",
         meaning="A lone master exchanges nothing (it does not send to itself).",
         strategy=VOLUME, check=_volume_single_rank),
    dict(item="naive_master_bytes", name="linear in the other ranks",
         meaning="The master receives M from and sends M to each of the n-1 other ranks: bytes(n) = (n-1) bytes(2).",
         strategy=VOLUME, check=_naive_volume_linear),
    dict(item="naive_master_bytes", name="two ranks move 2M",
         meaning="With two ranks the master receives the other's M and sends M back.",
         strategy=VOLUME, check=_naive_volume_two_ranks),
    # bus_bandwidth
    dict(item="bus_bandwidth", name="equals algbw at two ranks",
         meaning="The busbw factor 2(n-1)/n is 1 at n = 2, so busbw = M/t.", strategy=BUSBW, check=_busbw_two_ranks),
    dict(item="bus_bandwidth", name="between algbw and twice algbw",
         meaning="busbw = (M/t) * 2(n-1)/n, and 2(n-1)/n lies in [1, 2) for n >= 2.",
         strategy=BUSBW, check=_busbw_bounds),
    dict(item="bus_bandwidth", name="zero for a single rank",
         meaning="One rank moves no bytes over any link, so its bus bandwidth is 0.",
         strategy=BUSBW, check=_busbw_single_rank),
    # critical_message_size
    dict(item="critical_message_size", name="transfer time equals latency",
         meaning="At M* sending takes as long as the latency: M*/B = alpha_s (M* in bytes).",
         strategy=CRITICAL, check=_critical_latency_equals_transfer),
    dict(item="critical_message_size", name="proportional to alpha_s",
         meaning="Doubling the latency doubles the size a message needs before bandwidth dominates.",
         strategy=CRITICAL, check=_scales_with("alpha_s")),
    dict(item="critical_message_size", name="proportional to bandwidth",
         meaning="Doubling the bandwidth doubles the size a message needs before bandwidth dominates.",
         strategy=CRITICAL, check=_scales_with("bandwidth")),
    # ring_tree_crossover_bytes
    dict(item="ring_tree_crossover_bytes", name="zero for two or three ranks",
         meaning="With 2 or 3 ranks the tree has as many latency steps as the ring and sends more bytes: ring always wins.",
         strategy=CROSSOVER, check=_crossover_small_rings),
    dict(item="ring_tree_crossover_bytes", name="proportional to alpha_s",
         meaning="The crossover is where the ring's extra latency equals the tree's extra transfer: linear in alpha_s.",
         strategy=CROSSOVER, check=_scales_with("alpha_s")),
    dict(item="ring_tree_crossover_bytes", name="proportional to bandwidth",
         meaning="A faster link moves the tree's extra bytes sooner, so the crossover grows linearly with bandwidth.",
         strategy=CROSSOVER, check=_scales_with("bandwidth")),
    # best_allreduce_algorithm
    dict(item="best_allreduce_algorithm", name="answers ring or tree",
         meaning='The answer is the string "ring" or "tree".', strategy=SELECT_LARGE, check=_select_answers_a_name),
    dict(item="best_allreduce_algorithm", name="large messages pick ring",
         meaning="Far above the crossover the ring's smaller bandwidth term wins.",
         strategy=SELECT_LARGE, check=_select_large_is_ring),
    dict(item="best_allreduce_algorithm", name="empty messages pick tree",
         meaning="With nothing to send only latency steps count: 2 ceil(log2 n) beat 2(n-1) for n >= 4.",
         strategy=SELECT_EMPTY, check=_select_empty_is_tree),
    # training_step_flops
    dict(item="training_step_flops", name="six FLOP per parameter per token",
         meaning="Forward (2) plus backward (4) FLOP per parameter per token (Kaplan et al. 2020).",
         strategy=FLOPS, check=_six_flop_per_param_token),
    dict(item="training_step_flops", name="proportional to params",
         meaning="Twice the parameters is twice the work per token.", strategy=FLOPS, check=_scales_with("params")),
    dict(item="training_step_flops", name="proportional to tokens",
         meaning="Twice the tokens is twice the work.", strategy=FLOPS, check=_scales_with("tokens")),
    # compute_time
    dict(item="compute_time", name="strong scaling",
         meaning="The same FLOP on n GPUs take 1/n of the time on one: n * T(n) = T(1).",
         strategy=COMPUTE, check=_compute_strong_scaling),
    dict(item="compute_time", name="inversely proportional to mfu",
         meaning="Half the utilisation takes twice as long.", strategy=COMPUTE, check=_compute_inverse_mfu),
    dict(item="compute_time", name="peak FLOP take one second",
         meaning="One GPU at mfu = 1 does peak_flops FLOP in exactly one second.",
         strategy=COMPUTE, check=_compute_peak_second),
    # comm_fraction
    dict(item="comm_fraction", name="a fraction in [0, 1]",
         meaning="A share of the step time lies in [0, 1] (a fraction, not percent, not a ratio).",
         strategy=FRACTION, check=_fraction_bounds),
    dict(item="comm_fraction", name="one half when comm equals compute",
         meaning="Equal communication and compute time split the step in half.",
         strategy=FRACTION, check=_fraction_half),
    dict(item="comm_fraction", name="the two shares sum to one",
         meaning="The communication share and the compute share of the same step add up to 1.",
         strategy=FRACTION, check=_fraction_complement),
]
