"""Lab 06 against the published record: the alpha-beta AllReduce at setups people measured.

Each row is a `Measurement` (autograder.engine.spec): the model's value is an expression over the
lab's reference functions at the measured setup; the published figure is quoted from its source.
docs/measurements.md shows every row; the rows marked notebook=True are the notebook's
model-vs-measurement element, computed there with the student's own functions.
"""
from __future__ import annotations

from autograder.engine.spec import Measurement, model
from reference import constants as C
from reference.cluster import ring_link

c = model("collectives")
GIB = 2**30
NODE = dict(alpha_s=C.NVLINK_ALPHA_S, bandwidth=C.NVLINK4_BANDWIDTH)   # one DGX H100 node: NVLink 4
NODE_GPUS, NODE_BYTES = C.GPUS_PER_DGX_H100, 4 * GIB                  # the one-node rows' setup
GB_S, US = (1e9, "GB/s"), (1e-6, "µs")


def busbw(message_bytes: float, n: int, link: dict):
    """nccl-tests' bus bandwidth of a ring AllReduce, as the model computes it."""
    time_s = c.ring_allreduce_time(message_bytes=message_bytes, n=n, **link)
    return c.bus_bandwidth(message_bytes=message_bytes, time_s=time_s, n=n)


RING_NODE = Measurement(
    id="ring_one_node", quantity="Ring bus bandwidth, 8 H100 in one DGX node",
    setup="nccl-tests all_reduce_perf, NCCL_ALGO=RING, 2-4 GiB, 2 to 8 GPUs of an H100 SXM node; the model at 8 "
          "GPUs and 4 GiB over NVLink 4 (450 GB/s per direction).",
    model=busbw(NODE_BYTES, NODE_GPUS, NODE), published=(365e9, 370e9), unit=GB_S,
    source="NVIDIA/nccl#1455", url="https://github.com/NVIDIA/nccl/issues/1455",
    quote="when using ALGO=RING, busbw is about 365-370 GBps when gpus from 2 to 8, about 80% of 450GBps(NVLink)",
    why="The model's B is NVLink's line rate, 18 links x 25 GB/s. A link carries about 20.6 GB/s of data (128-byte "
        "payloads plus packet headers; NCCL's own topology model uses 20.6 per link, src/graph/topo.h), so NCCL's "
        "maintainer: \"With the protocol overhead (~20%) NCCL can get an effective NVLink bandwidth of 370GB/s\" "
        "(nccl-tests#212). Latency is 0.03% of this time.",
    notebook=True)

NVLS_NODE = Measurement(
    id="nvls_one_node", quantity="Default (NVLink SHARP) bus bandwidth, 8 H100 in one DGX node",
    setup="nccl-tests all_reduce_perf with NCCL's default algorithm (NVLS) on 8 H100, large messages; the model is "
          "still the ring, 4 GiB over NVLink 4.",
    model=busbw(NODE_BYTES, NODE_GPUS, NODE), published=480e9, unit=GB_S,
    source="NVIDIA/nccl-tests#212", url="https://github.com/NVIDIA/nccl-tests/issues/212",
    quote="On 8 GPUs, you should reach a peak busBw of ~480GB/s (algbw ~275GB/s)",
    why="Above the 450 GB/s line rate, which no point-to-point algorithm can reach: the NVSwitch adds the data "
        "itself (in-switch reduction), so each GPU sends about M instead of 2(n-1)/n M and busbw is no longer a "
        "wire rate. The ring's 2(n-1)/n M is a lower bound only for algorithms built from point-to-point sends "
        "(nccl-tests doc/PERFORMANCE.md).",
    notebook=True)

TWO_NODES = Measurement(
    id="ring_two_nodes", quantity="Ring bus bandwidth across 2 H100 nodes, 8 NDR NICs each",
    setup="2 HGX H100 nodes, one 400 Gb/s CX7 NIC per GPU, NCCL_ALGO=RING, large messages; the model at 16 GPUs "
          "and 16 GiB on the cluster's ring link (cluster.ring_link: 8 x 50 GB/s per node).",
    model=busbw(16 * GIB, 16, ring_link(16)), published=396e9, unit=GB_S,
    source="NVIDIA/nccl-tests#319", url="https://github.com/NVIDIA/nccl-tests/issues/319",
    quote="You should achieve around 48GB/s from each CX7 NIC at 400Gbps. Then with NVLink based nodes that can "
          "be aggregated to achieve up to ~396GB/s with the RING protocol.",
    why="Agrees: NCCL runs one ring per NIC at once and 7 of every 8 hops stay on NVLink, so a node moves "
        "8 NICs' worth. The NICs deliver ~48 of their 50 GB/s line rate.")

