"""Decision rules at their exact thresholds (issue 31, kind 1), every lab that decides.

Each reference function that decides (a tie, a budget met exactly, memory exactly full, a target met
exactly) is pinned at the boundary its docstring documents, with values exact in binary so every
correct formula lands on the boundary itself, and expected answers written here from the docstring.
Then the grader's side: a student who flips the boundary (< for <=, the last of a tie for the first)
fails the hidden check under every student seed, because each lab's hidden domain carries these
boundaries as anchors (labs.authoring.anchored) and every anchor is drawn for every student.
"""
import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from autograder.classroom.samples import solved_dependencies, solved_module
from autograder.course import find_course
from autograder.engine.grade import grade_submission
from autograder.engine.secret import CourseSecret
from labs import load
from reference import collectives, fault_tolerance, interconnect, parallelism, performance, scaling
from reference.cluster import ring_link

SECRET = CourseSecret(bytes.fromhex("b0da5eed" * 8))
STUDENTS = ("ann", "ben", "cam", "dee")
THIRDS = {"compute": 0.5, "allreduce": 0.25, "data_loading": 0.25}


# --- the reference at each documented boundary ---------------------------------------------------------

def test_lab01_breakeven_is_infinite_exactly_when_the_price_only_covers_the_energy():
    # a busy GPU's energy: 1 kW x PUE 1 x 0.5 USD/kWh = 0.5 USD an hour; "math.inf when the hourly price
    # does not cover the marginal energy (the denominator is <= 0)": at 0.5 exactly, never pays off
    plant = dict(capex_per_gpu=30_000.0, watts_per_gpu=1000.0, pue=1.0, usd_per_kwh=0.5, staff_usd_per_gpu_year=0.0)
    assert scaling.breakeven_utilization(3.0, 0.5, **plant) == math.inf
    assert scaling.breakeven_utilization(3.0, 0.25, **plant) == math.inf
    # one cent over the energy: 30,000 USD over 3 years x 8,760 h x 0.01 USD = 114.2 (> 1: not in 3 years)
    assert scaling.breakeven_utilization(3.0, 0.51, **plant) == pytest.approx(30_000 / (3 * 8760 * 0.01))


def test_lab01_cheapest_option_breaks_a_tie_in_its_documented_order():
    """"A tie goes to the earlier of that order": on_demand, reserved, on_prem."""
    idle_plant = dict(capex_per_gpu=1e6, watts_per_gpu=0.0, pue=1.0, usd_per_kwh=0.0, staff_usd_per_gpu_year=0.0)
    # on-demand 8,760 x 2 x 0.75 = 13,140 = reserved at 25 % off; on-prem 1M
    assert scaling.cheapest_option(1, 1.0, 0.75, 2.0, 0.25, **idle_plant) == "on_demand"
    # reserved 8,760 x 0.5 = 4,380 = on-prem's 4,380 of capex (no energy, no staff); on-demand 8,760
    assert scaling.cheapest_option(1, 1.0, 1.0, 1.0, 0.5, **{**idle_plant, "capex_per_gpu": 4380.0}) == "reserved"
    # on-demand at half use 4,380 = on-prem; reserved at no discount 8,760
    assert scaling.cheapest_option(1, 1.0, 0.5, 1.0, 0.0, **{**idle_plant, "capex_per_gpu": 4380.0}) == "on_demand"
    # a dollar less of capex and on-prem wins
    assert scaling.cheapest_option(1, 1.0, 0.5, 1.0, 0.0, **{**idle_plant, "capex_per_gpu": 4379.0}) == "on_prem"


def test_lab02_min_ib_links_meets_a_target_met_exactly():
    """"the fewest links for which ... comm_overhead_ratio <= max_overhead_ratio": two nodes of one GPU,
    1 GiB over one 1 GiB/s link is 1 s of communication against 1 s of compute, a ratio of exactly 1."""
    exact = dict(message_bytes=2.0 ** 30, gpus_per_node=1, nodes=2, intra_bandwidth=2.0 ** 40,
                 link_bandwidth=2.0 ** 30, compute_s=1.0)
    assert interconnect.hierarchical_allreduce_time(2.0 ** 30, 1, 2, 2.0 ** 40, 2.0 ** 30) == 1.0
    assert interconnect.min_ib_links(**exact, max_overhead_ratio=1.0) == 1
    assert interconnect.min_ib_links(**exact, max_overhead_ratio=0.5) == 2      # 2 links: exactly 0.5
    assert interconnect.min_ib_links(**exact, max_overhead_ratio=0.4999) == 3
    assert interconnect.min_ib_links(**exact, max_overhead_ratio=0.1, max_links=8) == 0   # 8 links: 0.125


