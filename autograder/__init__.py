"""scalelabs grading engine: declarations, sandboxed grading, CLI, nbgrader and otter doors."""
