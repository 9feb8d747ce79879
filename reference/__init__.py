"""Reference physics for the scalelabs assignments: the single source of truth (staff only).

One module per lab (collectives, interconnect, parallelism, scaling, performance), the cited
hardware constants in `constants`, and the input-domain checks in `_domain`. Student stubs are
generated from these files by replacing each `### BEGIN SOLUTION` ... `### END SOLUTION` region.
"""
