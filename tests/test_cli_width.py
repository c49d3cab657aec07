"""Every command's output fits 80 columns without cutting a header or a value: long text wraps at word boundaries,
never an ellipsis. Run in process (CliRunner: output piped, not a terminal) with COLUMNS=80, plain and with the
colours a terminal gets (FORCE_COLOR, the escape codes stripped before measuring)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bandits.cli import app as bandits_app
from optdesign.cli import app as optdesign_app

runner = CliRunner()
ARMS = str(Path(__file__).resolve().parents[1] / "examples" / "soare_d5_arms.csv")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# (app, arguments, words the output must hold whole: headers and values that used to be cut)
COMMANDS = [
    (bandits_app, ["list"], ["joint-lingame", "Frank-Wolfe", "[karmed|linear]"]),
    (bandits_app, ["run", "xy-adaptive", "-i", "soare:d=3,omega=0.3", "--delta", "0.1", "--seed", "0"],
     ["recommendation", "stopping_rule", "solve", "other"]),
    (bandits_app, ["run", "fws", "-i", "soare:d=6,omega=0.1", "--delta", "0.1"], ["recommendation", "stopping_rule"]),
    (bandits_app, ["run", "mf-tas", "-i", "line:N=5,K=3,means=planted,gap=0.5", "--delta", "0.05"],
     ["recommendation", "stopping_rule"]),
    (bandits_app, ["run", "grapl", "-i", "sbm", "--budget", "500"], ["|S_hat|", "E(500)", "misclassified;"]),
    (optdesign_app, ["compare", "--graph", "line", "--agents", "3:4", "--actions", "2:3", "--seeds", "1", "--m", "1,2"],
     ["4", "Abar", "rho", "T^MF(2)", "exact", "rows"]),
    (optdesign_app, ["solve", "g-optimal", "--arms", ARMS], ["certified", "corank"]),
    (optdesign_app, ["solve", "--help"], ["--formula", "--diagnostics", "g-optimal,"]),
    (optdesign_app, ["--help"], ["solve", "compare"]),
    (optdesign_app, ["compare", "--help"], ["--exact-limit"]),
    (bandits_app, ["--help"], ["study"]),
    (bandits_app, ["study", "--help"], ["--quick"]),
    (bandits_app, ["run", "--help"], ["[thresholding]", "package.module:Class", "glr[:threshold=T,growth=G],"]),
    (bandits_app, ["plot", "--help"], ["--wide"]),
    (bandits_app, ["list", "--help"], ["List"]),
]


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
@pytest.mark.parametrize(("app", "args", "words"), COMMANDS, ids=[" ".join(a) for _, a, _ in COMMANDS])
def test_the_output_fits_80_columns(app, args, words, colour):
    env = {"COLUMNS": "80", "FORCE_COLOR": "1" if colour else None, "NO_COLOR": None, "TERMINAL_WIDTH": None}
    out = runner.invoke(app, args, env=env)
    assert out.exit_code == 0, out.output
    text = ANSI.sub("", out.output)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80, "\n".join(line for line in lines if len(line) > 80)
    assert "…" not in text
    found = set(text.split())
    for word in words:
        assert word in found, word


def test_help_paragraphs_reflow():
    """A docstring's paragraph is one paragraph of help, wrapped to the terminal (its own line breaks gone)."""
    out = runner.invoke(optdesign_app, ["solve", "--help"], env={"COLUMNS": "80", "FORCE_COLOR": None, "NO_COLOR": "1"})
    assert out.exit_code == 0, out.output
    lines = [line.strip() for line in ANSI.sub("", out.output).splitlines()]  # plain, even if a colour leaked in
    start = next(i for i, line in enumerate(lines) if line.startswith("The designs on candidates alone"))
    # the docstring broke this paragraph after "from" and before "--formula": the help fills its lines instead
    assert lines[start + 1].startswith("--arms or build the candidates from --formula")
