"""reference/parallelism.py against independent published values (the checks of docs/physics.md,
Lab 05, and the papers' own worked numbers), hypothesis properties, and ValueErrors that name the
bad parameter."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from reference import collectives, constants as C, parallelism as ref

FEW = settings(max_examples=40, deadline=None)
GPT3 = dict(seq_len=2048, micro_batch=1, hidden=12288, heads=96)


# --- anchors -------------------------------------------------------------------------------------

def test_data_parallel_comm_matches_the_worked_example():
    # the project's worked example (not in nccl-tests): n=8, 1e9 B, 100e9 B/s, alpha=5 us -> 0.01757 s (no tokens).
    t = ref.data_parallel_step_time(5e8, 0.0, 8, C.H100_PEAK_FLOPS_BF16, 0.5, 100e9, 5e-6, bytes_per_grad=2)
    assert t == pytest.approx(0.01757, rel=1e-4)


def test_data_parallel_compute_is_6_n_d():
    # Chinchilla (Hoffmann et al. 2022): 70B params x 1.4T tokens = 5.88e23 FLOP; peak 1 FLOP/s,
    # MFU 1 on one GPU makes the step time equal to the FLOP count.
    t = ref.data_parallel_step_time(70e9, 1.4e12, 1, 1.0, 1.0, 1e12, 0.0)
    assert t == pytest.approx(5.88e23, rel=1e-12)


def test_effective_mfu_halves_when_comm_equals_compute():
    # The lab's MathPeek (correct): ratio 1 -> MFU_ref / 2 = 26%.
    assert ref.effective_mfu(0.52, 1.0, 1.0) == pytest.approx(0.26)


def test_zero_paper_example():
    # Rajbhandari et al. SC'20, Fig. 1: 7.5B params, N_d = 64 -> 120 / 31.4 / 16.6 / 1.9 GB.
    got = [ref.model_state_bytes_per_gpu(7.5e9, dp=64, zero_stage=s) / 1e9 for s in range(4)]
    assert got == pytest.approx([120.0, 31.40625, 16.640625, 1.875], rel=1e-12)
    assert [round(x, 1) for x in got] == [120.0, 31.4, 16.6, 1.9]


def test_korthikanti_gpt3_layer():
    # Korthikanti et al. 2022: s*b*h*(34 + 5as/h) = 2.869e9 bytes per GPT-3 layer at t = 1.
    assert ref.activation_bytes_per_layer(**GPT3, tp=1) == pytest.approx(2.869e9, rel=1e-3)
    # With t = 8: s*b*h*(10 + 24/8 + 5as/(8h)) = 2048 * 12288 * 23 bytes.
    assert ref.activation_bytes_per_layer(**GPT3, tp=8) == 2048 * 12288 * 23


def test_megatron_bubble():
    # Narayanan et al. SC'21 sec. 2.2: p = 8, m = 32 -> 0.21875 of the ideal, 0.17949 of the step;
    # v = 2 interleaved chunks halve the ideal-relative figure.
    b = ref.pipeline_bubble_fraction(8, 32)
    assert b == pytest.approx(0.17949, abs=1e-5)
    assert b / (1 - b) == pytest.approx(0.21875)
    b2 = ref.pipeline_bubble_fraction(8, 32, v=2)
    assert b2 / (1 - b2) == pytest.approx(0.21875 / 2)
    # The lab's default p = 4, m = 8: 27.3% of the step (the lab said 9.375%).
    assert ref.pipeline_bubble_fraction(4, 8) == pytest.approx(3 / 11)


def test_dgx_node_boundary():
    # DGX H100: 8 GPUs per node; TP = 8 stays on NVLink, TP = 9 crosses (analysis B10).
    assert ref.tp_crosses_node(8, C.GPUS_PER_DGX_H100) is False
    assert ref.tp_crosses_node(9, C.GPUS_PER_DGX_H100) is True


def test_exactly_full_fits():
    # Analysis B8: exactly 80 GB is not out of memory; the lab's 118.7 GB for TP=8, PP=4 is.
    # the H100's "80GB" written out, as the datasheet's binary 80 GiB (reference/constants.py): with the
    # capacity read from the constant, "exactly full" would be exactly full whatever the constant held
    assert C.H100_HBM_CAPACITY_BYTES == 80 * 2**30
    assert ref.fits_in_memory(80 * 2**30, 80 * 2**30) is True
    assert ref.fits_in_memory(80 * 2**30 + 1, 80 * 2**30) is False
    assert ref.fits_in_memory(118.7e9, 80 * 2**30) is False


def test_peak_memory_first_stage_holds_all_layers_with_1f1b():
    # Korthikanti et al. sec. 4.2.3: with 1F1B and m >= p the first stage stores p microbatches of
    # L/p layers, i.e. L layers' activations, whatever p is.
    per_layer = ref.activation_bytes_per_layer(**GPT3, tp=8)
    for pp in (1, 2, 4, 8, 16, 32):
        total = ref.peak_memory_bytes_per_gpu(175e9, 96, **GPT3, tp=8, pp=pp, dp=1, microbatches=192)
        states = ref.model_state_bytes_per_gpu(175e9, 1, 0, 8, pp)
        assert total - states == pytest.approx(96 * per_layer, rel=1e-12)


def test_act2_scenario_layouts():
    shape = dict(params=175e9, layers=96, **GPT3)
    # The lab's keyed TP=8, PP=4, DP=32 (m = 1536/32 = 48) is out of memory: 87.5 GB of states alone.
    lab = ref.peak_memory_bytes_per_gpu(**shape, tp=8, pp=4, dp=32, microbatches=48)
    assert ref.model_state_bytes_per_gpu(175e9, 32, 0, 8, 4) == pytest.approx(87.5e9)
    assert not ref.fits_in_memory(lab, 80e9)
    # TP=8, PP=16, DP=8 (m = 192): 21.875 GB of states + 96 layers x 578.8 MB = 77.4 GB.
    best = ref.peak_memory_bytes_per_gpu(**shape, tp=8, pp=16, dp=8, microbatches=192)
    assert best == pytest.approx(21.875e9 + 96 * 2048 * 12288 * 23)
    assert ref.fits_in_memory(best, 80e9)
    scenario = dict(params=175e9, layers=96, seq_len=2048, hidden=12288, heads=96, global_batch=1536,
                    n_gpus=1024, gpus_per_node=8, capacity_bytes=80e9, bubble_ceiling=0.10)
    assert ref.best_3d_config(**scenario) == "TP=8 PP=16 DP=8"
    # ZeRO-1 shards the optimizer states over DP: the lab's TP=8, PP=4 then fits (79.5 GB).
    assert ref.best_3d_config(**scenario, zero_stage=1) == "TP=8 PP=4 DP=32"
    assert ref.best_3d_config(**scenario, zero_stage=3) == "TP=8 PP=1 DP=128"
    assert ref.best_3d_config(**{**scenario, "bubble_ceiling": 0.01}) == "none"


def test_act1_headline_collapse():
    # 7B, 2^21 tokens per step, 52% MFU while computing, dense H100 peak; NVLink in a node, NDR past it.
    def mfu(n):
        bw, a = (C.NVLINK4_BANDWIDTH, C.NVLINK_ALPHA_S) if n <= 8 else (C.IB_NDR400_BANDWIDTH, C.IB_ALPHA_S)
        compute = collectives.compute_time(6 * 7e9 * 2 ** 21, n, C.H100_PEAK_FLOPS_BF16, 0.52)
        step = ref.data_parallel_step_time(7e9, 2.0 ** 21, n, C.H100_PEAK_FLOPS_BF16, 0.52, bw, a)
        return ref.effective_mfu(0.52, compute, step - compute)
    assert [round(100 * mfu(n), 1) for n in (8, 64, 512)] == [51.9, 43.1, 19.4]


# --- reference-only identities (the declared properties hold: tests/labs/test_labs.py, full marks) ---

@FEW
@given(params=st.floats(1e8, 1e12), tokens=st.floats(1e4, 1e8), n=st.integers(1, 4096),
       mfu=st.floats(0.05, 0.8), bw=st.floats(1e10, 1e12), alpha=st.floats(0, 1e-5), bpg=st.sampled_from([1, 2, 4]))
def test_step_time_is_compute_plus_ring(params, tokens, n, mfu, bw, alpha, bpg):
    peak = C.H100_PEAK_FLOPS_BF16
    parts = (collectives.compute_time(collectives.training_step_flops(params, tokens), n, peak, mfu)
             + collectives.ring_allreduce_time(params * bpg, n, alpha, bw))
    assert ref.data_parallel_step_time(params, tokens, n, peak, mfu, bw, alpha, bpg) == pytest.approx(parts, rel=1e-12)


@FEW
@given(params=st.floats(1e8, 1e12), n=st.integers(2, 4096), bw=st.floats(1e10, 1e12))
def test_comm_saturates_below_twice_the_gradient(params, n, bw):
    # With no tokens the step is the AllReduce alone: below 2 x gradient / bandwidth, rising with n.
    t = ref.data_parallel_step_time(params, 0.0, n, 1e15, 0.5, bw, 0.0)
    t_more = ref.data_parallel_step_time(params, 0.0, n + 1, 1e15, 0.5, bw, 0.0)
    assert t < 2 * params * 2 / bw and t_more > t


@FEW
@given(base=st.floats(0.05, 0.8), compute=st.floats(1e-3, 100), comm=st.floats(0, 100))
def test_effective_mfu_is_base_over_one_plus_ratio(base, compute, comm):
    assert ref.effective_mfu(base, compute, comm) == pytest.approx(base / (1 + comm / compute), rel=1e-12)


@FEW
@given(params=st.floats(1e8, 1e12), dp=st.integers(1, 1024), tp=st.sampled_from([1, 2, 4, 8]), pp=st.integers(1, 64))
def test_zero3_divides_everything_and_stage_terms(params, dp, tp, pp):
    psi = params / (tp * pp)
    assert ref.model_state_bytes_per_gpu(params, dp, 3, tp, pp) * dp * tp * pp == pytest.approx(16 * params)
    assert ref.model_state_bytes_per_gpu(params, dp, 1, tp, pp) == pytest.approx(4 * psi + 12 * psi / dp)
    assert ref.model_state_bytes_per_gpu(params, dp, 2, tp, pp) == pytest.approx(2 * psi + 14 * psi / dp)


@FEW
@given(s=st.sampled_from([512, 2048, 8192]), b=st.integers(1, 8), h=st.sampled_from([4096, 12288]),
       a=st.sampled_from([32, 96]), t=st.sampled_from([1, 2, 4, 8, 16]))
def test_activations_between_sequence_parallel_and_replicated(s, b, h, a, t):
    got = ref.activation_bytes_per_layer(s, b, h, a, t)
    full = s * b * h * (34 + 5 * a * s / h)
    assert full / t * (1 - 1e-12) <= got <= full * (1 + 1e-12)


@FEW
@given(p=st.integers(1, 128), m=st.integers(1, 1024), v=st.integers(1, 8))
def test_bubble_interleaving_and_depth(p, m, v):
    b = ref.pipeline_bubble_fraction(p, m, v)
    assert b <= ref.pipeline_bubble_fraction(p, m, 1)
    assert ref.pipeline_bubble_fraction(p + 1, m, v) > b
    assert ref.pipeline_bubble_fraction(p, 10 ** 9, v) < 1e-6 * p


@FEW
@given(tp=st.integers(1, 128), gpn=st.integers(1, 32))
def test_crosses_iff_bigger_than_node(tp, gpn):
    assert ref.tp_crosses_node(tp, gpn) is (tp > gpn)
    assert ref.tp_crosses_node(gpn, gpn) is False


@FEW
@given(pp=st.sampled_from([1, 2, 4, 8]), m=st.integers(1, 64), zero=st.integers(0, 3), dp=st.integers(1, 64))
def test_peak_memory_at_least_states_and_grows_with_m_until_pp(pp, m, zero, dp):
    kw = dict(params=20e9, layers=48, seq_len=2048, micro_batch=1, hidden=6144, heads=48, tp=4, pp=pp, dp=dp,
              zero_stage=zero)
    total = ref.peak_memory_bytes_per_gpu(**kw, microbatches=m)
    assert total > ref.model_state_bytes_per_gpu(20e9, dp, zero, 4, pp)
    more = ref.peak_memory_bytes_per_gpu(**kw, microbatches=m + 1)
    assert (more > total) if m < pp else more == total


def _brute_force_feasible(d):
    """Independent enumeration: every (tp, pp, dp, m, bubble) the scenario allows."""
    out = []
    for tp in (t for t in range(1, d["gpus_per_node"] + 1) if d["heads"] % t == 0 and d["n_gpus"] % t == 0):
        for pp in (p for p in range(1, d["layers"] + 1) if d["layers"] % p == 0 and d["n_gpus"] % (tp * p) == 0):
            dp = d["n_gpus"] // (tp * pp)
            if d["global_batch"] % (dp * d["micro_batch"]):
                continue
            m = d["global_batch"] // (dp * d["micro_batch"])
            mem = ref.peak_memory_bytes_per_gpu(d["params"], d["layers"], d["seq_len"], d["micro_batch"],
                                                d["hidden"], d["heads"], tp, pp, dp, m, d["zero_stage"])
            bubble = ref.pipeline_bubble_fraction(pp, m)
            if mem <= d["capacity_bytes"] and bubble <= d["bubble_ceiling"]:
                out.append((bubble, tp, pp, dp))
    return out


def test_best_config_is_optimal_over_its_domain():
    from labs.lab05_parallelism import ASSIGNMENT
    domain = ASSIGNMENT.function("best_3d_config").domain

    @settings(max_examples=40, deadline=None)
    @given(domain)
    def run(d):
        feasible = _brute_force_feasible(d)
        got = ref.best_3d_config(**d)
        if not feasible:
            assert got == "none"
        else:
            _, tp, pp, dp = min(feasible)
            assert got == f"TP={tp} PP={pp} DP={dp}"
    run()


# --- ValueError names the parameter ----------------------------------------------------------------

DP_OK = dict(params=7e9, tokens_per_step=2e6, n_gpus=8, peak_flops=989e12, mfu=0.5, bandwidth=450e9, alpha_s=0.0)
ACT2_OK = dict(params=175e9, layers=96, seq_len=2048, hidden=12288, heads=96, global_batch=1536, n_gpus=1024,
               gpus_per_node=8, capacity_bytes=80e9, bubble_ceiling=0.1)
PEAK_OK = dict(params=175e9, layers=96, seq_len=2048, micro_batch=1, hidden=12288, heads=96)

BAD = [   # NaN, infinities, negatives, bools, strings: tests/test_physics_contract.py
    (ref.data_parallel_step_time, DP_OK, "n_gpus", 0),
    (ref.data_parallel_step_time, DP_OK, "bandwidth", 0.0),
    (ref.data_parallel_step_time, DP_OK, "mfu", 1.5),
    (ref.data_parallel_step_time, DP_OK, "mfu", 0.0),
    (ref.effective_mfu, dict(base_mfu=0.5, compute_s=1.0, comm_s=1.0), "base_mfu", 52),
    (ref.model_state_bytes_per_gpu, dict(params=1e9), "dp", 0),
    (ref.model_state_bytes_per_gpu, dict(params=1e9), "zero_stage", 4),
    (ref.model_state_bytes_per_gpu, dict(params=1e9), "tp", 0),
    (ref.activation_bytes_per_layer, dict(GPT3), "heads", 0),
    (ref.activation_bytes_per_layer, dict(GPT3), "tp", 1.5),
    (ref.pipeline_bubble_fraction, dict(p=4, m=8), "p", 0),
    (ref.pipeline_bubble_fraction, dict(p=4, m=8), "m", 0),
    (ref.pipeline_bubble_fraction, dict(p=4, m=8), "v", 0),
    (ref.tp_crosses_node, dict(tp=8, gpus_per_node=8), "gpus_per_node", 0),
    (ref.peak_memory_bytes_per_gpu, PEAK_OK, "microbatches", 0),
    (ref.peak_memory_bytes_per_gpu, PEAK_OK, "pp", 0),
    (ref.best_3d_config, ACT2_OK, "bubble_ceiling", 10),
    (ref.best_3d_config, ACT2_OK, "n_gpus", 0),
    (ref.best_3d_config, ACT2_OK, "global_batch", 0.5),
]


@pytest.mark.parametrize("fn, ok, name, value", BAD, ids=lambda x: getattr(x, "__name__", None))
def test_value_error_names_parameter(fn, ok, name, value):
    fn(**ok)  # the valid call works
    with pytest.raises(ValueError, match=name):
        fn(**{**ok, name: value})


def test_both_times_zero_is_rejected():
    with pytest.raises(ValueError, match="compute_s"):
        ref.effective_mfu(0.5, 0.0, 0.0)
