"""What a Gradescope results.json from `scalelabs grade --json` must be: the shape Gradescope reads
(a JSON Schema, checked with jsonschema) and the scalelabs rules on top of it (each test named
"<item>: ...", 0 <= score <= max_score, the top-level score the sum of the tests', every function of
the lab in docs/physics.md a graded item with points)."""
from __future__ import annotations

import jsonschema

import physics_doc

NUMBER = {"type": "number"}
# Gradescope's autograder specification: "Output String Formatting" and "Test case status"
FORMAT = {"enum": ["text", "simple_format", "html", "md", "ansi"]}
SCHEMA = {
    "type": "object",
    "required": ["score", "tests"],
    "properties": {
        "score": NUMBER,
        "output": {"type": "string"},
        "output_format": FORMAT,
        "tests": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["name", "score", "max_score", "output"],
            "properties": {"name": {"type": "string", "pattern": r"^\w+: "}, "score": {**NUMBER, "minimum": 0},
                           "max_score": {**NUMBER, "minimum": 0}, "output": {"type": "string"},
                           "output_format": FORMAT, "status": {"enum": ["passed", "failed"]},
                           "visibility": {"enum": ["visible", "hidden", "after_due_date", "after_published"]}},
        }},
    },
}


def problems(data: dict, module: str) -> list[str]:
    """Everything wrong with `data` as the results of a lab whose students edit `module`.py."""
    found = [f"{'/'.join(map(str, e.absolute_path)) or 'results'}: {e.message}"
             for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(data)]
    if found:
        return found
    points: dict[str, float] = {}
    for t in data["tests"]:
        if t["score"] > t["max_score"]:
            found.append(f"{t['name']!r}: score {t['score']} above max_score {t['max_score']}")
        item = t["name"].split(":", 1)[0]
        points[item] = points.get(item, 0.0) + t["max_score"]
    total = sum(t["score"] for t in data["tests"])
    if abs(total - data["score"]) > 1e-6:
        found.append(f"top-level score {data['score']} != sum of test scores {total}")
    for f in physics_doc.functions():
        if f.module == module and points.get(f.name, 0) <= 0:
            found.append(f"{f.name} (docs/physics.md) is not a graded item with points")
    return found
