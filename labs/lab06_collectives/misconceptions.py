"""Lab 06's known wrong models, per graded function (autograder.engine.spec.Misconception).

From the source lab's own formulas (labs/lab06_collectives/errata.md, numbered rows), unit and
factor-of-two slips, and the mistakes of the lab's test implementations. Every model is built from
reference/collectives.py (labs.slips), so its numbers come from the physics the grader trusts.
"""
from __future__ import annotations

import math

from autograder.engine.spec import Misconception as M
from labs.slips import at, percent, scaled
from reference import collectives as ref

ACT1 = "Act I — The ring efficiency revelation"
ACT2 = "Act II — Algorithm selection under constraints"

NO_LATENCY = ("no per-message latency",
              "Your values are the bandwidth term alone: every message also costs alpha_s before its first\n"
              "byte arrives. Small messages are dominated by that latency.")


def _no_alpha(fn):
    return at(fn, alpha_s=0.0)


MISCONCEPTIONS = {
    "p2p_time": [
        M(*NO_LATENCY, ACT1, _no_alpha(ref.p2p_time)),
        M("bandwidth read as bits per second",
          "Your transfer term is 8 times too long: `bandwidth` is already in bytes/s, so the message\n"
          "size in bytes is divided by it directly (no conversion to bits).",
          ACT1, at(ref.p2p_time, message_bytes=lambda k: 8 * k["message_bytes"])),
    ],
    "naive_allreduce_time": [
        M("the master sends to itself, and no latency",
          "You charged (2n-1) messages without latency, as the source lab does: the master receives from\n"
          "the n-1 others and sends back to them, never to itself, and each message pays alpha_s.",
          ACT1, lambda **k: (2 * k["n"] - 1) * k["message_bytes"] / k["bandwidth"]),
        M("the gather without the broadcast",
          "Your time is half the right one: after the master has reduced the gradients it must send the\n"
          "result back to every other rank, as many messages again.",
          ACT1, scaled(ref.naive_allreduce_time, 0.5)),
    ],
    "ring_allreduce_time": [
        M("the ring moves about 2M per rank",
          "You used 2M bytes per rank (the source lab's approximation): the ring's 2(n-1) steps each move\n"
          "M/n, which is 2(n-1)/n of M, noticeably less than 2M on a few ranks.",
          ACT1, lambda **k: 2 * (k["n"] - 1) * k["alpha_s"] + 2 * k["message_bytes"] / k["bandwidth"]),
        M("the whole message at every ring step",
          "Your ring sends the whole message on each of its 2(n-1) steps, which is the naive master's\n"
          "cost: the ring splits the message into n chunks and each step moves one chunk.",
          ACT1, ref.naive_allreduce_time),
        M("a factor of two in the ring",
          "Your values are exactly twice the right ones: reduce-scatter and all-gather are each n-1 steps,\n"
          "2(n-1) in all, not counted twice.",
          ACT1, scaled(ref.ring_allreduce_time, 2)),
        M(*NO_LATENCY, ACT1, _no_alpha(ref.ring_allreduce_time)),
    ],
    "tree_allreduce_time": [
        M("the lab's tree: ring bytes with log2 n latency steps",
          "You used the source lab's tree formula, which is really a bandwidth-optimal algorithm's cost: a\n"
          "plain binary tree sends the whole message on each of its 2 ceil(log2 n) hops.",
          ACT2, lambda **k: (2 * (1 - 1 / k["n"]) * k["message_bytes"] / k["bandwidth"]
                             + 2 * math.log2(k["n"]) * k["alpha_s"])),
        M("fractional tree levels",
          "You counted log2 n levels, which is fractional when n is not a power of two: a tree over n\n"
          "ranks still needs ceil(log2 n) whole levels.",
          ACT2, lambda **k: 2 * math.log2(k["n"]) * ref.p2p_time(k["message_bytes"], k["alpha_s"], k["bandwidth"])),
    ],
    "rabenseifner_allreduce_time": [
        M("recursive halving alone (a reduce-scatter)",
          "Your time is the source lab's 'recursive halving': a reduce-scatter only, half the bytes any\n"
          "AllReduce must move. Rabenseifner adds a recursive-doubling all-gather of the same cost.",
          ACT2, scaled(ref.rabenseifner_allreduce_time, 0.5)),
        M("the whole message at every halving step",
          "You sent the whole message on each of the 2 log2 n steps: recursive halving sends half of what\n"
          "is left at each step, so the bytes add up to the ring's.",
          ACT2, lambda **k: 2 * math.log2(k["n"]) * ref.p2p_time(k["message_bytes"], k["alpha_s"], k["bandwidth"])),
    ],
    "ring_bytes_per_rank": [
        M("about 2M per rank",
          "You returned 2M, the source lab's approximation: each rank sends 2(n-1) chunks of M/n bytes,\n"
          "which is less than 2M, the more so on few ranks.",
          ACT1, lambda **k: 2 * k["message_bytes"]),
        M("the reduce-scatter half only",
          "Your count is half the right one: after the reduce-scatter, the all-gather sends as many bytes\n"
          "again so that every rank ends with the whole reduced message.",
          ACT1, scaled(ref.ring_bytes_per_rank, 0.5)),
    ],
    "naive_master_bytes": [
        M("the master sends to itself",
          "You counted (2n-1) messages, as the source lab does: the master receives n-1 gradients and sends\n"
          "the result back to the n-1 others, never to itself.",
          ACT1, lambda **k: (2 * k["n"] - 1) * k["message_bytes"]),
        M("only what the master receives",
          "Your count is half the right one: the master also sends the reduced result back to every other\n"
          "rank.",
          ACT1, scaled(ref.naive_master_bytes, 0.5)),
    ],
    "bus_bandwidth": [
        M("algorithm bandwidth, not bus bandwidth",
          "You returned message_bytes / time (nccl-tests' algbw): bus bandwidth scales it by the bytes an\n"
          "AllReduce moves per rank, 2(n-1)/n, so it compares with the link's bandwidth.",
          ACT1, lambda **k: k["message_bytes"] / k["time_s"]),
        M("the reduce-scatter factor",
          "Your values are half the right ones: (n-1)/n is the factor of a reduce-scatter; an AllReduce\n"
          "moves twice that.",
          ACT1, scaled(ref.bus_bandwidth, 0.5)),
    ],
    "critical_message_size": [
        M("gigabytes instead of bytes",
          "Your values are 1e9 times too small: the source lab displays this size in GB, but the function\n"
          "returns bytes.",
          ACT2, scaled(ref.critical_message_size, 1e-9)),
        M("bits instead of bytes",
          "Your values are 8 times too large: alpha_s times a bandwidth in bytes/s is already in bytes.",
          ACT2, scaled(ref.critical_message_size, 8)),
    ],
    "ring_tree_crossover_bytes": [
        M("the lab's MathPeek crossover alpha*B*(n-1)/log2 n",
          "You used the source lab's MathPeek formula: equate the ring's and the binary tree's full costs,\n"
          "latency and bandwidth terms both, with ceil(log2 n) tree levels.",
          ACT2, lambda **k: k["alpha_s"] * k["bandwidth"] * (k["n"] - 1) / math.log2(k["n"])),
        M("the crossover alpha*B*(n-1)",
          "You used the source lab's reflection key alpha*B*(n-1), which compares the ring's latency with\n"
          "one message's transfer: the tree's own cost is missing from the balance.",
          ACT2, lambda **k: k["alpha_s"] * k["bandwidth"] * (k["n"] - 1)),
    ],
    "training_step_flops": [
        M("2 x 2 x P FLOP per token",
          "You used 4 FLOP per parameter per token (the source lab's comment): the forward pass is 2, the\n"
          "backward pass 4, so a training step is 6 per parameter per token.",
          ACT2, scaled(ref.training_step_flops, 4 / 6)),
        M("the forward pass only",
          "You counted 2 FLOP per parameter per token, the forward pass: the backward pass costs twice the\n"
          "forward again.",
          ACT2, scaled(ref.training_step_flops, 2 / 6)),
    ],
    "compute_time": [
        M("the GPUs run at their peak (no MFU)",
          "Your times assume 100 % utilisation: real training reaches only a fraction (the MFU) of the\n"
          "peak, so the time is longer by 1/mfu.",
          ACT2, at(ref.compute_time, mfu=1.0)),
        M("one GPU does all the work",
          "Your time is that of a single GPU: data parallelism shares the step's FLOPs over n_gpus.",
          ACT2, at(ref.compute_time, n_gpus=1)),
        M("the sparse peak (1,979 TFLOPS)",
          "Your times are half the right ones: 1,979 TFLOPS is the H100's 2:4-sparsity figure; dense\n"
          "training runs against the dense peak.",
          ACT2, at(ref.compute_time, peak_flops=lambda k: 2 * k["peak_flops"])),
    ],
    "comm_fraction": [
        M("communication over compute (a ratio)",
          "You divided by the compute time: the fraction of the step is communication over the whole step,\n"
          "communication plus compute, so it stays below 1.",
          ACT2, lambda **k: k["comm_s"] / k["compute_s"]),
        percent(ref.comm_fraction, ACT2),
    ],
}