def test_lab05_exactly_full_fits_and_a_node_sized_tp_group_stays():
    assert parallelism.fits_in_memory(80e9, 80e9) is True       # "exactly full still fits"
    assert parallelism.fits_in_memory(80e9 + 1, 80e9) is False
    assert parallelism.fits_in_memory(0.0, 0.0) is True
    assert parallelism.tp_crosses_node(8, 8) is False           # "tp > gpus_per_node"
    assert parallelism.tp_crosses_node(9, 8) is True
    assert parallelism.tp_crosses_node(1, 1) is False


def test_lab05_a_bubble_exactly_at_the_ceiling_is_feasible():
    """"the bubble pipeline_bubble_fraction(pp, m) <= bubble_ceiling": GPT-3 on 1,024 H100s, the best
    layout TP=8 PP=16 DP=8 has m = 1536 / 8 = 192 microbatches and a bubble of 15 / 207."""
    scenario = dict(params=175e9, layers=96, seq_len=2048, hidden=12288, heads=96, global_batch=1536,
                    n_gpus=1024, gpus_per_node=8, capacity_bytes=80e9)
    assert parallelism.pipeline_bubble_fraction(16, 192) == 15 / 207
    assert parallelism.best_3d_config(**scenario, bubble_ceiling=15 / 207) == "TP=8 PP=16 DP=8"
    assert parallelism.best_3d_config(**scenario, bubble_ceiling=math.nextafter(15 / 207, 0)) != "TP=8 PP=16 DP=8"


def test_lab06_a_tie_of_ring_and_tree_is_ring():
    """"a tie is "ring"": an empty message on 1 or 2 ranks (both 2(n-1) alpha, tree 2 ceil(log2 n) alpha),
    one rank (both 0), or no latency and no message."""
    link = dict(alpha_s=1.5e-6, bandwidth=5e10)
    assert collectives.best_allreduce_algorithm(0.0, 1, **link) == "ring"
    assert collectives.best_allreduce_algorithm(0.0, 2, **link) == "ring"
    assert collectives.best_allreduce_algorithm(1e6, 1, **link) == "ring"
    assert collectives.best_allreduce_algorithm(0.0, 128, 0.0, 5e10) == "ring"
    assert collectives.best_allreduce_algorithm(0.0, 128, **link) == "tree"      # 7 latency steps beat 127


def test_lab06_communication_equal_to_compute_is_exactly_half_the_step():
    """The failure state is communication "above half the step": equal times sit exactly on it."""
    assert collectives.comm_fraction(2.5, 2.5) == 0.5
    assert collectives.comm_fraction(0.0, 3.0) == 0.0 and collectives.comm_fraction(3.0, 0.0) == 1.0


def test_lab09_a_fix_costing_exactly_the_budget_is_affordable():
    """"A fix is affordable when its cost <= budget_weeks"; "the first in factors' order on a tie";
    "none" when no affordable fix gains anything."""
    # 8x data loading: 1 / (0.75 + 0.25 / 8) = 1.28, 0.28 / 2 weeks = 0.14 a week; 1.25x AllReduce: 0.0526
    assert performance.best_fix(THIRDS, {"allreduce": 1.25, "data_loading": 8.0},
                                {"allreduce": 1.0, "data_loading": 2.0}, 2.0) == "data_loading"
    assert performance.best_fix(THIRDS, {"allreduce": 1.25, "data_loading": 8.0},
                                {"allreduce": 1.0, "data_loading": 2.0}, 1.999) == "allreduce"
    assert performance.best_fix(THIRDS, {"data_loading": 2.0, "allreduce": 2.0},
                                {"data_loading": 1.0, "allreduce": 1.0}, 4.0) == "data_loading"
    assert performance.best_fix(THIRDS, {"allreduce": 2.0, "data_loading": 2.0},
                                {"allreduce": 1.0, "data_loading": 1.0}, 4.0) == "allreduce"
    assert performance.best_fix(THIRDS, {"compute": 1.0}, {"compute": 1.0}, 2.0) == "none"


def test_lab09_a_tie_for_the_hotspot_is_the_first_named_and_a_plan_at_budget_leaves_zero():
    assert performance.hotspot({"compute": 0.375, "allreduce": 0.375, "data_loading": 0.25}) == "compute"
    assert performance.hotspot({"data_loading": 0.25, "allreduce": 0.375, "compute": 0.375}) == "allreduce"
    assert performance.budget_left_weeks({"pipeline": 2.5, "allreduce": 5.5}, 8.0) == 0.0
    assert performance.budget_left_weeks({"pipeline": 2.5, "allreduce": 5.75}, 8.0) == -0.25


