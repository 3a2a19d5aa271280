#!/usr/bin/python3
"""End-to-end tests of materials runs' model (issue 36): configuration errors,
the zone and material fields and tables in checkpoints, restart refusal of
another problem and its override, and the files' layout across rank counts.

usage: materials_tests.py HEATSOLVE WORKDIR TEST [HEATSOLVE_MPI]
Exit 0 pass, 1 fail, 77 skipped (no h5py/numpy, no mpirun or MPI build).
"""
import os
import shutil
import subprocess
import sys

HEATSOLVE, WORK = sys.argv[1], sys.argv[2]
HEATSOLVE_MPI = sys.argv[4] if len(sys.argv) > 4 else ""

MATERIALS = """materials = (
  { name = "air";     conductivity = 0.026; density = 1.2;    specific_heat = 1005.0; },
  { name = "copper";  conductivity = 400.0; density = 8960.0; specific_heat = 385.0;  },
  { name = "silicon"; conductivity = 150.0; density = 2330.0; specific_heat = 700.0;  }
);
"""
REGIONS = """regions = (
  { shape = "box";      min = [0.0, 0.0, 0.0]; max = [0.04, 0.04, 0.004]; material = "copper"; },
  { shape = "cylinder"; axis = "z"; center = [0.02, 0.02]; radius = 0.008; range = [0.004, 0.006];
    material = "silicon"; source = 5.0e7; temperature = 25.0; },
  { shape = "sphere";   center = [0.02, 0.02, 0.01]; radius = 0.004; material = "copper"; source = 1.0e6;
    source_time = [0.0, 1.0]; }
);
"""
BOUNDARY = """boundary = {
  z_high = { type = "convective"; h = 25.0; ambient = 20.0; };
  x_low  = { type = "flux"; value = 1.0e4; };
};
"""


from testkit import Failure, Skip, expect, write  # noqa: F401 (Failure: raised by the checks)
import testkit


def run(args, expect_status=0, command=None, env=None):
    return testkit.run_checked((command or [HEATSOLVE]) + args, expect_status, env=env)


def fresh_dir(name):
    return testkit.fresh_dir(os.path.join(WORK, "materials", name))


def scene(folder, name="chip", steps=0, every=0, materials=MATERIALS, regions=REGIONS, boundary=BOUNDARY, n=(40, 40, 20)):
    """The issue's chip on a spreader in a 40 x 40 x 20 mm box of air."""
    return write(os.path.join(folder, f"{name}.cfg"), f"""
grid = {{ n = [{n[0]}, {n[1]}, {n[2]}]; length = [0.04, 0.04, 0.02]; }};
time = {{ steps = {steps}; dt = 5.0e-4; }};
physics = {{ alpha = 1.0e-5; }};
initial = {{ type = "constant"; value = 20.0; }};
{materials}{regions}{boundary}
output = {{ dir = "{folder}/out"; every = {every}; }};
""")


# ---- configuration errors (issue 36, item 6) -------------------------------------------------

def replace(old, new, text=MATERIALS + REGIONS + BOUNDARY):
    assert old in text, old
    return text.replace(old, new, 1)


