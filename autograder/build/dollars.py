"""Dollar signs in notebook markdown, written so JupyterLab shows money, not maths.

Authors write a literal dollar as markdown's `\\$`. JupyterLab and Notebook 7 take maths out of a
markdown cell before markdown runs (@jupyterlab/rendermime, latex.ts `removeMath`), leave `\\$`
there as text, markdown then turns it into a bare `$`, and MathJax typesets whatever lies between
two of them: "\\$2.10 per GPU-hour ... \\$50M" became "2.10perGPU−hour". JupyterLab reads `\\\\$` as a
literal dollar (jupyterlab/jupyterlab#8645), so every markdown cell and reveal the builder writes
goes through `for_jupyterlab`.
"""
from __future__ import annotations

import re

_ESCAPED = re.compile(r"(?<!\\)\\\$")          # `\$`, not already `\\$`
_BARE_MONEY = re.compile(r"(?<!\\)\$(?=\d)")   # `$2.10`: a dollar amount nobody escaped


def for_jupyterlab(markdown: str, where: str) -> str:
    """`markdown` with every escaped dollar `\\$` written `\\\\$`; ValueError naming `where` if a
    dollar amount is not escaped at all (MathJax would pair it with the next `$`)."""
    bare = _BARE_MONEY.search(markdown)
    if bare:
        line = markdown[:bare.start()].count("\n") + 1
        raise ValueError(f"{where}: line {line} has a dollar amount written `$` "
                         f"({markdown[bare.start():bare.start() + 12]!r}); write it `\\$` so it is not read as maths")
    return _ESCAPED.sub(r"\\\\$", markdown)
