"""The scenarios' pictures through gnuplot (run.py's timeline of scenario A, flaky_run.py's of C)."""
import os
import shutil
import subprocess
import sys
import tempfile


def draw(make_script):
    """Runs the gnuplot script `make_script(work)` returns (its lines; its data files go in
    `work`, a temporary directory removed afterwards). False without gnuplot, or when gnuplot
    fails (its complaint then goes to stderr)."""
    if shutil.which("gnuplot") is None:
        return False
    work = tempfile.mkdtemp(prefix="courier-scenario-plot-")
    try:
        with open(os.path.join(work, "plot.gp"), "w") as f:
            f.write("\n".join(make_script(work)) + "\n")
        done = subprocess.run(["gnuplot", os.path.join(work, "plot.gp")], capture_output=True, text=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if done.returncode != 0:
        print("gnuplot:", done.stderr[-400:], file=sys.stderr)
    return done.returncode == 0