BAD = [
    # (name, materials + regions + boundary text, words the message must contain)
    ("unknown material", replace('material = "silicon"', 'material = "silicn"'),
     ["bad.cfg:9", "regions[1]", "unknown material \"silicn\"", "did you mean \"silicon\""]),
    ("duplicate material", replace('name = "silicon"', 'name = "copper"'),
     ["bad.cfg:4", "materials[2]", "duplicate material name \"copper\"", "materials[1]"]),
    ("zero conductivity", replace("conductivity = 400.0", "conductivity = 0.0"),
     ["bad.cfg:3", "materials[1]", "conductivity = 0 must be > 0"]),
    ("negative density", replace("density = 2330.0", "density = -2330.0"),
     ["bad.cfg:4", "materials[2]", "density = -2330 must be > 0"]),
    ("zero specific heat", replace("specific_heat = 1005.0", "specific_heat = 0.0"),
     ["bad.cfg:2", "materials[0]", "specific_heat = 0 must be > 0"]),
    ("missing conductivity", replace("conductivity = 0.026; ", ""), ["bad.cfg:2", "materials[0]", "'conductivity' is missing"]),
    ("infinite conductivity", replace("conductivity = 400.0", "conductivity = 1e999"),
     ["bad.cfg:3", "'conductivity' is not a finite number"]),
    # finite and positive, but 2 k k / (k + k) and rho c leave the double range: an implicit run did nothing
    ("conductivity overflows", replace("conductivity = 400.0", "conductivity = 1e200") + 'time = { scheme = "backward_euler"; };',
     ["bad.cfg:3", "materials[1]", "conductivity = 1e+200", "beyond a double's range", "rescale the units"]),
    ("heat capacity underflows", replace("density = 1.2;    specific_heat = 1005.0", "density = 1e-200; specific_heat = 1e-200"),
     ["bad.cfg:2", "materials[0]", "density x specific_heat = 1e-200 x 1e-200", "beyond a double's range"]),
    ("infinite source", replace("source = 5.0e7", "source = 5.0e999"), ["bad.cfg:9", "'source' is not a finite number"]),
    ("infinite region corner", replace("max = [0.04, 0.04, 0.004]", "max = [0.04, 1e400, 0.004]"),
     ["bad.cfg:7", "'max' holds a number that is not finite"]),
    ("infinite h", replace("h = 25.0", "h = 1e999"), ["boundary.z_high.h", "out of range"]),
    ("missing h", replace("h = 25.0; ", ""), ["bad.cfg:14", "boundary.z_high", "no 'h'", "h = 25.0"]),
    ("negative h", replace("h = 25.0", "h = -25.0"), ["bad.cfg:14", "boundary.z_high.h = -25", "out of range", ">= 0"]),
    ("missing ambient", replace("ambient = 20.0; ", ""), ["bad.cfg:14", "no 'ambient'"]),
    ("missing flux value", replace("value = 1.0e4; ", ""), ["bad.cfg:15", "boundary.x_low", "no 'value'"]),
    ("line feed in a name", replace('name = "copper"', 'name = "cop\\nper"'),
     ["bad.cfg:3", "materials[1]", "holds a control character", "printable"]),
    ("unknown region key", replace("radius = 0.004", "radios = 0.004"), ["bad.cfg:10", "regions[2]", "'radios'", "'radius'"]),
    ("box corners crossed", replace("max = [0.04, 0.04, 0.004]", "max = [0.04, -0.04, 0.004]"),
     ["bad.cfg:7", "regions[0]", "max[1] = -0.04 (y) is below min[1] = 0"]),
    ("axis not a string", replace('axis = "z"', "axis = 3"), ["bad.cfg:8", "regions[1]", "'axis' must be a quoted",
                                                             'axis = "x"']),
    ("unknown shape", replace('shape = "sphere"', 'shape = "ball"'), ["regions[2]", "\"ball\"", "\"sphere\""]),
    ("source_time backwards", replace("source_time = [0.0, 1.0]", "source_time = [1.0, 0.0]"),
     ["bad.cfg:11", "source_time", "t_on < t_off"]),
    ("too many materials", "materials = (" + ", ".join(
        f'{{ name = "m{i}"; conductivity = 1.0; density = 1.0; specific_heat = 1.0; }}' for i in range(65)) + ");",
     ["bad.cfg:1", "materials has 65 entries", "at most 64"]),
    ("too many zones", MATERIALS + "regions = (" + ", ".join(
        f'{{ shape = "sphere"; center = [0.02, 0.02, 0.01]; radius = 0.001; material = "copper"; source = {i + 1}.0; }}'
        for i in range(256)) + ");",
     ["regions[255]", "zone 257", "at most 256"]),
    ("flux without materials", BOUNDARY, ["bad.cfg:3", "boundary.x_low.type = \"flux\"", "needs `materials`"]),
    ("convective without materials", 'boundary = { z_high = { type = "convective"; h = 25.0; ambient = 20.0; }; };',
     ["bad.cfg:1", "boundary.z_high.type = \"convective\"", "needs `materials`"]),
    ("regions without materials", REGIONS, ["bad.cfg:1", "regions need `materials`"]),
]


