"""Every `scalelabs ... --help` prints every bracketed word its source declares: typer renders help as
rich markup, where `[otter]` (`pip install 'scalelabs[otter]'`), `[deadlines]` or `[feedback] native`
is a style tag and vanished from the help until cli.PlainHelpGroup escaped every text once.

The sources are read from the declarations themselves (each command's docstring, each parameter's
help=), not from the click objects the help is printed from, so a command added later is held to it
too."""
from __future__ import annotations

import inspect
import re

import pytest
from typer.models import ParameterInfo
from typer.testing import CliRunner

from autograder.cli import app

BRACKETED = re.compile(r"\[[^\[\]\n]+\]")
BOX = "│╭╮╰╯─"


def sources(typer_app, path=()):
    """(command path, its source texts) of every command of `typer_app`, subcommands included."""
    for info in typer_app.registered_commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        texts = [info.help or inspect.getdoc(info.callback) or ""]
        for parameter in inspect.signature(info.callback).parameters.values():
            if isinstance(parameter.default, ParameterInfo) and parameter.default.help:
                texts.append(parameter.default.help)
        yield (*path, name), texts
    for group in typer_app.registered_groups:
        yield from sources(group.typer_instance, (*path, group.name))


def printed(path) -> str:
    """`scalelabs <path> --help` as a person reads it: box borders gone, lines joined with one space."""
    done = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "100", "TERMINAL_WIDTH": "100"})
    assert done.exit_code == 0, done.output
    lines = [line.strip().strip(BOX).strip() for line in done.output.splitlines()]
    return " ".join(" ".join(lines).split())


COMMANDS = list(sources(app))


def test_every_command_is_checked():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"grade", "grade-batch", "otter", "feedback", "release", "new-lab"} <= names, names


@pytest.mark.parametrize("path,texts", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_prints_every_bracketed_word_of_its_source(path, texts):
    shown = printed(path)
    missing = [word for text in texts for word in BRACKETED.findall(" ".join(text.split())) if word not in shown]
    assert not missing, f"scalelabs {' '.join(path)} --help loses {missing}:\n{shown}"


def test_the_install_line_of_the_gradescope_door_is_printed_whole():
    """The issue's own line: `scalelabs otter --help` printed pip install 'scalelabs'."""
    assert "pip install 'scalelabs[otter]'" in printed(("otter",))
