"""What every end-to-end test script shares: the failure and skip signals,
running a program and checking its exit status, fresh folders, and the
dispatch from a CTest command line to one test function.

A script calls testkit.main(globals(), name, checks) and exits with its
status: 0 pass, 1 fail, 77 skipped (CTest's SKIP_RETURN_CODE), so a missing
launcher, GPU or Python module reads as skipped with its reason, never as a
pass or a failure.
"""
import os
import shutil
import subprocess


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


def run_checked(command, expect_status=0, timeout=600, tail=2000, **kwargs):
    """Runs command (a list) capturing its output; a status other than expect_status (None: any) fails."""
    proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    if expect_status is not None and proc.returncode != expect_status:
        raise Failure(f"{' '.join(command)}: exit {proc.returncode}, expected {expect_status}\n"
                      f"stdout: {proc.stdout[-tail:]}\nstderr: {proc.stderr[-tail:]}")
    return proc


def fresh_dir(path):
    """An empty folder at path, whatever an earlier run left there."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def main(tests, name, precondition=None):
    """Runs tests["test_" + name] and returns the exit status. precondition(), when given, runs
    first and may raise Skip (no launcher, no build)."""
    try:
        if precondition:
            precondition()
        tests["test_" + name]()
    except ModuleNotFoundError as missing:
        print(f"needs {missing.name} (set HEATSOLVE_PYTHON to a python3 with h5py and numpy): skipped")
        return 77
    except Skip as why:
        print(f"skipped: {why}")
        return 77
    except (Failure, subprocess.TimeoutExpired) as failure:
        print(f"FAILED {name}: {failure}")
        return 1
    print(f"passed {name}")
    return 0