def test_config_errors():
    folder = fresh_dir("config_errors")
    for name, text, words in BAD:
        path = write(os.path.join(folder, "bad.cfg"), text)
        proc = run([path, "--set", f'output.dir="{folder}/out"'], expect_status=None)
        expect(proc.returncode == 2, f"{name}: exit {proc.returncode}, expected 2; stderr: {proc.stderr}")
        for word in words:
            expect(word in proc.stderr, f"{name}: the message lacks '{word}': {proc.stderr}")
        expect(not os.path.exists(os.path.join(folder, "out")), f"{name}: output written despite the error")
        print(f"ok  {name}: {proc.stderr.strip().splitlines()[-1]}")
    # A region without a point in the box is a warning naming its line; the run goes on.
    cfg = scene(folder, regions=replace("center = [0.02, 0.02, 0.01]", "center = [0.02, 0.02, 0.05]", REGIONS))
    proc = run([cfg, "-q"])
    expect("warning" in proc.stderr and "chip.cfg:15" in proc.stderr and "regions[2] (sphere) contains no point"
           in proc.stderr, f"no warning for an empty region: {proc.stderr}")
    print(f"ok  empty region: {proc.stderr.strip()}")
    # h or ambient on a face that is not convective: ignored, so a warning naming the line (not an error:
    # --set may change a face's type but cannot remove its other keys). A convective face's value is quiet
    # (the stored effective configuration has one on every face).
    cfg = scene(folder, name="unused", boundary=replace('type = "flux"; value = 1.0e4;', 'type = "dirichlet"; '
                'value = 1.0; h = 5.0;', replace("ambient = 20.0;", "ambient = 20.0; value = 0.0;", BOUNDARY)))
    proc = run([cfg, "-q"])
    for words in ["unused.cfg:20: boundary.x_low.h is ignored", 'boundary.x_low.type is "dirichlet"',
                  'set the type to "convective" or remove h']:
        expect(words in proc.stderr, f"no warning '{words}': {proc.stderr}")
    expect("z_high" not in proc.stderr, f"a warning about the convective face's value: {proc.stderr}")
    print(f"ok  unused face keys: {proc.stderr.strip()}")
    # A misspelt list is one of the materials lists, not the nearest scalar key.
    proc = run([cfg, "--set", "materialz=1"], expect_status=2)
    expect("did you mean 'materials'" in proc.stderr, f"--set materialz: {proc.stderr}")


def test_overrides_and_text():
    """--set reaches the new keys and lists; the printed and stored configuration holds them."""
    import h5py
    folder = fresh_dir("overrides")
    cfg = scene(folder)
    proc = run([cfg, "--set", "boundary.z_high.h=30.0", "--set",
                'materials=({ name = "air"; conductivity = 0.03; density = 1.2; specific_heat = 1005.0; },'
                '{ name = "copper"; conductivity = 390.0; density = 8960.0; specific_heat = 385.0; },'
                '{ name = "silicon"; conductivity = 150.0; density = 2330.0; specific_heat = 700.0; })'])
    for words in ["boundary.z_high.h = 30.0", "boundary.z_high.ambient = 20.0", 'boundary.x_low.type = "flux"',
                  'name = "copper"; conductivity = 390.0;', 'shape = "cylinder"; axis = "z"',
                  "source = 5e+07", "source_time = [0.0, 1.0]", "temperature = 25.0"]:
        expect(words in proc.stdout, f"the printed configuration lacks '{words}':\n{proc.stdout}")
    with h5py.File(os.path.join(folder, "out", "chip_000000.hdf"), "r") as f:
        text = f["restart"].attrs["config"].decode()
        expect(list(f["restart"].attrs["material_conductivity"]) == [0.03, 390.0, 150.0], "conductivities")
        expect(list(f["restart"].attrs["boundary_h"]) == [0, 0, 0, 0, 0, 30.0], "boundary_h")
    for words in ["materials = (", "regions = (", 'shape = "sphere"', "conductivity = 390.0", "h = 30.0"]:
        expect(words in text, f"the stored configuration lacks '{words}'")
    # The stored text is a configuration that runs the same problem.
    again = write(os.path.join(folder, "again.cfg"), text.replace(f'"{folder}/out"', f'"{folder}/again"'))
    proc = run([again, "-q", "--set", 'output.name="chip"'])
    expect(not proc.stderr, f"the stored configuration runs with a warning: {proc.stderr}")
    with h5py.File(os.path.join(folder, "out", "chip_000000.hdf"), "r") as a, \
            h5py.File(os.path.join(folder, "again", "chip_000000.hdf"), "r") as b:
        for name in ["zone", "material", "temperature"]:
            expect((a["VTKHDF/PointData/" + name][...] == b["VTKHDF/PointData/" + name][...]).all(), name)
    # h and ambient stay out of a configuration without convective faces: its text is as before.
    plain = write(os.path.join(folder, "plain.cfg"), f'grid = {{ n = [8, 8, 8]; }}; time = {{ steps = 0; }}; '
                                                     f'output = {{ dir = "{folder}/plain"; }};')
    proc = run([plain, "-v"])
    expect(".h = " not in proc.stdout and ".ambient = " not in proc.stdout and "materials = (" not in proc.stdout,
           "a configuration without materials prints h, ambient or materials")
    print("ok  --set of materials and boundary.h; printed and stored text; the text runs again")


