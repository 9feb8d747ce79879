"""Lab 06 (collective communication): the public properties of `collectives.py`.

Standalone (stdlib + hypothesis + the property kit shipped beside it): shipped to students as
`_properties.py` and run by the released public tests. Each property relates a function to itself
(limits, identities, bounds, scaling), so it needs no reference solution. `check(f, drawn)` calls the
student's function with keyword arguments and raises AssertionError with a short message when the
property fails; its docstring is the meaning a student sees then.

Units: bytes, seconds, bytes/s (per direction), FLOP, FLOP/s; fractions in [0, 1].
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from _property_kit import PublicProperties, kwargs, number, zero_when

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


def _close(got, want, what: str) -> None:
    got = number(got)
    assert math.isclose(got, want, rel_tol=REL_TOL, abs_tol=ABS_TOL), f"{what}: got {got!r}, expected {want!r}"


def _link(d: dict, **changes) -> dict:
    return {**d, **changes}


# --- strategies of keyword arguments -------------------------------------------------------------

P2P = kwargs(message_bytes=MESSAGE_BYTES, alpha_s=ALPHA_S, bandwidth=BANDWIDTH)
ALLREDUCE = kwargs(message_bytes=MESSAGE_BYTES, n=RANKS, alpha_s=ALPHA_S, bandwidth=BANDWIDTH)
ALLREDUCE_MANY = kwargs(message_bytes=POSITIVE_BYTES, n=MANY_RANKS, alpha_s=ALPHA_S, bandwidth=BANDWIDTH)
RABENSEIFNER = kwargs(message_bytes=MESSAGE_BYTES, n=POWER_OF_TWO_RANKS, alpha_s=ALPHA_S, bandwidth=BANDWIDTH)
RABENSEIFNER_MANY = kwargs(message_bytes=POSITIVE_BYTES, n=POWER_OF_TWO_RANKS.filter(lambda n: n >= 2),
                           alpha_s=ALPHA_S, bandwidth=BANDWIDTH)
VOLUME = kwargs(message_bytes=MESSAGE_BYTES, n=RANKS)
VOLUME_MANY = kwargs(message_bytes=POSITIVE_BYTES, n=MANY_RANKS)
BUSBW = kwargs(message_bytes=POSITIVE_BYTES, time_s=SECONDS, n=MANY_RANKS)
CRITICAL = kwargs(alpha_s=POSITIVE_ALPHA_S, bandwidth=BANDWIDTH)
CROSSOVER = kwargs(n=MANY_RANKS, alpha_s=POSITIVE_ALPHA_S, bandwidth=BANDWIDTH)
SELECT_LARGE = kwargs(factor=st.floats(4.0, 1e3), n=MANY_RANKS, alpha_s=ALPHA_S, bandwidth=BANDWIDTH)
SELECT_EMPTY = kwargs(n=st.integers(4, 4096), alpha_s=POSITIVE_ALPHA_S, bandwidth=BANDWIDTH)
FLOPS = kwargs(params=PARAMS, tokens=TOKENS)
COMPUTE = kwargs(flops=_decades(12, 24), n_gpus=GPUS, peak_flops=PEAK_FLOPS, mfu=MFU)
FRACTION = kwargs(comm_s=SECONDS, compute_s=SECONDS)


def _empty_costs_latencies(steps):
    def check(f, d):
        n = d["n"]
        _close(f(**_link(d, message_bytes=0.0)), steps(n) * d["alpha_s"], f"message_bytes = 0, n = {n}")
    return check


def _next_power_of_two(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _scales_with(key):
    def check(f, d):
        _close(f(**_link(d, **{key: 2 * d[key]})), 2 * number(f(**d)), f"doubling {key}")
    return check


PROPERTIES = PublicProperties()
public_property = PROPERTIES.declare


def _proportional(item: str, strategy, **meanings: str) -> None:
    """Declare "proportional to <key>" of `item` for each `key=meaning`: doubling `key` doubles the result."""
    for key, meaning in meanings.items():
        public_property(item, strategy, name=f"proportional to {key}", meaning=meaning)(_scales_with(key))


# --- p2p_time -------------------------------------------------------------------------------------

@public_property("p2p_time", P2P, name="an empty message costs the latency")
def _p2p_empty_is_latency(f, d):
    """Sending 0 bytes still pays the per-message latency alpha_s, and nothing more."""
    _close(f(**_link(d, message_bytes=0.0)), d["alpha_s"], "message_bytes = 0")


@public_property("p2p_time", P2P, name="affine in message size")
def _affine_in_message(f, d):
    """Time is a fixed latency plus a part proportional to the bytes: T(M1+M2) + T(0) = T(M1) + T(M2)."""
    m1 = d["message_bytes"]
    m2 = 0.5 * m1 + 1.0
    left = number(f(**_link(d, message_bytes=m1 + m2))) + number(f(**_link(d, message_bytes=0.0)))
    right = number(f(**_link(d, message_bytes=m1))) + number(f(**_link(d, message_bytes=m2)))
    _close(left, right, "T(M1+M2) + T(0) vs T(M1) + T(M2)")


@public_property("p2p_time", P2P, name="B bytes take one second at B bytes/s")
def _p2p_one_second_of_bytes(f, d):
    """Bandwidth is in bytes/s: with no latency a link of B bytes/s moves B bytes in 1 s."""
    # units: a link of B bytes/s moves B bytes in one second (a Gb/s or GB slip is off by 8 or 1e9)
    _close(f(message_bytes=d["bandwidth"], alpha_s=0.0, bandwidth=d["bandwidth"]), 1.0,
           "message_bytes = bandwidth, alpha_s = 0")


# --- naive_allreduce_time -------------------------------------------------------------------------

_single_rank_is_free = zero_when("n = {n}: got {got!r}, expected 0.0", abs_tol=ABS_TOL, n=1)
_NOTHING_TO_REDUCE = "With one rank there is nothing to reduce, so the time is 0."
public_property("naive_allreduce_time", ALLREDUCE, name="zero for a single rank", meaning=_NOTHING_TO_REDUCE)(
    _single_rank_is_free)


@public_property("naive_allreduce_time", ALLREDUCE, name="linear in the other ranks")
def _naive_linear_in_others(f, d):
    """The master exchanges one message each way with each of the n-1 other ranks: T(n) = (n-1) T(2)."""
    n = max(d["n"], 2)
    two = number(f(**_link(d, n=2)))
    _close(f(**_link(d, n=n)), (n - 1) * two, f"T(n={n}) vs (n-1) * T(n=2)")


public_property("naive_allreduce_time", ALLREDUCE, name="every message pays the latency",
                meaning="An empty message still costs 2(n-1) latencies: n-1 sends to the master and n-1 back.")(
    _empty_costs_latencies(lambda n: 2 * (n - 1)))


# --- ring_allreduce_time --------------------------------------------------------------------------

public_property("ring_allreduce_time", ALLREDUCE, name="zero for a single rank", meaning=_NOTHING_TO_REDUCE)(
    _single_rank_is_free)


@public_property("ring_allreduce_time", ALLREDUCE_MANY, name="bandwidth term at the point-to-point lower bound")
def _bandwidth_term_at_lower_bound(f, d):
    """With no latency the ring moves 2(n-1)/n M per rank: between M/B and 2M/B, never the full 2M."""
    # alpha = 0: an AllReduce built from point-to-point sends moves at least 2(n-1)/n * M per rank, in [M, 2M)
    m, b = d["message_bytes"], d["bandwidth"]
    t = number(f(**_link(d, alpha_s=0.0)))
    assert m / b * (1 - REL_TOL) <= t < 2 * m / b, \
        f"alpha_s = 0, n = {d['n']}: got {t!r}, expected between M/B = {m / b!r} and 2M/B = {2 * m / b!r}"


public_property("ring_allreduce_time", ALLREDUCE, name="2(n-1) latency steps",
                meaning="Reduce-scatter and all-gather take n-1 steps each, so an empty message costs 2(n-1) alpha_s.")(
    _empty_costs_latencies(lambda n: 2 * (n - 1)))


public_property("ring_allreduce_time", ALLREDUCE, name="affine in message size")(_affine_in_message)


# --- tree_allreduce_time --------------------------------------------------------------------------

public_property("tree_allreduce_time", ALLREDUCE, name="zero for a single rank", meaning=_NOTHING_TO_REDUCE)(
    _single_rank_is_free)


@public_property("tree_allreduce_time", ALLREDUCE, name="whole tree levels")
def _tree_full_levels(f, d):
    """A binary tree over n ranks has ceil(log2 n) levels: n ranks cost as much as the next power of two."""
    # a binary tree over n ranks has ceil(log2 n) levels; a partly filled level costs a whole one
    up = _next_power_of_two(d["n"])
    _close(f(**d), number(f(**_link(d, n=up))), f"T(n={d['n']}) vs T(n={up})")


@public_property("tree_allreduce_time", ALLREDUCE, name="doubling the ranks adds one level")
def _tree_doubling_adds_a_level(f, d):
    """Twice the ranks is one more level up and one more down, each moving the whole message: +2(alpha + M/B)."""
    n = min(d["n"], 2048)
    added = number(f(**_link(d, n=2 * n))) - number(f(**_link(d, n=n)))
    _close(added, 2 * (d["alpha_s"] + d["message_bytes"] / d["bandwidth"]), f"T(n={2 * n}) - T(n={n})")


# --- rabenseifner_allreduce_time ------------------------------------------------------------------

public_property("rabenseifner_allreduce_time", RABENSEIFNER, name="zero for a single rank", meaning=_NOTHING_TO_REDUCE)(
    _single_rank_is_free)
public_property("rabenseifner_allreduce_time", RABENSEIFNER_MANY,
                name="bandwidth term at the point-to-point lower bound",
                meaning="No AllReduce built from point-to-point sends moves less than 2(n-1)/n M per rank: with no "
                        "latency the time lies in [M/B, 2M/B).")(
    _bandwidth_term_at_lower_bound)


@public_property("rabenseifner_allreduce_time", RABENSEIFNER, name="doubling the ranks adds two latency steps")
def _doubling_adds_two_latencies(f, d):
    """One more halving step and one more doubling step: an empty message costs 2 alpha_s more."""
    n = min(d["n"], 2048)
    empty = _link(d, message_bytes=0.0)
    added = number(f(**_link(empty, n=2 * n))) - number(f(**_link(empty, n=n)))
    _close(added, 2 * d["alpha_s"], f"message_bytes = 0: T(n={2 * n}) - T(n={n})")


# --- ring_bytes_per_rank --------------------------------------------------------------------------

public_property("ring_bytes_per_rank", VOLUME, name="zero for a single rank", meaning="One rank sends nothing.")(
    _single_rank_is_free)


@public_property("ring_bytes_per_rank", VOLUME_MANY, name="between M and 2M")
def _ring_volume_bounds(f, d):
    """Each rank sends 2(n-1)/n of the message: M at two ranks, approaching but never reaching 2M."""
    m = d["message_bytes"]
    v = number(f(**d))
    assert m * (1 - REL_TOL) <= v < 2 * m, f"n = {d['n']}: got {v!r}, expected between M and 2M"


@public_property("ring_bytes_per_rank", VOLUME_MANY, name="2M minus 2M/n")
def _ring_volume_shortfall(f, d):
    """Each rank keeps its own 1/n chunk in both phases, so it sends 2M/n less than 2M."""
    m, n = d["message_bytes"], d["n"]
    _close(2 * m - number(f(**d)), 2 * m / n, f"2M - bytes at n = {n}")


# --- naive_master_bytes ---------------------------------------------------------------------------

public_property("naive_master_bytes", VOLUME, name="zero for a single rank",
                meaning="A lone master exchanges nothing (it does not send to itself).")(_single_rank_is_free)


@public_property("naive_master_bytes", VOLUME, name="linear in the other ranks")
def _naive_volume_linear(f, d):
    """The master receives M from and sends M to each of the n-1 other ranks: bytes(n) = (n-1) bytes(2)."""
    n = max(d["n"], 2)
    _close(f(**_link(d, n=n)), (n - 1) * number(f(**_link(d, n=2))), f"bytes(n={n}) vs (n-1) * bytes(n=2)")


@public_property("naive_master_bytes", VOLUME, name="two ranks move 2M")
def _naive_volume_two_ranks(f, d):
    """With two ranks the master receives the other's M and sends M back."""
    # two ranks: the master receives the other's M and sends M back; it sends nothing to itself
    _close(f(**_link(d, n=2)), 2 * d["message_bytes"], "n = 2")


