"""Lab 09 against the published record: MFU of two published runs, and the roofline's compute roof against
the best measured matmul and attention kernels (docs/measurements.md; rows marked notebook=True are the
notebook's model-vs-measurement element, computed with the student's functions).
"""
from __future__ import annotations

from autograder.engine.spec import Measurement, model
from labs.lab09_performance.scenario import PALM
from reference import constants as C
from reference.collectives import training_step_flops

f = model("performance")
PERCENT = (0.01, "%")
TFLOPS = (1e12, "TFLOP/s")

PALM_MFU = Measurement(
    id="palm_mfu", quantity="MFU of PaLM 540B on 6,144 TPU v4",
    setup="238.3K tokens/s, 6N + 12LHQT FLOP per token, 275 TFLOP/s per chip (Chowdhery et al. 2022, App. B); "
          "the model: mfu at those inputs.",
    model=f.mfu(**PALM), published=0.462, unit=PERCENT,
    source="Chowdhery et al., PaLM (arXiv:2204.02311), Table 3", url="https://arxiv.org/abs/2204.02311",
    quote="PaLM | 540B | 6144 TPU v4 | 46.2% (Table 3: model FLOPs utilization)",
    why="Agrees: PaLM defined MFU this way, and the inputs are its own.",
    notebook=True)

# Megatron-LM README @ 2e90a34: GPT-3 175B on 1,024 A100, global batch 1,536 sequences of 2,048 tokens,
# "each iteration takes around 32 seconds". A100 SXM dense BF16 peak 312 TFLOP/s (stas00/ml-engineering
# compute/accelerator/README.md: "989 for H100 SXM and 312 for A100 SXM").
A100_PEAK_FLOPS = 312e12
GPT3_PARAMS, GPT3_LAYERS, GPT3_HIDDEN, GPT3_SEQ, GPT3_VOCAB = 175e9, 96, 12288, 2048, 51200
GPT3_TOKENS_PER_S = 1536 * GPT3_SEQ / 32.0
# Narayanan et al. 2021 (arXiv:2104.04473) eq. 3, the FLOP Megatron counts per token with activation
# recomputation: 96 l h^2 (1 + s/(6h) + V/(16 l h)).
MEGATRON_FLOPS_PER_TOKEN = 96 * GPT3_LAYERS * GPT3_HIDDEN**2 * (
    1 + GPT3_SEQ / (6 * GPT3_HIDDEN) + GPT3_VOCAB / (16 * GPT3_LAYERS * GPT3_HIDDEN))
_MEGATRON = dict(source="NVIDIA/Megatron-LM README.md @ 2e90a34",
                 url="https://github.com/NVIDIA/Megatron-LM/blob/2e90a34/README.md",
                 quote="With full global batch size of 1536 on 1024 A100 GPUs, each iteration takes around 32 "
                       "seconds resulting in 138 teraFLOPs per GPU which is 44% of the theoretical peak FLOPs.")

MEGATRON_MFU = Measurement(
    id="megatron_mfu", quantity="GPT-3 175B on 1,024 A100: the model's MFU against Megatron's \"44%\"",
    setup="1,536 x 2,048 tokens every 32 s on 1,024 A100 (312 TFLOP/s dense); the model: mfu with 6N FLOP per "
          "token.",
    model=f.mfu(tokens_per_s=GPT3_TOKENS_PER_S, flops_per_token=training_step_flops(GPT3_PARAMS, 1), n_gpus=1024,
                peak_flops=A100_PEAK_FLOPS),
    published=0.44, unit=PERCENT, **_MEGATRON,
    why="Megatron counts the forward pass it recomputes for activation checkpointing as work (8N instead of 6N "
        "FLOP per token, plus attention): its 44% is a hardware-FLOP utilization. By PaLM's MFU definition the "
        "same run is 32%.",
    notebook=True)

MEGATRON_HFU = Measurement(
    id="megatron_hfu", quantity="GPT-3 175B on 1,024 A100, counting the FLOP Megatron counts",
    setup="The same run; the model: mfu with Megatron's FLOP per token, recomputation included (Narayanan et "
          "al. 2021, eq. 3, vocabulary 51,200).",
    model=f.mfu(tokens_per_s=GPT3_TOKENS_PER_S, flops_per_token=MEGATRON_FLOPS_PER_TOKEN, n_gpus=1024,
                peak_flops=A100_PEAK_FLOPS),
    published=0.44, unit=PERCENT, **_MEGATRON,
    why="Agrees: with the same FLOP count the formula gives the published figure; what goes into flops_per_token "
        "decides whether a number is MFU or HFU.")

ROOF = dict(intensity=1000.0, peak_flops=C.H100_PEAK_FLOPS_BF16, bandwidth=C.H100_HBM_BANDWIDTH)
MATMUL = Measurement(
    id="h100_matmul", quantity="Best measured BF16 matmul on an H100 SXM against the roofline's roof",
    setup="The maximal achievable matmul FLOPS (MAMF) of an H100 SXM over many shapes; the model: roofline_flops "
          "at an intensity of 1,000 FLOP per byte, far right of the ridge.",
    model=f.roofline_flops(**ROOF), published=794.5e12, unit=TFLOPS,
    source="stas00/ml-engineering compute/accelerator/README.md",
    url="https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md",
    quote="| NVIDIA H100 SXM  |  794.5 |    989 |      80.3% |  2048x2048x13312 |",
    why="989 TFLOP/s assumes the 1,830 MHz boost clock on every tensor core every cycle; under the 700 W limit "
        "clocks drop, and tiles and waves do not divide every shape evenly. A roofline drawn with the measured "
        "roof is the one a kernel can reach.",
    notebook=True)

ATTENTION = Measurement(
    id="flash_attention3", quantity="FlashAttention-3's best FP16 forward pass on an H100 against the roof",
    setup="FlashAttention-3 forward, FP16, H100 SXM5; the model: roofline_flops at an intensity of 1,000 FLOP per "
          "byte.",
    model=f.roofline_flops(**ROOF), published=740e12, unit=TFLOPS,
    source="Shah et al., FlashAttention-3 (arXiv:2407.08608), abstract", url="https://arxiv.org/abs/2407.08608",
    quote="FlashAttention-3, achieves speedup on H100 GPUs by 1.5-2.0× with FP16 reaching up to 740 TFLOPs/s (75% "
          "utilization)",
    why="As for the matmul, plus the softmax between the two matmuls, which runs on slower units; the paper's "
        "\"75%\" is of 989, the dense peak (of the 2:4-sparse 1,979 it would be 37%).")

MEASUREMENTS = (PALM_MFU, MEGATRON_MFU, MEGATRON_HFU, MATMUL, ATTENTION)
