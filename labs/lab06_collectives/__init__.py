"""Lab 06 — collective communication ("The Bandwidth Invariant"): the declaration.

Source lab: `source_lab` below (Vol II Lab 06, The Bandwidth Invariant); corrections in docs/errata/lab06_collectives.md.
Every number in a story, option or key below is computed from reference/ at the scenario's
inputs (SCENARIO_* / WORKLOADS), never typed.
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from reference import collectives as ref
from reference import constants as C

from autograder.engine.spec import (Answer, Assignment, Code, Example, FunctionGrades, FunctionItem, Markdown, Property,
                     Question, letters)
from labs.lab06_collectives import properties as public
from labs.lab06_collectives.misconceptions import MISCONCEPTIONS

# --- scenario inputs (the lab's, corrected where the errata say so) ----------------------------------
N_GPUS = 128                                   # the lab's default cluster
ALPHA_S = C.IB_ALPHA_S                         # InfiniBand NDR, one message's latency
NDR = C.IB_NDR400_BANDWIDTH                    # bytes/s per port, per direction
LINK = dict(n=N_GPUS, alpha_s=ALPHA_S, bandwidth=NDR)

# Act I: the lab's 140 GB default gradient is a 70B-parameter model in FP16 (the lab gives no origin).
ACT1_PARAMS = 70e9
ACT1_MESSAGE_BYTES = ACT1_PARAMS * C.FP16_BYTES

# Act II: the lab's three workloads; FP16 gradients are 2 bytes/param (the lab's 280 GB for 175B is
# 1.6 bytes/param). The sub-MB embedding update belongs to the lab's 0.1B-parameter model; only the
# rows a step touches are synchronised, so its message is far smaller than its parameter count.
GRADIENT_PARAMS = (175e9, 7e9)
WORKLOADS = (
    *((f"{p / 1e9:g}B model gradient", p, p * C.FP16_BYTES) for p in GRADIENT_PARAMS),
    ("embedding-table update", 0.1e9, 0.5e6),
)
SEQ_LEN = 2048                                  # the lab's sequence length
# The lab's global batch of 16 sequences cannot spread over 128 data-parallel GPUs; one sequence per
# GPU is the smallest step pure data parallelism can run.
TOKENS_PER_STEP = N_GPUS * SEQ_LEN
MFU = 0.5                                       # the lab's "50% MFU", now of the dense peak
PEAK_FLOPS = C.H100_PEAK_FLOPS_BF16             # dense; the lab's 1979 TFLOPS is the sparse figure
FAILURE_FRACTION = 0.5                          # the lab's failure state: comm above half the step

# Act I prediction: ranges of the naive/ring traffic ratio (option design, not physics).
# Offsets of the four questions are chosen so the keys differ and none is "A": the notebook's answer
# prompt shows `<qid> = "A"` as its format example, which must not read as the key.
ACT1_RANGES = ((1, 4), (4, 40), (40, 100), (100, 400))
DISTRACTOR_GPUS = 64                            # option design: the false "ring above N GPUs" rule's cutoff

# Worked-example inputs (each formatted into its label, never typed twice)
NCCL_EXAMPLE = dict(message_bytes=1e9, n=8, alpha_s=5e-6, bandwidth=100e9)   # nccl-tests worked value (anchors E.1)
ONE_GB = 1e9
SMALL_BYTES = 1e6                               # a latency-bound message (also the instrument's small curve)
ODD_N = 24                                      # three DGX nodes: not a power of two
MIN_RANKS = 2
CHINCHILLA = dict(params=70e9, tokens=1.4e12)   # Hoffmann et al. 2022


# --- numbers the story, options and keys use (all from reference/) -------------------------------------

def _workload_numbers(params: float, message_bytes: float) -> dict:
    times = {name: fn(message_bytes, **LINK) for name, fn in
             (("ring", ref.ring_allreduce_time), ("tree", ref.tree_allreduce_time),
              ("rabenseifner", ref.rabenseifner_allreduce_time))}
    best = ref.best_allreduce_algorithm(message_bytes, **LINK)
    compute_s = ref.compute_time(ref.training_step_flops(params, TOKENS_PER_STEP), N_GPUS, PEAK_FLOPS, MFU)
    fraction = ref.comm_fraction(times[best], compute_s)
    return dict(times=times, best=best, compute_s=compute_s, fraction=fraction)


ACT1_NAIVE_S = ref.naive_allreduce_time(ACT1_MESSAGE_BYTES, **LINK)
ACT1_RING_S = ref.ring_allreduce_time(ACT1_MESSAGE_BYTES, **LINK)
ACT1_RATIO = ref.naive_master_bytes(ACT1_MESSAGE_BYTES, N_GPUS) / ref.ring_bytes_per_rank(ACT1_MESSAGE_BYTES, N_GPUS)
CRITICAL_BYTES = ref.critical_message_size(ALPHA_S, NDR)
CROSSOVER_BYTES = ref.ring_tree_crossover_bytes(N_GPUS, ALPHA_S, NDR)
FLOPS_PER_PARAM_TOKEN = ref.training_step_flops(1, 1)              # the 6 of 6 · params · tokens
RING_FACTOR_LIMIT = round(ref.ring_bytes_per_rank(1.0, 10**9))     # 2(n-1)/n as n grows: 2
ACT2 = [(label, params, message, _workload_numbers(params, message)) for label, params, message in WORKLOADS]


def _bytes(x: float) -> str:
    """Decimal units, as the lab and the datasheets use them."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if x >= size:
            return f"{x / size:.3g} {unit}"
    return f"{x:.3g} B"