def test_summary_heat():
    """The summary's "total heat changed by" of a materials run is the change of sum(rho c T V), the energy
    balance's heat, not of the temperatures' sum (which weighs a cell of air like one of copper)."""
    import re
    folder = fresh_dir("summary_heat")
    proc = run([scene(folder, steps=20, n=(20, 20, 10))])
    changed = re.search(r"total heat changed by (\S+) \(relative\)", proc.stdout)
    balance = re.search(r"energy balance: heat (\S+) -> (\S+) ", proc.stdout)
    expect(changed and balance, f"no heat change or energy balance in the summary:\n{proc.stdout}")
    before, after = float(balance.group(1)), float(balance.group(2))
    want = (after - before) / before
    expect(abs(float(changed.group(1)) - want) <= 1e-3 * abs(want),
           f"total heat changed by {changed.group(1)}, but the energy balance's heat changed by {want:.3e}")
    print(f"ok  the summary's heat change {changed.group(1)} is the energy balance's ({want:.3e})")


def test_summary_balance_steady():
    """A float slab run to steady state (a flux face balanced by a convective one): the net energy in and the
    heat's change are both near 0 while the faces carry F A t in and out, so the summary's relative mismatch
    is the float rounding of that flow, not of the near-zero net."""
    import re
    folder = fresh_dir("summary_balance_steady")
    cfg = write(os.path.join(folder, "slab.cfg"), f"""
grid = {{ n = [20, 3, 3]; length = [0.02, 0.003, 0.003]; }};
time = {{ steps = 200; scheme = "backward_euler"; cfl = 1.0e7; }};
solver = {{ precision = "float"; preconditioner = "jacobi"; max_iterations = 20000; }};
initial = {{ type = "constant"; value = 20.0; }};
{MATERIALS}
regions = ( {{ shape = "box"; min = [0.0, 0.0, 0.0]; max = [0.01, 0.003, 0.003]; material = "copper"; }},
            {{ shape = "box"; min = [0.01, 0.0, 0.0]; max = [0.02, 0.003, 0.003]; material = "silicon"; }} );
boundary = {{ x_low = {{ type = "flux"; value = 1.0e4; }}; x_high = {{ type = "convective"; h = 250.0; ambient = 20.0; }}; }};
output = {{ dir = "{folder}/out"; every = 0; }};
""")
    proc = run([cfg])
    found = re.search(r"in through sources \S+, dirichlet \S+, convective (\S+), flux (\S+):.*mismatch \S+ \((\S+) of",
                      proc.stdout)
    expect(found, f"no energy balance in the summary:\n{proc.stdout}")
    convective, flux, relative = (float(v) for v in found.groups())
    t = float(re.search(r"t = (\S+)\)", proc.stdout).group(1))
    expect(abs(flux - 1.0e4 * 0.003 * 0.003 * t) <= 1e-4 * flux and abs(convective + flux) <= 1e-3 * flux,
           f"a steady slab's faces: flux {flux}, convective {convective}, F A t = {1.0e4 * 0.003 * 0.003 * t}")
    expect(relative <= 1e-5, f"the summary's relative mismatch {relative} is not float rounding of the flow")
    print(f"ok  a float steady slab: {flux:.6g} J in, {convective:.6g} J out, mismatch {relative:.2e} of the flow")


