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
# Datasheet: "80GB" of HBM3 at 3.35 TB/s (the labs' "HBM3e" is the H200's memory). The 80 GB are
# binary: 80 GiB (nvidia-smi on an "H100 80GB HBM3" reports 81,559 MiB; stas00/ml-engineering
# compute/accelerator/README.md: "the 80GiB H100-SXM comes with HBM3 at 3.35TBps").
H100_HBM_BANDWIDTH = 3.35e12             # bytes/s
H100_HBM_CAPACITY_BYTES = 80 * 2**30     # bytes (85.9e9)
H100_TDP_W = 700.0                       # W, datasheet maximum thermal design power (SXM5)

# --- Interconnects (per direction) --------------------------------------------------------------
# NVLink 4 on H100: 18 links x 25 GB/s per direction = 450 GB/s; "900 GB/s" is the bidirectional sum.
NVLINK4_BANDWIDTH = 450e9                # bytes/s per GPU, per direction
# InfiniBand NDR 400 Gb/s port (NVIDIA ConnectX-7): 400e9/8 = 50e9 bytes/s. The labs'
# IB_HDR200_BW_GBS = 400 mixes Gb/s and GB/s (8x too high).
IB_NDR400_BANDWIDTH = 50e9               # bytes/s per port
IB_HDR200_BANDWIDTH = 25e9               # bytes/s per port, HDR 200 Gb/s
# PCI-SIG: x16 Gen4 is 16 GT/s x 16 lanes x 128/130 (line coding) / 8 bits = 31.5e9 bytes/s per
# direction, Gen5 (32 GT/s) 63.0e9: line rates. Packet headers cost about a fifth more; measured
# Gen4 x16 peaks are ~25 GB/s (ZaidQureshi/bam#54: "it is measured peak"), NCCL's own topology
# model uses 24 (src/graph/topo.cc, width * speed / 80). The lab's "PCIe Gen4 50 GB/s" is neither.
PCIE_GEN4_X16_BANDWIDTH = 16e9 * 16 * 128 / 130 / 8   # bytes/s per direction (31.5e9)
PCIE_GEN5_X16_BANDWIDTH = 32e9 * 16 * 128 / 130 / 8   # bytes/s per direction (63.0e9)
# Per-step latency (alpha) of the alpha-beta model over each fabric: NCCL's own cost model,
# src/graph/tuning.cc hwLatencies, ring, LL protocol (NVLink 0.6 us, network 2.7 us per step;
# LL128 1.9 / 4.0, Simple 3.4 / 14). NCCL also charges a fixed cost per collective (kernel launch,
# synchronisation), baseLatencies: 6.6 us for a ring with LL (14 with LL128, 8.4 Simple), which
# the alpha-beta model has no term for: it matters only for small messages.
IB_ALPHA_S = 2.7e-6                      # s per network step
NVLINK_ALPHA_S = 0.6e-6                  # s per NVLink step
NCCL_RING_BASE_LATENCY_S = 6.6e-6        # s per collective, not in the alpha-beta model

# --- Nodes --------------------------------------------------------------------------------------
# NVIDIA DGX H100 user guide: 8 H100 SXM5 per node, one ConnectX-7 400 Gb/s NIC per GPU for the
# compute fabric (stas00/ml-engineering network/README.md: "One configuration of NVIDIA DGX H100
# comes with 8x NVIDIA ConnectX-7 (CX7) Ethernet/InfiniBand ports each of 400Gbps"). How a ring
# across such nodes uses them: reference/cluster.py.
GPUS_PER_DGX_H100 = 8
IB_NICS_PER_DGX_H100 = 8

# --- Time ---------------------------------------------------------------------------------------
HOURS_PER_YEAR = 8760                    # 365 x 24, the convention of cloud price sheets

# --- Training-memory convention ----------------------------------------------------------------
# Mixed-precision Adam model states: fp16 params (2) + fp16 grads (2) + fp32 master params,
# momentum and variance (4 + 4 + 4) = 16 bytes/param (Rajbhandari et al., ZeRO, SC'20, sec. 3).
ADAM_MIXED_PRECISION_BYTES_PER_PARAM = 16
FP16_BYTES = 2
