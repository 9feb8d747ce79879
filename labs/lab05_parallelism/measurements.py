"""Lab 05 against the published record: Megatron-LM's GPT-3 layout and its strong scaling, and ZeRO's
model states (docs/measurements.md; rows marked notebook=True are the notebook's model-vs-measurement
element, computed with the student's functions).
"""
from __future__ import annotations

from autograder.engine.spec import Measurement, model
from labs.lab05_parallelism.scenario import ACT2, ZERO_PAPER
from reference import constants as C
from reference.cluster import ring_link

p = model("parallelism")
GB = (1e9, "GB")

# Megatron-LM README @ 2e90a34 (2022) and examples/pretrain_gpt3_175B.sh: GPT-3 175B on 1,024 GPUs,
# "8-way and 16-way tensor and pipeline parallelism", global batch 1536, micro-batch 1, seq 2048.
LAYOUT = Measurement(
    id="gpt3_layout", quantity="3D layout of GPT-3 175B on 1,024 GPUs",
    setup="Megatron-LM's published GPT-3 175B example: 96 layers, hidden 12,288, 96 heads, global batch 1,536 "
          "sequences of 2,048 tokens, micro-batch 1; the model: best_3d_config with 8-GPU nodes, 80 GiB per GPU, "
          "a 10% bubble ceiling, no ZeRO.",
    model=p.best_3d_config(**ACT2), published="TP=8 PP=16 DP=8", unit=(1, ""),
    source="NVIDIA/Megatron-LM README.md @ 2e90a34",
    url="https://github.com/NVIDIA/Megatron-LM/blob/2e90a34/README.md",
    quote="In examples/pretrain_gpt3_175B.sh we have provided an example of how to configure Megatron to run GPT-3 "
          "with 175 billion parameters on 1024 GPUs. [...] It uses 8-way and 16-way tensor and pipeline "
          "parallelism, respectively.",
    why="The same layout (DP = 1,024 / (8 x 16) = 8). Megatron ran it with activation checkpointing, which the "
        "model leaves out: it keeps fp32 main gradients too (18-20 bytes per parameter against the model's 16), "
        "so the 77 GB the model finds is tighter in practice.",
    notebook=True)

_ZERO_SOURCE = dict(source="Rajbhandari et al., ZeRO (SC'20, arXiv:1910.02054), Fig. 1",
                    url="https://arxiv.org/abs/1910.02054")
ZERO_BASELINE = Measurement(
    id="zero_stage0", quantity="Model states per GPU, 7.5B parameters, data parallel, no ZeRO",
    setup="The ZeRO paper's example: 7.5B parameters, 64-way data parallelism, mixed-precision Adam (K = 12); "
          "the model: model_state_bytes_per_gpu at stage 0.",
    model=p.model_state_bytes_per_gpu(zero_stage=0, **ZERO_PAPER), published=120e9, unit=GB, **_ZERO_SOURCE,
    quote="Figure 1 (per-device memory of model states, Psi = 7.5B, Nd = 64, K = 12): Baseline 120GB; "
          "Pos 31.4GB; Pos+g 16.6GB; Pos+g+p 1.9GB",
    why="Agrees: (2 + 2 + 12) bytes per parameter, the paper's own accounting.",
    notebook=True)

ZERO_STAGE3 = Measurement(
    id="zero_stage3", quantity="Model states per GPU, 7.5B parameters, ZeRO stage 3",
    setup="The same example with parameters, gradients and optimizer states all sharded (Pos+g+p); the model: "
          "model_state_bytes_per_gpu at stage 3.",
    model=p.model_state_bytes_per_gpu(zero_stage=3, **ZERO_PAPER), published=1.9e9, unit=GB, **_ZERO_SOURCE,
    quote=ZERO_BASELINE.quote,
    why="Agrees: 16 bytes per parameter over 64 GPUs is 1.875 GB, which the figure rounds to 1.9.",
    notebook=True)

# Megatron-LM README (HEAD): strong scaling of GPT-3 (~177B) from 96 to 4,608 H100, 1,152 sequences of 4,096
# tokens throughout. The layout of that run is not stated; the model takes the 177B model's TP 8 x PP 6 (48 GPUs
# per replica). TP 8 fills each node, so each of a node's 8 data-parallel rings has one GPU and one NIC there.
MEGATRON_PARAMS, MEGATRON_SEQUENCES, MEGATRON_SEQ = 177e9, 1152, 4096
REPLICA_GPUS, MEGATRON_GPUS, MEGATRON_BASE_MFU = 48, 4608, 0.47
_DP = MEGATRON_GPUS // REPLICA_GPUS
_STEP = dict(params=MEGATRON_PARAMS / REPLICA_GPUS, tokens_per_step=MEGATRON_SEQUENCES * MEGATRON_SEQ,
             peak_flops=C.H100_PEAK_FLOPS_BF16, mfu=MEGATRON_BASE_MFU, bytes_per_grad=C.FP16_BYTES,
             **ring_link(_DP, gpus_per_node=1, nics_per_node=1))
_COMPUTE = p.data_parallel_step_time(n_gpus=1, **_STEP) / _DP          # one GPU's compute: no AllReduce at n = 1
_COMM = p.data_parallel_step_time(n_gpus=_DP, **_STEP) - _COMPUTE
STRONG_SCALING = Measurement(
    id="megatron_strong_scaling", quantity="MFU of GPT-3 (177B) on 4,608 H100, strong scaling from 96",
    setup=f"Megatron-LM's strong-scaling run: 1,152 sequences of 4,096 tokens at every scale; the model: each "
          f"GPU's share of the step (a {REPLICA_GPUS}-GPU TP 8 x PP 6 replica, an assumption: the README does not "
          f"state the layout) plus the AllReduce of its gradient shard over the {_DP} replicas, one NIC per ring "
          f"(cluster.ring_link), nothing overlapped; MFU while computing set to the {MEGATRON_BASE_MFU:.0%} measured "
          "at 96 GPUs.",
    model=p.effective_mfu(base_mfu=MEGATRON_BASE_MFU, compute_s=_COMPUTE, comm_s=_COMM), published=0.42,
    unit=(0.01, "%"),
    source="NVIDIA/Megatron-LM README.md", url="https://github.com/NVIDIA/Megatron-LM/blob/main/README.md",
    quote="This test strong scales the standard GPT-3 model (slightly more than 175 billion parameters due to "
          "larger vocabulary size) from 96 H100 GPUs to 4,608 GPUs, using the same batch size of 1,152 sequences "
          "throughout. Communication becomes more exposed at larger scale, leading to a reduction in MFU from 47% "
          "to 42%.",
    why="The agreement is partly luck: Megatron overlaps the data-parallel reduce (--overlap-grad-reduce), which "
        "the model does not; but at 4,608 GPUs each replica has only 12 sequences, so its pipeline bubble grows "
        "(the model here has no pipeline). Two effects the model treats apart land on one number.",
    notebook=True)

MEASUREMENTS = (LAYOUT, ZERO_BASELINE, ZERO_STAGE3, STRONG_SCALING)