def _seconds(t: float) -> str:
    if t >= 1:
        return f"{t:.3g} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} µs"


# --- questions ----------------------------------------------------------------------------------------

def _range_key(value: float, ranges) -> int:
    holding = [i for i, (lo, hi) in enumerate(ranges) if lo <= value < hi]
    assert len(holding) == 1, f"{value} must fall in exactly one option range of {ranges}"
    return holding[0]


_act1_options, _act1_key = letters([
    f"between {ACT1_RANGES[0][0]}× and {ACT1_RANGES[0][1]}× — naive AllReduce isn't that inefficient",
    f"between {ACT1_RANGES[1][0]}× and {ACT1_RANGES[1][1]}× — the master bottleneck is real but manageable",
    f"between {ACT1_RANGES[2][0]}× and {ACT1_RANGES[2][1]}× — the master's receive and send overlap, "
    f"so it carries about n/2 = {N_GPUS // 2} times a ring rank's bytes",
    f"between {ACT1_RANGES[3][0]}× and {ACT1_RANGES[3][1]}× — ring spreads the traffic evenly over all "
    "links; naive concentrates it on the master",
], _range_key(ACT1_RATIO, ACT1_RANGES), offset=0)   # ranges stay in ascending order

ACT1_PREDICTION = Question(
    id="act1_prediction", kind="prediction", points=2,
    prompt=(f"**Prediction.** At n = {N_GPUS} GPUs, one AllReduce of the {_bytes(ACT1_MESSAGE_BYTES)} "
            "gradient: how many times more bytes cross the naive master's link than one ring rank sends "
            "(bytes through the master ÷ bytes sent per ring rank)?"),
    options=_act1_options, key=_act1_key,
    hint=("Count what crosses the master's link: what it receives from each other rank plus what it "
          "sends back to each (it sends nothing to itself). Then count what one ring rank sends: "
          "n-1 reduce-scatter steps and n-1 all-gather steps, an M/n chunk per step. Divide at "
          f"n = {N_GPUS}; the message size cancels."),
)

_act1_refl_options, _act1_refl_key = letters([
    "Ring uses a faster network protocol than naive AllReduce",
    "Every rank sends and receives at the same time, so the traffic is spread evenly over all n links",
    "Ring compresses gradients during communication to reduce the data volume",
    "Ring uses asynchronous updates, so ranks don't need to synchronise",
], 1, offset=3)   # conceptual: index 1 (all links busy at once); premise: the master carries ~n x a ring rank
assert ACT1_RATIO > N_GPUS / 2

ACT1_REFLECTION = Question(
    id="act1_reflection", kind="reflection", points=1,
    prompt=("**Reflection.** Each ring rank sends 2(n-1)/n · M bytes, the least any AllReduce can send per "
            "rank (Patarasuk & Yuan 2009). Why does ring AllReduce reach that bound while naive AllReduce "
            "is n times worse?"),
    options=_act1_refl_options, key=_act1_refl_key,
    hint=("Picture one step of the ring: which links are busy, and how many bytes does each carry? "
          "Then picture the naive scheme: which single link carries everything?"),
)

_act2_choices = (("ring", "ring", "ring"), ("ring", "ring", "tree"), ("tree", "tree", "tree"),
                 ("ring", "tree", "tree"))
