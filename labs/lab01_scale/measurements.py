"""Lab 01 against the published record: training time at a published run's scale, and the gradient
AllReduce of a data-parallel step across DGX H100 nodes (docs/measurements.md; rows marked
notebook=True are the notebook's model-vs-measurement element, computed with the student's functions).
"""
from __future__ import annotations

from autograder.engine.spec import Measurement, model
from labs.lab01_scale.scenario import GRAD_BYTES, N_FLEET
from reference import constants as C
from reference.cluster import ring_link

s, c = model("scaling"), model("collectives")

# The Llama 3 405B run (Llama Team, arXiv:2407.21783): "our flagship language model was pre-trained using
# 3.8 × 10^25 FLOPs", with "405B trainable parameters on 15.6T text tokens"; Table 4: 16,384 GPUs at
# "400 | 41%" (TFLOPs/GPU, BF16 MFU) for the longest stage.
LLAMA_FLOPS, LLAMA_PARAMS, LLAMA_TOKENS = 3.8e25, 405e9, 15.6e12
LLAMA_GPUS, LLAMA_MFU = 16384, 0.41
LLAMA_DAYS = 54    # the paper's snapshot of the run (466 job interruptions in 54 days)
SECONDS_PER_HOUR = 3600
LLAMA_GPU_HOURS = s.training_time_s(total_flops=LLAMA_FLOPS, n_gpus=LLAMA_GPUS, peak_flops=C.H100_PEAK_FLOPS_BF16,
                                    mfu=LLAMA_MFU) * (LLAMA_GPUS / SECONDS_PER_HOUR)

LLAMA_HOURS = Measurement(
    id="llama_gpu_hours", quantity="GPU-hours of Llama 3.1 405B's pre-training on H100",
    setup=f"{LLAMA_FLOPS / 1e25:g} × 10^25 FLOP on {LLAMA_GPUS:,} H100 at the {LLAMA_MFU:.0%} BF16 MFU the Llama 3 paper reports "
          "for that scale (arXiv:2407.21783, Table 4); the model: training_time_s times the GPUs, in hours.",
    model=LLAMA_GPU_HOURS, published=30.84e6, unit=(1e6, "M GPU-hours"),
    source="meta-llama/llama-models models/llama3_1/MODEL_CARD.md",
    url="https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md",
    quote="Llama 3.1 405B | 30.84M | 700 (Training Time (GPU hours) | Training Power Consumption (W))",
    why="The paper's MFU is measured over steady training steps; the GPU-hours also pay for what is not a "
        "training step: restarts after the 466 job interruptions the paper reports in 54 days, checkpoints, "
        "evaluation, the long-context stage at 38% MFU. The run's whole-run MFU works out near 35%.",
    notebook=True)

LLAMA_FLOP_COUNT = Measurement(
    id="llama_flops", quantity="Training FLOP of Llama 3 405B",
    setup="6 x parameters x tokens for 405B parameters and 15.6T tokens (the paper's own figures).",
    model=c.training_step_flops(params=LLAMA_PARAMS, tokens=LLAMA_TOKENS), published=3.8e25,
    unit=(1e25, "x 10^25 FLOP"),
    source="arXiv:2407.21783 (The Llama 3 Herd of Models), sec. 1", url="https://arxiv.org/abs/2407.21783",
    quote="our flagship language model was pre-trained using 3.8 × 10^25 FLOPs, almost 50× more than the "
          "largest version of Llama 2",
    why="Agrees: 6ND counts the matrix multiplies of a dense transformer (2 forward, 4 backward per parameter "
        "and token); attention's own FLOP at 8K context are a few percent more.")

FLEET_ALLREDUCE = Measurement(
    id="fleet_busbw", quantity="Bus bandwidth of a ring AllReduce of Act I's size on the DGX H100 fleet",
    setup=f"An AllReduce of {GRAD_BYTES / 1e9:.0f} GB (Act I's bf16 gradient; ZeRO-3's ring passes run on the same link) over {N_FLEET:,} H100 in {N_FLEET // C.GPUS_PER_DGX_H100} "
          "DGX nodes (8 NDR NICs each), the ring on the cluster's link (cluster.ring_link); measured: NVIDIA's "
          "NCCL AllReduce at 16 GB from 32 to 8K H100 (GTC24 S62129, quoted in NVIDIA/nccl#1649).",
    model=c.bus_bandwidth(message_bytes=GRAD_BYTES, n=N_FLEET, time_s=c.ring_allreduce_time(
        message_bytes=GRAD_BYTES, n=N_FLEET, **ring_link(N_FLEET))),
    published=(370e9, 380e9), unit=(1e9, "GB/s"),
    source="NVIDIA/nccl#1649", url="https://github.com/NVIDIA/nccl/issues/1649",
    quote="In the GTC 2024 presentation, it was mentioned that the Allreduce busBW for NVLS + Tree is "
          "approximately 370GB/s~380GB/s",
    why="The model runs each node's 8 NICs at their 50 GB/s line rate; they deliver 46-48. The flat ring at one "
        "NIC per GPU that the source lab used gives 50 GB/s here: the scaling it showed was 8x too pessimistic.")

MEASUREMENTS = (LLAMA_HOURS, LLAMA_FLOP_COUNT, FLEET_ALLREDUCE)
