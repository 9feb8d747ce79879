"""What a PrairieLearn results.json must be: the shape PrairieLearn's own documentation gives it (a JSON
Schema, checked with jsonschema) and the scalelabs rules on top of it.

Written from PrairieLearn's docs/externalGrading.md ("Grading results"): the grader writes
/grade/results/results.json; a gradable submission needs only `score`, a number in [0.0, 1.0]; `gradable`
(a boolean, true when absent) set to false marks the submission invalid, and then `score` is not needed
and `format_errors` (a string or an array of strings) may say why; any further data may be added; the
`<pl-external-grader-results>` element renders `message`, `output`, `images` and `tests`, each test with
`name`, `description`, `points`, `max_points`, `message`, `output` and `images`; an image is an object with
a `url` (and an optional `label`) or, for older graders, the URL as a string; the file should stay under
1 MB (not a JSON Schema rule: `problems` checks it).

The scalelabs rules: one test per graded item of the lab, in declaration order, points between 0 and
max_points, max_points the item's points, and the score the tests' points over the lab's total.
"""
from __future__ import annotations

import json
import math

import jsonschema

IMAGE = {"anyOf": [{"type": "string"},
                   {"type": "object", "required": ["url"],
                    "properties": {"url": {"type": "string"}, "label": {"type": "string"}}}]}
TEST = {"type": "object", "properties": {
    "name": {"type": "string"}, "description": {"type": "string"},
    "points": {"type": "number"}, "max_points": {"type": "number"},
    "message": {"type": "string"}, "output": {"type": "string"},
    "images": {"type": "array", "items": IMAGE}}}
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "PrairieLearn external grading results (docs/externalGrading.md)",
    "type": "object",
    "properties": {
        "gradable": {"type": "boolean"},
        "score": {"type": "number", "minimum": 0.0, "maximum": 1.0},
        "message": {"type": "string"},
        "output": {"type": "string"},
        "format_errors": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "images": {"type": "array", "items": IMAGE},
        "tests": {"type": "array", "items": TEST},
    },
    # a gradable submission (gradable true or absent) has a score
    "if": {"not": {"properties": {"gradable": {"const": False}}, "required": ["gradable"]}},
    "then": {"required": ["score"]},
}
SIZE_CAP_BYTES = 1_000_000


def schema_problems(data) -> list[str]:
    """What PrairieLearn's documented contract finds wrong with `data`: the schema, the size cap."""
    found = [f"{'/'.join(map(str, e.absolute_path)) or 'results'}: {e.message}"
             for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(data)]
    size = len(json.dumps(data).encode("utf-8"))
    if size >= SIZE_CAP_BYTES:
        found.append(f"results.json is {size} bytes, PrairieLearn's limit is 1 MB")
    return found


def problems(data, assignment) -> list[str]:
    """Everything wrong with `data` as the results of a gradable submission of `assignment`."""
    found = schema_problems(data)
    if found:
        return found
    if data.get("gradable", True) is not True:
        return ["not gradable: " + str(data.get("message"))]
    tests = data.get("tests", [])
    if [t.get("name") for t in tests] != list(assignment.item_ids):
        found.append(f"tests {[t.get('name') for t in tests]} are not the lab's items {assignment.item_ids}")
    for t in tests:
        if not 0 <= t["points"] <= t["max_points"] + 1e-9:
            found.append(f"{t['name']}: points {t['points']} outside 0 .. {t['max_points']}")
        if t["name"] in assignment.item_points and not math.isclose(t["max_points"], assignment.item_points[t["name"]]):
            found.append(f"{t['name']}: max_points {t['max_points']}, the item is worth {assignment.item_points[t['name']]}")
    total = sum(t["points"] for t in tests) / assignment.total_points
    if not math.isclose(total, data["score"], abs_tol=1e-6):
        found.append(f"score {data['score']} is not the tests' points over the total ({total})")
    return found