def test_float_source_overflow():
    """A source beyond float's range in a float implicit run: the error names the sources and the double
    precision way out, not alpha and the grid spacing (the constant-coefficient run's causes)."""
    folder = fresh_dir("float_source_overflow")
    regions = replace("source = 5.0e7", "source = 1.0e39", REGIONS)
    cfg = scene(folder, steps=2, regions=regions, n=(20, 20, 10))
    proc = run([cfg, "--set", 'solver.precision="float"', "--set", 'time.scheme="backward_euler"'], expect_status=1)
    for word in ("step 1", "source", "float", 'solver.precision = "double"'):
        expect(word in proc.stderr, f"the overflow message lacks '{word}': {proc.stderr}")
    expect("alpha" not in proc.stderr and "grid.length" not in proc.stderr, f"a materials run blamed on alpha or the "
           f"grid: {proc.stderr}")
    print("ok  a float source beyond float's range: the message names the sources and double precision")


# ---- checkpoints -----------------------------------------------------------------------------

def expected_zones(n=(40, 40, 20), length=(0.04, 0.04, 0.02)):
    """The scene's zones from the shapes' formulas: 0 air, 1 copper, 2 silicon with source, 3 copper with source."""
    import numpy as np
    h = [length[d] / n[d] for d in range(3)]
    z, y, x = np.meshgrid(*[(np.arange(n[d]) + 0.5) * h[d] for d in (2, 1, 0)], indexing="ij")
    zones = np.zeros((n[2], n[1], n[0]), dtype=np.uint8)
    zones[(x <= 0.04) & (y <= 0.04) & (z <= 0.004)] = 1
    zones[((x - 0.02) ** 2 + (y - 0.02) ** 2 <= 0.008 ** 2) & (z >= 0.004) & (z <= 0.006)] = 2
    zones[(x - 0.02) ** 2 + (y - 0.02) ** 2 + (z - 0.01) ** 2 <= 0.004 ** 2] = 3
    return zones


def test_checkpoint_fields():
    import h5py
    import numpy as np
    folder = fresh_dir("checkpoint_fields")
    run([scene(folder, steps=2, every=1), "-q"])
    zones = expected_zones()
    materials = np.array([0, 1, 2, 1], dtype=np.uint8)[zones]
    for step in (0, 2):
        with h5py.File(os.path.join(folder, "out", f"chip_{step:06d}.hdf"), "r") as f:
            pd = f["VTKHDF/PointData"]
            expect(sorted(pd) == ["material", "temperature", "zone"], f"PointData holds {sorted(pd)}")
            for name, want in (("zone", zones), ("material", materials)):
                got = pd[name][...]
                expect(got.dtype == np.uint8 and got.shape == (20, 40, 40), f"{name}: {got.dtype} {got.shape}")
                diff = np.argwhere(got != want)
                expect(len(diff) == 0, f"step {step}: {name} differs from the shapes at {len(diff)} points, first "
                                       f"(z, y, x) = {diff[:1].tolist()}")
            expect(np.bincount(zones.ravel()).tolist()[1:] == [int((zones == z).sum()) for z in (1, 2, 3)] and
                   min((zones == z).sum() for z in range(4)) > 0, "every zone painted")
            a = f["restart"].attrs
            expect(a["material_names"].decode().split("\n") == ["air", "copper", "silicon"], "names")
            expect(list(a["material_conductivity"]) == [0.026, 400.0, 150.0], "conductivity")
            expect(list(a["material_density"]) == [1.2, 8960.0, 2330.0], "density")
            expect(list(a["material_specific_heat"]) == [1005.0, 385.0, 700.0], "specific heat")
            expect(list(a["zone_material"]) == [0, 1, 2, 1], f"zone_material {list(a['zone_material'])}")
            expect(list(a["zone_source"]) == [0.0, 0.0, 5.0e7, 1.0e6], "zone_source")
            expect(list(a["zone_source_on"]) == [-np.inf, -np.inf, -np.inf, 0.0], "zone_source_on")
            expect(list(a["zone_source_off"]) == [np.inf, np.inf, np.inf, 1.0], "zone_source_off")
            expect(list(a["boundary_type"]) == [4, 0, 0, 0, 0, 3], "boundary_type")
            expect(list(a["boundary_value"])[0] == 1.0e4, "flux value")
            expect(list(a["boundary_h"]) == [0, 0, 0, 0, 0, 25.0] and list(a["boundary_ambient"])[5] == 20.0, "h")
    # The region temperature over initial.*: 25 in the die's zone, 20 elsewhere (step 0).
    with h5py.File(os.path.join(folder, "out", "chip_000000.hdf"), "r") as f:
        t = f["VTKHDF/PointData/temperature"][...]
    expect((t[zones == 2] == 25.0).all() and (t[zones != 2] == 20.0).all(), "region temperature not applied")
    # Without materials: no new datasets or attributes.
    plain = write(os.path.join(folder, "plain.cfg"), f'grid = {{ n = [8, 8, 8]; }}; time = {{ steps = 0; }}; '
                                                     f'output = {{ dir = "{folder}/plain"; }};')
    run([plain, "-q"])
    with h5py.File(os.path.join(folder, "plain", "plain_000000.hdf"), "r") as f:
        expect(list(f["VTKHDF/PointData"]) == ["temperature"], "a run without materials writes other fields")
        extra = [k for k in f["restart"].attrs if k.startswith(("material", "zone", "boundary_h", "boundary_amb"))]
        expect(not extra, f"a run without materials writes {extra}")
    print("ok  zone and material fields equal the shapes; tables; region temperature; plain runs unchanged")