FOUR_NODES = Measurement(
    id="ring_four_nodes", quantity="Bus bandwidth across 4 H100 nodes, 8 NDR NICs each",
    setup="4 HGX H100 nodes (32 GPU-NIC pairs, 400 Gb/s each), NCCL's default algorithm, up to 16 GiB; the "
          "model: a ring at 32 GPUs and 16 GiB on the cluster's ring link.",
    model=busbw(16 * GIB, 32, ring_link(32)), published=365.84e9, unit=GB_S,
    source="NVIDIA/nccl-tests#309", url="https://github.com/NVIDIA/nccl-tests/issues/309",
    quote="Then I run on 4 nodes on 32 GPU-NIC pairs with the following performance, max busbw can get "
          "365.84 GB/s.",
    why="The model uses the NICs' line rate (50 GB/s each) where they deliver 46-48 GB/s (nccl-tests#290: "
        "\"For NDR @ 400Gbps you should see 46-48GB/s per NIC\"), and this cluster's switches add their own losses.")

AT_SCALE = Measurement(
    id="at_scale", quantity="Bus bandwidth at scale, H100 nodes with 8 NDR NICs",
    setup="NVIDIA's NCCL AllReduce at 16 GB from 32 to 8K H100 (GTC24 S62129, quoted in NVIDIA/nccl#1649); the "
          "model: a ring at 1,024 GPUs (128 nodes) and 16 GiB on the cluster's ring link.",
    model=busbw(16 * GIB, 1024, ring_link(1024)), published=(370e9, 380e9), unit=GB_S,
    source="NVIDIA/nccl#1649", url="https://github.com/NVIDIA/nccl/issues/1649",
    quote="In the GTC 2024 presentation, it was mentioned that the Allreduce busBW for NVLS + Tree is "
          "approximately 370GB/s~380GB/s",
    why="Agrees within the NICs' efficiency (~96% of line rate). A flat ring at one NIC per GPU, the source lab's "
        "model, gives 50 GB/s here: 7x too slow.")

SMALL_MESSAGE = Measurement(
    id="small_message", quantity="Latency of a 4-byte AllReduce across 2 nodes of 8 GPUs",
    setup="2 nodes x 8 H20 (NVLink 4 inside, 16 CX7 NDR NICs), NCCL_ALGO=NVLSTree, 4 bytes; the model: a ring "
          "at 16 GPUs on the cluster's ring link, 4 bytes.",
    model=c.ring_allreduce_time(message_bytes=4, n=16, **ring_link(16)), published=47.54e-6, unit=US,
    source="NVIDIA/nccl#1244", url="https://github.com/NVIDIA/nccl/issues/1244",
    quote="4             1     float     sum    47.54    0.00    0.00  0e+00    49.35",
    why="The alpha-beta model has per-step latencies only. NCCL also pays a fixed cost per collective (kernel "
        "launch, synchronisation: 6.6-14 us in its own cost model, src/graph/tuning.cc baseLatencies) and this "
        "algorithm's switch and network stages (25 and 20.9 us in the same table).",
    effect="fixed cost per collective")

TREE_CHOICE = Measurement(
    id="tree_choice", quantity="Ring or tree for a 16 MiB AllReduce on 512 GPUs",
    setup="64 hosts x 8 H200, NCCL's own choice logged at 16 MiB; the model: best_allreduce_algorithm at 512 "
          "GPUs on the cluster's ring link.",
    model=c.best_allreduce_algorithm(message_bytes=16 * 2**20, n=512, **ring_link(512)), published="tree",
    unit=(1, ""),
    source="NVIDIA/nccl#1752", url="https://github.com/NVIDIA/nccl/issues/1752",
    quote="AllReduce: 16777216 Bytes -> Algo TREE proto LL128",
    why="The same pick, partly by luck: the model's tree is not pipelined (a teaching simplification), so it "
        "loses to the ring above ~22 MB here, while NCCL's pipelined trees still win at 32 MiB (\"33554432 Bytes "
        "-> Algo NVLS_TREE\" in the same log), where the model already picks the ring.")

MEASUREMENTS = (RING_NODE, NVLS_NODE, TWO_NODES, FOUR_NODES, AT_SCALE, SMALL_MESSAGE, TREE_CHOICE)
