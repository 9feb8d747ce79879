"""nbgrader configuration for the scalelabs course (this repository's root is the course root).

* Stub modules are the student's work: `Autograde.exclude_overwriting` keeps them (computed from
  the declarations, one entry per assignment), or nbgrader would grade the source stub.
* Grades come from the scalelabs engine, run outside the student's kernel by
  `autograder.doors.nbgrader.EngineScores` after execution: it writes each grade cell's output
  (the item's feedback on stdout, the score as a float execute_result), so nbgrader's gradebook
  holds exactly the per-item scores of `scalelabs grade`.
* All stderr is dropped after execution (a warning must never zero a cell).
* ClearSolutions is off: source notebooks hold no solutions at all (keys and reference code live
  only in autograder/ and reference/), and it would replace the answer cells `<qid> = None`.
"""
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, Execute, IgnorePattern,
                                    LimitOutput, SaveAutoGrades)

from autograder.config import COURSE_ID
from autograder.doors.nbgrader import EngineScores
from autograder.labs import all_assignments

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = COURSE_ID
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
                            ".hypothesis", ".pytest_cache"]
c.Autograde.exclude_overwriting = {a.id: [f"{a.module}.py"] for a in all_assignments().values()}
c.Autograde.autograde_preprocessors = [
    Execute, IgnorePattern, EngineScores, ClearMetadataPreprocessor, LimitOutput,
    SaveAutoGrades, AssignLatePenalties, CheckCellMetadata,
]
c.Execute.timeout = 120
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"(?s).*"
c.ClearSolutions.enabled = False