def test_frames_and_levels():
    """Frames carry the fields too; every compression level gives the same fields."""
    import h5py
    import numpy as np
    folder = fresh_dir("frames_and_levels")
    zones = expected_zones()
    for level in (0, 1, 9):
        out = os.path.join(folder, f"l{level}")
        run([scene(folder, steps=2, every=2), "-q", "--set", f"output.compression={level}", "--set",
             "output.frame_every=1", "--set", f'output.dir="{out}"'])
        for step in (0, 1, 2):
            with h5py.File(os.path.join(out, f"chip_{step:06d}.hdf"), "r") as f:
                expect((f["VTKHDF/PointData/zone"][...] == zones).all(), f"level {level} step {step}: zones")
                filters = f["VTKHDF/PointData/zone"].compression
                expect((filters == "gzip") == (level > 0), f"level {level}: compression {filters}")
    print("ok  frames and compression levels 0, 1, 9 carry the same zone field")


# ---- restart ---------------------------------------------------------------------------------

def test_restart_refusal():
    import h5py
    folder = fresh_dir("restart_refusal")
    cfg = scene(folder, steps=4, every=2)
    run([cfg, "-q"])
    with h5py.File(os.path.join(folder, "out", "chip_000004.hdf"), "r") as f:
        first = f["VTKHDF/PointData/temperature"][...]
    step2 = os.path.join(folder, "out", "chip_000002.hdf")
    # The same problem restarts (and continues to the same bits).
    run([cfg, "-q", "--restart", step2])
    with h5py.File(os.path.join(folder, "out", "chip_000004.hdf"), "r") as f:
        expect((f["VTKHDF/PointData/temperature"][...] == first).all(), "the restart does not give the same bits")
    # physics.alpha means nothing to a materials run: another one is no reason to refuse its checkpoint.
    run([cfg, "-q", "--restart", step2, "--set", "physics.alpha=1.0"])
    with h5py.File(os.path.join(folder, "out", "chip_000004.hdf"), "r") as f:
        expect((f["VTKHDF/PointData/temperature"][...] == first).all(), "another (unused) alpha changed the bits")
    changes = [
        ("conductivity", MATERIALS.replace("conductivity = 150.0", "conductivity = 148.0"), REGIONS, BOUNDARY,
         ["materials[2] (\"silicon\") conductivity = 150", "has 148"]),
        ("material name", MATERIALS.replace('"air"', '"gas"'), REGIONS, BOUNDARY,
         ["materials[0].name = \"air\"", "\"gas\""]),
        ("region geometry", MATERIALS, REGIONS.replace("radius = 0.008", "radius = 0.009"), BOUNDARY,
         ["at point (", "zone 0 (air)", "zone 2 (silicon, source 50000000"]),
        ("source", MATERIALS, REGIONS.replace("source = 5.0e7", "source = 4.0e7"), BOUNDARY,
         ["zone 2", "source 50000000", "source 40000000"]),
        ("source_time", MATERIALS, REGIONS.replace("source_time = [0.0, 1.0]", "source_time = [0.0, 2.0]"), BOUNDARY,
         ["zone 3", "from t = 0 to 1", "from t = 0 to 2"]),
        ("source_time removed", MATERIALS, REGIONS.replace("source_time = [0.0, 1.0]; ", ""), BOUNDARY,
         ["has zone 3 = copper, source 1000000 from t = 0 to 1 but the configuration has copper, source 1000000 always"]),
        ("convective h", MATERIALS, REGIONS, BOUNDARY.replace("h = 25.0", "h = 26.0"),
         ["boundary.z_high = convective h 25 ambient 20", "convective h 26 ambient 20"]),
        ("flux value", MATERIALS, REGIONS, BOUNDARY.replace("value = 1.0e4", "value = 2.0e4"),
         ["boundary.x_low = flux 10000", "flux 20000"]),
        ("boundary type", MATERIALS, REGIONS, BOUNDARY.replace('type = "flux"; value = 1.0e4;', 'type = "neumann";'),
         ["boundary.x_low = flux 10000", "neumann"]),
    ]
    for name, materials, regions, boundary, words in changes:
        changed = scene(folder, name="changed", steps=4, every=2, materials=materials, regions=regions, boundary=boundary)
        proc = run([changed, "-q", "--restart", step2, "--set", 'output.name="chip"'], expect_status=2)
        for word in words + ["chip_000002.hdf", "--allow-problem-change"]:
            expect(word in proc.stderr, f"{name}: the refusal lacks '{word}': {proc.stderr}")
        print(f"ok  refused {name}: {proc.stderr.strip()[:200]}...")
        run([changed, "-q", "--restart", step2, "--set", 'output.name="chip"', "--allow-problem-change"])
    # Materials against none, and none against materials (the same boundaries, alpha and dt).
    insulated = scene(folder, name="insulated", steps=2, every=2, boundary="")
    plain = write(os.path.join(folder, "plain.cfg"), f'grid = {{ n = [40, 40, 20]; length = [0.04, 0.04, 0.02]; }}; '
                                                     f'time = {{ steps = 2; dt = 5.0e-4; }}; physics = {{ alpha = 1.0e-5; }}; '
                                                     f'output = {{ dir = "{folder}/plain"; every = 2; }};')
    run([insulated, "-q"])
    run([plain, "-q"])
    proc = run([plain, "-q", "--restart", os.path.join(folder, "out", "insulated_000000.hdf")], expect_status=2)
    expect("has materials = a materials list but the configuration has none" in proc.stderr, proc.stderr)
    proc = run([insulated, "-q", "--restart", os.path.join(folder, "plain", "plain_000000.hdf")], expect_status=2)
    expect("has materials = none but the configuration has a materials list" in proc.stderr, proc.stderr)
    print("ok  the same problem restarts bitwise; each change is refused naming it, and allowed on request")


