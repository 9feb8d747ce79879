"""Lab 05 graded functions: worked examples formatted from the scenario, hidden domains and the
hidden property of best_3d_config (staff-only: the leak scan looks for these lines in releases)."""
from __future__ import annotations

from functools import partial

from hypothesis import strategies as st

from autograder.engine.spec import Example, FunctionItem, Property
from labs.authoring import anchored, decades, fmt_bytes as gb, public_properties
from labs.lab05_parallelism import properties as public
from labs.lab05_parallelism.scenario import (ACT1, ACT1_GPUS, ACT2, ACT2_LAYOUTS, BEST_LAYOUT, BUBBLE_EXAMPLES,
                                             GPN, LAB_LAYOUT, SEQ_LEN, TIGHT_BUBBLE_CEILING, ZERO_PAPER,
                                             ZERO_STAGE_EXAMPLE, act1_kwargs, act1_times, parse_config)
from reference import parallelism as ref

# --- hidden domains: wider than the released strategies (properties.py) and drawn differently -------
_POWERS2 = st.integers(0, 7).map(lambda k: 2 ** k)                      # 1 .. 128
_GPUS = st.one_of(st.integers(1, 64), st.integers(1, 16_384))          # half of the draws up to 64
_PARAMS = decades(7, 12.5)                                              # 10M .. 3T


