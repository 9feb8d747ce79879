"""Derive, then check (issue 29): does a stub docstring state its function's closed form?

A docstring states it when it holds an expression of two or more operators over the function's
parameters and the usual symbols (T = 2(n-1) * alpha_s + ...), an equation whose right side holds
an operator, or a one-operator expression whose operands are the function's own parameters
(`comm_s / compute_s`, not a count such as `n-1`). A mechanism in words, with its partial quantities (one M/n chunk per
step, n-1 steps), does not. Measured on the stubs before issue 29: Lab 06 12 of 14, Lab 02 8 of 9
(the issue's counts), Lab 05 5 of 9, Lab 01 7 of 8, Lab 09 5 of 12. `scalelabs lint`'s derive
rule counts with it.
"""
from __future__ import annotations

import ast
import re

OP = r"[-+*/^·×÷]"
RUN = re.compile(r"[\w().]+(?:\s*" + OP + r"\s*[\w().]+)+")
FUNCTIONS = ("log2", "ceil", "log", "sqrt", "exp", "max", "min", "sum_i", "floor")


def _operand(token: str, params: set[str]) -> str | None:
    """"num", "sym" (a parameter, a one-letter or known symbol, a function of one) or None (a word)."""
    token = token.strip().rstrip(".,:;").strip("()").strip()
    if not token:
        return "num"
    if re.fullmatch(r"\d+(\.\d+)?(e-?\d+)?", token):
        return "num"
    bare = re.sub(r"^\d+", "", token).strip("()")
    name = re.sub(r"\(.*$", "", bare)
    if bare in params or len(bare) == 1 or name in FUNCTIONS or bare in ("alpha", "beta", "psi", "T1", "t_1", "t_n"):
        return "sym"
    if re.fullmatch(r"[A-Za-z]_?\w{0,3}", bare) and not bare.islower() or re.fullmatch(r"[A-Z]\w*", bare):
        return "sym"   # B_intra, M*, T_ring: a named symbol
    return None


def expressions(text: str, params: set[str]) -> list[tuple[int, str]]:
    """(operators, expression) of every run of operands and operators that is maths, not words."""
    found = []
    for line in text.splitlines():
        for match in RUN.finditer(line):
            run = match.group(0)
            parts = re.split(r"\s*" + OP + r"\s*", run)
            kinds = [_operand(p, params) for p in parts]
            if None in kinds or "sym" not in kinds:
                continue
            found.append((len(parts) - 1, run))
    return found


def closed_form(doc: str, params: list[str]) -> str | None:
    """The expression in `doc` that states the function's closed form, or None."""
    names = set(params)
    for operators, run in expressions(doc, names):
        if operators >= 2:
            return run
        operands = [t.strip().rstrip(".,:;").strip("()") for t in re.split(r"\s*" + OP + r"\s*", run)]
        if sum(t in names for t in operands) >= 2 and all(t in names or re.fullmatch(r"[\d.e]+", t) for t in operands):
            return run   # `comm_s / compute_s`: the function's inputs combined (`n-1`, a count, is not)
    for line in doc.splitlines():
        equation = re.search(r"(?<![<>=!])=(?!=)\s*(.+)", line)
        if equation and expressions(equation.group(1), names):
            return line.strip()
    return None


def stub_closed_forms(stub_source: str, functions) -> dict[str, str | None]:
    """function name -> the closed form its stub docstring states (None: it states none)."""
    out = {}
    for node in ast.parse(stub_source).body:
        if isinstance(node, ast.FunctionDef) and node.name in functions:
            params = [a.arg for a in node.args.args + node.args.kwonlyargs]
            out[node.name] = closed_form(ast.get_docstring(node) or "", params)
    return out