# ---- rank counts -----------------------------------------------------------------------------

MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")


def test_mpi_layout():
    """Checkpoints of 1, 2 (z slabs) and 4 (x and y) ranks hold the same zone and material fields and tables."""
    import h5py
    import numpy as np
    if not HEATSOLVE_MPI or not os.path.exists(HEATSOLVE_MPI) or not shutil.which("mpirun"):
        raise Skip("no MPI build or no mpirun")
    folder = fresh_dir("mpi_layout")
    cfg = scene(folder, steps=0, n=(40, 40, 24))
    runs = {"1": [], "2": ["--set", "parallel.ranks=[1,1,2]"], "4": ["--set", "parallel.ranks=[2,2,1]"]}
    files = {}
    for ranks, extra in runs.items():
        out = os.path.join(folder, f"r{ranks}")
        command = ["mpirun", "--oversubscribe", "-np", ranks, HEATSOLVE_MPI]
        run([cfg, "-q", "--set", f'output.dir="{out}"'] + extra, command=command, env=MPI_ENV)
        files[ranks] = os.path.join(out, "chip_000000.hdf")
    zones = expected_zones(n=(40, 40, 24), length=(0.04, 0.04, 0.02))
    with h5py.File(files["1"], "r") as one:
        expect((one["VTKHDF/PointData/zone"][...] == zones).all(), "one rank's zones differ from the shapes")
        for ranks in ("2", "4"):
            with h5py.File(files[ranks], "r") as other:
                for name in ("zone", "material", "temperature"):
                    a, b = one["VTKHDF/PointData/" + name], other["VTKHDF/PointData/" + name]
                    expect(a.chunks == b.chunks and (a[...] == b[...]).all(), f"{ranks} ranks: {name} differs")
                for key in one["restart"].attrs:
                    if key.startswith(("material", "zone", "boundary")):
                        expect(np.array_equal(one["restart"].attrs[key], other["restart"].attrs[key]),
                               f"{ranks} ranks: /restart {key} differs")
    # A 4-rank run restarts from the one-rank file (painted by each rank, checked on the root).
    run([cfg, "-q", "--set", f'output.dir="{folder}/r1"', "--set", "parallel.ranks=[2,2,1]", "--restart", files["1"]],
        command=["mpirun", "--oversubscribe", "-np", "4", HEATSOLVE_MPI], env=MPI_ENV)
    print("ok  1, 2 and 4 ranks write the same zone, material and temperature fields and tables")