def _tp_domain():
    # a node of 1 to 72 GPUs (an NVL72 rack is one NVLink domain) and a TP group within a factor of
    # two of it: whether it crosses depends on both, so neither alone answers it (no fixed threshold
    # on tp is right much more often than a coin). Anchors: exactly a node (stays) and one GPU more.
    def around(gpn):
        return st.fixed_dictionaries({"tp": st.one_of(st.integers(max(1, gpn // 2), 2 * gpn), st.just(gpn),
                                                      st.just(gpn + 1)),
                                      "gpus_per_node": st.just(gpn)})
    return anchored(st.one_of(st.integers(1, 16), st.integers(1, 72)).flatmap(around),
                    {"tp": 8, "gpus_per_node": 8}, {"tp": 9, "gpus_per_node": 8}, {"tp": 1, "gpus_per_node": 1})


def _fits_domain():
    # 1 GB .. 1 TB of memory and a need from half to twice of it: the need alone does not tell (the
    # capacity spans three decades). Anchors: exactly full (fits), one byte over, nothing needed.
    def need(capacity):
        return st.fixed_dictionaries({"bytes_needed": st.floats(-0.3, 0.3).map(lambda e: capacity * 10.0 ** e),
                                      "capacity_bytes": st.just(capacity)})
    return anchored(decades(9, 12).flatmap(need),
                    {"bytes_needed": 80e9, "capacity_bytes": 80e9}, {"bytes_needed": 80e9 + 1, "capacity_bytes": 80e9},
                    {"bytes_needed": 0.0, "capacity_bytes": 0.0}, {"bytes_needed": 141e9, "capacity_bytes": 141e9})



_public = partial(public_properties, public.PROPERTIES)

# Graded functions whose stub docstring may state its closed form (issue 29, derive then check): a
# definition or a published count a student is not asked to derive; at most a third of the lab's
# functions (`scalelabs lint`'s derive rule). Every other function's formula is in the reference's
# Formula: paragraph, which the stub leaves out.
DEFINITIONS = ("effective_mfu", "activation_bytes_per_layer")


def _best_is_feasible(f, d):
    """Hidden: the student's chosen layout really satisfies the limits (checked with the reference)."""
    got = f(**d)
    if got == "none":
        return
    tp, pp, dp = parse_config(got)
    m = d["global_batch"] // (dp * d["micro_batch"])
    memory = ref.peak_memory_bytes_per_gpu(d["params"], d["layers"], d["seq_len"], d["micro_batch"],
                                           d["hidden"], d["heads"], tp, pp, dp, m, d["zero_stage"])
    assert memory <= d["capacity_bytes"], f"{got} needs {gb(memory)} per GPU, over {gb(d['capacity_bytes'])}"
    bubble = ref.pipeline_bubble_fraction(pp, m)
    assert bubble <= d["bubble_ceiling"], f"{got} has a bubble of {bubble:.4f} > {d['bubble_ceiling']:.4f}"


def _gpt_shape(layers: int, hidden: int) -> st.SearchStrategy:
    """A GPT-like model: 128-wide heads and about 12 * layers * hidden^2 parameters, so that
    realistic clusters have feasible layouts (random sizes are mostly "none")."""
    return st.fixed_dictionaries({
        "params": st.floats(0.8, 1.2).map(lambda k: k * 12 * layers * hidden ** 2),
        "layers": st.just(layers), "hidden": st.just(hidden), "heads": st.just(hidden // 128)})


_CONFIG_DOMAIN = st.tuples(
    st.sampled_from([24, 32, 40, 48, 64, 80, 96, 128]).flatmap(
        lambda layers: st.sampled_from([2048, 4096, 5120, 8192, 12288]).flatmap(
            lambda hidden: _gpt_shape(layers, hidden))),
    st.fixed_dictionaries({
        "seq_len": st.sampled_from([1024, 2048]),
        "global_batch": st.sampled_from([256, 512, 768, 1024, 1536, 2048]),
        "n_gpus": st.sampled_from([64, 128, 256, 512, 1024]), "gpus_per_node": st.sampled_from([4, 8]),
        "capacity_bytes": st.sampled_from([80e9, 96e9, 141e9]), "bubble_ceiling": st.floats(0.02, 0.3),
        "micro_batch": st.sampled_from([1, 2]), "zero_stage": st.integers(0, 3)}),
).map(lambda parts: {**parts[0], **parts[1]})

_ACT2_SHAPE = {k: ACT2[k] for k in ("params", "layers", "seq_len", "micro_batch", "hidden", "heads", "zero_stage")}

FUNCTIONS = [
    FunctionItem(
        name="data_parallel_step_time", points=2.0,
        examples=[Example(f"Act I: {ACT1['params'] / 1e9:.0f}B, {n} GPUs on {'NVLink' if n <= GPN else 'InfiniBand NDR'}", act1_kwargs(n))
                  for n in ACT1_GPUS],
        domain=st.fixed_dictionaries({
            "params": _PARAMS, "tokens_per_step": decades(3, 9),
            "n_gpus": _GPUS, "peak_flops": decades(13, 16), "mfu": st.floats(0.01, 1.0),
            "bandwidth": decades(9, 13), "alpha_s": st.one_of(decades(-8, -4), st.floats(0.0, 1e-5)),
            "bytes_per_grad": st.sampled_from([2, 1, 4]) | st.floats(0.5, 8.0)}),
        properties=_public("data_parallel_step_time"),
    ),
    FunctionItem(
        name="effective_mfu", points=1.0,
        examples=[Example(f"Act I: {n} GPUs", dict(base_mfu=ACT1["mfu"], compute_s=cs, comm_s=ms))
                  for n, (cs, ms) in ((n, act1_times(n)) for n in ACT1_GPUS)],
        domain=st.fixed_dictionaries({"base_mfu": st.floats(0.01, 1.0), "compute_s": decades(-4, 3),
                                      "comm_s": st.one_of(decades(-6, 3), st.floats(0.0, 100.0))}),
        properties=_public("effective_mfu"),
    ),
    FunctionItem(
        name="model_state_bytes_per_gpu", points=1.5,
        examples=[Example(f"ZeRO paper: {ZERO_PAPER['params'] / 1e9:g}B params, dp={ZERO_PAPER['dp']}, stage {s}",
                          dict(ZERO_PAPER, zero_stage=s))
                  for s in range(4)]
        + [Example(f"Act II: {lay['config']}, no ZeRO",
                   dict(params=ACT2["params"], dp=lay["dp"], zero_stage=0, tp=lay["tp"], pp=lay["pp"]))
           for lay in (LAB_LAYOUT, BEST_LAYOUT)],
        domain=st.fixed_dictionaries({"params": _PARAMS, "dp": _GPUS,
                                      "zero_stage": st.integers(0, 3), "tp": _POWERS2,
                                      "pp": st.one_of(st.integers(1, 16), st.integers(1, 128))}),
        properties=_public("model_state_bytes_per_gpu"),
    ),
    FunctionItem(
        name="activation_bytes_per_layer", points=1.0,
        examples=[Example(f"GPT-3 layer, s={SEQ_LEN}, b={ACT2['micro_batch']}, tp={t}",
                          dict(seq_len=SEQ_LEN, micro_batch=ACT2["micro_batch"], hidden=ACT2["hidden"], heads=ACT2["heads"], tp=t))
                  for t in (1, 8)],
        domain=st.fixed_dictionaries({"seq_len": st.one_of(st.integers(9, 17).map(lambda k: 2 ** k),
                                                          st.integers(1, 32_768)),
                                      "micro_batch": st.integers(1, 32),
                                      "hidden": st.sampled_from([2048, 4096, 5120, 8192, 12288, 16384, 1024, 25600]),
                                      "heads": st.sampled_from([16, 32, 40, 64, 96, 128, 8, 160]), "tp": _POWERS2}),
        properties=_public("activation_bytes_per_layer"),
    ),
    FunctionItem(
        name="pipeline_bubble_fraction", points=1.0,
        examples=[Example(f"{label}: " + ", ".join(f"{k}={v}" for k, v in kw.items()), kw)
                  for label, kw in BUBBLE_EXAMPLES] + [
                  Example(f"Act II: p={BEST_LAYOUT['pp']}, m={BEST_LAYOUT['m']}",
                          dict(p=BEST_LAYOUT["pp"], m=BEST_LAYOUT["m"]))],
        domain=st.fixed_dictionaries({"p": st.one_of(st.integers(1, 16), st.integers(1, 512)),
                                      "m": st.one_of(st.integers(1, 64), st.integers(1, 4096)), "v": st.integers(1, 16)}),
        properties=_public("pipeline_bubble_fraction"),
    ),
    FunctionItem(
        name="tp_crosses_node", points=0.5,
        examples=[Example(f"TP={t} on {GPN}-GPU DGX nodes", dict(tp=t, gpus_per_node=GPN)) for t in (8, 16)],
        domain=_tp_domain(),
        properties=_public("tp_crosses_node"),
    ),
    FunctionItem(
        name="fits_in_memory", points=0.5,
        examples=[Example(f"Act II: {lay['config']} in {gb(ACT2['capacity_bytes'])}",
                          dict(bytes_needed=lay["memory"], capacity_bytes=ACT2["capacity_bytes"]))
                  for lay in (LAB_LAYOUT, BEST_LAYOUT)],
        domain=_fits_domain(),
        properties=_public("fits_in_memory"),
    ),
    FunctionItem(
        name="peak_memory_bytes_per_gpu", points=2.0,
        examples=[Example(f"Act II: {lay['config']}, m={lay['m']}",
                          dict(_ACT2_SHAPE, tp=lay["tp"], pp=lay["pp"], dp=lay["dp"], microbatches=lay["m"]))
                  for lay in ACT2_LAYOUTS],
        domain=st.fixed_dictionaries({
            "params": decades(8, 12.5), "layers": st.one_of(st.integers(1, 160), st.sampled_from([24, 32, 96, 128])),
            "seq_len": st.sampled_from([1024, 2048, 4096, 8192, 512]), "micro_batch": st.integers(1, 16),
            "hidden": st.sampled_from([4096, 8192, 12288, 2048, 16384]), "heads": st.sampled_from([32, 64, 96, 16, 128]),
            "tp": _POWERS2, "pp": st.one_of(st.integers(1, 64), st.sampled_from([1, 2, 3, 4, 8, 16, 32])),
            "dp": _GPUS, "microbatches": st.one_of(st.integers(1, 64), st.integers(1, 2048)),
            "zero_stage": st.integers(0, 3)}),
        properties=_public("peak_memory_bytes_per_gpu"),
    ),
    FunctionItem(
        name="best_3d_config", points=2.0,
        examples=[Example(f"Act II: GPT-3 {ACT2['params'] / 1e9:.0f}B on {ACT2['n_gpus']:,} H100s, no ZeRO", ACT2),
                  Example(f"Act II with ZeRO stage {ZERO_STAGE_EXAMPLE}", dict(ACT2, zero_stage=ZERO_STAGE_EXAMPLE)),
                  Example(f"Act II with a {TIGHT_BUBBLE_CEILING:.0%} bubble ceiling",
                          dict(ACT2, bubble_ceiling=TIGHT_BUBBLE_CEILING))],
        domain=_CONFIG_DOMAIN,
        properties=_public("best_3d_config") + [Property(
            name="the chosen layout fits and meets the bubble ceiling",
            meaning="Whatever layout you return must fit in memory and keep the bubble under the ceiling.",
            strategy=_CONFIG_DOMAIN, check=_best_is_feasible, public=False)],
    ),
]
