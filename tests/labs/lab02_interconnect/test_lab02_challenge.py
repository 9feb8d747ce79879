"""Lab 02's design challenge (labs/lab02_interconnect/challenges.py): a pipeline cut across the
story's slow links, measured with reference/interconnect.py; cuts of 2 and 4 stages get full marks
with enough micro-batches (8 and 16 send more activations across nodes than a model this small saves
in gradient), each violated constraint loses its share, malformed cuts score 0 with a reason."""
import pytest

from autograder.engine.challenges import design_source, grade_answer
from labs.lab02_interconnect import ASSIGNMENT
from labs.lab02_interconnect.scenario import (COMPUTE_S, GPUS, LINK_BW, MESSAGE_BYTES, STORY_LINKS, STORY_NODES,
                                     STORY_RATIO)
from labs.lab02_interconnect.challenges import BOUNDARY_BYTES, BUBBLE_CEILING, DP_BYTES_PER_SEQUENCE, LAB02_PIPELINE as C, measure, \
    valid_cuts
from reference import constants as K
from reference import interconnect as ref




def _cut(stages, microbatches) -> str:
    return design_source(C, dict(stages=stages, microbatches=microbatches))


def test_wired_into_the_lab_and_the_story_is_the_danger_state():
    assert ASSIGNMENT.challenges == [C] and C.id in ASSIGNMENT.item_ids
    assert STORY_RATIO > 1


def test_the_bubble_ceiling_is_lab05s():
    from labs.lab05_parallelism import ACT2
    assert BUBBLE_CEILING == ACT2["bubble_ceiling"]


def test_every_stage_count_has_right_answers():
    assert {p for p, _ in valid_cuts()} == {2, 4}
    assert (C.reference_answer["stages"], C.reference_answer["microbatches"]) == min(valid_cuts())


@pytest.mark.parametrize("cut", [(2, 12), (2, 14), (4, 27), (4, 32)])   # (4, 27): bubble 10 %
def test_several_cuts_get_full_marks(cut):
    grade = grade_answer(C, _cut(*cut))
    assert grade.score == C.points, grade.feedback


@pytest.mark.parametrize("cut, missed", [
    ((2, 11), [0]),                 # bubble 8.3 %, but half the gradient still crosses: 9.9x less traffic
    ((2, 8), [0, 1]),               # and a bubble of 11.1 %
    ((16, 135), [0]),               # only activations cross, 30 times a sequence: 4x less traffic
    ((16, 16), [0, 1, 2]),          # and the bubble alone is the danger state
    ((2, 15), [1]),                 # 25 % more micro-batches than the 12 that suffice at p = 2
    ((2, 512), [1]),                # every limit met, on a global batch 43 times what p = 2 needs
    ((4, 512), [1]),
])
def test_each_violated_constraint_loses_its_share(cut, missed):
    grade = grade_answer(C, _cut(*cut))
    assert grade.score == pytest.approx(C.points * (1 - len(missed) / len(C.constraints))), grade.feedback
    assert [i for i, line in enumerate(grade.feedback.splitlines()[1:]) if "MISSED" in line] == missed


def test_times_are_the_references():
    cut = measure(4, 32)
    sync = ref.hierarchical_allreduce_time(MESSAGE_BYTES / 4, GPUS, STORY_NODES // 4, K.NVLINK4_BANDWIDTH,
                                           STORY_LINKS * LINK_BW)
    assert cut["sync_s"] == sync and cut["ideal_s"] == pytest.approx(32 * COMPUTE_S / 4)
    assert cut["step_s"] > cut["ideal_s"] + sync
    # one node per stage: no gradient crosses a node, each sequence crosses 2 (p - 1) boundaries
    assert measure(16, 135)["bytes_per_sequence"] == pytest.approx(2 * 15 * BOUNDARY_BYTES)
    assert DP_BYTES_PER_SEQUENCE == pytest.approx(2 * 15 / 16 * MESSAGE_BYTES / GPUS)


@pytest.mark.parametrize("source, reason", [
    (_cut(1, 64), "plain data parallelism"),
    (_cut(3, 64), "does not split the 16 nodes"),
    (_cut(32, 64), "stages must be a whole number from 1 to 16"),
    (_cut(2.5, 9), "stages must be a whole number"),
    (_cut(4, 0), "microbatches must be a whole number from 1 to 512"),
    (_cut(4, 10 ** 9), "microbatches must be a whole number from 1 to 512"),
    (f"{C.id} = dict(stages=4, microbatches=[32])", "microbatches must be a number literal"),
    (f"{C.id} = 4", "not a literal dict of numbers"),
])
def test_malformed_cuts_score_zero_with_a_reason(source, reason):
    grade = grade_answer(C, source)
    assert grade.score == 0.0 and reason in grade.feedback, grade.feedback
