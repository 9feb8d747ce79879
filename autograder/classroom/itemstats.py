"""Item analysis of one lab's class, as classical test theory does it (no I/O: a score matrix in, numbers out).

    analyse(scores, points, answers, questions) -> Analysis

`scores[student][item]` is the score analysed (autograder.classroom.report decides it: the grade of
record, a prediction on whether it matched the key), `points[item]` the item's points, `answers`
question -> student -> the option chosen ("" none) and `questions` question -> (options, key). The
formulas, with their sources (docs/tas.md, "Item analysis"):

    total          T_i = sum_j x_ij, to the micro-point
    difficulty     P_j = mean_i(x_ij) / p_j                      (Moodle's facility index; Crocker & Algina 1986, ch. 14)
    item-rest r    r_j = Pearson(x_j, T - x_j)                   (the item left out of the total it is set against)
    groups         the upper and lower floor(0.27 n + 1/2) students by T, ties by student id (Kelley 1939)
    discrimination D_j = (mean_U(x_j) - mean_L(x_j)) / p_j       (Ebel's upper-lower index; the full-mark rates for a 0/1 item)
    alpha          a = k/(k-1) * (1 - sum_j var(x_j) / var(T))   (Cronbach 1951; KR-20 for 0/1 items)
    alpha if deleted  a over the other k-1 items
    distractors    each option's share of U, of L and of everyone

Variances are population variances (their n cancels in alpha and r). A value that is not defined (no
variance, fewer than 2 students or items) is None and the reason is in the page's notes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

KELLEY = 0.27            # the share of the class in each of the upper and lower groups
SMALL_CLASS = 10         # under this many students the page warns that one student swings every number
TOO_EASY, TOO_HARD = 0.95, 0.05
NOISE = 1e-9             # a difference below this is float rounding, not a flag


@dataclass
class ItemStats:
    item: str
    difficulty: float | None          # mean score / points (None: an item of no points)
    item_rest: float | None           # Pearson r of the item with the total of the other items
    discrimination: float | None      # upper-group mean less lower-group mean, over the points
    alpha_if_deleted: float | None    # Cronbach's alpha of the lab without this item
    flags: list[str] = field(default_factory=list)   # one line each: what is wrong with the item, and why


@dataclass
class OptionShare:
    option: str        # the option as the report keys answers (its letter; "" = no answer)
    text: str
    key: bool
    upper: float       # share of the upper group that chose it
    lower: float
    everyone: float
    flawed: bool = False   # a wrong option the upper group chose more than the lower


@dataclass
class Distractors:
    question: str
    options: list[OptionShare]


@dataclass
class Analysis:
    students: int
    items: int
    alpha: float | None
    alpha_note: str                    # why alpha is not defined ("" when it is)
    group_size: int                    # students in each of the upper and lower groups (0: too few)
    upper: list[str]
    lower: list[str]
    warning: str                       # the small-class warning ("" from SMALL_CLASS students)
    items_stats: list[ItemStats]
    distractors: list[Distractors]


def group_size(n: int) -> int:
    """Kelley's 27 %, to the nearest student (halves up); 0 when the groups would overlap or be empty."""
    size = (27 * n + 50) // 100
    return size if size >= 1 and 2 * size <= n else 0


def groups(totals: dict[str, float]) -> tuple[list[str], list[str]]:
    """(upper, lower): the top and bottom group_size students by total (to the micro-point), ties by id."""
    order = sorted(totals, key=lambda s: (round(totals[s], 6), s))
    size = group_size(len(order))
    return (order[len(order) - size:], order[:size]) if size else ([], [])


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def variance(values: list[float]) -> float:
    """Population variance (two-pass); exactly 0 when every value is the same."""
    if len(values) < 2 or max(values) == min(values):
        return 0.0
    m = _mean(values)
    return sum((v - m) ** 2 for v in values) / len(values)


def pearson(x: list[float], y: list[float]) -> float | None:
    """Pearson's r; None when either has no variance (or fewer than 2 values)."""
    if len(x) < 2 or max(x) == min(x) or max(y) == min(y):
        return None
    mx, my = _mean(x), _mean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def cronbach_alpha(columns: list[list[float]]) -> tuple[float | None, str]:
    """(alpha, "") of item columns over the same students, or (None, why it is not defined)."""
    k = len(columns)
    if k < 2:
        return None, f"{k} item{'' if k == 1 else 's'}: alpha needs at least 2"
    n = len(columns[0])
    if n < 2:
        return None, f"{n} student{'' if n == 1 else 's'}: alpha needs at least 2"
    totals = [round(sum(col[i] for col in columns), 6) for i in range(n)]
    total_var = variance(totals)
    if total_var == 0:
        return None, "every student has the same total: alpha is not defined"
    return k / (k - 1) * (1 - sum(variance(col) for col in columns) / total_var), ""


