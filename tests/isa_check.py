#!/usr/bin/python3
"""The `isa` test: the production heat-step kernels (heat_tiled_nt, heat_zwindow, heat_zwideg, heat_fused, and
order_zwindow and order_zplanes of the space orders above 2) must store with nontemporal stores and use no scratch memory; the plain
heat_tiled kernel serves as the control that must not.

usage: isa_check.py amd CODE_OBJECT...   (gfx90a: global_store ... glc slc, private segment 0)
       isa_check.py nvidia PTX_FILE...   (st.global.cs)
One file a translation unit of the backend (cmake/gpu.cmake); the checks cover them all together.
"""
import re
import subprocess
import sys

PRODUCTION = re.compile(r"heat_tiled_nt|heat_zwindow|heat_zahead|heat_zwideg|heat_fused|material_step|order_zwindow|order_zplanes|order_zasync")
CONTROL = re.compile(r"heat_tiledI")


def amd_functions(code_object):
    text = subprocess.run(["llvm-objdump-15", "-d", "--mcpu=gfx90a", code_object], capture_output=True,
                          text=True, check=True).stdout
    functions, name = {}, None
    for line in text.splitlines():
        match = re.match(r"^[0-9a-f]+ <(\S+)>:", line)
        if match:
            name = match.group(1)
            functions[name] = []
        elif name and "global_store" in line:
            functions[name].append(line.split("//")[0].strip())
    return functions


def amd_scratch(code_object):
    notes = subprocess.run(["llvm-readelf-15", "--notes", code_object], capture_output=True, text=True,
                           check=True).stdout
    scratch, name = {}, None
    for line in notes.splitlines():
        line = line.strip()
        if line.startswith(".name:"):
            name = line.split()[-1]
        elif line.startswith(".private_segment_fixed_size:") and name:
            scratch[name] = int(line.split()[-1])
    return scratch


def check_amd(code_objects):
    functions, scratch = {}, {}
    for code_object in code_objects:
        functions.update(amd_functions(code_object))
        scratch.update(amd_scratch(code_object))
    production = [n for n in functions if PRODUCTION.search(n)]
    control = [n for n in functions if CONTROL.search(n)]
    assert production and control, "production or control kernels missing from the code object"
    for name in production:
        stores = functions[name]
        assert stores, f"{name}: no global stores"
        plain = [s for s in stores if not ("glc" in s and "slc" in s)]
        assert not plain, f"{name}: stores without glc slc: {plain}"
        assert scratch.get(name, -1) == 0, f"{name}: scratch {scratch.get(name)} bytes"
        print(f"ok  {name}: {len(stores)} global stores, all glc slc; scratch 0")
    for name in control:
        assert any("slc" not in s for s in functions[name]), f"control {name} should have plain stores"
    print(f"control: {len(control)} heat_tiled kernels use plain stores")


def check_nvidia(ptx_files):
    text = "".join(open(ptx_file).read() for ptx_file in ptx_files)
    entries = re.split(r"(?=^\.(?:visible|weak) \.entry )", text, flags=re.M)
    checked = 0
    for body in entries:
        match = re.match(r"^\.(?:visible|weak) \.entry (\S+)\(", body)
        if not match:
            continue
        name = match.group(1)
        stores = re.findall(r"^\s*st\.global\S*", body, flags=re.M)
        if PRODUCTION.search(name):
            assert stores and all(".cs" in s for s in stores), f"{name}: stores {stores}"
            checked += 1
            print(f"ok  {name}: {len(stores)} st.global.cs")
        elif CONTROL.search(name):
            assert any(".cs" not in s for s in stores), f"control {name} should have plain stores"
    assert checked, "no production kernel in the PTX"


if __name__ == "__main__":
    {"amd": check_amd, "nvidia": check_nvidia}[sys.argv[1]](sys.argv[2:])
