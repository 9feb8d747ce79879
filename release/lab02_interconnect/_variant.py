"""Your version of this lab (shipped with every lab; you do not need to edit it).

Every student gets their own version of a lab: its story's numbers (cluster size, message size,
prices, ...) and the order of each question's options are chosen from your id and the lab, so a
classmate's answer letters and design numbers are not yours. The setup cell calls `choose`, which
finds your id, in this order:

1. your JupyterHub user name (where you work on your course's JupyterHub);
2. nbgrader's id, your user name on the server, where nbgrader's exchange is on this machine;
3. the id you type once in the cell `student_id = "..."` above the setup (on Gradescope: your
   student id as Gradescope knows it, else your email).

It says which one it used. The version is a fixed function of the lab and the id (`variant_index`):
the autograder computes the same one from the id it grades you under, and reads your answers in that
version's option letters. Choosing another id's version changes nothing of your grade except that
your letters are read in your own version. Nothing here is secret: every version's numbers and
options are in the notebook (none of them says which option is right).
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import zlib
from pathlib import Path

MIMETYPE = "application/vnd.scalelabs.variant+json"   # which id and version the notebook showed
NBGRADER_EXCHANGE = "/srv/nbgrader/exchange"           # nbgrader's default Exchange.root
_BOX = ("border: 1px solid #c9d4e2; border-radius: 6px; padding: 8px 12px; margin: 6px 0; "
        "white-space: normal; line-height: 1.45")
CARD_CLASS = "scalelabs-variant"

# What `choose` found: {"student", "source", "index", "count", "assignment"}; None until an id is known.
CHOSEN: dict | None = None

__all__ = ["variant_index", "normal_id", "choose", "pick", "show", "chosen"]


def normal_id(student_id: str) -> str:
    """An id as the choice reads it: without surrounding spaces, case folded (`Alice ` is `alice`)."""
    return str(student_id).strip().casefold()


def variant_index(assignment_id: str, student_id: str, count: int) -> int:
    """The version (0 .. count-1) of lab `assignment_id` that student `student_id` gets: SHA-256 of
    the two, modulo `count`. Every door and every notebook computes it alike; no secret is needed."""
    if count < 1:
        raise ValueError(f"a lab has at least one version, not {count}")
    digest = hashlib.sha256(f"{assignment_id}\n{normal_id(student_id)}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def encode(data) -> str:
    """Texts carried by a cell, as one line (base64 of zlib'd JSON)."""
    raw = json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def decode(blob: str):
    return json.loads(zlib.decompress(base64.b64decode(blob))) if blob else {}


# --- which id -------------------------------------------------------------------------------------

def _nbgrader_id(exchange: str) -> str | None:
    """nbgrader's student id where its exchange is on this machine: the user name (nbgrader's own
    `get_username`)."""
    if not exchange or not Path(exchange).is_dir():
        return None
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, OSError):
        return None


def find_id(namespace: dict, exchange: str = NBGRADER_EXCHANGE) -> tuple[str | None, str]:
    """(id, where it came from) in the documented order, or (None, what to do)."""
    hub = os.environ.get("JUPYTERHUB_USER", "").strip()
    if hub:
        return hub, "your JupyterHub user name"
    nbgrader = _nbgrader_id(exchange)
    if nbgrader:
        return nbgrader, f"nbgrader's id: your user name on this server (its exchange is {exchange})"
    typed = namespace.get("student_id")
    if isinstance(typed, str) and typed.strip():
        return typed.strip(), "the id you typed in student_id above"
    return None, ('type your id in the cell above the setup, student_id = "your id" (on Gradescope your student id '
                  "as Gradescope knows it, else your email), then run the notebook again from the top")


def _display(bundle: dict) -> None:
    try:
        from IPython.display import display
    except ImportError:
        print(bundle.get("text/plain", ""))
        return
    display(bundle, raw=True)


def _card(text: str, colour: str, extra: dict | None = None) -> None:
    _display({"text/plain": text, **(extra or {}),
              "text/html": f'<div class="{CARD_CLASS}" style="{_BOX}; border-left: 4px solid {colour}">'
                           f"{html.escape(text)}</div>"})


def choose(assignment_id: str, count: int, namespace: dict, exchange: str = NBGRADER_EXCHANGE) -> int | None:
    """Find your id, pick your version of the lab and say which; the version's index, or None (no id
    yet: the lab's texts then wait for it, and no prediction is recorded)."""
    global CHOSEN
    student, source = find_id(namespace, exchange)
    if student is None:
        CHOSEN = None
        _card(f"No id yet: {source}. Until then this notebook shows no story, question or reveal of your own "
              "(your version of the lab depends on your id).", "#c0392b")
        return None
    index = variant_index(assignment_id, student, count)
    CHOSEN = {"student": student, "source": source, "index": index, "count": count, "assignment": assignment_id}
    typed = namespace.get("student_id")
    ignored = (f" (the id typed above, {typed.strip()!r}, is not used: {source} comes first)"
               if isinstance(typed, str) and typed.strip() and "typed" not in source else "")
    _card(f"Your id: {student} ({source}){ignored}. You see version {index + 1} of {count} of this lab: its numbers "
          "and the order of its options are your own. You are graded on the version of the id your course grades "
          "you under (on Gradescope a group is graded under the smallest id of its members); if that is not "
          f"{student}, correct it before you answer.", "#2f6fb0",
          {MIMETYPE: {"student": student, "variant": index, "count": count}})
    return index


def chosen() -> dict | None:
    """What `choose` found last (None: no id yet)."""
    return CHOSEN


def pick(*values):
    """Your version's value among every version's (the first where no id is known yet)."""
    return values[CHOSEN["index"]] if CHOSEN is not None and CHOSEN["index"] < len(values) else values[0]


def show(blob: str) -> None:
    """Show your version of a text of the lab (its story, a question with its options in your order)."""
    data = decode(blob)
    if CHOSEN is None or CHOSEN["index"] >= len(data.get("variants", ())):
        _card("Your version of this text appears here once your id is known: see the setup cell above, then run "
              "the notebook again from the top.", "#8a96a3")
        return
    text = data["texts"][data["variants"][CHOSEN["index"]]]
    _display({"text/plain": text, "text/markdown": text})
