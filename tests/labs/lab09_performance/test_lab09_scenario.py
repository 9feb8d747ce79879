"""What only Lab 09 expects of its scenario and notebook: the keys say what the physics says, the story
corrects the source lab's numbers, the failure state is reached, and the Act II instrument's levers are
the design challenge's cost model (the notebook cannot import it, so the two are compared here)."""
from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path

import jupytext
import pytest

from labs.lab09_performance import questions as Q
from labs.lab09_performance import scenario as S
from labs.lab09_performance.challenges import COMPRESSION_RANGE, lever_costs, lever_factors
from reference import performance as ref

NOTEBOOK = Path(S.__file__).with_name("notebook.py")


def test_keys_say_what_the_physics_says():
    lo, hi = S.A1_RANGES[["A", "B", "C", "D"].index(Q.ACT1_PREDICTION.key)]
    assert lo <= ref.step_time_reduction(0.12, 3.0) < hi
    assert Q.ACT1_PREDICTION.options[Q.ACT1_PREDICTION.key].startswith("Between 5 % and 10 %")
    assert "pipeline bubble" in Q.ACT2_PREDICTION.options[Q.ACT2_PREDICTION.key] and S.BEST == "pipeline_bubble"
    assert Q.ACT1_REFLECTION.options[Q.ACT1_REFLECTION.key].startswith("Profile")


def test_story_corrects_the_lab_and_reaches_the_failure_state():
    # the 8 % is a step-time cut; +8.7 % the throughput; 13.6 % only the ceiling; ~34 points does not exist
    assert round(S.A1_TIME_CUT, 3) == 0.08 and round(S.A1_SPEEDUP - 1, 3) == 0.087
    assert round(S.A1_CEILING - 1, 3) == 0.136
    assert round(100 * S.GAINS["pipeline_bubble"], 1) == 2.8
    assert round(S.BASE_MFU, 3) == 0.350 and S.PLAN_LEFT < 0


def test_every_option_is_explained_and_no_key_is_the_conspicuously_long_one():
    for q in Q.QUESTIONS:
        assert set(q.why) == set(q.options) and all(q.why.values()), q.id
        lengths = {letter: len(text) for letter, text in q.options.items()}
        assert max(lengths.values()) <= 1.6 * min(lengths.values()), (q.id, lengths)
    assert any(len(q.options[q.key]) < max(map(len, q.options.values())) for q in Q.QUESTIONS)


def test_nothing_before_the_act2_prediction_names_the_best_fix_as_the_answer():
    """The give-away of issue 14: the Act II reflection asked why the pipeline-bubble fix is the best
    return, readable above the Act II prediction. No prompt or option text may say which fix wins."""
    for q in (Q.ACT1_PREDICTION, Q.ACT1_REFLECTION, Q.ACT2_REFLECTION):
        for text in (q.prompt, *q.options.values()):
            assert "bubble" not in text.lower() and "pipeline" not in text.lower(), (q.id, text)


def _lever_plan():
    """The notebook's `lever_plan`, compiled alone with the setup values it reads."""
    tree = ast.parse(next(c.source for c in jupytext.read(NOTEBOOK).cells if "def lever_plan" in c.source))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "lever_plan")
    namespace = dict(math=math, microbatches_base=S.MICRO_BATCHES_BASE, prefetch_base=S.PREFETCH_BASE,
                     lever_weeks=S.LEVER_WEEKS)
    exec(compile(ast.Module([node], []), str(NOTEBOOK), "exec"), namespace)
    return namespace["lever_plan"]


def test_the_act2_instrument_uses_the_challenges_cost_model():
    lever_plan = _lever_plan()
    compressions = [COMPRESSION_RANGE[0] + S.COMPRESSION_STEP * i for i in range(7)]
    for levers in itertools.product(range(1, 33), compressions, range(1, 17)):
        plan_factors, plan_costs = lever_plan(*levers)
        assert plan_factors == pytest.approx(lever_factors(*levers)) and plan_costs == pytest.approx(lever_costs(*levers)), levers


def test_the_mfu_the_story_says_others_reach_is_the_published_record():
    """Issue 43: the lead said "Industry leaders reach 50-60 % MFU at this scale" (the source lab's figure);
    the record the course cites tops out below that (Llama 3 405B: 41 % on 16,384 H100s; Megatron-LM's
    GPT-3: 47 % on 96 H100s; PaLM: 46.2 %, docs/measurements.md). Every MFU range the story says others reach
    must lie within the published record."""
    import re

    from autograder.engine.spec import Markdown
    from labs.lab01_scale.measurements import LLAMA_MFU
    from labs.lab05_parallelism.measurements import MEGATRON_BASE_MFU
    from labs.lab09_performance import ASSIGNMENT

    best = max(LLAMA_MFU, MEGATRON_BASE_MFU, 0.462)
    story = " ".join(c.text for c in ASSIGNMENT.notebook if isinstance(c, Markdown))
    claims = re.findall(r"reach (\d+(?:\.\d+)?)\s*[-–]\s*(\d+(?:\.\d+)?) ?% MFU", story)
    assert claims, "the story no longer says what others reach"
    for low, high in claims:
        assert float(high) / 100 <= best + 1e-9, f"the story says others reach {low}-{high} % MFU"
