#!/usr/bin/env python3
"""Explicit against implicit time to solution at equal accuracy; run after changing the CG or its preconditioners.

Time to reach a simulated time on the letters case, explicit against implicit, at equal accuracy.

Every run starts from inputs/letters.cfg and ends at the same time T = steps_explicit * 0.9 dt_max.
Accuracy of a final field u: max|u - u_ref| / max|u_ref|, where u_ref is Crank-Nicolson at a
small step (--ref-cfl, rtol 1e-10); its own error is bounded by comparing it with Crank-Nicolson
at twice that step (printed as "reference check"). Time is the time loop's own, from the run's
summary line (start-up and the initial checkpoint excluded, the final checkpoint's hand-over
included), best of --reps.

usage: tools/implicit_accuracy.py HEATSOLVE [--backend cpu|hip] [--grid 320,160,64]
       [--explicit-steps 8000] [--cfl 9,18,36,72,144] [--ref-cfl 2.25] [--reps 1]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(args, extra, tag, folder):
    out = os.path.join(folder, tag)
    command = [args.heatsolve, os.path.join(ROOT, "inputs", "letters.cfg"), "--backend", args.backend,
               "--set", f"grid.n=[{args.grid}]", "--set", "output.every=0", "--set", "output.png=false",
               "--set", f'output.dir="{out}"'] + extra
    best = None
    for _ in range(args.reps):
        proc = subprocess.run(command, check=True, capture_output=True, text=True)
        elapsed = float(re.search(r"^summary: .* in (\S+) s", proc.stdout, re.M).group(1))
        best = elapsed if best is None else min(best, elapsed)
    files = sorted(f for f in os.listdir(out) if f.endswith(".hdf"))
    with h5py.File(os.path.join(out, files[-1]), "r") as f:
        return f["VTKHDF/PointData/temperature"][...].astype(np.float64), best


def implicit(scheme, cfl, steps, rtol):
    return ["--set", f'time.scheme="{scheme}"', "--set", f"time.cfl={cfl}", "--set", f"time.steps={steps}",
            "--set", f"solver.rtol={rtol}"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("heatsolve")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--grid", default="320,160,64")
    parser.add_argument("--explicit-steps", type=int, default=8000)
    parser.add_argument("--cfl", default="9,18,36,72,144")
    parser.add_argument("--ref-cfl", type=float, default=2.25)
    parser.add_argument("--schemes", default="crank_nicolson,backward_euler")
    parser.add_argument("--rtol", default="1e-6")
    parser.add_argument("--reps", type=int, default=1)
    args = parser.parse_args()
    horizon = args.explicit_steps * 0.9  # T in units of dt_max
    with tempfile.TemporaryDirectory() as folder:
        ref_steps = int(round(horizon / args.ref_cfl))
        reference, ref_time = run(args, implicit("crank_nicolson", args.ref_cfl, ref_steps, 1e-10), "ref", folder)
        check, _ = run(args, implicit("crank_nicolson", 2 * args.ref_cfl, ref_steps // 2, 1e-10), "check", folder)
        scale = float(np.max(np.abs(reference)))
        error = lambda u: float(np.max(np.abs(u - reference))) / scale
        print(f"letters {args.grid} on {args.backend}: T = {horizon:g} dt_max; reference Crank-Nicolson at "
              f"{args.ref_cfl:g} dt_max ({ref_steps} steps, rtol 1e-10, {ref_time:.2f} s)")
        print(f"reference check: CN at {2 * args.ref_cfl:g} dt_max differs from it by {error(check):.2e} "
              f"(CN is 2nd order: the reference's own error is about a third of that)")
        print(f"{'scheme':<16}{'dt / dt_max':>12}{'steps':>8}{'loop (s)':>10}{'max error':>12}")
        field, wall = run(args, ["--set", f"time.steps={args.explicit_steps}"], "explicit", folder)
        print(f"{'euler':<16}{0.9:>12g}{args.explicit_steps:>8}{wall:>10.2f}{error(field):>12.2e}")
        sys.stdout.flush()
        for scheme in args.schemes.split(","):
            for cfl in [float(c) for c in args.cfl.split(",")]:
                steps = int(round(horizon / cfl))
                field, wall = run(args, implicit(scheme, cfl, steps, args.rtol), f"{scheme}{cfl}", folder)
                print(f"{scheme:<16}{cfl:>12g}{steps:>8}{wall:>10.2f}{error(field):>12.2e}")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