_act2_picks = tuple(numbers["best"] for _, _, _, numbers in ACT2)
_act2_options, _act2_key = letters([
    "Ring for all three — ring is always fastest",
    f"Ring for the {_bytes(WORKLOADS[0][2])} and {_bytes(WORKLOADS[1][2])} gradients, tree for the "
    f"{_bytes(WORKLOADS[2][2])} update",
    "Tree for all three — fewer latency steps always matter",
    f"Ring for the {_bytes(WORKLOADS[0][2])} gradient, tree for the {_bytes(WORKLOADS[1][2])} gradient "
    f"and the {_bytes(WORKLOADS[2][2])} update",
], _act2_choices.index(_act2_picks), offset=0)

ACT2_PREDICTION = Question(
    id="act2_prediction", kind="prediction", points=2,
    prompt=(f"**Prediction.** On the same cluster (n = {N_GPUS}, InfiniBand NDR), which AllReduce does the "
            "α-β model pick for each workload, ring or binary tree?"),
    options=_act2_options, key=_act2_key,
    hint=("Write ring and tree time as latency steps plus bytes over bandwidth. The tree sends the whole "
          "message at each of its 2·ceil(log2 n) hops, the ring 2(n-1)/n · M in 2(n-1) steps: find the "
          f"message size where they meet at n = {N_GPUS} and place each workload above or below it."),
)

_act2_refl_options, _act2_refl_key = letters([
    f"The number of GPUs alone — ring above {DISTRACTOR_GPUS} GPUs, tree below",
    "The message size relative to the ring–tree crossover, which depends on α, β and n",
    "The message size relative to the critical size α·β alone, whatever the number of GPUs",
    "Whether gradients are FP16 or FP32 — ring only works with FP32",
], 1, offset=2)   # conceptual: index 1; premise: the crossover is not α·β and moves with n
assert not math.isclose(CROSSOVER_BYTES, CRITICAL_BYTES) and \
    not math.isclose(CROSSOVER_BYTES, ref.ring_tree_crossover_bytes(2 * N_GPUS, ALPHA_S, NDR))

ACT2_REFLECTION = Question(
    id="act2_reflection", kind="reflection", points=1,
    prompt="**Reflection.** What decides whether ring or tree AllReduce is faster on a given cluster?",
    options=_act2_refl_options, key=_act2_refl_key,
    hint=("Set the two times equal and solve for the message size. Then check: at n = "
          f"{N_GPUS} on NDR does the switch happen at α·β = {_bytes(CRITICAL_BYTES)}, or somewhere else?"),
)

QUESTIONS = (ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION)


# --- function items -------------------------------------------------------------------------------------

def _public(item: str) -> list[Property]:
    return [Property(**{k: v for k, v in d.items() if k != "item"}) for d in public.PROPERTIES if d["item"] == item]


def _close(got, want, what):
    assert isinstance(got, (int, float)) and not isinstance(got, bool), f"expected a number, got {got!r}"
    assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), f"{what}: got {got!r}, expected {want!r}"


def _crossover_equal_times(f, d):
    # trusted reference times at the student's crossover: ring and tree must agree there
    m = f(**d)
    _close(ref.ring_allreduce_time(m, **d), ref.tree_allreduce_time(m, **d), "ring vs tree time at the crossover")


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


def _best_domain():
    # messages at least 10% away from the ring-tree crossover, where every correct form of the two
    # times agrees on which is smaller (at the crossover itself the last bit decides)
    def with_message(d):
        cross = ref.ring_tree_crossover_bytes(d["n"], d["alpha_s"], d["bandwidth"])
        if cross == 0:
            return public.POSITIVE_BYTES.map(lambda m: {**d, "message_bytes": m})
        factor = st.one_of(st.floats(1e-3, 0.9), st.floats(1.1, 1e3))
        return factor.map(lambda k: {**d, "message_bytes": k * cross})
    base = st.fixed_dictionaries({"n": public.MANY_RANKS, "alpha_s": public.POSITIVE_ALPHA_S,
                                  "bandwidth": public.BANDWIDTH})
    return base.flatmap(with_message)


def _examples(*rows) -> list[Example]:
    return [Example(label, kwargs) for label, kwargs in rows]


_ACT1 = f"Act I: {_bytes(ACT1_MESSAGE_BYTES)} gradient over {N_GPUS} GPUs on NDR InfiniBand"
_BIG, _MID, _SMALL = (dict(message_bytes=m, **LINK) for _, _, m in WORKLOADS)
_NCCL = NCCL_EXAMPLE
_NCCL_LABEL = (f"{_bytes(_NCCL['message_bytes'])}, {_NCCL['n']} ranks, {_NCCL['bandwidth'] / 1e9:g} GB/s, "
               f"{_NCCL['alpha_s'] * 1e6:g} µs")
