"""Lab 02's open design challenge: pipeline parallelism across the slow links, the architectural
remedy the source lab named (its Act II reflection) but never let students build.

The Act II story (16 DGX nodes, one NDR link each, the model's gradient AllReduced every step)
is in the danger state. Here the student cuts the model into pipeline stages across nodes: each
node then holds only its stage's layers, its gradient AllReduce spans only the nodes holding the
same stage, and what crosses between stages is one activation tensor per micro-batch (forward) and
its gradient (backward). Every time comes from reference/interconnect.py at the story's inputs;
the bubble is Lab 05's reference formula. Several cuts meet every constraint. More micro-batches
only help the three limits, so the micro-batches are graded as a band: at most BATCH_BAND above the
fewest that meet them at the student's stage count. The fewest move with the version (its traffic
target, its cluster), so a classmate's cut, copied, misses the band or a limit.
"""
from __future__ import annotations

import functools
import math

from autograder.engine.challenges import DesignChallenge, Field, Invalid, Verdict
from labs.authoring import first_valid, fmt_bytes, fmt_seconds
from labs.lab02_interconnect.scenario import (COMPUTE_S, DANGER_RATIO, GPUS, HEADS, HIDDEN, LAYERS, LINK_BW, MESSAGE_BYTES,
                                              PARAMS,
                                              STORY_LINKS, STORY_NODES, STORY_RATIO, TOKENS_PER_GPU_STEP,
                                              TRAFFIC_CUT)
from reference import constants as C
from reference import interconnect as ref
from reference.parallelism import peak_memory_bytes_per_gpu, pipeline_bubble_fraction

BUBBLE_CEILING = 0.10          # the bubble ceiling of Lab 05's Act II as well (a test keeps them equal)
MAX_MICROBATCHES = 512
# Each micro-batch is one sequence of the step's global batch: micro-batches beyond the fewest a stage
# count needs only grow the batch (past what the run planned, and past the critical batch size the
# optimiser's sample efficiency falls). At most this share more than the fewest count as near them.
BATCH_BAND = 0.20
# What one micro-batch of one sequence sends across a stage boundary: its s x h activation tensor
# in 16 bits (Narayanan et al., SC'21, sec. 2.2); the backward pass sends its gradient, as large.
BOUNDARY_BYTES = TOKENS_PER_GPU_STEP * HIDDEN * C.FP16_BYTES


def measure(stages: int, microbatches: int) -> dict:
    """One cut of the story's cluster. Each of the GPUS GPU positions of a node runs its own
    pipeline through `stages` nodes with `microbatches` one-sequence micro-batches per step; the
    STORY_NODES / stages copies of a stage AllReduce its gradient hierarchically. Seconds per step."""
    if STORY_NODES % stages:
        raise Invalid(f"stages = {stages} does not split the {STORY_NODES} nodes into whole pipelines")
    if LAYERS % stages:
        raise Invalid(f"stages = {stages} does not divide the {LAYERS} layers into equal stages")
    if stages < 2:
        raise Invalid("one stage is plain data parallelism, the design of the story: cut the model across nodes")
    copies = STORY_NODES // stages
    ideal_s = microbatches * COMPUTE_S / stages            # each GPU computes 1/stages of the layers
    bubble = pipeline_bubble_fraction(stages, microbatches)
    link_bw = STORY_LINKS * LINK_BW
    sync_s = ref.hierarchical_allreduce_time(MESSAGE_BYTES / stages, GPUS, copies, C.NVLINK4_BANDWIDTH, link_bw)
    boundary_bytes = 2 * microbatches * GPUS * BOUNDARY_BYTES   # forward activations + backward gradients
    step_s = ideal_s / (1 - bubble) + sync_s + ref.transfer_time(boundary_bytes, link_bw)
    # Cross-node bytes of the whole cluster per step: every node's share of its stage gradient's
    # inter-node ring, and 2 (p - 1) boundary crossings of every micro-batch of every GPU pipeline.
    sequences = copies * GPUS * microbatches
    cross_bytes = (STORY_NODES * 2 * (copies - 1) / copies * MESSAGE_BYTES / stages
                   + sequences * 2 * (stages - 1) * BOUNDARY_BYTES)
    return dict(copies=copies, bubble=bubble, step_s=step_s, ideal_s=ideal_s, sync_s=sync_s,
                overhead=ref.comm_overhead_ratio(step_s - ideal_s, ideal_s),
                bytes_per_sequence=cross_bytes / sequences)


# The story's cross-node bytes per sequence: every node's share of the 16-node ring of the whole
# gradient, for one sequence per GPU.
DP_BYTES_PER_SEQUENCE = 2 * (STORY_NODES - 1) / STORY_NODES * MESSAGE_BYTES / GPUS


def _gigabytes(x: float) -> str:
    return f"{x / 1e9:.2f} GB"


def _limits(stages: int, microbatches: int) -> tuple[dict, float, bool, bool, bool]:
    """The cut measured, its traffic factor, and whether it meets the traffic cut, the bubble ceiling and
    the danger line (each a one-sided limit that more micro-batches only help)."""
    cut = measure(stages, microbatches)
    factor = DP_BYTES_PER_SEQUENCE / cut["bytes_per_sequence"]
    return (cut, factor, factor >= TRAFFIC_CUT, cut["bubble"] <= BUBBLE_CEILING, cut["overhead"] <= DANGER_RATIO)


