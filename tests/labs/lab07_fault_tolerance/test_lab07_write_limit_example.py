"""Lab 07's public worked examples of `checkpoint_write_time_s`, read as a student reads them (issue 43's
review): the one that says the nodes are the limit must be a case where they are, so that a write time
that ignores the nodes (bytes / storage bandwidth alone) fails it. At 8 nodes of 50 GB/s the nodes and
the 400 GB/s storage tie, and the storage-only answer passed."""
from __future__ import annotations

from labs.lab07_fault_tolerance import ASSIGNMENT as A
from reference.fault_tolerance import checkpoint_write_time_s


def test_the_example_that_says_the_nodes_are_the_limit_is_one_where_they_are():
    examples = [e for e in A.function("checkpoint_write_time_s").examples if "nodes are the limit" in e.label]
    assert examples, [e.label for e in A.function("checkpoint_write_time_s").examples]
    for e in examples:
        k = e.kwargs
        assert k["n_nodes"] * k["node_bandwidth"] < k["storage_bandwidth"], e.label
        storage_only = k["checkpoint_bytes"] / k["storage_bandwidth"]
        assert checkpoint_write_time_s(**k) > 1.5 * storage_only, e.label
        assert f"{k['n_nodes']} nodes" in e.label and f"{k['n_nodes'] * k['node_bandwidth'] / 1e9:g} GB/s" in e.label