_GRAD_LABEL = lambda i: f"{_bytes(WORKLOADS[i][2])} ({WORKLOADS[i][1] / 1e9:g}B FP16) gradient"
_ACT1_LINK = dict(message_bytes=ACT1_MESSAGE_BYTES, **LINK)
_BIG_PARAMS, _SMALL_PARAMS = WORKLOADS[0][1], WORKLOADS[2][1]
_BIG_COMPUTE_S, _BIG_RING_S = ACT2[0][3]["compute_s"], ACT2[0][3]["times"]["ring"]
_SMALL_COMPUTE_S, _SMALL_TREE_S = ACT2[2][3]["compute_s"], ACT2[2][3]["times"]["tree"]

FUNCTIONS = (
    FunctionItem("p2p_time", 1, _examples(
        (f"one {_bytes(WORKLOADS[2][2])} update over one NDR port", dict(message_bytes=WORKLOADS[2][2], alpha_s=ALPHA_S, bandwidth=NDR)),
        (f"the {_bytes(WORKLOADS[1][2])} gradient over one NDR port", dict(message_bytes=WORKLOADS[1][2], alpha_s=ALPHA_S, bandwidth=NDR)),
    ), domain=public.P2P, properties=_public("p2p_time")),
    FunctionItem("naive_allreduce_time", 2, _examples(
        (_ACT1, _ACT1_LINK),
        (f"one DGX H100 node ({C.GPUS_PER_DGX_H100} GPUs) over NVLink, {_bytes(ONE_GB)}",
         dict(message_bytes=ONE_GB, n=C.GPUS_PER_DGX_H100, alpha_s=C.NVLINK_ALPHA_S, bandwidth=C.NVLINK4_BANDWIDTH)),
    ), domain=public.ALLREDUCE, properties=[
        *_public("naive_allreduce_time"),
        Property("never faster than ring", "The master's link carries n times the ring's bytes, so naive "
                 "AllReduce is never faster than ring AllReduce.", public.ALLREDUCE, _naive_not_faster_than_ring,
                 public=False),
    ]),
    FunctionItem("ring_allreduce_time", 3, _examples(
        (_ACT1, _ACT1_LINK),
        (f"Act II: {_GRAD_LABEL(0)} over {N_GPUS} GPUs on NDR", _BIG),
        (f"nccl-tests worked value: {_NCCL_LABEL}", _NCCL),
    ), domain=public.ALLREDUCE, properties=_public("ring_allreduce_time")),
    FunctionItem("tree_allreduce_time", 2, _examples(
        (_ACT1, _ACT1_LINK),
        (f"Act II: {_bytes(WORKLOADS[2][2])} update over {N_GPUS} GPUs on NDR", _SMALL),
        (f"{ODD_N} GPUs ({ODD_N // C.GPUS_PER_DGX_H100} DGX nodes), {_bytes(SMALL_BYTES)}: not a power of two",
         dict(message_bytes=SMALL_BYTES, n=ODD_N, alpha_s=ALPHA_S, bandwidth=NDR)),
    ), domain=public.ALLREDUCE, properties=_public("tree_allreduce_time")),
    FunctionItem("rabenseifner_allreduce_time", 2, _examples(
        (f"Act II: {_GRAD_LABEL(0)} over {N_GPUS} GPUs on NDR", _BIG),
        (f"Act II: {_bytes(WORKLOADS[2][2])} update over {N_GPUS} GPUs on NDR", _SMALL),
    ), domain=public.RABENSEIFNER, properties=[
        *_public("rabenseifner_allreduce_time"),
        Property("never slower than ring", "Rabenseifner moves the ring's bytes in log2 n instead of n-1 "
                 "latency steps per phase, so it is never slower than the ring.", public.RABENSEIFNER,
                 _rabenseifner_not_slower_than_ring, public=False),
    ]),
    FunctionItem("ring_bytes_per_rank", 1, _examples(
        (_ACT1, dict(message_bytes=ACT1_MESSAGE_BYTES, n=N_GPUS)),
        (f"{MIN_RANKS} ranks, {_bytes(ONE_GB)}", dict(message_bytes=ONE_GB, n=MIN_RANKS)),
    ), domain=public.VOLUME, properties=_public("ring_bytes_per_rank")),
    FunctionItem("naive_master_bytes", 1, _examples(
        (_ACT1, dict(message_bytes=ACT1_MESSAGE_BYTES, n=N_GPUS)),
        (f"{MIN_RANKS} ranks, {_bytes(ONE_GB)}", dict(message_bytes=ONE_GB, n=MIN_RANKS)),
    ), domain=public.VOLUME, properties=_public("naive_master_bytes")),
    FunctionItem("bus_bandwidth", 2, _examples(
        (f"nccl-tests: {_bytes(_NCCL['message_bytes'])}, {_NCCL['n']} ranks, ideal time on a "
         f"{_NCCL['bandwidth'] / 1e9:g} GB/s link",
         dict(message_bytes=_NCCL["message_bytes"], n=_NCCL["n"],
              time_s=ref.ring_allreduce_time(_NCCL["message_bytes"], _NCCL["n"], 0.0, _NCCL["bandwidth"]))),
        (f"{_ACT1}, ring time with latency",
         dict(message_bytes=ACT1_MESSAGE_BYTES, time_s=ACT1_RING_S, n=N_GPUS)),
    ), domain=public.BUSBW, properties=_public("bus_bandwidth")),
    FunctionItem("critical_message_size", 1, _examples(
        ("InfiniBand NDR", dict(alpha_s=ALPHA_S, bandwidth=NDR)),
        ("InfiniBand HDR", dict(alpha_s=ALPHA_S, bandwidth=C.IB_HDR200_BANDWIDTH)),
        ("NVLink 4", dict(alpha_s=C.NVLINK_ALPHA_S, bandwidth=C.NVLINK4_BANDWIDTH)),
    ), domain=public.CRITICAL, properties=_public("critical_message_size")),
    FunctionItem("ring_tree_crossover_bytes", 3, _examples(
        (f"{N_GPUS} GPUs on NDR", LINK),
        (f"one DGX H100 node ({C.GPUS_PER_DGX_H100} GPUs) over NVLink",
         dict(n=C.GPUS_PER_DGX_H100, alpha_s=C.NVLINK_ALPHA_S, bandwidth=C.NVLINK4_BANDWIDTH)),
        (f"{ODD_N} GPUs on NDR", dict(n=ODD_N, alpha_s=ALPHA_S, bandwidth=NDR)),
    ), domain=public.CROSSOVER, properties=[
        *_public("ring_tree_crossover_bytes"),
        Property("ring and tree tie at the crossover", "At the crossover message size ring and tree AllReduce "
                 "take the same time.", public.CROSSOVER, _crossover_equal_times, public=False),
    ]),
    FunctionItem("best_allreduce_algorithm", 2, _examples(
        *((f"Act II: {label}, {_bytes(message)}", dict(message_bytes=message, **LINK))
          for label, _, message in WORKLOADS),
    ), domain=_best_domain(), properties=_public("best_allreduce_algorithm")),
    FunctionItem("training_step_flops", 1, _examples(
        (f"Act II: {_BIG_PARAMS / 1e9:g}B params, {TOKENS_PER_STEP} tokens", dict(params=_BIG_PARAMS, tokens=TOKENS_PER_STEP)),
        (f"Chinchilla: {CHINCHILLA['params'] / 1e9:g}B params, {CHINCHILLA['tokens'] / 1e12:g}T tokens", CHINCHILLA),
    ), domain=public.FLOPS, properties=_public("training_step_flops")),
    FunctionItem("compute_time", 1, _examples(
        (f"Act II: {_BIG_PARAMS / 1e9:g}B step on {N_GPUS} H100 at MFU {MFU}",
         dict(flops=ref.training_step_flops(_BIG_PARAMS, TOKENS_PER_STEP), n_gpus=N_GPUS, peak_flops=PEAK_FLOPS, mfu=MFU)),
        (f"Act II: embedding-model step on {N_GPUS} H100 at MFU {MFU}",
         dict(flops=ref.training_step_flops(_SMALL_PARAMS, TOKENS_PER_STEP), n_gpus=N_GPUS, peak_flops=PEAK_FLOPS, mfu=MFU)),
    ), domain=public.COMPUTE, properties=_public("compute_time")),
    FunctionItem("comm_fraction", 1, _examples(
        (f"Act II: {_BIG_PARAMS / 1e9:g}B step, ring AllReduce", dict(comm_s=_BIG_RING_S, compute_s=_BIG_COMPUTE_S)),
        ("Act II: embedding update, tree AllReduce", dict(comm_s=_SMALL_TREE_S, compute_s=_SMALL_COMPUTE_S)),
    ), domain=public.FRACTION, properties=[
        *_public("comm_fraction"),
        Property("failure exactly when comm exceeds compute", f"The share passes {FAILURE_FRACTION:g} exactly when "
                 "communication takes longer than compute.", public.FRACTION, _fraction_failure_iff_comm_exceeds_compute,
                 public=False),
    ]),
)