# --- bus_bandwidth --------------------------------------------------------------------------------

@public_property("bus_bandwidth", BUSBW, name="equals algbw at two ranks")
def _busbw_two_ranks(f, d):
    """The busbw factor 2(n-1)/n is 1 at n = 2, so busbw = M/t."""
    _close(f(**_link(d, n=2)), d["message_bytes"] / d["time_s"], "n = 2 (busbw equals algbw M/t)")


@public_property("bus_bandwidth", BUSBW, name="between algbw and twice algbw")
def _busbw_bounds(f, d):
    """busbw = (M/t) * 2(n-1)/n, and 2(n-1)/n lies in [1, 2) for n >= 2."""
    algbw = d["message_bytes"] / d["time_s"]
    got = number(f(**d))
    assert algbw * (1 - REL_TOL) <= got < 2 * algbw, \
        f"n = {d['n']}: got {got!r}, expected between algbw M/t = {algbw!r} and 2 algbw"


public_property("bus_bandwidth", BUSBW, name="zero for a single rank",
                meaning="One rank moves no bytes over any link, so its bus bandwidth is 0.")(_single_rank_is_free)


# --- critical_message_size ------------------------------------------------------------------------

@public_property("critical_message_size", CRITICAL, name="transfer time equals latency")
def _critical_latency_equals_transfer(f, d):
    """At M* sending takes as long as the latency: M*/B = alpha_s (M* in bytes)."""
    m_star = number(f(**d))
    _close(m_star / d["bandwidth"], d["alpha_s"], "transfer time of M* vs alpha_s")