def discrimination(totals: dict[str, float], got: dict[str, float], points: float) -> float | None:
    """Upper-group mean of the item less the lower group's, over its points (None: no groups, no points)."""
    upper, lower = groups(totals)
    if not upper or points <= 0:
        return None
    return (_mean([got[s] for s in upper]) - _mean([got[s] for s in lower])) / points


def _digits(a: float, b: float) -> int:
    """Enough decimals that a and b print differently (3 to 6)."""
    d = 3
    while d < 6 and round(a, d) == round(b, d):
        d += 1
    return d


def item_flags(s: ItemStats, alpha: float | None, constant: bool = False) -> list[str]:
    """One line per thing wrong with the item: negative discrimination, too easy or hard, alpha rises without it
    (`constant`: every student has the same score on it, whose removal raises alpha through k/(k-1) alone)."""
    flags = []
    negative = []
    if s.discrimination is not None and s.discrimination < -NOISE:
        negative.append(f"D = {s.discrimination:+.2f}")
    if s.item_rest is not None and s.item_rest < -NOISE:
        negative.append(f"item-rest r = {s.item_rest:+.2f}")
    if negative:
        flags.append(f"negative discrimination ({', '.join(negative)}): students who do better on the rest of the "
                     "lab do worse on this item; check its key and wording")
    if s.difficulty is not None and s.difficulty > TOO_EASY:
        flags.append(f"too easy: difficulty {s.difficulty:.2f} > {TOO_EASY}: nearly everyone scores on it, so it "
                     "tells students apart little")
    if s.difficulty is not None and s.difficulty < TOO_HARD:
        flags.append(f"too hard: difficulty {s.difficulty:.2f} < {TOO_HARD}: nearly no one scores on it; check "
                     "that it can be answered and its key")
    if alpha is not None and s.alpha_if_deleted is not None and s.alpha_if_deleted > alpha + NOISE:
        d = _digits(alpha, s.alpha_if_deleted)
        raised = f"removing it raises alpha from {alpha:.{d}f} to {s.alpha_if_deleted:.{d}f}"
        # an item with no variance adds nothing to the total's variance: alpha rises without it only
        # because its k/(k-1) counts one item fewer, not because the item measures something else
        flags.append(f"{raised} only through k/(k-1): no student scores differently on it, so it adds "
                     "nothing to what the lab measures" if constant else
                     f"{raised}: it does not measure what the rest of the lab measures")
    return flags


def distractor_table(question: str, options: dict[str, str], key: str, answers: dict[str, str],
                     students: list[str], upper: list[str], lower: list[str]) -> tuple[Distractors, list[str]]:
    """Each option's share of the upper group, the lower group and everyone (no answer last); and the
    flag of each wrong option the upper group chose more often than the lower."""
    share = lambda group, option: (sum(answers.get(s, "") == option for s in group) / len(group)   # noqa: E731
                                   if group else 0.0)
    rows, flags = [], []
    for option in [*options, ""]:
        row = OptionShare(option, options.get(option, "no answer"), option == key, share(upper, option),
                          share(lower, option), share(students, option))
        if option and option != key and upper and row.upper > row.lower:
            row.flawed = True
            flags.append(f"option {option} draws the upper group more than the lower ({100 * row.upper:.0f} % "
                         f"against {100 * row.lower:.0f} %): ambiguous, or a second right answer; check the key")
        rows.append(row)
    return Distractors(question, rows), flags


def analyse(scores: dict[str, dict[str, float]], points: dict[str, float],
            answers: dict[str, dict[str, str]], questions: dict[str, tuple[dict[str, str], str]]) -> Analysis:
    """The item analysis of the class `scores` (student -> item -> score) over the items of `points`."""
    students = sorted(scores)
    items = list(points)
    n = len(students)
    columns = {j: [scores[s][j] for s in students] for j in items}
    totals = {s: round(sum(scores[s][j] for j in items), 6) for s in students}
    upper, lower = groups(totals)
    alpha, note = cronbach_alpha([columns[j] for j in items])
    stats = []
    for j in items:
        rest = [round(totals[s] - scores[s][j], 6) for s in students]
        others = [columns[o] for o in items if o != j]
        without = cronbach_alpha(others)[0] if len(others) >= 2 else None
        s = ItemStats(j, _mean(columns[j]) / points[j] if n and points[j] > 0 else None, pearson(columns[j], rest),
                      discrimination(totals, dict(zip(students, columns[j])), points[j]), without)
        s.flags = item_flags(s, alpha, constant=variance(columns[j]) == 0)
        stats.append(s)
    tables = []
    by_item = {s.item: s for s in stats}
    for qid, (options, key) in questions.items():
        table, flags = distractor_table(qid, options, key, answers.get(qid, {}), students, upper, lower)
        tables.append(table)
        if qid in by_item:
            by_item[qid].flags += flags
    warning = (f"{n} student{'' if n == 1 else 's'}: under {SMALL_CLASS}, one student moves every number below; "
               "read them as hints, not findings" if n < SMALL_CLASS else "")
    return Analysis(n, len(items), alpha, note, len(upper), upper, lower, warning, stats, tables)
