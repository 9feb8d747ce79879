"""A TEST notebook (never released) with instruments on Lab 06, built from the shipped toolkit:
the browser test moves every control of it, and tests/release checks its headless run."""
from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NAME = "instrument_demo.ipynb"
INSTRUMENTS = 2   # Instrument(...).show() calls below

SETUP = """\
import collectives
import constants
import numpy as np
from _instruments import Instrument, Steps, LogSlider, Dropdown, Toggle, Slider, Buttons"""

# Act I of Lab 06 as an instrument: N, message size and link, latency and bandwidth terms apart.
ALLREDUCE = """\
LINKS = {"InfiniBand NDR": (constants.IB_ALPHA_S, constants.IB_NDR400_BANDWIDTH),
         "InfiniBand HDR": (constants.IB_ALPHA_S, constants.IB_HDR200_BANDWIDTH),
         "NVLink 4": (constants.NVLINK_ALPHA_S, constants.NVLINK4_BANDWIDTH)}
RANKS = [2 ** k for k in range(1, 11)]

def draw(fig, n, message_bytes, link, show_tree):
    alpha_s, bandwidth = LINKS[link]
    ax = fig.subplots()
    curves = {"naive": collectives.naive_allreduce_time, "ring": collectives.ring_allreduce_time}
    if show_tree:
        curves["binary tree"] = collectives.tree_allreduce_time
    for name, fn in curves.items():
        ax.loglog(RANKS, [fn(message_bytes, r, alpha_s, bandwidth) for r in RANKS], "o-", label=name)
    ax.axvline(n, color="grey", linestyle=":")
    ax.set(xlabel="GPUs n", ylabel="AllReduce time (s)", title=f"{message_bytes:.3g} bytes on {link}")
    ax.legend()
    ring_s = collectives.ring_allreduce_time(message_bytes, n, alpha_s, bandwidth)
    latency_s = collectives.ring_allreduce_time(0.0, n, alpha_s, bandwidth)
    naive_s = collectives.naive_allreduce_time(message_bytes, n, alpha_s, bandwidth)
    readout = (f"ring at n = {n}: {ring_s:.4g} s = latency {latency_s:.4g} s + bandwidth {ring_s - latency_s:.4g} s\\n"
               f"naive: {naive_s:.4g} s ({naive_s / ring_s:.3g}x the ring)")
    if show_tree:
        readout += f"\\nbinary tree: {collectives.tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):.4g} s"
    return readout

Instrument(draw, n=Steps("GPUs n", RANKS, value=128),
           message_bytes=LogSlider("message (bytes)", 1e3, 1e12, value=1.4e11),
           link=Dropdown("link", list(LINKS), value="InfiniBand NDR"),
           show_tree=Toggle("show the binary tree", value=True)).show();"""

# A second instrument with the two remaining control kinds.
CROSSOVER = """\
def crossover(fig, alpha_us, link):
    bandwidth, alpha_s = LINKS[link][1], alpha_us * 1e-6
    sizes = np.logspace(3, 10, 60)
    ax = fig.subplots()
    ax.loglog(sizes, [collectives.ring_allreduce_time(m, 128, alpha_s, bandwidth) for m in sizes], label="ring")
    ax.loglog(sizes, [collectives.tree_allreduce_time(m, 128, alpha_s, bandwidth) for m in sizes], label="tree")
    ax.set(xlabel="message (bytes)", ylabel="s")
    ax.legend()
    cross = collectives.ring_tree_crossover_bytes(128, alpha_s, bandwidth)
    return f"ring-tree crossover at 128 GPUs: {cross:.4g} bytes"

Instrument(crossover, figsize=(6, 3.5),
           alpha_us=Slider("latency alpha (us)", 0.5, 20.0, value=constants.IB_ALPHA_S * 1e6, step=0.5),
           link=Buttons("link", list(LINKS), value="InfiniBand NDR")).show();"""


def build() -> nbformat.NotebookNode:
    hidden = {"jupyter": {"source_hidden": True}}
    return new_notebook(cells=[
        new_code_cell(SETUP),
        new_markdown_cell("# Instrument demo (test only)\n\nMove the controls: the figures and readouts are drawn "
                          "by the module's own functions."),
        new_code_cell(ALLREDUCE, metadata=hidden),
        new_code_cell(CROSSOVER, metadata=hidden),
    ], metadata={"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}})


def write(folder) -> str:
    from pathlib import Path
    path = Path(folder) / NAME
    nbformat.write(build(), str(path))
    return path