# --- the notebook ---------------------------------------------------------------------------------------

def _options_literal(q: Question) -> str:
    return repr(dict(q.options))


_SCENARIO_CODE = (f"n = {N_GPUS}\n"
                  f"alpha_s = {ALPHA_S!r}          # InfiniBand latency per message, s\n"
                  f"bandwidth = {NDR!r}          # InfiniBand NDR, bytes/s per port per direction\n")

_ACT1_INSTRUMENT = _SCENARIO_CODE + f"""message_bytes = {ACT1_MESSAGE_BYTES!r}   # {ACT1_PARAMS / 1e9:.0f}B params x {C.FP16_BYTES} bytes (FP16)
ranks = [2 ** k for k in range(1, 11)]
naive_s = [collectives.naive_allreduce_time(message_bytes, r, alpha_s, bandwidth) for r in ranks]
ring_s = [collectives.ring_allreduce_time(message_bytes, r, alpha_s, bandwidth) for r in ranks]
tree_s = [collectives.tree_allreduce_time(message_bytes, r, alpha_s, bandwidth) for r in ranks]
factor = [collectives.ring_bytes_per_rank(1.0, r) for r in ranks]
# bus bandwidth of the ring as a share of the link: ~1 for the big gradient, less once latency shows
share_big = [collectives.bus_bandwidth(message_bytes, t, r) / bandwidth for t, r in zip(ring_s, ranks)]
small_bytes = {SMALL_BYTES!r}
share_small = [collectives.bus_bandwidth(small_bytes, collectives.ring_allreduce_time(small_bytes, r, alpha_s, bandwidth), r)
               / bandwidth for r in ranks]

fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
left.loglog(ranks, naive_s, "o-", label="naive (master)")
left.loglog(ranks, tree_s, "s-", label="binary tree")
left.loglog(ranks, ring_s, "^-", label="ring")
left.set(xlabel="GPUs n", ylabel="AllReduce time (s)", title=f"{{message_bytes / 1e9:.0f}} GB gradient on NDR")
left.legend()
right.semilogx(ranks, factor, "o-", label="ring bytes per rank / M = 2(n-1)/n")
right.semilogx(ranks, share_big, "^-", label=f"ring busbw / link, {{message_bytes / 1e9:.0f}} GB")
right.semilogx(ranks, share_small, "v-", label=f"ring busbw / link, {{small_bytes / 1e6:g}} MB")
right.set(xlabel="GPUs n", ylim=(0, 2.1), title="ring: bytes per rank and bus bandwidth")
right.legend(loc="center right")
plt.show()
"""