_proportional("critical_message_size", CRITICAL,
              alpha_s="Doubling the latency doubles the size a message needs before bandwidth dominates.",
              bandwidth="Doubling the bandwidth doubles the size a message needs before bandwidth dominates.")


# --- ring_tree_crossover_bytes --------------------------------------------------------------------

public_property("ring_tree_crossover_bytes", CROSSOVER, name="zero for two or three ranks",
                meaning="With 2 or 3 ranks the tree has as many latency steps as the ring and sends more bytes: "
                        "ring always wins.")(
    zero_when("n = {n}: got {got!r}, expected 0.0", abs_tol=ABS_TOL, n=lambda d: 2 + d["n"] % 2))


_proportional("ring_tree_crossover_bytes", CROSSOVER,
              alpha_s="The crossover is where the ring's extra latency equals the tree's extra transfer: linear in alpha_s.",
              bandwidth="A faster link moves the tree's extra bytes sooner, so the crossover grows linearly with bandwidth.")


# --- best_allreduce_algorithm ---------------------------------------------------------------------

@public_property("best_allreduce_algorithm", SELECT_LARGE, name="answers ring or tree")
def _select_answers_a_name(f, d):
    """The answer is the string "ring" or "tree"."""
    got = f(message_bytes=d["factor"], n=d["n"], alpha_s=d["alpha_s"], bandwidth=d["bandwidth"])
    assert got in ("ring", "tree"), f"expected 'ring' or 'tree', got {got!r}"


