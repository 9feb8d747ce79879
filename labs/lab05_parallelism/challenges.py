"""Lab 05's open design challenge: the student's own 3D layout of Act II (GPT-3 on 1,024 H100s).

The source lab let students move TP, PP and the micro-batch count until the out-of-memory banner
cleared; here the student writes a layout and it is measured with reference/parallelism.py at the
Act II scenario: it must fit in memory, keep TP inside a node and keep the bubble under the ceiling.
Several layouts meet all three (tests/labs/lab05_parallelism/test_lab05_challenge.py lists some).
"""
from __future__ import annotations

from autograder.engine.challenges import DesignChallenge, Field, Invalid, Verdict
from labs.authoring import fmt_bytes as gb
from labs.lab05_parallelism.questions import pct
from labs.lab05_parallelism.scenario import ACT2, BEST_M, BEST_PP, BEST_TP, GPN, SEQ_LEN
from reference import parallelism as ref

_SHAPE = {k: ACT2[k] for k in ("params", "layers", "seq_len", "hidden", "heads", "zero_stage")}


def measure(tp: int, pp: int, microbatches: int) -> dict:
    """The layout at the Act II scenario: DP = GPUs / (TP x PP), each replica's share of the global
    batch cut into `microbatches` micro-batches of whole sequences. Invalid names a rule broken."""
    if ACT2["n_gpus"] % (tp * pp):
        raise Invalid(f"TP x PP = {tp * pp} does not split the {ACT2['n_gpus']:,} GPUs into whole data-parallel replicas")
    if ACT2["heads"] % tp:
        raise Invalid(f"tp = {tp} does not divide the {ACT2['heads']} attention heads")
    if ACT2["layers"] % pp:
        raise Invalid(f"pp = {pp} does not divide the {ACT2['layers']} layers into equal stages")
    dp = ACT2["n_gpus"] // (tp * pp)
    if ACT2["global_batch"] % (dp * microbatches):
        raise Invalid(f"DP x microbatches = {dp} x {microbatches} does not divide the global batch of "
                      f"{ACT2['global_batch']:,} sequences into micro-batches of whole sequences")
    micro_batch = ACT2["global_batch"] // (dp * microbatches)
    memory = ref.peak_memory_bytes_per_gpu(**_SHAPE, micro_batch=micro_batch, tp=tp, pp=pp, dp=dp,
                                           microbatches=microbatches)
    return dict(dp=dp, micro_batch=micro_batch, memory=memory,
                states=ref.model_state_bytes_per_gpu(ACT2["params"], dp, ACT2["zero_stage"], tp, pp),
                bubble=ref.pipeline_bubble_fraction(pp, microbatches))


def check(design) -> list[Verdict]:
    tp, pp, m = design["tp"], design["pp"], design["microbatches"]
    lay = measure(tp, pp, m)
    shape = f"DP={lay['dp']}, {lay['micro_batch']} sequence(s) per micro-batch"
    return [
        Verdict(ref.fits_in_memory(lay["memory"], ACT2["capacity_bytes"]),
                f"{gb(lay['memory'])} on the busiest GPU (model states {gb(lay['states'])}; {shape})"),
        Verdict(not ref.tp_crosses_node(tp, ACT2["gpus_per_node"]),
                f"a TP group of {tp} GPUs on {ACT2['gpus_per_node']}-GPU nodes"),
        Verdict(lay["bubble"] <= ACT2["bubble_ceiling"], f"bubble {pct(lay['bubble'])} with p={pp}, m={m}"),
    ]



LAB05_LAYOUT = DesignChallenge(
    id="lab05_layout", points=3.0,
    prompt=(f"## Design challenge — your own layout\n\nAct II asked you to pick one of four layouts. Now design "
            f"one yourself for the same run: GPT-3 {ACT2['params'] / 1e9:.0f}B ({ACT2['layers']} layers, "
            f"{ACT2['heads']} heads) on {ACT2['n_gpus']:,} H100s in {GPN}-GPU DGX nodes, a global batch of "
            f"{ACT2['global_batch']:,} sequences of {SEQ_LEN:,} tokens, 1F1B, no ZeRO. You choose TP, PP and the "
            f"number of micro-batches m each data-parallel replica cuts its share of the batch into; DP = "
            f"{ACT2['n_gpus']:,} / (TP x PP) follows. TP must divide the heads, PP the layers, and the batch must "
            "split into micro-batches of whole sequences. Measure your candidates with your own functions "
            "(`peak_memory_bytes_per_gpu`, `pipeline_bubble_fraction`, `tp_crosses_node`) before you commit."),
    fields=(Field("tp", "tensor-parallel GPUs per layer", 1, ACT2["n_gpus"]),
            Field("pp", "pipeline stages", 1, ACT2["layers"]),
            Field("microbatches", "micro-batches per replica per step (m)", 1, ACT2["global_batch"])),
    constraints=(f"fits in the {gb(ACT2['capacity_bytes'])} of one H100 (peak memory of the busiest GPU, 1F1B)",
                 f"tensor parallelism stays inside one {GPN}-GPU node (NVLink)",
                 f"pipeline bubble (p - 1)/(m + p - 1) at or below {pct(ACT2['bubble_ceiling'])}"),
    check=check,
    reference_answer=dict(tp=BEST_TP, pp=BEST_PP, microbatches=BEST_M),
)

CHALLENGES = [LAB05_LAYOUT]