_ACT1_READOUT = _SCENARIO_CODE + f"""message_bytes = {ACT1_MESSAGE_BYTES!r}
options = {_options_literal(ACT1_PREDICTION)}
master_bytes = collectives.naive_master_bytes(message_bytes, n)
rank_bytes = collectives.ring_bytes_per_rank(message_bytes, n)
naive = collectives.naive_allreduce_time(message_bytes, n, alpha_s, bandwidth)
ring = collectives.ring_allreduce_time(message_bytes, n, alpha_s, bandwidth)
print(f"You predicted {{act1_prediction}}: {{options.get(act1_prediction, '(not one of the options)')}}")
print(f"Your functions at n = {{n}}: the master's link carries {{master_bytes / 1e9:,.1f}} GB, "
      f"a ring rank sends {{rank_bytes / 1e9:,.2f}} GB: {{master_bytes / rank_bytes:.2f}}x")
print(f"Time: naive {{naive:,.1f}} s vs ring {{ring:.2f}} s, {{naive / ring:.2f}}x "
      f"(both pay 2(n-1) latencies, a sliver of either time at this size)")
"""

_WORKLOADS_CODE = "workloads = {\n" + "".join(
    f"    {label!r}: ({params!r}, {message!r}),   # (params, message_bytes)\n" for label, params, message in WORKLOADS
) + "}\n"

_ACT2_COMPUTE_CODE = (f"tokens_per_step = {TOKENS_PER_STEP}   # one {SEQ_LEN}-token sequence per GPU\n"
                      f"peak_flops = {PEAK_FLOPS!r}   # H100 SXM dense BF16/FP16, FLOP/s\n"
                      f"mfu = {MFU!r}\n")

