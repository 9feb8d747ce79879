"""What only Lab 05 expects of its scenario and questions: Act II's options each fail for their own
reason, no give-away before Act I's prediction, options of comparable length with explanations, and
the demo class's design-challenge answers score what they wrote."""
from __future__ import annotations

import tomllib

import pytest

from autograder.engine.challenges import answer_line, grade_answer
from autograder.engine.spec import Markdown
from labs import lab_folder
from labs.lab05_parallelism import ASSIGNMENT as A
from labs.lab05_parallelism import scenario as S


def test_act2_options_exactly_one_feasible_and_it_is_the_enumerated_best():
    q = A.question("act2_prediction")
    assert q.options[q.key].startswith(S.BEST.replace(" PP", ", PP").replace(" DP", ", DP"))
    assert [lay["config"] for lay in S.ACT2_LAYOUTS if lay["feasible"]] == [S.BEST]
    # each wrong option fails for its own reason: TP across nodes, out of memory, bubble + memory
    reasons = {(lay["crosses"], lay["fits"], lay["bubble"] <= S.ACT2["bubble_ceiling"])
               for lay in S.ACT2_LAYOUTS if not lay["feasible"]}
    assert len(reasons) == 3
    assert "TP=8, PP=4, DP=32" in " ".join(q.options.values()) and not S.LAB_LAYOUT["fits"]  # the lab's key, OOM


def test_act1_story_states_the_measurements_but_not_the_cause():
    """The idle-GPU cost ("waiting on the network") names Act I's key: never in the notebook's text, only
    in the reflection's takeaway, shown with its grade."""
    story = A.notebook[0].text
    for mfu in (S.MFU8, S.MFU64, S.MFU512):
        assert f"{mfu:.1%}" in story
    idle = f"{S.IDLE_USD_PER_DAY:,.0f}"
    assert not any(isinstance(c, Markdown) and idle in c.text for c in A.notebook)
    assert idle in A.question("act1_reflection").takeaway and "network" not in story
    # dollar signs escaped, so JupyterLab renders no $...$ pair as LaTeX
    for cell in A.notebook:
        if isinstance(cell, Markdown):
            assert "$" not in cell.text.replace("\\$", ""), cell.text[:80]


@pytest.mark.parametrize("q", A.questions, ids=lambda q: q.id)
def test_options_comparable_and_each_explained(q):
    lengths = {letter: len(text) for letter, text in q.options.items()}
    assert max(lengths.values()) <= 1.6 * min(lengths.values()), lengths
    assert set(q.why) == set(q.options) and all(q.why.values())


def test_the_key_is_not_always_the_longest_option():
    longest = [q.key == max(q.options, key=lambda k: len(q.options[k])) for q in A.questions]
    assert not all(longest)


def test_demo_class_design_answers_score_what_they_wrote():
    """correct: TP=8 PP=32 (valid, not the reference's layout); partly_wrong: the source lab's TP=8
    PP=4, out of memory (2 of 3); wrong_predictions: TP as text (0); broken, untouched: unanswered."""
    challenge = A.challenges[0]
    declared = tomllib.loads((lab_folder(A.id) / "samples.toml").read_text())
    share = {"correct": 1, "partly_wrong": 2 / 3, "wrong_predictions": 0, "broken": 0, "untouched": 0}
    assert set(share) == set(declared)
    for student, fraction in share.items():
        answer = declared[student].get("answers", {}).get(challenge.id)
        grade = grade_answer(challenge, answer["source"] if answer else answer_line(challenge))
        assert grade.score == pytest.approx(fraction * challenge.points), (student, grade.feedback)


def test_act1_fits_in_memory_at_every_gpu_count_it_draws():
    """Issue 43: Act I named the model states only. Each GPU also keeps one sequence's activations
    (Korthikanti et al. 2022, micro-batches of one sequence); with ZeRO-1 the 7B model fits an H100 at every
    cluster size the story and the instrument show, and the story names that memory."""
    from reference.constants import H100_HBM_CAPACITY_BYTES as capacity
    from reference.parallelism import peak_memory_bytes_per_gpu

    shape = getattr(S, "ACT1_SHAPE", dict(layers=32, hidden=4096, heads=32))   # Llama 2 7B

    def memory(n):
        return peak_memory_bytes_per_gpu(S.ACT1["params"], seq_len=S.SEQ_LEN, micro_batch=1, dp=n,
                                         zero_stage=S.ACT1_ZERO_STAGE, **shape)
    for n in (*S.ACT1_GPUS, *S.CURVE_GPUS):
        assert memory(n) <= capacity, f"{n} GPUs: {memory(n) / 1e9:.1f} GB per GPU"
    story = " ".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert f"{memory(S.N_SMALL) / 1e9:.1f} GB" in story
