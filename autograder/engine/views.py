"""The two views of feedback: "after" (everything the grader found) and "before" (what a student may
read before the due date while resubmitting: what failed, worked examples and public counterexamples,
never a key, an explanation that gives the key away, a reference value at a hidden input, a design's
reference numbers, or text the student's code wrote). The course chooses per door and moment
(`[feedback]` in scalelabs.toml, autograder.engine.config.FeedbackPolicy).

The engine writes both texts while it grades (each check's `output`, and its `brief` where the before
view differs) and the record keeps both; a door renders one (`Result.view`).

Student text is the channel this closes: a module that sees the hidden inputs can write them into an
exception message, a print or an exit code, which the after view quotes (capped). The before view
names such an error by its builtin class and the line of the student's file it came from, the line
read by the grader from the graded copy: a made-up exception class, a forged reply or a line number
past the file's end shows nothing of its own.
"""
from __future__ import annotations

from autograder.engine.config import BeforeView

# what the before view says for an error the worker reported, by kind (its message is student text)
_REPORTED = {
    "not_implemented": "not implemented yet (raises NotImplementedError)",
    "memory": "ran out of memory (the sandbox's memory limit)",
    "exit": "called sys.exit()",
    "missing_module": "could not be imported: the module is missing",
    "syntax": "has a syntax error",
    "import": "could not be imported",
    "missing_function": "is missing",
    "not_callable": "is not a function",
    "bad_return": "returned a value the grader cannot compare",
    "wrong_type": "returned a value of another type",
}
# said before the due date in place of the student's own text
WITHHELD = "(before the due date feedback leaves out what your code printed and its messages)"


HIDDEN_LINE = " (on a line no public check reached: shown after the due date)"


def error_text(error, sandbox, before: BeforeView, line: bool = True) -> str:
    """An error as the before view shows it: the grader's own messages (timeouts, crashes, the budget)
    as they are; one the worker reported, by its kind, builtin class and the student's own line, unless
    the course shows student text before the due date. `line=False` (a hidden input's error on a line
    no public check showed): the class only, so the line number cannot carry the input."""
    if not getattr(error, "reported", False) or before.student_text:
        return error.message
    if error.kind == "exception":
        said = f"raised {error.exc_type or 'an exception'}"
    else:
        said = _REPORTED.get(error.kind, "failed")
    if not line:
        return said + (HIDDEN_LINE if getattr(error, "where", None) else "")
    return said + own_line(error, sandbox)


def own_line(error, sandbox) -> str:
    """ ` (collectives.py, line 12: return x / (n - 1))`, from the graded copy; "" when the place is
    unknown or not a line of that file."""
    where = getattr(error, "where", None)
    if not where or sandbox is None:
        return ""
    text = sandbox.source_line(*where)
    return "" if text is None else f" ({where[0]}, line {where[1]}: {text})"


def printed(error, before: BeforeView | None) -> str:
    """What the student's code printed before an error, where the view shows it ("" otherwise)."""
    if not error.output or (before is not None and not before.student_text and getattr(error, "reported", False)):
        return ""
    return error.output


def item_feedback(result, item: str, notes: bool = True) -> str:
    """The item's tests with their scores and outputs (a grade cell's feedback, a Gradescope test's
    output); with `notes`, the first graded item's also carries the result's notes on the whole
    submission (Result.output), which no item's tests hold. Render `result.view(...)` for a view."""
    lines = []
    for test in result.tests:
        if test.item != item:
            continue
        lines.append(f"{test.name}  [{test.score:g}/{test.max_score:g}]")
        if test.output:
            lines.append("    " + str(test.output).rstrip().replace("\n", "\n    "))
    if notes and result.output and result.tests and item == result.tests[0].item:
        lines.append(str(result.output).rstrip())
    return "\n".join(lines) + "\n"