_ACT2_INSTRUMENT = _SCENARIO_CODE + _WORKLOADS_CODE + _ACT2_COMPUTE_CODE + f"""
sizes = np.logspace(3, 12, 200)   # 1 KB .. 1 TB
curves = {{name: [fn(m, n, alpha_s, bandwidth) for m in sizes] for name, fn in (
    ("ring", collectives.ring_allreduce_time), ("binary tree", collectives.tree_allreduce_time),
    ("Rabenseifner", collectives.rabenseifner_allreduce_time))}}
critical = collectives.critical_message_size(alpha_s, bandwidth)
crossover = collectives.ring_tree_crossover_bytes(n, alpha_s, bandwidth)
fig, ax = plt.subplots(figsize=(8, 5))
for name, times in curves.items():
    ax.loglog(sizes, times, label=name)
ax.axvline(critical, color="grey", linestyle=":", label=f"critical size alpha*B = {{critical / 1e3:.0f}} KB")
ax.axvline(crossover, color="black", linestyle="--", label=f"ring-tree crossover = {{crossover / 1e6:.2f}} MB")
for label, (params, message) in workloads.items():
    ax.axvline(message, color="red", alpha=0.3)
    ax.text(message, ax.get_ylim()[1], label, rotation=90, va="top", fontsize=8)
ax.set(xlabel="message bytes", ylabel="AllReduce time (s)", title=f"n = {{n}} GPUs on InfiniBand NDR")
ax.legend()
plt.show()

print(f"{{'workload':24s}} {{'ring':>10s}} {{'tree':>10s}} {{'Rabenseifner':>13s}} {{'pick':>5s}} {{'compute':>10s}} {{'comm share':>10s}}")
for label, (params, message) in workloads.items():
    ring = collectives.ring_allreduce_time(message, n, alpha_s, bandwidth)
    tree = collectives.tree_allreduce_time(message, n, alpha_s, bandwidth)
    rab = collectives.rabenseifner_allreduce_time(message, n, alpha_s, bandwidth)
    pick = collectives.best_allreduce_algorithm(message, n, alpha_s, bandwidth)
    compute = collectives.compute_time(collectives.training_step_flops(params, tokens_per_step), n, peak_flops, mfu)
    share = collectives.comm_fraction(ring if pick == "ring" else tree, compute)
    flag = "  FAILURE: communication over half the step" if share > {FAILURE_FRACTION!r} else ""
    print(f"{{label:24s}} {{ring:10.4g}} {{tree:10.4g}} {{rab:13.4g}} {{pick:>5s}} {{compute:10.4g}} {{share:10.3f}}{{flag}}")
"""

_ACT2_READOUT = _SCENARIO_CODE + _WORKLOADS_CODE + f"""options = {_options_literal(ACT2_PREDICTION)}
print(f"You predicted {{act2_prediction}}: {{options.get(act2_prediction, '(not one of the options)')}}")
for label, (params, message) in workloads.items():
    print(f"Your functions pick {{collectives.best_allreduce_algorithm(message, n, alpha_s, bandwidth)}} "
          f"for the {{label}} ({{message:.3g}} bytes)")
print(f"ring-tree crossover at n = {{n}}: {{collectives.ring_tree_crossover_bytes(n, alpha_s, bandwidth) / 1e6:.2f}} MB")
"""

_big = ACT2[0][3]
_tokens_for_half = TOKENS_PER_STEP * _big["times"][_big["best"]] / _big["compute_s"]   # compute grows with tokens

