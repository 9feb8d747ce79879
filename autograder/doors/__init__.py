"""The nbgrader and otter front doors onto the scalelabs engine (same per-item scores)."""
