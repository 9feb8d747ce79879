"""nbgrader configuration for the scalelabs course (this repository's root is the course root).

* Stub modules are the student's work: `Autograde.exclude_overwriting` keeps them (computed from
  the declarations, one entry per assignment), or nbgrader would grade the source stub.
* Autograde executes nothing: no `Execute` preprocessor, so a student's notebook never runs as
  the grading user next to the course, the gradebook and the classmates' folders (a cell could
  copy reference/ over its module, write the keys into its notebook, or overwrite a classmate's
  submission). Grades come only from the scalelabs engine: `autograder.doors.nbgrader.EngineScores`
  grades `submitted/<student>/<assignment>/` in the engine's sandbox and writes each grade cell's
  output (the item's feedback on stdout, the score as a float execute_result), so nbgrader's
  gradebook holds exactly the per-item scores of `scalelabs grade`.
* `CappedNotebook`, the first sanitizing pass, cuts the submitted notebook's cells, sources and outputs
  to sizes nbgrader's and bleach's passes can afford (one 19 MB markdown cell cost 60-70 CPU s of
  them); the scores come from the submitted files, which it does not touch.
* The sanitizing pass keeps the outputs the student saved (no `ClearOutput`): the feedback page
  shows the student's own outputs; grade cells are overwritten by the engine's. Stored stderr is
  dropped, `InertOutputs` keeps only text and images (no HTML/JavaScript for a TA's browser),
  `InertMarkup` makes markdown and raw cells inert (tags escaped, script links dead) and
  `LimitOutput` caps the rest.
* A submitted notebook's nbgrader metadata is the student's: `SubmittedMetadata` (nbgrader's
  DeduplicateIds, the first sanitizing pass) rebuilds every cell's from the gradebook for a grade_id
  it knows, drops the rest (and duplicates) and adds a missing grade cell back, so no edited flag,
  version, cell type or grade_id, nor a deleted grade cell, stops the class's run or leaves a student
  (or an item) ungraded.
* `nbgrader generate_feedback` names each row of the page's contents by its item, not "Test cell"
  (autograder/doors/nbgrader_feedback.py).
* `nbgrader export` writes its CSV through `SafeCsvExport`: quoted, and no cell (an id, a name)
  that a spreadsheet would run as a formula.
* Late work follows the course's `[deadlines]` (scalelabs.toml), as in every door: nbgrader reads
  timestamp.txt as scalelabs does (`read_timestamps_as_scalelabs`: a time it cannot use is recorded as
  none instead of failing the student), and `CourseLatePenalties` (nbgrader's AssignLatePenalties)
  puts the policy's penalty in `late_submission_penalty`, with the due date, time and extension.
* ClearSolutions is off: source notebooks hold no solutions at all (keys and reference code live
  only in autograder/ and reference/), and it would replace the answer cells `<qid> = None`.
* `nbgrader collect` reads the exchange's inbound folder, which every student can write, as student
  data: `SafeCollect` refuses a hand-in not owned by the student it names, never follows a link, dates
  a hand-in by the later of its claimed time (read in `Exchange.timezone`) and its files' last change,
  and one bad hand-in skips that student only (autograder/doors/collect.py).
* Who the course is comes from the course, not the code: its id (nbgrader's course id, the course's
  folder in the exchange) and exchange root from scalelabs.toml's [course] table, the id by default
  the course folder's name (autograder/course.py, `course_settings`).
* A failure while this file loads stops nbgrader: traitlets catches any Exception a config file
  raises, logs it and runs with nbgrader's defaults, which execute student notebooks and score what
  their kernels print. SystemExit is not an Exception, so it passes traitlets and ends the command
  (exit status 1, one line on stderr) before any student is graded, wherever nbgrader loads this
  file from (the current directory or `--CourseDirectory.root`).
"""
import traceback
from pathlib import Path

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

try:
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (CheckCellMetadata, IgnorePattern, LimitOutput, OverwriteCells,
                                        OverwriteKernelspec, SaveAutoGrades)

    from autograder.course import course_settings
    from autograder.doors.collect import SafeCollect
    from autograder.doors.nbgrader import (CappedNotebook, CourseLatePenalties, EngineScores, InertMarkup,
                                           InertOutputs, SubmittedMetadata, read_timestamps_as_scalelabs)
    from autograder.doors.nbgrader_export import SafeCsvExport
    from autograder.doors.nbgrader_log import one_line_per_student
    from labs import all_assignments

    course = course_settings(Path(__file__).resolve().parent)   # noqa: F821 (this file, as nbgrader loads it)
    c.CourseDirectory.course_id = course.id
    if course.exchange is not None:
        c.Exchange.root = str(course.exchange)
    c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
                                ".hypothesis", ".pytest_cache"]
    c.Autograde.exclude_overwriting = {a.id: [f"{a.module}.py"] for a in all_assignments().values()}
    c.Autograde.sanitize_preprocessors = [CappedNotebook, SubmittedMetadata, OverwriteKernelspec, OverwriteCells,
                                          CheckCellMetadata]
    c.Autograde.autograde_preprocessors = [
        IgnorePattern, InertOutputs, InertMarkup, EngineScores, ClearMetadataPreprocessor, LimitOutput,
        SaveAutoGrades, CourseLatePenalties, CheckCellMetadata,
    ]
    read_timestamps_as_scalelabs()
    c.IgnorePattern.enabled = True
    c.IgnorePattern.pattern = r"(?s).*"
    c.ClearSolutions.enabled = False
    c.ExchangeFactory.collect = SafeCollect    # the inbound folder is student data (autograder/doors/collect.py)
    c.ExportApp.plugin_class = SafeCsvExport   # quoted CSV, no cell a spreadsheet would run
    from autograder.doors import nbgrader_feedback
    nbgrader_feedback.configure(c)             # generate_feedback's rows named by item, not "Test cell"
    one_line_per_student()                     # autograde: a line per student, warnings and errors (nbgrader_log.py)
except Exception as error:  # noqa: BLE001  (whatever it is, nbgrader must not go on with its defaults)
    where = traceback.extract_tb(error.__traceback__)[-1]
    raise SystemExit(
        f"scalelabs: {__file__} failed to load ({type(error).__name__}: {error}, at {where.filename}:{where.lineno}); "  # noqa: F821
        f"nbgrader stops here, since without this config it would run and trust the students' notebooks. "
        f"Fix the course's install (`pip install -e .` in the course root, in the Python that runs nbgrader) and rerun."
    ) from error
