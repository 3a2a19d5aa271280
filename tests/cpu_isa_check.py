#!/usr/bin/python3
"""The CPU heat step's machine code: the streaming variant's hot loop must be vector code that the
compiler really produced, with nontemporal stores: in one function, packed nontemporal stores
(movntpd / movntps) beside packed arithmetic on vector registers (FMA where the build targets it)
and the prefetch of the next row of plane z+1 into L2 (prefetcht2). The CG operator (cg_apply) too:
packed nontemporal stores of q and packed double arithmetic (its stencil; its dot product, summed
in double also for float fields) in its own function.

usage: cpu_isa_check.py LIBHEATCORE.a   Exit 0 pass, 1 fail, 77 skipped (no objdump)."""
import re
import shutil
import subprocess
import sys

if not shutil.which("objdump"):
    print("objdump not found: skipped")
    sys.exit(77)
text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", sys.argv[1]], capture_output=True, text=True,
                      check=True).stdout
members = re.split(r"\n(\S+\.o):\s+file format [^\n]*\n", text)
member = next((body for name, body in zip(members[1::2], members[2::2]) if name.endswith("backend_cpu.c.o")), "")
functions = re.split(r"\n[0-9a-f]+ <([^>]+)>:\n", member)
ok = True
for precision, suffix in (("double", "pd"), ("float", "ps")):
    found = []
    for name, body in zip(functions[1::2], functions[2::2]):
        stores = re.findall(rf"\bv?movnt{suffix}\s+%([xyz]mm)", body)
        arithmetic = re.findall(rf"\bv(?:fmadd\d*{suffix}|mul{suffix}|add{suffix})\s+.*%([xyz]mm)", body)
        prefetches = len(re.findall(r"\bprefetcht2\b", body))
        if stores and arithmetic and prefetches:
            found.append((name, len(stores), stores[0], sum("fmadd" in l for l in re.findall(rf"\bv\w+{suffix}\b", body)),
                          prefetches))
    if found:
        name, count, width, fmas, prefetches = found[0]
        print(f"{precision}: {name}: {count} nontemporal stores of {width} registers, {fmas} packed FMAs, "
              f"{prefetches} prefetcht2")
    else:
        print(f"FAILED {precision}: no function with packed nontemporal stores, packed arithmetic and prefetcht2")
        ok = False
for precision, suffix, tag in (("double", "pd", "_d"), ("float", "ps", "_f")):
    bodies = [body for name, body in zip(functions[1::2], functions[2::2]) if name.startswith("cg_apply" + tag)]
    stores = sum(len(re.findall(rf"\bv?movnt{suffix}\s+%[xyz]mm", body)) for body in bodies)
    sums = sum(len(re.findall(r"\bv(?:fmadd\d*pd|mulpd|addpd)\s+.*%[xyz]mm", body)) for body in bodies)
    if stores and sums:
        print(f"{precision}: cg_apply: {stores} nontemporal stores, {sums} packed double operations (p.q)")
    else:
        print(f"FAILED {precision}: cg_apply has {stores} packed nontemporal stores and {sums} packed double operations")
        ok = False
sys.exit(0 if ok else 1)