@functools.lru_cache(maxsize=None)
def fewest_microbatches(stages: int) -> int | None:
    """The fewest micro-batches with which `stages` stages meet the traffic cut, the bubble ceiling and
    the danger line; None when no count up to MAX_MICROBATCHES does."""
    return next((m for m in range(1, MAX_MICROBATCHES + 1) if all(_limits(stages, m)[2:])), None)


def check(design) -> list[Verdict]:
    p, m = design["stages"], design["microbatches"]
    cut, factor, traffic, bubble, danger = _limits(p, m)
    fewest = fewest_microbatches(p)
    most = None if fewest is None else math.floor((1 + BATCH_BAND) * fewest)
    return [
        Verdict(traffic, f"{_gigabytes(cut['bytes_per_sequence'])} per sequence cross nodes, "
                         f"{factor:.1f}x less than data parallelism's {_gigabytes(DP_BYTES_PER_SEQUENCE)}"),
        Verdict(bubble and (most is None or m <= most),
                f"bubble {100 * cut['bubble']:.1f}% with p={p}, m={m}"
                + ("" if most is None else f"; at p={p} the fewest micro-batches that meet every constraint are "
                                           f"{fewest}, so at most {most}")),
        Verdict(danger,
                f"step {cut['step_s']:.3f} s for {cut['ideal_s']:.3f} s of compute: overhead ratio {cut['overhead']:.2f} "
                f"(gradient sync over {cut['copies']} node(s) {cut['sync_s']:.3f} s)"),
    ]


def _cuts():
    """(stages, microbatches) that split the nodes and the layers evenly, fewest stages first."""
    return ((p, m) for p in range(2, STORY_NODES + 1) if not (STORY_NODES % p or LAYERS % p)
            for m in range(1, MAX_MICROBATCHES + 1))


def _meets(cut: tuple[int, int]) -> bool:
    return all(v.met for v in check(dict(stages=cut[0], microbatches=cut[1])))


def valid_cuts() -> list[tuple[int, int]]:
    """Every (stages, microbatches) that meets all the constraints (the tests use it)."""
    return [cut for cut in _cuts() if _meets(cut)]


# Every cut fits in memory: a GPU holds its stage's model states and, 1F1B, up to `stages` micro-batches'
# activations of its layers (Lab 05's peak_memory_bytes_per_gpu)
assert all(peak_memory_bytes_per_gpu(PARAMS, LAYERS, TOKENS_PER_GPU_STEP, 1, HIDDEN, HEADS, pp=p,
                                     microbatches=MAX_MICROBATCHES) <= C.H100_HBM_CAPACITY_BYTES
           for p in range(1, STORY_NODES + 1) if not (STORY_NODES % p or LAYERS % p))

# the fewest stages, with the fewest micro-batches that then suffice
_FIRST = first_valid(_cuts(), _meets)

LAB02_PIPELINE = DesignChallenge(
    id="lab02_pipeline", points=2.0,
    prompt=("## Design challenge — the architectural remedy\n\n"
            f"More links are one way out of the danger state. The other keeps the story's {STORY_LINKS} NDR link "
            f"per node and changes what crosses it: cut the {PARAMS / 1e9:g}B model ({LAYERS} layers, hidden "
            f"{HIDDEN:,}) into pipeline stages across the {STORY_NODES} nodes. A node then holds only its stage's "
            f"layers; its gradient ({fmt_bytes(MESSAGE_BYTES)} / stages) is AllReduced only with the other nodes holding "
            "the same stage (hierarchically, as in Act II), and between stages each micro-batch of one "
            f"{TOKENS_PER_GPU_STEP:,}-token sequence sends its activations forward and their gradient back "
            f"({BOUNDARY_BYTES / 1e6:.1f} MB each, per GPU). Each GPU's compute per micro-batch is "
            f"{fmt_seconds(COMPUTE_S)} / stages; the pipeline idles (p - 1)/(m + p - 1) of the step. The story's "
            f"data-parallel cluster runs at an overhead ratio of {STORY_RATIO:.2f}. Use your "
            "`hierarchical_allreduce_time`, `transfer_time` and `comm_overhead_ratio` to try cuts before you commit."),
    fields=(Field("stages", "pipeline stages p (nodes per pipeline)", 1, STORY_NODES),
            Field("microbatches", "one-sequence micro-batches m per GPU pipeline per step", 1, MAX_MICROBATCHES)),
    constraints=(f"cross-node bytes per sequence trained at least {TRAFFIC_CUT}x below data parallelism's",
                 f"pipeline bubble at or below {BUBBLE_CEILING:.0%}, on at most {BATCH_BAND:.0%} more micro-batches "
                 "than the fewest that meet all three constraints at your stage count (each micro-batch is a "
                 "sequence of the global batch: more only grow the batch)",
                 f"out of the danger state: (step time - compute) / compute at most {DANGER_RATIO:g} "
                 "(bubble, gradient sync and boundary transfers, nothing overlapped)"),
    check=check,
    reference_answer=dict(stages=_FIRST[0], microbatches=_FIRST[1]),
)

CHALLENGES = [LAB02_PIPELINE]