NOTEBOOK = (
    Markdown(
        "# Lab 06 — The Bandwidth Invariant: collective communication\n\n"
        "Implement the functions of `collectives.py` (units in every docstring: bytes, seconds, bytes/s per "
        "direction). Every time uses the α-β model: one message of M bytes costs α + M/B. The plots and "
        "readouts below call *your* functions, so they are only as right as your code; run `pytest` in this "
        "folder for the public checks.\n\n"
        "## Act I — The ring efficiency revelation\n\n"
        "> *A systems researcher writes:* \"Our naive AllReduce — gather to a master, then broadcast from "
        f"the master — of a {ACT1_PARAMS / 1e9:.0f}B-parameter model's FP16 gradient ({_bytes(ACT1_MESSAGE_BYTES)}) takes "
        f"{ACT1_NAIVE_S:,.0f} s per step on {N_GPUS} GPUs over InfiniBand NDR "
        f"({NDR / 1e9:.0f} GB/s per port and direction, α = {ALPHA_S * 1e6:.1f} µs). Ring AllReduce on the same "
        "cluster is far faster. We thought our implementation was fine because it 'just works'. Can you "
        "show me the bandwidth ratio so I can explain it to leadership: how much traffic does the master "
        "absorb, versus what ring sends from every node?\"\n\n"
        "**The setup.** Each of the n GPUs holds a gradient of M bytes; afterwards each must hold the sum.\n"
        "- *Naive:* each of the n−1 workers sends its M bytes to the master, which adds them and sends the "
        "M-byte result back to each worker. All of it crosses the master's one link, one message after another.\n"
        "- *Ring:* reduce-scatter then all-gather, n−1 steps each. In every step each rank sends one M/n "
        "chunk to its right neighbour while receiving one from its left.\n"
        "- *Binary tree:* reduce up a tree of ⌈log2 n⌉ levels, then broadcast down; each hop carries the "
        "whole message."),
    Answer("act1_prediction"),
    Code(_ACT1_INSTRUMENT, requires=("act1_prediction",)),
    Code(_ACT1_READOUT, requires=("act1_prediction",)),
    Answer("act1_reflection"),
    Markdown(
        "**Efficiency, read right.** The lab quotes the ring's \"efficiency\" (n−1)/n = "
        f"{ref.ring_bytes_per_rank(1.0, N_GPUS) / 2:.1%} at n = {N_GPUS}. That is not a loss: 2(n−1)/n · M is the least "
        "any AllReduce can send per rank, and nccl-tests report it as *bus bandwidth*, busbw = (M/t) · 2(n−1)/n, "
        "which equals the link bandwidth when the ring runs at the bound."),
    Markdown(
        "## Act II — Algorithm selection under constraints\n\n"
        f"> *An MLOps lead writes:* \"We run three gradient synchronisation workloads on the same {N_GPUS}-GPU "
        f"NDR cluster: (1) a {WORKLOADS[0][1] / 1e9:g}B model's FP16 gradient, "
        f"{_bytes(WORKLOADS[0][2])} per step; (2) a {WORKLOADS[1][1] / 1e9:g}B model's FP16 gradient, {_bytes(WORKLOADS[1][2])}; "
        f"(3) embedding-table updates of a {WORKLOADS[2][1] / 1e9:.1f}B-parameter recommender, "
        f"{_bytes(WORKLOADS[2][2])} per message. Our engineers want ring AllReduce for everything because "
        "'ring is always fastest'. Show whether that is right and, if not, what each workload should use.\"\n\n"
        f"Each training step processes one {SEQ_LEN}-token sequence per GPU ({TOKENS_PER_STEP:,} tokens) at "
        f"MFU {MFU} of the H100's dense {PEAK_FLOPS / 1e12:.0f} TFLOP/s; compute is {FLOPS_PER_PARAM_TOKEN:g} · params · tokens "
        f"(the {WORKLOADS[0][1] / 1e9:g}B step computes for {_seconds(_big['compute_s'])}). Communication does not overlap "
        f"compute. **Failure state:** communication above {FAILURE_FRACTION:.0%} of the step — the cluster "
        "spends more time talking than computing.\n\n"
        "Rabenseifner's AllReduce (recursive-halving reduce-scatter, recursive-doubling all-gather, n a "
        "power of two) sends the ring's 2(n−1)/n · M per rank in 2 log2 n latency steps; the instrument "
        "plots it next to ring and tree."),
    Answer("act2_prediction"),
    Code(_ACT2_INSTRUMENT, requires=("act2_prediction",)),
    Code(_ACT2_READOUT, requires=("act2_prediction",)),
    Answer("act2_reflection"),
    Markdown(
        "**Out of the failure state.** For a dense model with FP16 gradients the ring moves about "
        f"{RING_FACTOR_LIMIT * C.FP16_BYTES} bytes per "
        f"parameter and the step computes {FLOPS_PER_PARAM_TOKEN:g} FLOP per parameter per token, so the parameter "
        f"count cancels: the {WORKLOADS[0][1] / 1e9:g}B and the {WORKLOADS[1][1] / 1e9:g}B gradients have almost the "
        "same communication share. What moves it is the tokens per "
        f"step: the {WORKLOADS[0][1] / 1e9:g}B step needs {_tokens_for_half:,.0f} tokens "
        f"({_tokens_for_half / N_GPUS / SEQ_LEN:.1f} sequences per GPU) before compute matches communication. "
        "Other ways out: overlap the AllReduce with the backward pass, compress gradients, or reduce inside "
        "each node over NVLink first (hierarchical AllReduce)."),
    FunctionGrades(),
)

ASSIGNMENT = Assignment(
    id="lab06_collectives",
    title="Lab 06 — The Bandwidth Invariant: collective communication",
    module="collectives",
    reference=ref,
    functions=FUNCTIONS,
    questions=QUESTIONS,
    notebook=NOTEBOOK,
    source_lab=("Vol II Lab 06, The Bandwidth Invariant: "
                "labs/vol2/lab_06_collective_comms.py of https://github.com/harvard-edge/cs249r_book"),
    misconceptions=MISCONCEPTIONS,
)
