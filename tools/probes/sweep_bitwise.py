#!/usr/bin/python3
"""The GPU bitwise tests kernels_bitwise_gpu and march_order_bitwise_gpu (tests/cli_tests.py) on a short
list of their variants: the first (the reference), heat_zwindowg8r and the heat_zwide4g* kernels, or those
named; for a GPU round whose time does not allow the whole lists (probe for issue #37; not part of the build).

usage: sweep_bitwise.py HEATSOLVE WORK_DIR [NAME,NAME...]   (from the source tree's root)"""
import os
import sys

named = sys.argv[3].split(",") if len(sys.argv) > 3 else None
sys.argv = ["cli_tests.py", sys.argv[1], sys.argv[2], "short"]
sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
import cli_tests  # noqa: E402

full = cli_tests.expect_kernels_bitwise


def short(label, config, checkpoint, variants, summary, extra=()):
    if named:
        keep = [v for v in variants if v == variants[0] or v[0] in named]
    else:
        keep = [v for v in variants if v == variants[0] or v[0] == "heat_zwindowg8r" or v[0].startswith("heat_zwide4")]
    return full(label, config, checkpoint, keep, f"{label}: {len(keep)} variants {keep}, the same bits", extra)


cli_tests.expect_kernels_bitwise = short
os.makedirs(sys.argv[2], exist_ok=True)
cli_tests.test_kernels_bitwise_gpu()
cli_tests.test_march_order_bitwise_gpu()
print("sweep_bitwise: passed")