@public_property("best_allreduce_algorithm", SELECT_LARGE, name="large messages pick ring")
def _select_large_is_ring(f, d):
    """Far above the crossover the ring's smaller bandwidth term wins."""
    # far above the crossover (which is below 2 * alpha * B * n) the ring's bandwidth term wins
    m = max(1.0, d["factor"] * d["alpha_s"] * d["bandwidth"] * d["n"])
    got = f(message_bytes=m, n=d["n"], alpha_s=d["alpha_s"], bandwidth=d["bandwidth"])
    assert got == "ring", f"message_bytes = {m!r}, n = {d['n']}: got {got!r}, expected 'ring'"


@public_property("best_allreduce_algorithm", SELECT_EMPTY, name="empty messages pick tree")
def _select_empty_is_tree(f, d):
    """With nothing to send only latency steps count: 2 ceil(log2 n) beat 2(n-1) for n >= 4."""
    got = f(message_bytes=0.0, **d)
    assert got == "tree", f"message_bytes = 0, n = {d['n']}: got {got!r}, expected 'tree'"


# --- training_step_flops --------------------------------------------------------------------------

@public_property("training_step_flops", FLOPS, name="six FLOP per parameter per token")
def _six_flop_per_param_token(f, d):
    """Forward (2) plus backward (4) FLOP per parameter per token (Kaplan et al. 2020)."""
    _close(f(params=1.0, tokens=1.0), 6.0, "params = 1, tokens = 1")


