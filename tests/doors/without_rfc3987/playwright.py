"""Beside rfc3987_syntax.py, first on PYTHONPATH for the door runs: the otter zip's image has no
playwright (autograder/doors/otter.py installs otter-grader without nbconvert's webpdf extra), and
this makes its import fail as it does there, so every `otter run` of the door tests grades without it."""
raise ImportError("playwright: not in the otter zip's image (autograder/doors/otter.py, image_requirements)")
