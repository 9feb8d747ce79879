"""Hardware and price constants, each with its source (SI units: bytes, seconds, bytes/s, FLOP/s, W, USD).

Bandwidths are per direction (unidirectional). 1 GB = 1e9 bytes; 1 Gb/s = 1e9/8 bytes/s.
Where the source labs used a wrong figure, the comment says which and why (see docs/errata/).
Add a constant only with a source; lab-specific scenario inputs (a story's model size, a price a
stakeholder quotes) belong to that lab's scenario, not here.
"""

# --- GPU: NVIDIA H100 SXM5 -------------------------------------------------------------------
# NVIDIA H100 Tensor Core GPU datasheet (SXM5 column). The labs' 1979 TFLOPS is the 2:4-sparsity
# figure; dense BF16/FP16 tensor throughput is half of it.
H100_PEAK_FLOPS_BF16 = 989e12            # FLOP/s, dense
H100_PEAK_FLOPS_BF16_SPARSE = 1979e12    # FLOP/s, 2:4 structured sparsity (not for training estimates)
# Datasheet: 80 GB HBM3 at 3.35 TB/s (the labs' "HBM3e" is the H200's memory).
H100_HBM_BANDWIDTH = 3.35e12             # bytes/s
H100_HBM_CAPACITY_BYTES = 80e9           # bytes
H100_TDP_W = 700.0                       # W, datasheet maximum thermal design power (SXM5)

# --- Interconnects (per direction) --------------------------------------------------------------
# NVLink 4 on H100: 18 links x 25 GB/s per direction = 450 GB/s; "900 GB/s" is the bidirectional sum.
NVLINK4_BANDWIDTH = 450e9                # bytes/s per GPU, per direction
# InfiniBand NDR 400 Gb/s port (NVIDIA ConnectX-7): 400e9/8 = 50e9 bytes/s. The labs'
# IB_HDR200_BW_GBS = 400 mixes Gb/s and GB/s (8x too high).
IB_NDR400_BANDWIDTH = 50e9               # bytes/s per port
IB_HDR200_BANDWIDTH = 25e9               # bytes/s per port, HDR 200 Gb/s
# PCI-SIG: x16 Gen4 is 16 GT/s x 16 lanes x 128/130 ~ 32 GB/s per direction, Gen5 double that.
# The lab's "PCIe Gen4 50 GB/s" matches neither generation.
PCIE_GEN4_X16_BANDWIDTH = 32e9           # bytes/s per direction
PCIE_GEN5_X16_BANDWIDTH = 64e9           # bytes/s per direction
# Per-message latency (alpha) of the alpha-beta model: the labs' values, plausible for NCCL
# over each fabric (keep).
IB_ALPHA_S = 1.5e-6                      # s
NVLINK_ALPHA_S = 0.5e-6                  # s

# --- Nodes --------------------------------------------------------------------------------------
# NVIDIA DGX H100 user guide: 8 H100 SXM5 per node, one ConnectX-7 400 Gb/s NIC per GPU for the
# compute fabric.
GPUS_PER_DGX_H100 = 8
IB_NICS_PER_DGX_H100 = 8

# --- Time ---------------------------------------------------------------------------------------
HOURS_PER_YEAR = 8760                    # 365 x 24, the convention of cloud price sheets

# --- Training-memory convention ----------------------------------------------------------------
# Mixed-precision Adam model states: fp16 params (2) + fp16 grads (2) + fp32 master params,
# momentum and variance (4 + 4 + 4) = 16 bytes/param (Rajbhandari et al., ZeRO, SC'20, sec. 3).
ADAM_MIXED_PRECISION_BYTES_PER_PARAM = 16
FP16_BYTES = 2