_proportional("training_step_flops", FLOPS, params="Twice the parameters is twice the work per token.",
              tokens="Twice the tokens is twice the work.")


# --- compute_time ---------------------------------------------------------------------------------

@public_property("compute_time", COMPUTE, name="strong scaling")
def _compute_strong_scaling(f, d):
    """The same FLOP on n GPUs take 1/n of the time on one: n * T(n) = T(1)."""
    one = number(f(**_link(d, n_gpus=1)))
    _close(number(f(**d)) * d["n_gpus"], one, f"n_gpus * T(n_gpus={d['n_gpus']}) vs T(1)")


@public_property("compute_time", COMPUTE, name="inversely proportional to mfu")
def _compute_inverse_mfu(f, d):
    """Half the utilisation takes twice as long."""
    _close(f(**_link(d, mfu=d["mfu"] / 2)), 2 * number(f(**d)), "halving mfu")


@public_property("compute_time", COMPUTE, name="peak FLOP take one second")
def _compute_peak_second(f, d):
    """One GPU at mfu = 1 does peak_flops FLOP in exactly one second."""
    _close(f(flops=d["peak_flops"], n_gpus=1, peak_flops=d["peak_flops"], mfu=1.0), 1.0,
           "flops = peak_flops, one GPU, mfu = 1")


# --- comm_fraction --------------------------------------------------------------------------------

@public_property("comm_fraction", FRACTION, name="a fraction in [0, 1]")
def _fraction_bounds(f, d):
    """A share of the step time lies in [0, 1] (a fraction, not percent, not a ratio)."""
    got = number(f(**d))
    assert 0.0 <= got <= 1.0, f"got {got!r}, expected a fraction in [0, 1]"


@public_property("comm_fraction", FRACTION, name="one half when comm equals compute")
def _fraction_half(f, d):
    """Equal communication and compute time split the step in half."""
    _close(f(comm_s=d["comm_s"], compute_s=d["comm_s"]), 0.5, "comm_s == compute_s")


@public_property("comm_fraction", FRACTION, name="the two shares sum to one")
def _fraction_complement(f, d):
    """The communication share and the compute share of the same step add up to 1."""
    both = number(f(**d)) + number(f(comm_s=d["compute_s"], compute_s=d["comm_s"]))
    _close(both, 1.0, "f(comm, compute) + f(compute, comm)")
