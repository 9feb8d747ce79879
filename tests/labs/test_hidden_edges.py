"""Hidden inputs that reach the edges (issue 31, kind 10): a function wrong only at the smallest counts
(n = 1, 2, 3), or only at a bound of its range (an empty message, no latency, a fraction of exactly 0
or 1, ZeRO stage 3), must fail the hidden check under nearly every student seed. Random draws alone
reached such a point under 5 to 9 of 12 seeds; the grader now draws every edge of each domain for
every student (autograder.engine.draw).

EDGES lists, per lab, the edges that matter to the physics (a single rank does nothing, two ranks are
the smallest ring, a fully busy fleet, ...): written here from the physics, not read from the domains.
"""
import inspect
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from autograder.classroom.samples import solved_dependencies, solved_module
from autograder.course import find_course
from autograder.engine.checks import seed_for
from autograder.engine.config import GradingConfig
from autograder.engine.draw import sample_inputs
from autograder.engine.grade import grade_submission
from autograder.engine.secret import CourseSecret
from labs import load

SECRET = CourseSecret(bytes.fromhex("0dd5eed5" * 8))
SEEDS = [f"student{i:02d}" for i in range(12)]
HIDDEN = GradingConfig().hidden_examples
EDGES = {
    "lab01_scale": {
        "training_time_s": {"n_gpus": [1, 2]},
        "data_parallel_speedup": {"n": [1, 2, 3], "alpha_s": [0.0], "grad_bytes": [0.0]},
        "scaling_efficiency": {"n": [1, 2, 3]},
        "on_demand_cost": {"utilization": [0.0, 1.0], "n_gpus": [1, 2], "years": [0.0]},
        "reserved_cost": {"discount": [0.0, 1.0], "n_gpus": [1, 2]},
        "on_prem_cost": {"utilization": [0.0, 1.0], "idle_power_fraction": [0.0, 1.0], "pue": [1.0], "n_gpus": [1, 2]},
        "breakeven_utilization": {"idle_power_fraction": [0.0], "staff_usd_per_gpu_year": [0.0], "pue": [1.0]},
    },
    "lab02_interconnect": {
        "gradient_bytes": {"params": [0.0], "bytes_per_value": [1, 2, 4]},
        "transfer_time": {"num_bytes": [0.0], "latency_s": [0.0]},
        "intra_node_allreduce_time": {"gpus": [1, 2, 3], "message_bytes": [0.0]},
        "hierarchical_allreduce_time": {"nodes": [1, 2, 3], "gpus_per_node": [1, 2, 3], "message_bytes": [0.0]},
        "comm_overhead_ratio": {"comm_s": [0.0]},
        "scaling_efficiency": {"n": [1, 2, 3]},
        "min_ib_links": {"gpus_per_node": [1, 2], "max_links": [1, 2]},
    },
    "lab05_parallelism": {
        "data_parallel_step_time": {"n_gpus": [1, 2, 3], "alpha_s": [0.0]},
        "effective_mfu": {"comm_s": [0.0], "base_mfu": [1.0]},
        "model_state_bytes_per_gpu": {"zero_stage": [0, 1, 2, 3], "dp": [1, 2, 3], "pp": [1, 2, 3], "tp": [1, 2]},
        "activation_bytes_per_layer": {"tp": [1, 2], "micro_batch": [1, 2], "seq_len": [1, 2]},
        "pipeline_bubble_fraction": {"p": [1, 2, 3], "m": [1, 2, 3], "v": [1, 2]},
        "tp_crosses_node": {"gpus_per_node": [1, 2]},
        "peak_memory_bytes_per_gpu": {"pp": [1, 2, 3], "microbatches": [1, 2], "zero_stage": [0, 3], "dp": [1, 2]},
    },
    "lab06_collectives": {
        "p2p_time": {"message_bytes": [0.0], "alpha_s": [0.0]},
        "naive_allreduce_time": {"n": [1, 2, 3], "message_bytes": [0.0], "alpha_s": [0.0]},
        "ring_allreduce_time": {"n": [1, 2, 3], "message_bytes": [0.0], "alpha_s": [0.0]},
        "tree_allreduce_time": {"n": [1, 2, 3], "message_bytes": [0.0]},
        "rabenseifner_allreduce_time": {"n": [1, 2, 4]},
        "ring_bytes_per_rank": {"n": [1, 2, 3], "message_bytes": [0.0]},
        "naive_master_bytes": {"n": [1, 2, 3]},
        "bus_bandwidth": {"n": [2, 3]},
        "ring_tree_crossover_bytes": {"n": [2, 3]},
        "best_allreduce_algorithm": {"n": [1, 2]},
        "compute_time": {"n_gpus": [1, 2], "mfu": [1.0]},
        "comm_fraction": {"comm_s": [0.0]},
    },
    "lab07_fault_tolerance": {
        "cluster_mtbf_s": {"n_gpus": [1, 2, 3]},
        "expected_failures": {"duration_s": [0.0]},
        "checkpoint_bytes": {"params": [0.0], "weight_bytes": [2.0, 4.0, 1.0, 0.0], "optimizer_bytes": [12.0, 0.0]},
        "checkpoint_write_time_s": {"n_nodes": [1, 2, 3], "checkpoint_bytes": [0.0]},
        "snapshot_stall_s": {"n_gpus": [1, 2, 3], "checkpoint_bytes": [0.0]},
        "young_daly_interval_s": {"checkpoint_s": [0.0]},
        "daly_interval_s": {"checkpoint_s": [0.0, 7200.0]},
        "waste_fraction": {"checkpoint_s": [0.0], "restart_s": [0.0]},
        "goodput": {"checkpoint_s": [0.0], "restart_s": [0.0]},
        "min_storage_bandwidth": {"max_overhead": [1.0], "checkpoint_bytes": [0.0]},
    },
    "lab09_performance": {
        "amdahl_speedup": {"fraction": [0.0, 1.0]},
        "amdahl_limit": {"fraction": [0.0]},
        "step_time_reduction": {"fraction": [0.0, 1.0]},
        "gustafson_speedup": {"n": [1, 2, 3], "serial_fraction": [0.0, 1.0]},
        "roofline_flops": {"intensity": [0.0]},
        "mfu": {"n_gpus": [1, 2]},
        "mfu_gain": {"fraction": [0.0], "base_mfu": [1.0]},
        "budget_left_weeks": {"budget_weeks": [0.0]},
    },
}
CASES = [(lab, name, param, value) for lab, items in EDGES.items() for name, params in items.items()
         for param, values in params.items() for value in values]


