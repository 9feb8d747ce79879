"""Put first on PYTHONPATH by door_helpers.env(without_rfc3987=True): the otter zip's setup.sh uninstalls
rfc3987-syntax on Gradescope (autograder/doors/otter.py), and this makes its import fail as it then
does, so jsonschema skips the IRI format checks instead of compiling ~40 Lark grammars in every
nbgrader, otter and jupyter process (1.2-2.3 s of CPU each)."""
raise ImportError("rfc3987-syntax: uninstalled by the otter zip's setup.sh (tests/doors/door_helpers.py)")
