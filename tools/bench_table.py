#!/usr/bin/python3
"""A `heatsolve bench --json` file as a Markdown table; run when updating docs/PERFORMANCE.md's tables.
usage: tools/bench_table.py BENCH.json"""
import json
import sys

report = json.load(open(sys.argv[1]))
n = report["size"]
print(f"{report['device']}, {n[0]}x{n[1]}x{n[2]} {report['precision']}, "
      f"copy bandwidth {report['copy_bandwidth_GBs']:.1f} GB/s (read + write)\n")
print("| kernel | m | time (ms) | effective GB/s | % of copy | GLUP/s |")
print("|---|---|---|---|---|---|")
for r in report["results"]:
    name = f"**{r['kernel']} (production)**" if r["production"] else r["kernel"]
    print(f"| {name} | {r['tile']} | {r['ms']:.4f} | {r['effective_GBs']:.1f} | {100 * r['fraction_of_copy']:.1f}% | {r['glups']:.2f} |")
