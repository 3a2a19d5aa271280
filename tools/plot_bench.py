#!/usr/bin/python3
"""Plot effective bandwidth against tile factor for each kernel variant from
`heatsolve bench --json` files (one panel per file).

usage: tools/plot_bench.py OUT.png BENCH.json [BENCH.json ...]
"""
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def panel(axis, report):
    copy = report["copy_bandwidth_GBs"]
    series = defaultdict(list)
    production = None
    for row in report["results"]:
        if row["production"]:
            production = row
        else:
            series[row["kernel"]].append((row["tile"], row["effective_GBs"]))
    for kernel, points in sorted(series.items()):
        points.sort()
        axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=kernel)
    axis.axhline(copy, color="black", linestyle="--", label=f"copy {copy:.0f} GB/s")
    if production:
        axis.axhline(production["effective_GBs"], color="red", linestyle=":",
                     label=f"production step {100 * production['fraction_of_copy']:.1f}% of copy")
    axis.set_xscale("log", base=2)
    axis.set_xticks([1, 2, 4, 8, 16])
    axis.set_xticklabels(["1", "2", "4", "8", "16"])
    n = report["size"]
    axis.set_title(f"{report['device'].split(' (')[0]}: {n[0]}x{n[1]}x{n[2]} {report['precision']}")
    axis.set_xlabel("tile factor m")
    axis.set_ylabel("effective bandwidth (GB/s)")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)


def main():
    out, files = sys.argv[1], sys.argv[2:]
    columns = 2 if len(files) > 1 else 1
    rows = (len(files) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(7 * columns, 4.5 * rows), squeeze=False)
    for axis, path in zip(axes.flat, files):
        with open(path) as f:
            panel(axis, json.load(f))
    for axis in list(axes.flat)[len(files):]:
        axis.axis("off")
    figure.tight_layout()
    figure.savefig(out, dpi=90)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