def test_lab07_daly_switches_to_the_mtbf_at_a_checkpoint_of_exactly_two_mtbfs():
    """"sqrt(2CM) (1 + sqrt(x)/3 + x/9) - C while C < 2M, and M itself beyond": C = 2M is beyond."""
    assert fault_tolerance.daly_interval_s(7200.0, 3600.0) == 3600.0
    assert fault_tolerance.daly_interval_s(2.0, 1.0) == 1.0
    # a hair below, the series: at x = 1 it is 2 (1 + 1/3 + 1/9) - 2 = 8/9 of the MTBF, not the MTBF
    below = fault_tolerance.daly_interval_s(2.0 - 2 ** -51, 1.0)
    assert below == pytest.approx(8 / 9, rel=1e-12)
    assert fault_tolerance.daly_interval_s(0.0, 3600.0) == 0.0


def test_a_ring_that_fills_exactly_one_node_stays_on_nvlink():
    """cluster.ring_link: "One node (n <= g) is NVLink alone": 8 GPUs on an 8-GPU DGX H100 never touch a
    NIC (NVLink 4: 450 GB/s, 0.6 us a step); a ninth GPU crosses to a second node: the node's 8 NICs of
    50 GB/s, and 2 of the ring's 16 steps pay the network's 2.7 us (the datasheets and NCCL's
    tuning.cc, written out here, not read from reference.constants)."""
    nvlink = {"alpha_s": 0.6e-6, "bandwidth": 450e9}
    assert ring_link(8) == nvlink and ring_link(1) == nvlink
    assert ring_link(4, gpus_per_node=4) == nvlink
    nine = ring_link(9)
    assert nine["bandwidth"] == 400e9
    assert nine["alpha_s"] == pytest.approx((2 * 2.7e-6 + 14 * 0.6e-6) / 16, rel=1e-12)
    assert ring_link(5, gpus_per_node=4)["bandwidth"] == 400e9
    # one GPU per node: the NICs it is given, every step on the network
    one_per_node = ring_link(4, gpus_per_node=1, nics_per_node=2)
    assert one_per_node["bandwidth"] == 100e9 and one_per_node["alpha_s"] == pytest.approx(2.7e-6, rel=1e-12)


# --- the grader catches a student who flips the boundary ---------------------------------------------

SLIPS = [   # (lab, function, the reference's line, the student's)
    ("lab06_collectives", "best_allreduce_algorithm", 'return "ring" if ring <= tree else "tree"',
     'return "ring" if ring < tree else "tree"'),
    ("lab05_parallelism", "fits_in_memory", "return bytes_needed <= capacity_bytes", "return bytes_needed < capacity_bytes"),
    ("lab05_parallelism", "tp_crosses_node", "return tp > gpus_per_node", "return tp >= gpus_per_node"),
    ("lab02_interconnect", "min_ib_links", "if comm_overhead_ratio(comm_s, compute_s) <= max_overhead_ratio:",
     "if comm_overhead_ratio(comm_s, compute_s) < max_overhead_ratio:"),
    ("lab09_performance", "best_fix", "if cost_weeks[name] > budget_weeks:", "if cost_weeks[name] >= budget_weeks:"),
    ("lab09_performance", "best_fix", "if rate > best_rate:", "if rate >= best_rate:"),
    ("lab09_performance", "hotspot", "return max(profile, key=profile.get)",
     "return max(reversed(list(profile)), key=profile.get)"),
    ("lab01_scale", "cheapest_option", "return min(costs, key=costs.get)",
     "return min(reversed(list(costs)), key=costs.get)"),
    ("lab01_scale", "breakeven_utilization", "if margin_usd_per_hour <= 0:", "if margin_usd_per_hour < 0:"),
    ("lab07_fault_tolerance", "daly_interval_s", "if checkpoint_s >= 2 * mtbf_s:", "if checkpoint_s > 2 * mtbf_s:"),
]


@pytest.mark.parametrize("lab, name, right, slip", SLIPS, ids=[f"{s[1]}: {s[3]}" for s in SLIPS])
def test_a_boundary_slip_fails_the_hidden_check_for_every_student(tmp_path, lab, name, right, slip):
    full = load(lab)
    assignment = replace(full, functions=[full.function(name)],
                         misconceptions={k: v for k, v in full.misconceptions.items() if k == name})
    solved = solved_module(Path(full.reference.__file__).read_text(encoding="utf-8"))
    assert solved.count(right) == 1, right
    folder = Path(shutil.copytree(find_course(Path(__file__)) / "release" / lab, tmp_path / "slip"))
    (folder / f"{full.module}.py").write_text(solved.replace(right, slip))
    for dependency, text in solved_dependencies(full).items():
        (folder / dependency).write_text(text)
    hidden = {student: next(t for t in grade_submission(assignment, folder, student, secret=SECRET).tests
                            if t.check == "hidden checks") for student in STUDENTS}
    passed = [student for student, t in hidden.items() if t.score > 0]
    assert not passed, f"{name} with {slip!r} passed the hidden check for {passed}"
