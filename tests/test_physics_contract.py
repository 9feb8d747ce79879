"""The physics contract of docs/physics.md holds in reference/ and in every declaration: each listed
function exists in its lab's module with exactly the parameter names and order the page gives and is
a graded item of that lab; each lab grades only functions the page lists; the constants have the
page's values. Parsed from the page itself (tests/physics_doc.py), not restated here. That every
parameter rejects what is no quantity, naming itself, is the contract rule of `scalelabs lint`
(tests/labs/test_labs.py runs it on every lab)."""
from __future__ import annotations

import importlib
import inspect
import math

import pytest

import reference.constants
from labs import all_assignments
from physics_doc import constants, functions

REQUIRED = functions()
LABS = {a.module: a for a in all_assignments().values()}


def test_the_contract_was_parsed():
    assert {f.module for f in REQUIRED} == set(LABS), "docs/physics.md has no section for some declared lab"
    assert len(REQUIRED) >= sum(len(a.functions) for a in LABS.values())
    assert len({(f.module, f.name) for f in REQUIRED}) == len(REQUIRED), "a function is listed twice"


@pytest.mark.parametrize("f", REQUIRED, ids=[f"{f.module}.{f.name}" for f in REQUIRED])
def test_reference_has_the_documented_signature(f):
    function = getattr(importlib.import_module(f"reference.{f.module}"), f.name, None)
    assert callable(function), f"reference/{f.module}.py lacks {f.name}"
    parameters = inspect.signature(function).parameters
    actual = tuple(parameters)
    assert actual[: len(f.params)] == f.params, f"{f.name}{actual}: docs/physics.md says {f.params}"
    assert all(parameters[p].default is not inspect.Parameter.empty for p in actual[len(f.params):]), \
        "parameters beyond the documented ones must be optional"


@pytest.mark.parametrize("f", REQUIRED, ids=[f"{f.module}.{f.name}" for f in REQUIRED])
def test_documented_function_is_a_graded_item(f):
    assert f.module in LABS, f"no lab edits {f.module}.py"
    graded = {item.name: item.points for item in LABS[f.module].functions}
    assert graded.get(f.name, 0) > 0, f"{f.name} is not a graded item of {LABS[f.module].id}"


@pytest.mark.parametrize("module", sorted(LABS))
def test_every_graded_function_is_documented(module):
    documented = {f.name for f in REQUIRED if f.module == module}
    undocumented = [item.name for item in LABS[module].functions if item.name not in documented]
    assert not undocumented, f"{LABS[module].id} grades {undocumented}, which docs/physics.md does not list"


def test_constants_have_the_documented_values():
    documented = constants()
    defined = {n: v for n, v in vars(reference.constants).items() if n.isupper()}
    assert set(documented) == set(defined), "docs/physics.md and reference/constants.py list different constants"
    wrong = {n: (documented[n], defined[n]) for n in documented if not math.isclose(documented[n], defined[n])}
    assert not wrong, f"(documented, defined): {wrong}"


INFINITE = [   # (module, function, a valid call, a quantity that may be zero but must be finite)
    ("collectives", "p2p_time", dict(message_bytes=1e6, alpha_s=1e-6, bandwidth=1e9), "message_bytes"),
    ("collectives", "ring_allreduce_time", dict(message_bytes=1e6, n=4, alpha_s=1e-6, bandwidth=1e9), "alpha_s"),
    ("interconnect", "gradient_bytes", dict(params=1e9), "params"),
    ("parallelism", "fits_in_memory", dict(bytes_needed=1.0, capacity_bytes=2.0), "capacity_bytes"),
    ("fault_tolerance", "expected_failures", dict(duration_s=10.0, mtbf_s=5.0), "duration_s"),
    ("scaling", "on_demand_cost", dict(n_gpus=1, years=1.0, usd_per_gpu_hour=2.0, utilization=0.5), "years"),
    ("performance", "budget_left_weeks", dict(cost_weeks={"kernels": 1.0}, budget_weeks=2.0), "budget_weeks"),
]


@pytest.mark.parametrize("module, name, ok, arg", INFINITE, ids=[f"{m}.{n}:{a}" for m, n, _, a in INFINITE])
def test_an_infinite_quantity_is_refused_by_name(module, name, ok, arg):
    """_domain.check_nonneg: "a finite quantity that may be zero": inf is a bad call, named like a negative,
    never an inf or nan returned in silence."""
    fn = getattr(importlib.import_module(f"reference.{module}"), name)
    fn(**ok)
    for bad in (math.inf, -math.inf):
        with pytest.raises(ValueError, match=f"{arg} must be finite and >= 0"):
            fn(**{**ok, arg: bad})
