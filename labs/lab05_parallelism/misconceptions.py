"""Lab 05's known wrong models, per graded function (autograder.engine.spec.Misconception).

From the source lab's own formulas (labs/lab05_parallelism/errata.md: fixed per-GPU compute, 10 bytes
of model state, activations times TP, the (PP-1)/(PP m) bubble), step-count and factor slips, and the
mistakes of the lab's test implementations. Every model is built from reference/ (labs.slips).
"""
from __future__ import annotations

from autograder.engine.spec import Misconception as M
from labs.slips import at
from reference import collectives, parallelism as ref

ACT1 = "Act I — The data-parallel wall"
ACT2 = "Act II — 3D parallelism design challenge"


def _fixed_per_gpu_compute(**k):
    """The lab: every GPU computes the whole global batch, whatever n_gpus."""
    flops = collectives.training_step_flops(k["params"], k["tokens_per_step"])
    return (collectives.compute_time(flops, 1, k["peak_flops"], k["mfu"])
            + collectives.ring_allreduce_time(k["params"] * k.get("bytes_per_grad", 2), k["n_gpus"],
                                              k["alpha_s"], k["bandwidth"]))


def _activations_tp1(k: dict) -> float:
    return ref.activation_bytes_per_layer(**{**k, "tp": 1})


def _all_microbatches(**k):
    """Activations of every microbatch of the step kept (GPipe without 1F1B), not only pp in flight."""
    pp, m = k.get("pp", 1), k.get("microbatches", 1)
    per_layer = ref.activation_bytes_per_layer(k["seq_len"], k["micro_batch"], k["hidden"], k["heads"], k.get("tp", 1))
    return ref.peak_memory_bytes_per_gpu(**k) + per_layer * -(-k["layers"] // pp) * (m - min(m, pp))


def _stage_off_by_one(k: dict) -> int:
    stage = k.get("zero_stage", 0)
    return min(stage + 1, 3) if stage else 0


MISCONCEPTIONS = {
    "data_parallel_step_time": [
        M("each GPU computes the whole batch",
          "Your compute time does not shrink with n_gpus, as in the source lab: with a fixed global batch,\n"
          "data parallelism splits the step's tokens, so each GPU computes 1/n of them.",
          ACT1, _fixed_per_gpu_compute),
        M("an AllReduce without latency",
          "Your AllReduce is the bandwidth term alone: each of the ring's 2(n-1) steps also pays alpha_s,\n"
          "which dominates on many GPUs.",
          ACT1, at(ref.data_parallel_step_time, alpha_s=0.0)),
    ],
    "effective_mfu": [
        M("the communication subtracted, not waited for",
          "You subtracted comm/compute from 1: the step lasts compute + comm, so the MFU scales by\n"
          "compute / (compute + comm), which never goes below zero.",
          ACT1, lambda **k: k["base_mfu"] * (1 - k["comm_s"] / k["compute_s"])),
        M("the busy share taken for the MFU",
          "You returned the share of the step spent computing: while it computes, the GPU reaches only\n"
          "base_mfu of its peak, so multiply by it.",
          ACT1, at(ref.effective_mfu, base_mfu=1.0)),
    ],
    "model_state_bytes_per_gpu": [
        M("the lab's 10 bytes per parameter",
          "You used 2 bytes of weights plus 8 of optimizer state, as the source lab: mixed-precision Adam\n"
          "holds 16 bytes per parameter (fp16 weights and gradients, fp32 master weights, two moments).",
          ACT2, lambda **k: k["params"] / (k.get("tp", 1) * k.get("pp", 1)) * 10),
        M("ZeRO stages off by one",
          "Your stage 1 shards what stage 2 does (and stage 2 what stage 3 does): stage 1 shards the\n"
          "optimizer states only, stage 2 also the gradients, stage 3 also the weights.",
          ACT2, at(ref.model_state_bytes_per_gpu, zero_stage=_stage_off_by_one)),
    ],
    "activation_bytes_per_layer": [
        M("activations multiplied by TP",
          "You multiplied the activations by tp, as the source lab: tensor parallelism splits most\n"
          "activations over the tp GPUs; only the layer-norm and dropout inputs stay whole.",
          ACT2, lambda **k: k.get("tp", 1) * _activations_tp1(k)),
        M("every activation divided by TP",
          "You divided all of the activations by tp: without sequence parallelism the layer-norm and\n"
          "dropout inputs (10 sbh) stay whole on every TP rank.",
          ACT2, lambda **k: _activations_tp1(k) / k.get("tp", 1)),
    ],
    "pipeline_bubble_fraction": [
        M("the lab's (p-1)/(p m) bubble",
          "You used the source lab's (p-1)/(p m): the bubble is p-1 idle slots out of the v m + p - 1\n"
          "slots of the whole step.",
          ACT2, lambda **k: (k["p"] - 1) / (k["p"] * k["m"])),
        M("the bubble relative to the ideal step",
          "You divided by the ideal step v m (Megatron's bubble/ideal ratio): the share of the whole\n"
          "step also counts the p - 1 idle slots in the denominator.",
          ACT2, lambda **k: (k["p"] - 1) / (k.get("v", 1) * k["m"])),
    ],
    "peak_memory_bytes_per_gpu": [
        M("every microbatch's activations at once",
          "You kept the activations of all microbatches of the step: with 1F1B the first stage holds at\n"
          "most pp microbatches in flight.",
          ACT2, _all_microbatches),
        M("one microbatch in flight",
          "You stored one microbatch's activations: with 1F1B the first stage holds up to pp microbatches\n"
          "in flight before their backward passes free them.",
          ACT2, at(ref.peak_memory_bytes_per_gpu, microbatches=1)),
    ],
}