def _valid(assignment, name, kwargs) -> bool:
    try:
        getattr(assignment.reference, name)(**kwargs)
    except (ValueError, ArithmeticError):
        return False
    return True


@pytest.mark.parametrize("lab", sorted(EDGES))
def test_every_student_is_checked_at_every_edge(lab):
    """The hidden check's own inputs (the same draw, seed and secret the grader uses) hold a valid
    call at each listed edge, for each of 12 student seeds."""
    assignment = load(lab)
    missed = []
    for name, params in EDGES[lab].items():
        item = assignment.function(name)
        drawn = {student: [kw for kw in sample_inputs(item.domain, seed_for(lab, student, name, "hidden", SECRET),
                                                      item.hidden_examples or HIDDEN, edges=True)
                           if _valid(assignment, name, kw)] for student in SEEDS}
        for param, values in params.items():
            for value in values:
                hit = sum(any(kw.get(param) == value and type(kw.get(param)) is type(value) for kw in inputs)
                          for inputs in drawn.values())
                if hit < len(SEEDS):
                    missed.append(f"{name}({param}={value!r}): {hit} of {len(SEEDS)} students")
    assert not missed, missed


WRONG_AT_EDGE = [   # (lab, function, the student's slip: a body wrong only there)
    ("lab06_collectives", "ring_allreduce_time", "    if n == 2:\n        return 2 * (alpha_s + message_bytes / bandwidth)\n"),
    ("lab06_collectives", "tree_allreduce_time", "    if n == 3:\n        return 2 * (alpha_s + message_bytes / bandwidth)\n"),
    ("lab05_parallelism", "pipeline_bubble_fraction", "    if p == 2:\n        return 1 / (m + 1) / v\n"),
    ("lab01_scale", "on_demand_cost",
     "    if utilization == 1:\n        return n_gpus * years * 8760 * usd_per_gpu_hour * 0.9\n"),
    ("lab07_fault_tolerance", "snapshot_stall_s", "    if n_gpus == 2:\n        return checkpoint_bytes / copy_bandwidth\n"),
]


@pytest.mark.parametrize("lab, name, slip", WRONG_AT_EDGE, ids=[f"{c[1]}" for c in WRONG_AT_EDGE])
def test_a_function_wrong_only_at_an_edge_fails_the_hidden_check_for_every_student(tmp_path, lab, name, slip):
    full = load(lab)
    assignment = replace(full, functions=[full.function(name)],
                         misconceptions={k: v for k, v in full.misconceptions.items() if k == name})
    signature = ", ".join(inspect.signature(getattr(full.reference, name)).parameters)
    solved = solved_module(Path(full.reference.__file__).read_text(encoding="utf-8"))
    # the slip first, then the reference's own body: wrong only where the slip applies
    source = solved + f"\n\n_right_{name} = {name}\n\ndef {name}({signature}):\n{slip}" \
        f"    return _right_{name}({signature})\n"
    folder = Path(shutil.copytree(find_course(Path(__file__)) / "release" / lab, tmp_path / "s"))
    (folder / f"{full.module}.py").write_text(source)
    for dependency, text in solved_dependencies(full).items():
        (folder / dependency).write_text(text)
    passed = [student for student in SEEDS
              if next(t for t in grade_submission(assignment, folder, student, secret=SECRET).tests
                      if t.check == "hidden checks").score > 0]
    assert not passed, f"{name} wrong only at an edge passed the hidden check for {passed}"