def test_mpi_bitwise(backend=None):
    """Materials runs give one process's bits on 2 and 3 ranks (z slabs, x slabs), explicit Euler and
    Crank-Nicolson, the energy balance included, and a 2-rank checkpoint restarts bitwise on 3 ranks.
    backend "hip": every run on the GPU (one process keeps explicit Euler's energy balance on the
    device, several sum it on the host across processes: the same bits either way)."""
    import h5py
    import numpy as np
    if not HEATSOLVE_MPI or not os.path.exists(HEATSOLVE_MPI) or not shutil.which("mpirun"):
        raise Skip("no MPI build or no mpirun")
    folder = fresh_dir("mpi_bitwise" + (f"_{backend}" if backend else ""))
    chosen = ["--backend", backend] if backend else []
    if backend:
        probe = run([scene(folder, name="probe", steps=1, every=0), "-q"] + chosen, expect_status=None)
        if probe.returncode == 2 and "no usable GPU" in probe.stderr:
            raise Skip("no GPU")
        expect(probe.returncode == 0, f"GPU probe run failed: {probe.stderr}")
    schemes = {"euler": (30, chosen), "crank_nicolson": (6, chosen + ["--set", 'time.scheme="crank_nicolson"',
                                                                       "--set", "time.dt=5.0e-3"])}
    layouts = {"2": ["--set", "parallel.ranks=[1,1,2]"], "3": ["--set", "parallel.ranks=[3,1,1]"]}

    def final(out, steps):
        with h5py.File(os.path.join(out, f"chip_{steps:06d}.hdf"), "r") as f:
            return f["VTKHDF/PointData/temperature"][...].tobytes(), np.array(f["restart"].attrs["energy_in"])

    for scheme, (steps, settings) in schemes.items():
        cfg = scene(folder, name="chip", steps=steps, every=steps // 2, n=(40, 40, 24))
        one = os.path.join(folder, f"{scheme}_one")
        run([cfg, "-q", "--set", f'output.dir="{one}"'] + settings)
        field, energy = final(one, steps)
        for ranks, layout in layouts.items():
            out = os.path.join(folder, f"{scheme}_{ranks}")
            command = ["mpirun", "--oversubscribe", "-np", ranks, HEATSOLVE_MPI]
            run([cfg, "-q", "--set", f'output.dir="{out}"'] + settings + layout, command=command, env=MPI_ENV)
            other_field, other_energy = final(out, steps)
            expect(other_field == field, f"{scheme}, {ranks} ranks: the temperature differs from one process's")
            expect(np.array_equal(other_energy, energy), f"{scheme}, {ranks} ranks: energy in {other_energy} "
                   f"against {energy}")
        # the 2-rank run's middle checkpoint, continued on 3 ranks
        middle = os.path.join(folder, f"{scheme}_2", f"chip_{steps // 2:06d}.hdf")
        resumed = os.path.join(folder, f"{scheme}_resumed")
        os.makedirs(resumed)
        shutil.copy(middle, resumed)
        run([cfg, "-q", "--set", f'output.dir="{resumed}"', "--restart", os.path.join(resumed, os.path.basename(middle))]
            + settings + layouts["3"], command=["mpirun", "--oversubscribe", "-np", "3", HEATSOLVE_MPI], env=MPI_ENV)
        resumed_field, resumed_energy = final(resumed, steps)
        expect(resumed_field == field and np.array_equal(resumed_energy, energy),
               f"{scheme}: a 2-rank checkpoint continued on 3 ranks differs from one process")
        print(f"ok  {scheme}: 1, 2 and 3 ranks and a 2 -> 3 rank restart give the same bits and energy"
              + (f" ({backend})" if backend else ""))


def test_mpi_bitwise_gpu():
    test_mpi_bitwise("hip")


if __name__ == "__main__":
    sys.exit(testkit.main(globals(), sys.argv[3]))
