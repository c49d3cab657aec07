"""Ctrl-C ends every compiled loop (:mod:`bandits.pure_exploration.compiled.interrupts`): a K-armed run to a budget,
a K-armed and a linear run to a stop, each in a child process that is sent SIGINT while its loop runs a run of days."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

#: what the child runs: imports, then a short run (the kernel compiled or read from the cache), then a run of days
RUNS = {
    "K-armed, to a budget": ("from bandits.fixed_budget import run_fixed_budget as go\n"
                             "env = parse_instance('gaussian:means=1/0.5/0')\n",
                             "go(make_algorithm('top-two'), env, [{n}], seed=0)"),
    "K-armed, to the stop": ("from bandits.run import run\nenv = parse_instance('gaussian:means=1/0.9999999')\n",
                             "run(make_algorithm('top-two'), env, 0.01, seed=0, max_samples={n})"),
    "linear, to the stop": ("import numpy as np\nfrom bandits.core.environments import LinearBandit\n"
                            "from bandits.run import run\nenv = LinearBandit(np.eye(2), np.array([1.0, 0.9999999]))\n",
                            "run(make_algorithm('top-two'), env, 0.01, seed=0, max_samples={n})"),
}


@pytest.mark.parametrize("case", sorted(RUNS))
def test_ctrl_c_ends_a_compiled_run(case):
    """The loop looks at the signals every 1,024 batches and after every batch of as many pulls: SIGINT a second into
    a run of 10^13 pulls ends it with KeyboardInterrupt (its traceback's last line) instead of running on."""
    setup, call = RUNS[case]
    code = ("from bandits.instances import parse_instance\nfrom bandits.registry import make_algorithm\n" + setup
            + call.format(n=200) + "\nprint('started', flush=True)\n" + call.format(n=10**13) + "\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stderr is not None
        if child.stdout.readline() != "started\n":
            pytest.fail(f"the child did not start: {child.stderr.read()}")
        time.sleep(1.0)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode != 0 and err.rstrip().endswith("KeyboardInterrupt"), err
