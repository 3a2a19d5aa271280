#!/usr/bin/python3
"""End-to-end tests of the heatsolve program: configuration errors, letters
runs, checkpoint layout, series file, bitwise restart and bad restart files.

usage: cli_tests.py HEATSOLVE WORKDIR TEST   (TEST: one of the functions below)
Exit 0 pass, 1 fail, 77 skipped.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import zlib

HEATSOLVE, WORK = sys.argv[1], sys.argv[2]
SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["--set", "grid.n=[48,24,12]", "--set", "grid.length=[4.0,2.0,1.0]"]


from testkit import Failure, Skip, expect, write  # noqa: F401 (Skip: for the tests that need it)
import testkit


def run(args, expect_status=0, **kwargs):
    return testkit.run_checked([HEATSOLVE] + args, expect_status, **kwargs)


def fresh_dir(name):
    return testkit.fresh_dir(os.path.join(WORK, name))


def letters_config(folder, steps=40, every=10, extra="", name="letters", n=(48, 24, 12), text="HI"):
    """A letters run on a plate cooled from below, writing to folder/out/<name>_*.hdf."""
    return write(os.path.join(folder, f"{name}.cfg"), f"""
grid = {{ n = [{n[0]}, {n[1]}, {n[2]}]; length = [4.0, 2.0, 1.0]; }};
time = {{ steps = {steps}; }};
initial = {{ type = "letters"; text = "{text}"; }};
boundary = {{ z_low = {{ type = "dirichlet"; value = 0.0; }}; }};
output = {{ dir = "{folder}/out"; every = {every}; {extra} }};
""")


def read_field(path):
    import h5py
    with h5py.File(path, "r") as f:
        return f["VTKHDF/PointData/temperature"][...]


# ---- configuration errors --------------------------------------------------------------------

BAD_CONFIGS = [
    # (name, file text, extra args, words the message must contain)
    ("syntax", "grid = { n = [8, 8, 8] }\ntime = {", [], ["bad.cfg:", "syntax"]),
    ("byte-order mark", "\ufeffgrid = { n = [8, 8, 8]; };", [], ["bad.cfg:1", "byte-order mark", "without BOM"]),
    ("unknown key", "grid = { nx = 8; };", [], ["bad.cfg:1", "grid.nx", "grid.n"]),
    ("unknown group", "gird = { n = [8, 8, 8]; };", [], ["bad.cfg:1", "gird", "did you mean"]),
    ("misspelt face", 'boundary = { z_hi = { type = "neumann"; }; };', [],
     ["bad.cfg:1", "unknown group 'boundary.z_hi'; did you mean 'boundary.z_high'?"]),
    ("key written as a group", "output = { dirr = { a = 1; }; };", [], ["bad.cfg:1", "did you mean 'output.dir'?"]),
    ("group written as a key", 'boundary = { x_low = "dirichlet"; };', [],
     ["bad.cfg:1: 'boundary.x_low' is a group of settings", "x_low = { type = ...; }"]),
    ("group set as a key", "", ["--set", "time=5"], ["--set time=5: 'time' is a group", "--set time.steps=..."]),
    ("n too small", "grid = { n = [2, 8, 8]; };", [], ["grid.n", "out of range"]),
    ("n wrong type", "grid = { n = 8; };", [], ["grid.n", "three numbers"]),
    ("n float", "grid = { n = [8.5, 8.0, 8.0]; };", [], ["grid.n", "integer"]),
    ("alpha zero", "physics = { alpha = 0.0; };", [], ["physics.alpha", "out of range"]),
    ("alpha string", "physics = { alpha = \"fast\"; };", [], ["physics.alpha", "wrong type"]),
    ("negative length", "grid = { length = [1.0, -1.0, 1.0]; };", [], ["grid.length", "out of range"]),
    ("cfl above one", "time = { cfl = 1.5; };", [], ["time.cfl", "unstable", "crank_nicolson"]),
    ("cfl zero", "time = { cfl = 0.0; };", [], ["time.cfl", "out of range"]),
    ("cfl just above one", "time = { cfl = 1.0000001; };", [], ["bad.cfg:1: time.cfl = 1.0000001:"]),
    ("negative every", "output = { every = -5; };", [], ["output.every", "out of range"]),
    ("negative every_seconds", "output = { every_seconds = -60.0; };", [], ["output.every_seconds", "out of range"]),
    ("history not a bool", "output = { history = \"yes\"; };", [], ["bad.cfg:1", "output.history", "true or false"]),
    ("negative steps", "time = { steps = -1; };", [], ["time.steps", "out of range"]),
    ("unknown initial", "initial = { type = \"square\"; };", [], ["initial.type", "square", "letters"]),
    ("unknown boundary", "boundary = { x_low = { type = \"robin\"; }; };", [], ["boundary.x_low.type", "robin"]),
    ("periodic on one face", "boundary = { x_low = { type = \"periodic\"; }; };", [],
     ["bad.cfg:1: boundary.x_low.type", "periodic", "boundary.x_high", "both"]),
    ("periodic on one face by --set", "", ["--set", 'boundary.y_high.type="periodic"'],
     ["--set: boundary.y_high.type", "boundary.y_low"]),
    ("ranks without mpirun", "parallel = { ranks = [2, 1, 1]; };", [], ["parallel.ranks = [2, 1, 1]", "without MPI", "mpirun -np 2"]),
    ("negative ranks", "parallel = { ranks = [-1, 1, 1]; };", [], ["parallel.ranks", "out of range"]),
    ("compression 12", "output = { compression = 12; };", [], ["output.compression", "out of range"]),
    ("dt unstable", "time = { dt = 1.0; };", [], ["time.dt", "dt_max", "allow_unstable"]),
    ("unknown --set key", "", ["--set", "grid.q=3"], ["--set", "grid.q", "did you mean"]),
    ("bad --set value", "", ["--set", "grid.n=[4,4"], ["--set", "grid.n", "cannot parse"]),
    ("--set string unquoted", "", ["--set", "initial.text=HI"], ["--set", "double quotes", "'initial.text=\"HI\"'"]),
    ("--set word unquoted", "", ["--set", "time.scheme=crank_nicolson"], ["'time.scheme=\"crank_nicolson\"'"]),
    ("bad --set range", "", ["--set", "physics.alpha=-1.0"], ["--set", "physics.alpha", "out of range"]),
    ("bad precision", "solver = { precision = \"half\"; };", [], ["solver.precision", "half"]),
    ("bad letters", "initial = { text = \"H~I\"; };", [], ["bad.cfg:1: initial.text", "character"]),
    ("bad name", "output = { name = \"a/b\"; };", [], ["bad.cfg:1: output.name"]),
    ("name ..", "output = { name = \"..\"; };", [], ["bad.cfg:1: output.name = \"..\"", "must not begin with '.'"]),
    ("name .", "output = { name = \".\"; };", [], ["output.name = \".\"", "must not begin with '.'"]),
    ("hidden name", "output = { name = \".run\"; };", [], ["output.name = \".run\"", "hidden"]),
    ("too big", "grid = { n = [100000, 100000, 100000]; };", [], ["GB", "grid.n"]),
    ("range stated", "grid = { n = [2, 8, 8]; };", [], ["grid.n = 2", "valid: [3, 1048576]"]),
    ("rtol one", "solver = { rtol = 1.0; };", [], ["solver.rtol", "valid: (0, 1)"]),
    ("long name", "output = { name = \"" + "a" * 200 + "\"; };", [], ["output.name", "200 characters; at most 127"]),
    ("int overflow", "time = { steps = 99999999999; };", [], ["bad.cfg:1", "99999999999", "L suffix"]),
    ("int64 overflow", "time = { steps = 99999999999999999999; };", [], ["99999999999999999999", "64 bits"]),
    ("--set overflow", "", ["--set", "output.every=5000000000"], ["--set", "5000000000", "L suffix"]),
    ("png index", "output = { png = true; png_index = 500; };", [], ["bad.cfg:1: output.png_index = 500", "[0, 31]"]),
    ("gpu kernel on cpu", "solver = { backend = \"cpu\"; kernel = \"fast\"; };", [], ["bad.cfg:1: solver.kernel", "heat_tiled"]),
    ("gpu tile on cpu", "solver = { backend = \"cpu\"; tile = 3; };", [], ["bad.cfg:1: solver.tile = 3", "1, 2, 4, 8 or 16"]),
    ("gpu tile by --set", "", ["--set", "solver.tile=3"], ["--set: solver.tile = 3"]),
    ("gpu block on cpu", "solver = { block = [16, 16, 2]; };", [], ["bad.cfg:1: solver.block", "at most 256"]),
]


def test_bad_configs():
    folder = fresh_dir("bad_configs")
    for name, text, extra, words in BAD_CONFIGS:
        path = write(os.path.join(folder, "bad.cfg"), text)
        proc = run([path] + extra + ["--set", f"output.dir=\"{folder}/out\""], expect_status=None)
        expect(proc.returncode == 2, f"{name}: exit {proc.returncode}, expected 2; stderr: {proc.stderr}")
        for word in words:
            expect(word in proc.stderr, f"{name}: message lacks '{word}': {proc.stderr}")
        expect(not os.path.exists(os.path.join(folder, "out")), f"{name}: output written despite the error")
        print(f"ok  {name}: {proc.stderr.strip().splitlines()[0]}")
    # A configuration file whose path fills the message's place for it (a sanitizer build catches an overflow).
    deep = os.path.join(folder, *["d" * 200] * 3)
    os.makedirs(deep, exist_ok=True)
    proc = run([write(os.path.join(deep, "bad.cfg"), 'boundary = { x_low = { type = "periodic"; }; };')],
               expect_status=2)
    expect('boundary.x_low.type = "periodic"' in proc.stderr, proc.stderr)
    proc = run([os.path.join(folder, "missing.cfg")], expect_status=2)
    expect("missing.cfg" in proc.stderr, "missing file not named")
    for line in proc.stderr.splitlines() + [proc.stdout]:
        expect("(-1" not in line, f"an overflow shown as -1: {line}")
    # Found before the backend starts, exit 2, nothing written.
    cfg = write(os.path.join(folder, "good.cfg"), "grid = { n = [8, 8, 8]; };")
    proc = run([cfg, "--restart", os.path.join(folder, "nothere.hdf")], expect_status=2)
    expect("nothere.hdf" in proc.stderr and "--restart latest" in proc.stderr, proc.stderr)
    write(os.path.join(folder, "afile"), "x")
    proc = run([cfg, "--set", f'output.dir="{folder}/afile"'], expect_status=2)
    expect("is a file, not a folder" in proc.stderr, proc.stderr)
    proc = run(["bench", "--json", folder], expect_status=2)
    expect("is a folder" in proc.stderr, proc.stderr)
    # A float run too large for memory is not told to use float precision.
    big = write(os.path.join(folder, "big.cfg"), 'grid = { n = [100000, 100000, 100000]; }; solver = { precision = "float"; };')
    proc = run([big, "--backend", "cpu"], expect_status=2)
    expect("GB" in proc.stderr and "use float" not in proc.stderr and 'precision = "float"' not in proc.stderr,
           f"float advice to a float run: {proc.stderr}")
    proc = run([SOURCE + "/inputs"], expect_status=2)
    expect("is a folder" in proc.stderr and "letters.cfg" in proc.stderr, f"folder as CONFIG: {proc.stderr}")
    expect(not os.path.exists(os.path.join(folder, "out")), "output written despite an error")
    proc = run([], expect_status=2)
    proc = run(["--backend", "gpu", "x.cfg"], expect_status=2)
    expect("--backend" in proc.stderr, "bad --backend not named")


def test_cli_basics():
    proc = run(["--help"])
    expect("--restart" in proc.stdout and "--set" in proc.stdout, "help lacks options")
    # Every option the parser takes is in the help (bench's -q was missing).
    source = open(os.path.join(SOURCE, "app", "cli.c")).read()
    for option in sorted(set(re.findall(r'\{"([a-z-]+)", (?:no|required)_argument', source))):
        expect(f"--{option}" in proc.stdout, f"--help lacks --{option}")
    expect("-q, --quiet" in proc.stdout.split("bench options:")[1], "bench help lacks -q")
    proc = run(["--version"])
    expect(proc.stdout.startswith("heatsolve "), "version line")
    folder = fresh_dir("cli_basics")
    cfg = letters_config(folder, steps=4, every=0)
    proc = run([cfg, "--backend", "hip"], expect_status=None)
    if proc.returncode == 2:
        expect("GPU" in proc.stderr, "--backend hip without GPU: unclear message")
    # The file's solver.backend is named too: that user typed no --backend.
    proc = run([cfg, "--set", 'solver.backend="hip"'], expect_status=None)
    if proc.returncode == 2:
        expect('solver.backend = "hip"' in proc.stderr, f"solver.backend hip without GPU: {proc.stderr}")
    proc = run([cfg, "--quiet", "--overwrite"])
    expect(proc.stdout == "", f"--quiet printed: {proc.stdout}")
    # A value on an insulated face is ignored: said where it is not 0 (a gradient meant for a neumann face).
    proc = run([cfg, "--quiet", "--overwrite", "--set", "boundary.z_high.value=7.0"])
    expect('--set: boundary.z_high.value = 7 is ignored: boundary.z_high.type is "neumann"' in proc.stderr and
           "z_low" not in proc.stderr, f"value on a neumann face: {proc.stderr}")
    # Letters that cover no point leave a plate and air: a warning naming the key and the fix.
    for extra, words in ((["--set", "initial.plate_thickness=1.0"], "--set: the letters' band holds no point"),
                         (["--set", 'initial.text="HEATSOLVE IS GREAT"', "--set", "initial.margin=0.45"],
                          '--set: initial.text = "HEATSOLVE IS GREAT" covers no point')):
        proc = run([cfg, "--quiet", "--overwrite"] + extra)
        expect(words in proc.stderr, f"letters on no point: {proc.stderr}")
    proc = run([cfg, "--quiet", "--overwrite"])
    expect("letters" not in proc.stderr, f"a warning about letters that show: {proc.stderr}")
    # A restart's allowances given to a fresh run would do nothing: said, not passed over.
    for flag in ("--allow-scheme-change", "--allow-problem-change"):
        proc = run([cfg, "--quiet", "--overwrite", flag])
        expect(f"{flag} has no effect without --restart" in proc.stderr, f"{flag} alone: {proc.stderr}")
    proc = run([cfg, "--overwrite"])
    expect("initial.text" in proc.stdout and "summary:" in proc.stdout and "GLUP/s" in proc.stdout, "no config/summary")
    for args, words in (([cfg, "--restart"], "--restart needs a value"), ([cfg, "--restrat", "latest"],
                        "--restrat: unknown option"), (["bench", "--size"], "--size needs a value"),
                        (["bench", "--set", "x=1"], "--set: unknown bench option")):
        proc = run(args, expect_status=2)
        expect(words in proc.stderr and "missing value" not in proc.stderr, f"{args}: {proc.stderr}")


def test_install_has_docs():
    """`cmake --install` brings the configuration reference that --help and the errors point at."""
    prefix = fresh_dir("install")
    subprocess.run(["cmake", "--install", os.path.dirname(HEATSOLVE), "--prefix", prefix], check=True,
                   capture_output=True, timeout=120)
    installed = os.path.join(prefix, "bin", "heatsolve")
    proc = testkit.run_checked([installed, "--help"], 0)
    expect("share/doc/heatsolve/CONFIG.md" in proc.stdout, f"--help: {proc.stdout}")
    for name in ("CONFIG.md", "PARALLEL.md", "README.md"):
        expect(os.path.exists(os.path.join(prefix, "share", "doc", "heatsolve", name)), f"{name} not installed")
    expect(os.path.exists(os.path.join(prefix, "share", "heatsolve", "inputs", "letters.cfg")), "inputs not installed")
    print(f"cmake --install: the program, inputs and docs under {prefix}")


def test_restart_latest_only_frames():
    """--restart latest in a folder that holds frames but no checkpoint (removed to save room) says so and
    how to go on, exit 2, rather than that none of 0 checkpoints reads back whole."""
    folder = fresh_dir("latest_only_frames")
    cfg = letters_config(folder, steps=40, every=0, extra="frame_every = 10;")
    run([cfg, "-q"])
    out = os.path.join(folder, "out")
    for step in (0, 40):
        os.remove(os.path.join(out, f"letters_{step:06d}.hdf"))
    proc = run([cfg, "-q", "--restart", "latest", "--set", "time.steps=50"], expect_status=2)
    for words in (f"{out} holds 3 frames", "no checkpoint to continue from", "--overwrite"):
        expect(words in proc.stderr, f"message lacks {words!r}: {proc.stderr}")
    expect("none of the" not in proc.stderr, proc.stderr)
    print(proc.stderr.strip())


def test_frames():
    """Frames between restart checkpoints: float32, marked not restartable, listed in the series; a
    restart refuses them by name and --restart latest passes over them to continue bitwise."""
    import h5py
    folder = fresh_dir("frames")
    cfg = letters_config(folder, steps=40, every=0, extra="frame_every = 10;")
    proc = run([cfg])
    out = os.path.join(folder, "out")
    expect("checkpoints: 2 written" in proc.stdout and "frames: 3 written" in proc.stdout, proc.stdout[-600:])
    expect(re.search(r"output: 2 checkpoints .*and 3 frames", proc.stdout), f"estimate: {proc.stdout}")
    names = [e["name"] for e in json.load(open(os.path.join(out, "letters.hdf.series")))["files"]]
    expect(names == [f"letters_{s:06d}.hdf" for s in (0, 10, 20, 30, 40)], f"series {names}")
    for step in (0, 10, 20, 30, 40):
        with h5py.File(os.path.join(out, f"letters_{step:06d}.hdf"), "r") as f:
            frame = step in (10, 20, 30)
            dtype = f["VTKHDF/PointData/temperature"].dtype
            expect(dtype == ("float32" if frame else "float64"), f"step {step}: {dtype}")
            expect(int(f["restart"].attrs["restartable"]) == (0 if frame else 1), f"step {step}: restartable mark")
    reference = read_field(os.path.join(out, "letters_000040.hdf"))
    proc = run([cfg, "--restart", os.path.join(out, "letters_000030.hdf"), "--set", "time.steps=50"], expect_status=2)
    expect("is a frame" in proc.stderr and "output.every" in proc.stderr, proc.stderr)
    os.remove(os.path.join(out, "letters_000040.hdf"))
    proc = run([cfg, "--restart", "latest"])
    expect("passed over 3 newer frames" in proc.stdout and "letters_000000.hdf" in proc.stdout, proc.stdout)
    expect(read_field(os.path.join(out, "letters_000040.hdf")).tobytes() == reference.tobytes(),
           "continuing past the frames is not bitwise")
    print("frames 10, 20, 30 float32 and not restartable; restart refuses them, latest passes over them, bitwise")


def writes_in_flight(backend, tag):
    """Several checkpoints written at once (output.writes_in_flight = 4) give what one at a time
    gives: the series in step order, the same fields and PNGs, frames kept and output.keep's
    pruning alike; a restart from one of them is bitwise."""
    runs = {}
    for jobs in (1, 4):
        folder = fresh_dir(f"in_flight_{tag}_{jobs}")
        cfg = letters_config(folder, steps=60, every=10,
                             extra=f"frame_every = 5; png = true; keep = 3; writes_in_flight = {jobs};")
        proc = run([cfg, "--backend", backend])
        expect(("up to 4 writes at once" in proc.stdout) == (jobs == 4), f"summary: {proc.stdout[-400:]}")
        out = os.path.join(folder, "out")
        names = [e["name"] for e in json.load(open(os.path.join(out, "letters.hdf.series")))["files"]]
        runs[jobs] = (cfg, out, names, sorted(n for n in os.listdir(out) if not n.startswith(".")))
    steps = sorted(list(range(5, 60, 10)) + [40, 50, 60])
    expect(runs[4][2] == [f"letters_{s:06d}.hdf" for s in steps], f"series {runs[4][2]}")
    expect(runs[4][2] == runs[1][2] and runs[4][3] == runs[1][3], f"files {runs[4][3]} against {runs[1][3]}")
    for name in runs[1][3]:
        one, four = (os.path.join(runs[j][1], name) for j in (1, 4))
        if name.endswith(".hdf"):
            expect(read_field(one).tobytes() == read_field(four).tobytes(), f"{name}: fields differ")
        elif name.endswith(".png"):
            expect(open(one, "rb").read() == open(four, "rb").read(), f"{name}: PNGs differ")
    cfg, out = runs[4][0], runs[4][1]
    _, final = restart_from_copy(os.path.dirname(out), cfg, 40, 60, f"in_flight_{tag}", ["--backend", backend])
    expect(final.tobytes() == read_field(os.path.join(out, "letters_000060.hdf")).tobytes(),
           "restart from a checkpoint written beside others: field differs")
    print(f"{backend}: 4 writes at once, {len(runs[4][3])} files equal to one at a time; restart bitwise")


def test_png_failure_keeps_checkpoint():
    """A quick-look PNG that cannot be written (here: a folder stands at its name) is a warning:
    its checkpoint is complete and still listed, and the run ends well."""
    folder = fresh_dir("png_failure")
    out = os.path.join(folder, "out")
    cfg = letters_config(folder, steps=20, every=10, extra="png = true;")
    run([cfg, "-q", "--set", "time.steps=10"])
    os.makedirs(os.path.join(out, "letters_000020.png", "blocker"))
    proc = run([cfg, "-q", "--restart", "latest"], expect_status=None)
    expect(proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}")
    expect("quick-look PNG of step 20 was not written" in proc.stderr, f"no warning: {proc.stderr}")
    names = [e["name"] for e in json.load(open(os.path.join(out, "letters.hdf.series")))["files"]]
    expect(names == [f"letters_{s:06d}.hdf" for s in (0, 10, 20)], f"series {names}")
    read_field(os.path.join(out, "letters_000020.hdf"))
    expect(not [n for n in os.listdir(out) if ".tmp" in n], "temporary file left")
    print(proc.stderr.strip().splitlines()[-1])


def test_writes_in_flight():
    writes_in_flight("cpu", "cpu")


def test_deflate_engines():
    """Checkpoints written by the ISA-L build and by the zlib build (HEATSOLVE_ZLIB) are standard
    HDF5 deflate: each build restarts from the other's files to the same bits, and h5py and
    h5dump read both."""
    import numpy as np
    other = os.environ["HEATSOLVE_ZLIB"]
    folder = fresh_dir("deflate_engines")
    cfg = letters_config(folder, steps=20, every=10)
    fields = {}
    for tag, exe in (("isal", HEATSOLVE), ("zlib", other)):
        target = os.path.join(folder, tag)
        subprocess.run([exe, cfg, "-q", "--set", f'output.dir="{target}"'], check=True, timeout=300)
        fields[tag] = read_field(os.path.join(target, "letters_000020.hdf"))
        dump = subprocess.run(["h5dump", "-d", "/VTKHDF/PointData/temperature", os.path.join(target, "letters_000010.hdf")],
                              capture_output=True, text=True)
        expect(dump.returncode == 0 and "DATA" in dump.stdout, f"h5dump of the {tag} file: {dump.stderr[-300:]}")
    expect(fields["isal"].tobytes() == fields["zlib"].tobytes(), "the two builds computed different fields")
    isal_file, zlib_file = (os.path.join(folder, t, "letters_000010.hdf") for t in ("isal", "zlib"))
    expect(open(isal_file, "rb").read() != open(zlib_file, "rb").read(), "both builds wrote identical bytes: same engine?")
    for tag, exe, source in (("zlib reads isal", other, isal_file), ("isal reads zlib", HEATSOLVE, zlib_file)):
        target = fresh_dir("deflate_engines_" + tag.replace(" ", "_"))
        subprocess.run([exe, cfg, "-q", "--restart", source, "--set", f'output.dir="{target}"'], check=True, timeout=300)
        final = read_field(os.path.join(target, "letters_000020.hdf"))
        expect(final.tobytes() == fields["isal"].tobytes(), f"{tag}: restart differs")
        print(f"{tag}: restart bitwise equal")
    print(f"both builds' files read by h5py and h5dump; fields {np.asarray(fields['isal']).shape}")


def test_lock_file_link_refused():
    """A link planted at the lock file's name (a folder others may write) is refused, exit 2, naming it:
    the run never writes through it into the file it points to."""
    folder = fresh_dir("lock_link")
    out = os.path.join(folder, "out")
    os.makedirs(out)
    precious = write(os.path.join(folder, "precious.txt"), "the user's own data\n")
    os.symlink(precious, os.path.join(out, ".letters.lock"))
    cfg = letters_config(folder, steps=10, every=10)
    proc = run([cfg, "-q"], expect_status=2)
    expect(f"{out}/.letters.lock is a symbolic link" in proc.stderr and "remove it" in proc.stderr, proc.stderr)
    with open(precious) as f:
        kept = f.read()
    expect(kept == "the user's own data\n", f"the file the link points to now holds {kept!r}")
    expect(os.listdir(out) == [".letters.lock"], f"the refused run wrote {os.listdir(out)}")
    print(proc.stderr.strip())


def test_temp_file_links_ignored():
    """Links planted at the temporary names of a live run's next files (its pid is in the lock file), in
    a folder others may write: the run writes new files of its own, never through them into the files
    they point to; its checkpoints and series stay whole, and the next start removes the links left."""
    folder = fresh_dir("temp_links")
    out = os.path.join(folder, "out")
    cfg = long_config(folder, steps=10 ** 9, every=100, extra="png = true;")
    proc = start([cfg, "-q"])
    try:
        wait_for_file(os.path.join(out, "long_000000.hdf"))
        pid = re.match(r"pid (\d+) ", open(os.path.join(out, ".long.lock")).read()).group(1)
        victim = write(os.path.join(folder, "victim.txt"), "the user's own data\n")
        # Planted while the run is stopped, at the names of checkpoints and PNGs from two after the newest
        # file on: none of them is being created (the series and the history go through the same function).
        proc.send_signal(signal.SIGSTOP)
        newest = max(int(n.lstrip(".")[5:11]) for n in os.listdir(out) if re.match(r"\.?long_\d{6}\.hdf", n))
        for step in range(newest + 200, newest + 40001, 100):
            for ext in ("hdf", "png"):
                os.symlink(victim, os.path.join(out, f".long_{step:06d}.{ext}.tmp-{pid}"))
        proc.send_signal(signal.SIGCONT)
        written = len([n for n in os.listdir(out) if n.endswith(".hdf")])
        end = time.time() + 60
        while len([n for n in os.listdir(out) if n.endswith(".hdf")]) < written + 3:
            expect(time.time() < end and proc.poll() is None, "no more checkpoints (or the run ended)")
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    expect(proc.returncode == 128 + signal.SIGTERM, f"exit {proc.returncode}: {err}")
    with open(victim, "rb") as f:
        kept = f.read(200)
    expect(kept == b"the user's own data\n", f"a file that links planted in {out} point to now holds {kept[:40]!r}")
    files = sorted(n for n in os.listdir(out) if not n.startswith("."))
    expect(not [n for n in files if os.path.islink(os.path.join(out, n))], f"links among the run's files: {files}")
    names = [e["name"] for e in json.load(open(os.path.join(out, "long.hdf.series")))["files"]]
    expect(names == [n for n in files if n.endswith(".hdf")], f"series {names}, files {files}")
    stop = int(names[-1][5:11])
    run([cfg, "-q", "--restart", "latest", "--set", f"time.steps={stop + 10}"])
    left = [n for n in os.listdir(out) if ".tmp-" in n]
    expect(not left, f"the next start left {len(left)} planted links, such as {left[:2]}")
    print(f"links at the temporary names of pid {pid}: checkpoints to step {stop} written beside them, their target "
          "untouched, the rest removed at the next start")


def test_output_ownership():
    """A folder holds one run's files: a fresh run refuses an earlier run's files unless --overwrite,
    a live run's lock refuses a second run and a restart, kill -9 leaves no blocking lock, stale
    temporary files are removed with one line."""
    folder = fresh_dir("ownership")
    out = os.path.join(folder, "out")
    cfg = letters_config(folder, steps=20, every=10)
    run([cfg, "-q"])
    write(os.path.join(out, "notes.txt"), "the user's own file")
    write(os.path.join(out, "other_000010.hdf"), "another run's file")
    before = checkpoint_state(out)
    proc = run([cfg, "--set", "grid.n=[40,24,12]"], expect_status=2)
    for word in ("already holds", "--restart latest", "--overwrite", "output.dir"):
        expect(word in proc.stderr, f"refusal lacks '{word}': {proc.stderr}")
    expect(checkpoint_state(out) == before, "a refused run changed the folder")
    proc = run([cfg, "--overwrite", "--set", "time.steps=10"])
    expect("--overwrite: removed 5 files" in proc.stdout, f"overwrite line: {proc.stdout}")
    left = sorted(os.listdir(out))
    expect(left == ["letters.hdf.series", "letters.history.csv", "letters_000000.hdf", "letters_000010.hdf",
                    "notes.txt", "other_000010.hdf"], f"after --overwrite: {left}")
    steps = [line.split(",")[0] for line in open(os.path.join(out, "letters.history.csv"))]
    expect(steps == ["step", "0", "10"], f"the history after --overwrite holds the new run's rows only: {steps}")
    # A live run holds the folder: a second run and a restart are refused, naming it.
    live = long_config(folder, steps=10 ** 9, every=10 ** 9)
    proc = start([live, "-q"])
    wait_for_file(os.path.join(out, "long_000000.hdf"))
    for args in ([live, "--overwrite"], [live, "--restart", "latest"]):
        other = run(args, expect_status=2)
        expect(f"pid {proc.pid} on " in other.stderr and "started" in other.stderr, f"holder not named: {other.stderr}")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stale = os.path.join(out, f".long_000400.hdf.tmp-{proc.pid}")
    write(stale, "half a checkpoint")
    proc = run([live, "--restart", "latest", "--set", "time.steps=20"])
    expect("removed 1 temporary file" in proc.stdout and not os.path.exists(stale), f"stale file: {proc.stdout}")
    expect(not [n for n in os.listdir(out) if n.endswith(".lock")], "lock file left by a finished run")
    print("refusal, --overwrite of that name only, live-run lock, kill -9, stale temporary file: all as expected")


def test_console_and_messages():
    """Settings that differ from the defaults (all with -v), the output estimate, the implicit
    banner, relative error positions, a file name with a space, heat change wording."""
    folder = fresh_dir("console")
    cfg = write(os.path.join(folder, "my run.cfg"), f"""grid = {{ n = [24, 16, 8]; }};
time = {{ steps = 4; }};
initial = {{ type = "constant"; value = 0.0; }};
output = {{ dir = "{folder}/out"; every = 2; }};
""")
    proc = run([cfg])
    lines = proc.stdout.splitlines()
    settings = [l.strip() for l in lines if l.startswith("  ")]
    expect(settings == ["grid.n = [24, 16, 8]", "time.steps = 4", 'initial.type = "constant"',
                        f'output.dir = "{folder}/out"', "output.every = 2"], f"changed settings: {settings}")
    expect(os.path.exists(os.path.join(folder, "out", "my_run_000004.hdf")), "name from 'my run.cfg'")
    # The stem drops the last extension only: two configurations that differ after a dot are two runs.
    for version in ("1.5", "1.7"):
        shutil.copy(cfg, os.path.join(folder, f"case_{version}.cfg"))
        run([os.path.join(folder, f"case_{version}.cfg"), "-q"])
        expect(os.path.exists(os.path.join(folder, "out", f"case_{version}_000004.hdf")),
               f"name from 'case_{version}.cfg': {sorted(os.listdir(os.path.join(folder, 'out')))}")
    expect(re.search(r"output: 3 checkpoints into .*, at most 0.0246 MB each", proc.stdout), proc.stdout)
    expect("(absolute: the total was 0)" in proc.stdout, f"heat change of a zero field: {proc.stdout}")
    proc = run([cfg, "-v", "--overwrite"])
    expect(sum(1 for l in proc.stdout.splitlines() if l.startswith("  ")) > 40, "-v does not print every setting")
    proc = run([cfg, "--restart", "latest", "--set", "time.steps=8"])
    expect("since step 4 (the restart)" in proc.stdout, f"restart heat change: {proc.stdout}")
    proc = run([cfg, "--overwrite", "--set", 'time.scheme="crank_nicolson"', "--set", "time.cfl=4.0"])
    expect("chebyshev, degree 8" in proc.stdout, f"implicit banner: {proc.stdout}")
    # A runtime error names its source position relative to the project, not the build machine's path.
    damaged = os.path.join(folder, "damaged.hdf")
    with open(os.path.join(folder, "out", "my_run_000004.hdf"), "rb") as src, open(damaged, "wb") as dst:
        dst.write(src.read()[:5000])
    proc = run([cfg, "--restart", damaged, "--set", f'output.dir="{folder}/o2"'], expect_status=1)
    expect("damaged.hdf" in proc.stderr and "(reported at" not in proc.stderr,
           f"a user's error names the file, not heatsolve's source: {proc.stderr}")
    print("settings, estimate, banner, names, heat change wording: as expected")


def test_threads_and_binding():
    """The run says where its OpenMP threads run, warns when they outnumber the cores it may use,
    leaves OMP_PROC_BIND to the user; the CPU step's variant is chosen by timing, kept in the
    tuning cache for the next run of the same problem, and timed again where the cache's line is
    not a variant."""
    if not shutil.which("taskset"):
        print("no taskset: skipped")
        sys.exit(77)
    folder = fresh_dir("threads")
    cache = os.path.join(folder, "tuning.txt")
    env = dict(os.environ, HEATSOLVE_TUNING_CACHE=cache)
    env.pop("OMP_PROC_BIND", None), env.pop("OMP_PLACES", None)
    cfg = letters_config(folder, steps=20, every=0)
    crowded = dict(env, OMP_NUM_THREADS="4")
    proc = subprocess.run(["taskset", "-c", "0", HEATSOLVE, cfg, "--backend", "cpu"], capture_output=True, text=True,
                          timeout=600, env=crowded)
    expect(proc.returncode == 0, f"crowded run: exit {proc.returncode}: {proc.stderr}")
    expect("may run on 1 core but has 4 OpenMP threads" in proc.stderr and "OMP_NUM_THREADS=1" in proc.stderr,
           f"no warning for 4 threads on 1 core: {proc.stderr}")
    expect("OpenMP: not pinned (fewer than 8 cores" in proc.stdout, f"binding line: {proc.stdout}")
    expect("heat_step or heat_step_nt, chosen by timing the first steps" in proc.stdout, proc.stdout)
    chosen = dict(env, OMP_PROC_BIND="close")
    proc = run([cfg, "--backend", "cpu", "--overwrite"], env=chosen)
    expect("OpenMP: placed by OMP_PROC_BIND=close" in proc.stdout, f"the user's binding: {proc.stdout}")
    expect("warning" not in proc.stderr or "OpenMP threads" not in proc.stderr, f"spurious warning: {proc.stderr}")
    bench = ["bench", "--backend", "cpu", "--size", "32", "--reps", "3"]
    timed = r"production step .*: (heat_step(_nt)?), chosen by timing: [0-9.e-]+ ms a step against"
    found = re.search(timed, run(bench, env=env).stdout)
    expect(found, "the trial's choice is not reported")
    with open(cache) as f:
        lines = [line.rstrip("\n").split("\t") for line in f]
    mine = [line for line in lines if line[1:4] == ["32x32x32", "double", "step"]]
    expect(len(mine) == 1 and mine[0][0].startswith("CPU ") and mine[0][4] == found.group(1),
           f"the tuning cache holds {lines}, expected one 32x32x32 double step line choosing {found.group(1)}")
    again = run(bench, env=env).stdout
    expect(f": {found.group(1)}, from the tuning cache (" in again, f"the second run timed again: {again}")
    with open(cache, "a") as f:
        f.write("\t".join(mine[0][:4] + ["no_such_variant"]) + "\n")
    expect(re.search(timed, run(bench, env=env).stdout), "a line naming no variant was not timed again")
    print("binding line, crowded-core warning, OMP_PROC_BIND respected, variant chosen by timing, then from the "
          "tuning cache, timed again past a bad line")


def test_fresh_run_refusal_advice():
    """A new run into a folder holding an earlier run's files is refused; --restart latest is offered only
    where a checkpoint is there to continue from."""
    folder = fresh_dir("fresh_refusal")
    out = os.path.join(folder, "out")
    cfg = letters_config(folder, steps=10, every=10)
    run([cfg, "-q"])
    proc = run([cfg, "-q"], expect_status=2)
    expect("continue with --restart latest" in proc.stderr, proc.stderr)
    for name in os.listdir(out):
        if name.endswith(".hdf"):
            os.remove(os.path.join(out, name))
    proc = run([cfg, "-q"], expect_status=2)
    expect("--restart latest" not in proc.stderr and "none of them is a checkpoint" in proc.stderr
           and "--overwrite" in proc.stderr, proc.stderr)
    print("refusals offer --restart latest only where a checkpoint is")


def test_output_dir_home():
    """output.dir = "~/runs" means the home folder's runs, as in the shell: no folder named "~" appears in
    the working folder."""
    folder = fresh_dir("output_dir_home")
    home = os.path.join(folder, "home")
    os.makedirs(home)
    cfg = write(os.path.join(folder, "home.cfg"), 'grid = { n = [8, 8, 8]; };\ntime = { steps = 2; };\n'
                'output = { dir = "~/runs"; };\n')
    run([cfg, "-q"], cwd=folder, env=dict(os.environ, HOME=home))
    expect(not os.path.exists(os.path.join(folder, "~")), f"a folder named ~ in {os.listdir(folder)}")
    expect(os.path.exists(os.path.join(home, "runs", "home_000002.hdf")), f"home holds {os.listdir(home)}")
    print("output.dir = \"~/runs\" wrote into $HOME/runs")


def test_overwrite_all_or_nothing():
    """--overwrite removes every file of the earlier run or, where one cannot be removed (here a
    folder stands at a quick-look PNG's name), none, naming it; a run refused for its configuration
    (a rank layout) removes none."""
    folder = fresh_dir("overwrite_all")
    out = os.path.join(folder, "out")
    cfg = letters_config(folder, steps=20, every=10)
    run([cfg, "-q"])
    before = checkpoint_state(out)
    os.makedirs(os.path.join(out, "letters_000005.png"))
    proc = run([cfg, "--overwrite"], expect_status=2)
    expect("letters_000005.png (it is a folder)" in proc.stderr and "nothing was removed" in proc.stderr,
           f"refusal: {proc.stderr}")
    os.rmdir(os.path.join(out, "letters_000005.png"))
    expect(checkpoint_state(out) == before, f"a refused --overwrite changed the folder: {sorted(os.listdir(out))}")
    # A layout this build refuses (several ranks without MPI) is a configuration error: found before
    # --overwrite touches the folder.
    proc = run([cfg, "--overwrite", "--set", "parallel.ranks=[2,1,1]"], expect_status=2)
    expect("without MPI" in proc.stderr and checkpoint_state(out) == before,
           f"a refused layout changed the folder: {proc.stderr} {sorted(os.listdir(out))}")
    proc = run([cfg, "--overwrite"])
    expect("--overwrite: removed 5 files" in proc.stdout, proc.stdout)
    print("--overwrite refused before removing anything (also for a refused layout), then removes all")


def run_restarted_from_20(name):
    """A letters run to step 40, then restarted from step 20 to 30, which sets step 40 aside: its folder,
    config, output folder and set-aside folder."""
    folder = fresh_dir(name)
    out = os.path.join(folder, "out")
    cfg = letters_config(folder, steps=40, every=20)
    run([cfg, "-q"])
    run([cfg, "-q", "--restart", os.path.join(out, "letters_000020.hdf"), "--set", "time.steps=30"])
    return folder, cfg, out, os.path.join(out, "letters.after_step_000020")


def test_overwrite_removes_set_aside():
    """--overwrite also removes the folders where the earlier run's restarts set later files aside, counted
    in its line; a file there that it cannot remove refuses the whole overwrite before anything goes, and a
    folder that also holds a file of the user's stays, named in a warning."""
    folder, cfg, out, aside = run_restarted_from_20("overwrite_aside")
    expect(os.listdir(aside) == ["letters_000040.hdf"], f"set aside: {os.listdir(aside)}")
    blocker = os.path.join(aside, "letters_000050.hdf")
    os.makedirs(blocker)  # a folder at a run file's name cannot be unlinked
    before, inside = sorted(os.listdir(out)), sorted(os.listdir(aside))
    proc = run([cfg, "--overwrite"], expect_status=2)
    expect(f"{blocker} (it is a folder)" in proc.stderr and "nothing was removed" in proc.stderr, proc.stderr)
    expect(sorted(os.listdir(out)) == before and sorted(os.listdir(aside)) == inside,
           f"a refused --overwrite changed the folders: {os.listdir(out)}, {os.listdir(aside)}")
    os.rmdir(blocker)
    proc = run([cfg, "--overwrite", "--set", "time.steps=20"])
    expect("and 1 set aside by its restarts in 1 folder\n" in proc.stdout, proc.stdout)
    expect(not os.path.exists(aside), f"left: {os.listdir(out)}")
    for _ in range(2):  # the second restart from step 0 sets step 10 aside into letters.after_step_000000-2
        run([cfg, "-q", "--restart", os.path.join(out, "letters_000000.hdf"), "--set", "time.steps=10"])
    kept = [os.path.join(out, "letters.after_step_000000"), os.path.join(out, "letters.after_step_000000-2")]
    for aside in kept:
        write(os.path.join(aside, "notes.txt"), "the user's own")
    proc = run([cfg, "--overwrite"])
    for aside in kept:
        expect(f"kept {aside}: it holds files that are not the run's" in proc.stderr, proc.stderr)
        expect(os.listdir(aside) == ["notes.txt"], f"the kept folder holds {os.listdir(aside)}")
    print("--overwrite removes the set-aside folders too, all or nothing, and keeps the user's files")


def test_overwrite_leaves_aside_lookalikes():
    """--overwrite passes by what only looks like a set-aside folder: a link (never followed out of the
    folder), a file, a folder with fewer than six digits or another suffix; with nothing else of the
    earlier run there, it says nothing."""
    folder = fresh_dir("overwrite_lookalikes")
    out, elsewhere = os.path.join(folder, "out"), os.path.join(folder, "elsewhere")
    cfg = letters_config(folder, steps=10, every=10)
    lookalikes = [elsewhere, os.path.join(out, "letters.after_step_12"), os.path.join(out, "letters.after_step_000012-x")]
    for place in lookalikes:
        os.makedirs(place)
        write(os.path.join(place, "letters_000099.hdf"), "not a checkpoint")
    os.symlink(elsewhere, os.path.join(out, "letters.after_step_000010"))
    write(os.path.join(out, "letters.after_step_000011"), "a file")
    before = sorted(os.listdir(out))
    proc = run([cfg, "--overwrite"])
    expect("--overwrite" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr)
    left = sorted(n for n in os.listdir(out) if not n.startswith("letters_") and not n.startswith("letters.h"))
    expect(left == before, f"{before} became {left}")
    for place in lookalikes:
        expect(os.listdir(place) == ["letters_000099.hdf"], f"{place} holds {os.listdir(place)}")
    print("--overwrite leaves links, files and folders that only look like set-aside folders")


def test_overwrite_unreadable_set_aside():
    """A set-aside folder that this user cannot list refuses --overwrite before anything goes: its run
    files would stay unseen, and the folder be kept as if it held only the user's files."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("needs root and setpriv to run as another user: skipped")
        sys.exit(77)
    folder, cfg, out, aside = run_restarted_from_20("overwrite_aside_unreadable")
    for root, dirs, files in os.walk(folder):
        for n in [root] + [os.path.join(root, f) for f in files]:
            shutil.chown(n, "nobody", "nogroup")
    os.chmod(aside, 0)
    before = sorted(os.listdir(out))
    proc = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", HEATSOLVE, cfg, "-q",
                           "--overwrite"], capture_output=True, text=True, timeout=300)
    os.chmod(aside, 0o755)
    expect(proc.returncode == 2, f"exit {proc.returncode}: {proc.stderr}")
    expect(f"{aside} (Permission denied)" in proc.stderr and "nothing was removed" in proc.stderr, proc.stderr)
    expect(sorted(os.listdir(out)) == before and os.listdir(aside) == ["letters_000040.hdf"],
           f"a refused --overwrite changed the folders: {os.listdir(out)}, {os.listdir(aside)}")
    print(proc.stderr.strip())


def test_history_kept_on_restart():
    """A restart keeps every history row it can read (CRLF line endings, a last row without its line
    feed) and warns naming the rows it drops: an unreadable line by number, the rows after the
    restart's step by their steps."""
    folder = fresh_dir("history_kept")
    out = os.path.join(folder, "out")
    cfg = letters_config(folder, steps=40, every=20)
    run([cfg, "-q"])
    path = os.path.join(out, "letters.history.csv")
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    rows = lines[1:]
    edited = [lines[0]] + rows[:1] + ["not a row"] + rows[1:]
    with open(path, "w", newline="") as f:
        f.write("\r\n".join(edited))  # Windows line endings, and no line feed after the last row
    proc = run([cfg, "--restart", "latest", "--set", "time.steps=60"])
    expect("line 3" in proc.stderr and "dropped 1 row that does not read" in proc.stderr,
           f"the unreadable line is not named: {proc.stderr}")
    again = read_history(path)
    expect([again[int(r.split(",")[0])] for r in rows] == rows, f"rows lost: {list(again)} against {rows}")
    proc = run([cfg, "--restart", os.path.join(out, "letters_000020.hdf")])
    later = sorted(s for s in again if s > 20)
    expect(f"dropped {len(later)} rows of steps {later[0]} to {later[-1]}" in proc.stderr,
           f"rows after the restart's step dropped silently: {proc.stderr}")
    print("CRLF rows and a last row without line feed kept; the unreadable line and the later rows named")


def test_restart_sets_aside_later():
    """A restart from an older checkpoint sets the files of later steps aside, in one line, before it
    writes: the folder, the series and --restart latest then agree on the run's files, and output.keep
    counts only them. --overwrite with --restart is refused with the reason."""
    folder = fresh_dir("restart_aside")
    out = os.path.join(folder, "out")
    cfg = letters_config(folder, steps=60, every=20, extra="png = true;")
    run([cfg, "-q"])
    proc = run([cfg, "--restart", os.path.join(out, "letters_000020.hdf"), "--set", "time.steps=40"])
    aside = os.path.join(out, "letters.after_step_000020")
    expect(f"set aside 4 files of steps 40 to 60 (written after it) in {aside}" in proc.stdout, proc.stdout)
    expect(sorted(os.listdir(aside)) == ["letters_000040.hdf", "letters_000040.png", "letters_000060.hdf",
                                         "letters_000060.png"], f"set aside: {os.listdir(aside)}")
    hdf = sorted(n for n in os.listdir(out) if n.endswith(".hdf"))
    expect(hdf == ["letters_000000.hdf", "letters_000020.hdf", "letters_000040.hdf"], f"the folder holds {hdf}")
    with open(os.path.join(out, "letters.hdf.series")) as f:
        listed = [entry["name"] for entry in json.load(f)["files"]]
    expect(listed == hdf, f"the series lists {listed}, the folder holds {hdf}")
    proc = run([cfg, "--restart", "latest", "--set", "time.steps=60", "--set", "output.keep=2"])
    expect("letters_000040.hdf at step 40" in proc.stdout, f"--restart latest: {proc.stdout}")
    hdf = sorted(n for n in os.listdir(out) if n.endswith(".hdf"))
    expect(hdf == ["letters_000040.hdf", "letters_000060.hdf"], f"output.keep = 2 left {hdf}")
    proc = run([cfg, "--restart", "latest", "--overwrite"], expect_status=2)
    expect("--overwrite with --restart" in proc.stderr and "drop --overwrite" in proc.stderr, proc.stderr)
    print("later files set aside in one line; folder, series, --restart latest and output.keep agree; "
          "--overwrite with --restart refused")


def test_restart_contradiction_is_error():
    """A restart whose configuration contradicts the checkpoint is an error (never a warning) naming
    the key, both values and how to proceed, exit 2, with --restart FILE and --restart latest alike;
    an explicit run continued implicitly with --allow-scheme-change takes its new time.cfl."""
    folder = fresh_dir("restart_contradiction")
    cfg = letters_config(folder, steps=20, every=10)
    run([cfg, "-q"])
    checkpoint = os.path.join(folder, "out", "letters_000020.hdf")
    more = ["--set", "time.steps=30"]
    cases = [(["--set", "grid.n=[40,24,12]"], ["grid.n", "[48, 24, 12]", "[40, 24, 12]"]),
             (["--set", "time.cfl=0.5"], ["time.dt", "time.cfl"]),
             (["--set", "physics.alpha=2.0"], ["physics.alpha", "1", "2"])]
    for spec in ("latest", checkpoint):
        for change, words in cases:
            proc = run([cfg, "--restart", spec] + more + change, expect_status=2)
            expect("error:" in proc.stderr and "warning:" not in proc.stderr, f"{change}: not an error: {proc.stderr}")
            for word in words + ["restart with the configuration that wrote it"]:
                expect(word in proc.stderr, f"{change} with --restart {spec}: message lacks {word!r}: {proc.stderr}")
    implicit = ["--set", 'time.scheme="crank_nicolson"', "--set", "time.cfl=20.0", "--allow-scheme-change"]
    proc = run([cfg, "--restart", "latest"] + more + implicit)
    expect("the time step changes at step 20" in proc.stdout, f"explicit to implicit: {proc.stdout}")
    print("contradictions: errors naming key, values and the way on; explicit to implicit takes a new time.cfl")


def test_messages_say_it_right():
    """Messages: a float out of range states the real limits (1e300), a damaged checkpoint that
    --restart latest passes over is named once, a user's error carries no source position, a
    syntax error says so once, bench --size takes numbers only, and a config stem too long for
    output.name is refused rather than silently renamed."""
    folder = fresh_dir("messages")
    bad = write(os.path.join(folder, "bad.cfg"), "")
    out = ["--set", f'output.dir="{folder}/out"']
    for setting, words in (("boundary.x_low.value=1e301", ["from -1e300 to 1e300"]),
                           ("physics.alpha=1e301", ["> 0, up to 1e300"])):
        proc = run([bad, "--set", setting] + out, expect_status=2)
        expect(all(w in proc.stderr for w in words) and "any finite number" not in proc.stderr, proc.stderr)
    write(bad, "grid = { n = [8, 8, 8] }\ntime = {")
    proc = run([bad] + out, expect_status=2)
    expect("bad.cfg:2: syntax error;" in proc.stderr, f"syntax error message: {proc.stderr}")
    for size in ("16,16,16junk", "16junk", "16,,16", "99999999999"):
        proc = run(["bench", "--size", size, "--reps", "1", "--backend", "cpu"], expect_status=2)
        expect(f"--size {size}" in proc.stderr, proc.stderr)
    long_stem = write(os.path.join(folder, "a" * 140 + ".cfg"), "")
    proc = run([long_stem] + out, expect_status=2)
    expect("140 characters" in proc.stderr and "at most 127" in proc.stderr and "output.name" in proc.stderr,
           f"long stem: {proc.stderr}")
    run([long_stem, "-q", "--set", 'output.name="short"', "--set", "time.steps=2"] + out)
    cfg = letters_config(folder, steps=20, every=10)
    run([cfg, "-q"])
    damaged = os.path.join(folder, "out", "letters_000020.hdf")
    flip_field_byte(damaged)
    proc = run([cfg, "--restart", "latest", "--set", "time.steps=30"])
    lines = [line for line in proc.stderr.splitlines() if "letters_000020.hdf" in line and "corrupt" in line]
    expect(len(lines) == 1, f"the damaged file named {len(lines)} times: {proc.stderr}")
    expect("(reported at" not in proc.stderr, proc.stderr)
    print("limits stated, one warning for a damaged file, no source positions, plain syntax error, --size "
          "checked, long stem refused")


def test_bench_arguments_checked_first():
    """bench refuses, before any measuring, what it could not honour: --io and --cg together, an --io-dir
    that is no writable folder, a --size thinner than --order's radius along an axis, which a run's
    configuration refuses too (a user's error: exit 2, no source position)."""
    folder = fresh_dir("bench_arguments")
    afile = write(os.path.join(folder, "a_file"), "x")
    cases = ((["--io", "--cg"], ["--io and --cg"]),
             (["--io", "--io-dir", os.path.join(folder, "missing")], ["--io-dir", "missing", "writable folder"]),
             (["--io", "--io-dir", afile], ["--io-dir", "a_file", "writable folder"]),
             (["--order", "8", "--size", "16,3,16"], ["--size 16,3,16 with --order 8", "y has only 3", "at least 4"]),
             (["--size", "3", "--cg", "--order", "8"], ["--size 3,3,3 with --order 8", "x has only 3"]),
             (["--level", "5"], ["--level belongs to the checkpoint benchmark", "--io"]),
             (["--cg", "--io-dir", folder], ["--io-dir belongs to the checkpoint benchmark"]),
             (["--io", "--order", "4"], ["--order with --io"]))
    for args, words in cases:
        proc = run(["bench", "--backend", "cpu", "--size", "16", "--reps", "1"] + args, expect_status=2, timeout=120)
        expect(all(w in proc.stderr for w in words) and "(reported at" not in proc.stderr and not proc.stdout,
               f"bench {' '.join(args)}: {proc.stdout} {proc.stderr}")
    print("bench: --io with --cg, a bad --io-dir, a grid thinner than the order and options the measurement "
          "would ignore refused before measuring")


def test_restart_changes_implicit_dt():
    """The advice after a failed CG solve works: an implicit run continues with a smaller time.cfl,
    the file records the new dt and the clock continues from the checkpoint's time; explicit runs
    still refuse a dt change."""
    import h5py
    folder = fresh_dir("implicit_dt_change")
    cfg = letters_config(folder, steps=4, every=2)
    run([cfg, "-q"] + IMPLICIT)
    with h5py.File(os.path.join(folder, "out", "letters_000004.hdf"), "r") as f:
        t4, dt_old = float(f["restart"].attrs["time"]), float(f["restart"].attrs["dt"])
    proc = run([cfg, "--restart", "latest", "--set", "time.steps=6"] + IMPLICIT[:4] + ["--set", "time.cfl=10.0",
               "--set", "solver.rtol=1e-9"])
    expect("the time step changes at step 4" in proc.stdout, proc.stdout)
    with h5py.File(os.path.join(folder, "out", "letters_000006.hdf"), "r") as f:
        t6, dt_new = float(f["restart"].attrs["time"]), float(f["restart"].attrs["dt"])
    expect(abs(dt_new - dt_old / 2) <= 1e-15 * dt_old and abs(t6 - (t4 + 2 * dt_new)) <= 1e-14 * t6,
           f"dt {dt_old} -> {dt_new}, time {t4} -> {t6}")
    explicit = letters_config(fresh_dir("explicit_dt_change"), steps=4, every=2)
    run([explicit, "-q"])
    proc = run([explicit, "--restart", "latest", "--set", "time.steps=6", "--set", "time.cfl=0.5"], expect_status=2)
    expect("time step dt" in proc.stderr, proc.stderr)
    print(f"implicit restart: dt {dt_old:.4g} -> {dt_new:.4g}, time {t4:.4g} -> {t6:.4g}; explicit refuses")


def test_missing_h5py_skips():
    """Under a Python without h5py (site packages off), an h5py test reports skipped, saying why."""
    proc = subprocess.run([sys.executable, "-S", os.path.abspath(__file__), HEATSOLVE, WORK, "vtkhdf_layout"],
                          capture_output=True, text=True, timeout=300)
    expect(proc.returncode == 77 and "needs h5py (set HEATSOLVE_PYTHON" in proc.stdout,
           f"exit {proc.returncode}: {proc.stdout[-500:]} {proc.stderr[-500:]}")


# ---- letters run, layout, series ---------------------------------------------------------------

def test_letters_run():
    folder = fresh_dir("letters_run")
    proc = run([letters_config(folder, steps=40, every=10)], env=dict(os.environ, OMP_NUM_THREADS="2"))
    out = os.path.join(folder, "out")
    names = sorted(n for n in os.listdir(out) if n.endswith(".hdf"))
    expect(names == [f"letters_{s:06d}.hdf" for s in (0, 10, 20, 30, 40)], f"checkpoints: {names}")
    expect(not [n for n in os.listdir(out) if ".tmp" in n], "temporary files left behind")
    expect("summary: 40 steps" in proc.stdout, "summary missing")
    cost = re.search(r"checkpoints: (\d+) written, ([0-9.]+) s each \(([0-9.]+) s of it listing each: series, PNG, "
                     r"folder fsync\); on ([0-9.]+) cores? \(mean\); the run spent ([0-9.]+) s on snapshots and "
                     r"([0-9.]+) s waiting for writes", proc.stdout)
    expect(cost, f"checkpoint cost line missing:\n{proc.stdout[-600:]}")
    expect(int(cost.group(1)) == len(names), f"summary counts {cost.group(1)} checkpoints, {len(names)} on disk")
    expect(float(cost.group(2)) > 0, f"implausible write cost: {cost.group(0)}")
    # 2 threads: four writes on the writer's one core beside the stencil, the last on both (nothing steps then).
    expect(cost.group(4) == "1.2", f"the writes' mean cores: {cost.group(4)}, expected (4 x 1 + 2) / 5 = 1.2")
    expect(float(cost.group(3)) <= float(cost.group(2)), f"listing costs more than the whole: {cost.group(0)}")
    startup = re.search(r"start-up: ([0-9.]+) s before the first step \(configuration and backend ([0-9.]+) s, "
                        r"initial field ([0-9.]+) s, statistics, writer and history ([0-9.]+) s\)", proc.stdout)
    expect(startup, f"start-up line missing:\n{proc.stdout[-600:]}")
    whole, backend, field, rest = (float(g) for g in startup.groups())
    expect(abs(backend + field + rest - whole) <= 0.002, f"start-up parts do not add up: {startup.group(0)}")
    loop = re.search(r"summary: 40 steps \(to step 40, t = \S+\) in ([0-9.]+) s, [0-9.]+ GLUP/s "
                     r"\(stepping ([0-9.]+) s;", proc.stdout)
    expect(loop and float(loop.group(2)) <= float(loop.group(1)), f"summary's stepping missing or over its loop:\n"
           f"{proc.stdout[-600:]}")
    initial = read_field(os.path.join(out, names[0]))  # written from the buffer the field was loaded into
    expect(initial.max() == 100.0 and initial.min() == 0.0, f"step 0: range {initial.min()}..{initial.max()}")


def test_unstable_run():
    """A run made unstable on purpose stops with exit 1 once the field holds NaN or Inf, naming
    the steps and the fix, and writes no checkpoint after the last finite state."""
    import numpy
    folder = fresh_dir("unstable_run")
    cfg = letters_config(folder, steps=400, every=100)
    proc = run([cfg, "-q", "--set", "time.cfl=10.0", "--set", "time.allow_unstable=true"], expect_status=1)
    found = re.search(r"became NaN or Inf \((\d+) values\) between step (\d+) and step (\d+)", proc.stderr)
    expect(found and "time.dt or time.cfl" in proc.stderr, f"unclear instability message: {proc.stderr}")
    last_finite, first_bad = int(found.group(2)), int(found.group(3))
    expect(0 <= last_finite < first_bad <= 400, f"implausible steps: {found.group(0)}")
    out = os.path.join(folder, "out")
    steps = sorted(int(n[-10:-4]) for n in os.listdir(out) if n.endswith(".hdf"))
    expect(steps and steps[-1] <= last_finite, f"checkpoints {steps} go past step {last_finite}")
    for step in steps:
        expect(numpy.isfinite(read_field(os.path.join(out, f"letters_{step:06d}.hdf"))).all(),
               f"checkpoint {step} holds NaN or Inf")
    print(f"unstable run stopped between steps {last_finite} and {first_bad}; checkpoints {steps} all finite")


def test_vtkhdf_layout():
    import h5py
    import numpy as np
    folder = fresh_dir("vtkhdf")
    run([letters_config(folder, steps=10, every=10)])
    with h5py.File(os.path.join(folder, "out", "letters_000010.hdf"), "r") as f:
        vtk = f["VTKHDF"]
        kind = vtk.attrs.get_id("Type").get_type()
        expect(kind.get_size() == 9 and not kind.is_variable_str(), "Type must be 9-byte fixed ASCII")
        expect(kind.get_cset() == h5py.h5t.CSET_ASCII, "Type must be ASCII")
        expect(vtk.attrs["Type"] == b"ImageData", f"Type = {vtk.attrs['Type']}")
        expect(list(vtk.attrs["Version"]) == [1, 0], "Version")
        expect(len(vtk.attrs["Direction"]) == 9, "Direction missing")
        expect(list(vtk.attrs["WholeExtent"]) == [0, 47, 0, 23, 0, 11], "WholeExtent")
        expect(np.allclose(vtk.attrs["Spacing"], [4 / 48, 2 / 24, 1 / 12]), "Spacing")
        expect(vtk["PointData/temperature"].shape == (12, 24, 48), "PointData shape must be (nz, ny, nx)")
        expect("FieldData" not in vtk, "nothing may live under FieldData")
        expect(vtk["PointData/temperature"].compression == "gzip", "field not deflate-compressed")
        restart = f["restart"]
        for key in ("step", "time", "dt", "precision", "grid_n", "config", "version", "format_version"):
            expect(key in restart.attrs, f"/restart lacks {key}")
        expect(int(restart.attrs["step"]) == 10, "step")
        expect(b"letters" in restart.attrs["config"], "config text")
        data = vtk["PointData/temperature"][...]
        expect(data.max() > 50 and data.min() >= 0, "field values")


def test_series_json():
    import h5py
    folder = fresh_dir("series")
    run([letters_config(folder, steps=30, every=10)])
    out = os.path.join(folder, "out")
    with open(os.path.join(out, "letters.hdf.series")) as f:
        series = json.load(f)
    expect(series["file-series-version"] == "1.0", "series version")
    names = [e["name"] for e in series["files"]]
    expect(names == [f"letters_{s:06d}.hdf" for s in (0, 10, 20, 30)], f"series names {names}")
    for entry in series["files"]:
        with h5py.File(os.path.join(out, entry["name"]), "r") as h:
            expect(float(h["restart"].attrs["time"]) == entry["time"], f"time of {entry['name']}")


# ---- restart --------------------------------------------------------------------------------------

def restart_from_copy(folder, cfg, step, final_step, tag, extra):
    """Copies checkpoint `step` of folder/out into a fresh folder, restarts from it there and
    returns that folder and the field of its final checkpoint."""
    target = fresh_dir(f"restart_{tag}_{step}")
    shutil.copy(os.path.join(folder, "out", f"letters_{step:06d}.hdf"), target)
    run([cfg, "-q", "--restart", os.path.join(target, f"letters_{step:06d}.hdf"),
         "--set", f"output.dir=\"{target}\""] + extra)
    return target, read_field(os.path.join(target, f"letters_{final_step:06d}.hdf"))


def restart_bitwise(precision):
    import numpy as np
    folder = fresh_dir(f"restart_{precision}")
    prec = ["--set", f"solver.precision=\"{precision}\""]
    cfg = letters_config(folder, steps=50, every=10)
    run([cfg, "-q"] + prec)
    reference = read_field(os.path.join(folder, "out", "letters_000050.hdf"))
    expect(reference.dtype == (np.float32 if precision == "float" else np.float64), "precision in file")
    for step in (0, 10, 20, 30, 40):
        target, final = restart_from_copy(folder, cfg, step, 50, precision, prec)
        expect(final.tobytes() == reference.tobytes(), f"restart from step {step}: field differs")
        with open(os.path.join(target, "letters.hdf.series")) as f:
            names = [e["name"] for e in json.load(f)["files"]]
        expected = [f"letters_{s:06d}.hdf" for s in range(step, 51, 10)]
        expect(names == expected, f"series after restart from {step}: {names}")
        print(f"restart from step {step} ({precision}): bitwise equal, series {len(names)} files")
    # --restart latest continues the run in place.
    os.remove(os.path.join(folder, "out", "letters_000050.hdf"))
    os.remove(os.path.join(folder, "out", "letters_000040.hdf"))
    run([cfg, "-q", "--restart", "latest"] + prec)
    final = read_field(os.path.join(folder, "out", "letters_000050.hdf"))
    expect(final.tobytes() == reference.tobytes(), "restart latest: field differs")


def test_restart_older_chunking():
    """A checkpoint written by heatsolve before chunks took at most 16 planes (this one: one
    chunk of 40 planes) restarts and continues to the field of a run that never stopped."""
    import h5py
    folder = fresh_dir("older_chunking")
    data = os.path.join(SOURCE, "tests", "data")
    cfg = os.path.join(data, "old_chunking.cfg")
    old = os.path.join(folder, "old_000010.hdf")
    shutil.copy(os.path.join(data, "old_chunking_000010.hdf"), old)
    run([cfg, "-q", "--restart", old, "--set", "time.steps=20", "--set", f'output.dir="{folder}/continued"'])
    run([cfg, "-q", "--set", "time.steps=20", "--set", f'output.dir="{folder}/straight"'])
    with h5py.File(old, "r") as f, h5py.File(os.path.join(folder, "continued", "old_000020.hdf"), "r") as g:
        chunks = (f["VTKHDF/PointData/temperature"].chunks, g["VTKHDF/PointData/temperature"].chunks)
    expect(chunks == ((40, 20, 24), (16, 20, 24)), f"chunk shapes {chunks}")
    # The fixture was computed by another build (another machine's vector code, or no sanitizer),
    # so its field may differ from this build's in the last bits: equal to rounding, not bitwise.
    # A chunk read in the wrong place would differ by the field's own size.
    continued = read_field(os.path.join(folder, "continued", "old_000020.hdf"))
    straight = read_field(os.path.join(folder, "straight", "old_000020.hdf"))
    scale = float(abs(straight).max())
    worst = float(abs(continued - straight).max())
    expect(scale > 1.0 and worst <= 1e-10 * scale,
           f"the restart from a 40-plane-chunk checkpoint differs from the run that never stopped by {worst:g}")
    print(f"restart from a checkpoint chunked {chunks[0]} (now {chunks[1]}): max difference {worst:g} of {scale:g}")


def test_restart_bitwise_double():
    restart_bitwise("double")


def test_restart_bitwise_float():
    restart_bitwise("float")


IMPLICIT = ["--set", 'time.scheme="crank_nicolson"', "--set", "time.cfl=20.0", "--set", "solver.rtol=1e-9"]


def implicit_restart_bitwise(tag, backend):
    """A Crank-Nicolson run at 20 dt_max restarted from each checkpoint ends with the same bits."""
    folder = fresh_dir(f"restart_implicit_{tag}")
    cfg = letters_config(folder, steps=12, every=4)
    extra = IMPLICIT + ["--backend", backend]
    proc = run([cfg, "-v"] + extra)
    expect(f"backend {backend}" in proc.stdout, f"not on {backend}: {proc.stdout[-500:]}")
    expect("time scheme crank_nicolson" in proc.stdout, "scheme not announced")
    steps = re.findall(r"step (\d+): CG (\d+) iterations, relative residual (\S+)", proc.stdout)
    expect([int(s) for s, _, _ in steps] == list(range(1, 13)), f"--verbose lines: {steps}")
    expect(all(float(r) <= 1e-9 for _, _, r in steps), "a residual above solver.rtol")
    expect(re.search(r"CG: \d+ iterations in 12 implicit steps", proc.stdout), "no CG summary")
    reference = read_field(os.path.join(folder, "out", "letters_000012.hdf"))
    for step in (0, 4, 8):
        _, final = restart_from_copy(folder, cfg, step, 12, f"implicit_{tag}", extra)
        expect(final.tobytes() == reference.tobytes(), f"restart from step {step}: field differs")
        print(f"{backend}: implicit restart from step {step}: bitwise equal")
    return folder, cfg, reference


def test_restart_bitwise_implicit():
    folder, cfg, reference = implicit_restart_bitwise("cpu", "cpu")
    import h5py
    with h5py.File(os.path.join(folder, "out", "letters_000008.hdf"), "r") as f:
        attrs = f["restart"].attrs
        text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
        expect(text(attrs["scheme"]) == "crank_nicolson", "scheme attribute")
        expect(text(attrs["solver_preconditioner"]) == "chebyshev", "preconditioner attribute")
        expect(float(attrs["solver_rtol"]) == 1e-9, "rtol attribute")
    # Another scheme is refused, naming both, unless asked for.
    other = ["--set", 'time.scheme="backward_euler"', "--set", "time.cfl=20.0"]
    proc = run([cfg, "--restart", "latest"] + other, expect_status=2)
    expect("crank_nicolson" in proc.stderr and "backward_euler" in proc.stderr and "--allow-scheme-change" in proc.stderr,
           f"scheme mismatch message: {proc.stderr}")
    target = fresh_dir("implicit_scheme_change")
    shutil.copy(os.path.join(folder, "out", "letters_000008.hdf"), target)
    run([cfg, "-q", "--restart", os.path.join(target, "letters_000008.hdf"), "--allow-scheme-change",
         "--set", f"output.dir=\"{target}\""] + other)
    changed = read_field(os.path.join(target, "letters_000012.hdf"))
    import numpy as np
    difference = float(np.max(np.abs(changed - reference)))
    # Backward Euler keeps the maximum principle that Crank-Nicolson's ringing at 20 dt_max breaks.
    expect(difference > 0 and float(changed.min()) >= 0.0 and float(changed.max()) <= 100.0,
           f"backward Euler continuation: difference {difference}, range {changed.min()}..{changed.max()}")
    print(f"--allow-scheme-change: backward Euler continuation differs by {difference:.3e} (refused without it)")


def test_implicit_errors():
    """Non-convergence stops the run naming the step, the residual and the fix; config errors exit 2."""
    folder = fresh_dir("implicit_errors")
    cfg = letters_config(folder, steps=5, every=0)
    proc = run([cfg, "--set", "solver.max_iterations=2", "--set", 'solver.preconditioner="jacobi"'] + IMPLICIT,
               expect_status=1)
    for word in ("step 1", "solver.max_iterations = 2", "relative residual", "--restart latest"):
        expect(word in proc.stderr, f"non-convergence message lacks '{word}': {proc.stderr}")
    expect('solver.preconditioner = "chebyshev"' in proc.stderr, f"jacobi run not pointed to chebyshev: {proc.stderr}")
    # With Chebyshev already in use, the advice raises its degree instead of suggesting it again.
    proc = run([cfg, "--overwrite", "--set", "solver.max_iterations=1"] + IMPLICIT, expect_status=1)
    # (and, for time steps near the box's diffusion time, where Chebyshev's interval from 1 makes its
    # iterations grow with dt, Jacobi)
    expect('preconditioner = "chebyshev"' not in proc.stderr and "solver.chebyshev_degree (now 8, at most 64)" in
           proc.stderr and 'solver.preconditioner = "jacobi"' in proc.stderr, f"advice for a chebyshev run: {proc.stderr}")
    # At the largest degree there is none higher to advise.
    proc = run([cfg, "--overwrite", "--set", "solver.max_iterations=1", "--set", "solver.chebyshev_degree=64"] + IMPLICIT
               + ["--set", "time.cfl=1000.0"], expect_status=1)
    expect("chebyshev_degree" not in proc.stderr and 'raise solver.max_iterations, use solver.preconditioner = "jacobi"'
           in proc.stderr, f"advice for a chebyshev run of degree 64: {proc.stderr}")
    # An rtol below the precision's epsilon (1e-300: its square underflows to 0) is not met by more
    # iterations: the advice says so instead of raising solver.max_iterations.
    proc = run([cfg, "--overwrite"] + IMPLICIT + ["--set", "solver.rtol=1e-300", "--set", "solver.max_iterations=50"],
               expect_status=1)
    expect("epsilon" in proc.stderr and "raise solver.rtol" in proc.stderr and "max_iterations" not in proc.stderr,
           f"advice for an unreachable rtol: {proc.stderr}")
    proc = run([cfg, "--set", 'time.scheme="implicit"'], expect_status=2)
    expect("time.scheme" in proc.stderr and "crank_nicolson" in proc.stderr, proc.stderr)
    proc = run([cfg, "--set", "solver.rtol=0.0"] + IMPLICIT[:4], expect_status=2)
    expect("solver.rtol" in proc.stderr, proc.stderr)
    proc = run([cfg, "--set", "time.cfl=20.0"], expect_status=2)
    expect("unstable" in proc.stderr and "crank_nicolson" in proc.stderr, proc.stderr)
    # Far beyond dt_max, the implicit run stays bounded by its initial extremes (maximum principle).
    proc = run([cfg, "--overwrite", "--set", 'time.scheme="backward_euler"', "--set", "time.cfl=1000.0"])
    found = re.search(r"min (\S+)\s+max (\S+)", proc.stdout)
    expect(found and float(found.group(1)) >= 0.0 and float(found.group(2)) <= 100.0, proc.stdout[-400:])
    print("non-convergence, bad scheme, bad rtol, cfl > 1 with euler: clear errors; backward Euler at 1000 dt_max bounded")


def test_restart_bitwise_implicit_gpu():
    skip_without_gpu()
    implicit_restart_bitwise("gpu", "hip")


def test_restart_done_and_mismatch():
    folder = fresh_dir("restart_done")
    cfg = letters_config(folder, steps=20, every=10)
    run([cfg, "-q"])
    out = os.path.join(folder, "out")
    before = {n: os.stat(os.path.join(out, n)).st_mtime_ns for n in os.listdir(out)}
    proc = run([cfg, "--restart", "latest"])
    expect("nothing to do" in proc.stdout, f"no 'nothing to do': {proc.stdout}")
    proc = run([cfg, "--restart", "latest", "-q"])
    expect(proc.stdout == "", f"-q printed: {proc.stdout}")
    after = {n: os.stat(os.path.join(out, n)).st_mtime_ns for n in os.listdir(out)}
    expect(before == after, "a finished run's restart wrote files")
    proc = run([cfg, "--restart", "latest", "--set", "grid.n=[40,24,12]"], expect_status=2)
    expect("grid.n" in proc.stderr and "[48, 24, 12]" in proc.stderr and "[40, 24, 12]" in proc.stderr,
           f"mismatch message: {proc.stderr}")
    proc = run([cfg, "--restart", "latest", "--set", "physics.alpha=2.0"], expect_status=2)
    expect("physics.alpha" in proc.stderr, f"alpha mismatch message: {proc.stderr}")
    proc = run([cfg, "--restart", "latest", "--set", "solver.precision=\"float\""], expect_status=2)
    expect("precision" in proc.stderr, f"precision mismatch message: {proc.stderr}")


def flip_field_byte(path):
    import h5py
    with h5py.File(path, "r") as f:
        info = f["VTKHDF/PointData/temperature"].id.get_chunk_info(0)
    with open(path, "r+b") as f:
        f.seek(info.byte_offset + info.size // 2)
        byte = f.read(1)
        f.seek(info.byte_offset + info.size // 2)
        f.write(bytes([byte[0] ^ 0x5A]))


def test_bad_restart_files():
    import h5py
    folder = fresh_dir("bad_restart")
    cfg = letters_config(folder, steps=20, every=10)
    run([cfg, "-q"])
    good = os.path.join(folder, "out", "letters_000010.hdf")
    cases = {}
    cases["truncated"] = os.path.join(folder, "truncated.hdf")
    with open(good, "rb") as src, open(cases["truncated"], "wb") as dst:
        data = src.read()
        dst.write(data[: len(data) * 2 // 3])
    cases["flipped byte"] = os.path.join(folder, "flipped.hdf")
    shutil.copy(good, cases["flipped byte"])
    flip_field_byte(cases["flipped byte"])
    cases["other layout"] = os.path.join(folder, "other.hdf")
    with h5py.File(cases["other layout"], "w") as f:
        f["data"] = [1.0, 2.0, 3.0]
    cases["not hdf5"] = write(os.path.join(folder, "text.hdf"), "this is not an HDF5 file\n" * 100)
    cases["missing"] = os.path.join(folder, "missing.hdf")
    for name, path in cases.items():
        proc = run([cfg, "-q", "--restart", path, "--set", f"output.dir=\"{folder}/o2\""], expect_status=None)
        expect(proc.returncode in (1, 2), f"{name}: exit {proc.returncode} (crash?) stderr {proc.stderr}")
        expect(path in proc.stderr or os.path.basename(path) in proc.stderr, f"{name}: file not named: {proc.stderr}")
        expect(not os.path.exists(os.path.join(folder, "o2")), f"{name}: output written")
        print(f"ok  {name}: exit {proc.returncode}: {proc.stderr.strip().splitlines()[0]}")
    # latest with every checkpoint damaged says how to go on.
    damaged = fresh_dir("bad_restart_all")
    cfg_all = letters_config(damaged, steps=20, every=10)
    run([cfg_all, "-q"])
    for step in (0, 10, 20):
        flip_field_byte(os.path.join(damaged, "out", f"letters_{step:06d}.hdf"))
    proc = run([cfg_all, "-q", "--restart", "latest", "--set", "time.steps=30"], expect_status=1)
    expect("none of the 3 checkpoints" in proc.stderr and "--overwrite" in proc.stderr, proc.stderr)
    # latest skips the damaged newest file and takes the one before.
    flip_field_byte(os.path.join(folder, "out", "letters_000020.hdf"))
    proc = run([cfg, "--restart", "latest", "--set", "time.steps=30"])
    expect("letters_000010.hdf" in proc.stdout and "skipping" in proc.stderr, f"latest: {proc.stdout} {proc.stderr}")
    expect("error:" not in proc.stderr, f"a successful restart printed an error: {proc.stderr}")


# ---- reliability: signals, storage faults, long runs -----------------------------------------------

import signal
import time


def long_config(folder, steps=2400, every=400, extra=""):
    """A larger run (output name "long") that takes long enough to interrupt."""
    return letters_config(folder, steps, every, extra, name="long", n=(96, 48, 24), text="OK")


def start(args, **kwargs):
    return subprocess.Popen([HEATSOLVE] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def wait_for_file(path, timeout=60):
    end = time.time() + timeout
    while not os.path.exists(path):
        expect(time.time() < end, f"{path} never appeared")
        time.sleep(0.01)


def test_signals_restart_bitwise():
    """10 runs interrupted at different moments by SIGINT or SIGTERM, each
    restarted with --restart latest: all end bitwise equal to an uninterrupted run."""
    reference_dir = fresh_dir("signals_reference")
    run([long_config(reference_dir), "-q"])
    reference = read_field(os.path.join(reference_dir, "out", "long_002400.hdf"))
    for attempt in range(10):
        folder = fresh_dir(f"signals_{attempt}")
        cfg = long_config(folder)
        proc = start([cfg, "-q"])
        wait_for_file(os.path.join(folder, "out", "long_000000.hdf"))
        time.sleep(0.05 + 0.09 * attempt)
        sig = signal.SIGINT if attempt % 2 == 0 else signal.SIGTERM
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            print(f"run {attempt}: finished before the signal")
        else:
            expect(proc.returncode == 128 + sig, f"run {attempt}: exit {proc.returncode}, expected {128 + sig}: {err}")
            expect("restart latest" in err, f"run {attempt}: no hint to restart: {err}")
        files = sorted(n for n in os.listdir(os.path.join(folder, "out")) if n.endswith(".hdf"))
        expect(not [n for n in os.listdir(os.path.join(folder, "out")) if ".tmp" in n], "temporary file left")
        run([cfg, "-q", "--restart", "latest"])
        final = read_field(os.path.join(folder, "out", "long_002400.hdf"))
        expect(final.tobytes() == reference.tobytes(), f"run {attempt}: restarted result differs")
        with open(os.path.join(folder, "out", "long.hdf.series")) as f:
            names = [e["name"] for e in json.load(f)["files"]]
        expect(names == sorted(set(names)) and names[-1] == "long_002400.hdf", f"series {names}")
        print(f"run {attempt}: signal {int(sig)} -> exit {proc.returncode}, checkpoints {files[-1]}; restart bitwise equal")


def test_restart_lists_series_at_once():
    """A restart from an older checkpoint lists the run as it now stands at once, not at its first write:
    killed before that write (kill -9, hours into a long stretch), it leaves a series that names only the
    files in the folder, the ones --restart latest would take."""
    folder = fresh_dir("restart_lists_series")
    out = os.path.join(folder, "out")
    cfg = letters_config(folder, steps=40, every=20)
    run([cfg, "-q"])
    history = os.path.join(out, "letters.history.csv")
    earlier = os.stat(history).st_ino
    proc = start([cfg, "-q", "--restart", os.path.join(out, "letters_000020.hdf"), "--set", f"time.steps={10 ** 9}",
                  "--set", f"output.every={10 ** 9}"])
    # The restarted run replaces the history (a new file, renamed in) after it has set step 40 aside.
    end = time.time() + 60
    while os.stat(history).st_ino == earlier:
        expect(time.time() < end and proc.poll() is None, f"the restart never started its history: {proc.stderr}")
        time.sleep(0.01)
    proc.kill()
    proc.communicate(timeout=60)
    hdf = sorted(n for n in os.listdir(out) if n.endswith(".hdf"))
    with open(os.path.join(out, "letters.hdf.series")) as f:
        listed = [entry["name"] for entry in json.load(f)["files"]]
    expect(hdf == ["letters_000000.hdf", "letters_000020.hdf"], f"the folder holds {hdf}")
    expect(listed == hdf, f"killed before its first write, the restarted run's series lists {listed}, the folder "
           f"holds {hdf}")
    print(f"killed before its first write: the series lists {listed}, as the folder holds")


def test_sigusr1_and_second_sigint():
    folder = fresh_dir("sigusr1")
    cfg = long_config(folder, steps=10 ** 9, every=10 ** 9)  # never ends by itself, even on a GPU
    proc = start([cfg])
    wait_for_file(os.path.join(folder, "out", "long_000000.hdf"))
    time.sleep(0.3)
    proc.send_signal(signal.SIGUSR1)
    end = time.time() + 30
    while len([n for n in os.listdir(os.path.join(folder, "out")) if n.endswith(".hdf")]) < 2:
        expect(time.time() < end and proc.poll() is None, "SIGUSR1 wrote no checkpoint or stopped the run")
        time.sleep(0.02)
    time.sleep(0.3)
    expect(proc.poll() is None, "the run stopped after SIGUSR1")
    # The second Ctrl-C comes while the first is honoured: the final step and a final checkpoint that
    # takes a while (a 256 x 256 x 128 field). Sent at once, the kernel would merge the two.
    big_folder = fresh_dir("second_sigint")
    big = letters_config(big_folder, steps=10 ** 9, every=10 ** 9, n=(256, 256, 128))
    proc2 = start([big, "-q"])
    wait_for_file(os.path.join(big_folder, "out", "letters.hdf.series"))
    time.sleep(0.3)
    proc2.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc2.send_signal(signal.SIGINT)
    _, err2 = proc2.communicate(timeout=60)
    expect(proc2.returncode == 3, f"exit {proc2.returncode} after two SIGINTs: {err2}")
    expect("interrupted again" in err2 and "--restart latest" in err2, f"second SIGINT not explained: {err2}")
    expect(not [n for n in os.listdir(os.path.join(big_folder, "out")) if ".tmp" in n], "temporary file left")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    expect(proc.returncode == 130, f"exit {proc.returncode} after SIGINT: {err}")
    usr1 = re.findall(r"SIGUSR1: writing a checkpoint of step (\d+)", out)
    expect(len(usr1) == 1, f"expected one SIGUSR1 line: {out[-800:]}")
    expect(os.path.exists(os.path.join(folder, "out", f"long_{int(usr1[0]):06d}.hdf")), "SIGUSR1 line names no file")
    expect(not [n for n in os.listdir(os.path.join(folder, "out")) if ".tmp" in n], "temporary file left")
    import h5py
    for name in os.listdir(os.path.join(folder, "out")):
        path = os.path.join(folder, "out", name)
        if name.endswith(".hdf"):
            with h5py.File(path, "r") as f:
                f["VTKHDF/PointData/temperature"][...]  # every named checkpoint reads back whole
    json.load(open(os.path.join(folder, "out", "long.hdf.series")))
    print("SIGUSR1 wrote a checkpoint with one line and the run went on; SIGINT: exit 130; "
          "a second SIGINT during the final checkpoint: exit 3 with a message, no temporary file")


def test_second_signal_after_final_checkpoint():
    """A second stop signal that comes once the final checkpoint is on disk (the run is releasing its
    field and folder) leaves with 128 + the first signal, never with exit 3 and a message that the final
    checkpoint was not written: the folder holds it and --restart latest continues from it."""
    folder = fresh_dir("second_signal_late")
    cfg = letters_config(folder, steps=10 ** 9, every=10 ** 9, n=(200, 200, 200))  # a large field to release
    proc = start([cfg, "-q"])
    wait_for_file(os.path.join(folder, "out", "letters.hdf.series"))
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    first = proc.stderr.readline()
    expect("after writing its checkpoint" in first, f"the stop line: {first!r}")
    proc.send_signal(signal.SIGINT)  # the final checkpoint is written; the run is ending
    _, err = proc.communicate(timeout=60)
    expect(proc.returncode == 130 and "leaving without it" not in err,
           f"exit {proc.returncode} after the final checkpoint was written: {first}{err}")
    expect(not [n for n in os.listdir(os.path.join(folder, "out")) if ".tmp" in n], "temporary file left")
    print(f"a second SIGINT after the final checkpoint: exit {proc.returncode}, {err.strip() or 'no more lines'}")


def test_restart_not_a_file():
    """--restart given a folder or a named pipe is refused at once (exit 2) with what to give instead;
    a named pipe at a checkpoint's name never blocks --restart latest, which passes over it."""
    folder = fresh_dir("restart_not_a_file")
    out = os.path.join(folder, "out")
    cfg = letters_config(folder, steps=20, every=10)
    run([cfg, "-q"])
    pipe = os.path.join(folder, "pipe.hdf")
    os.mkfifo(pipe)
    for path, what in ((out, "a folder"), (pipe, "pipe")):
        proc = run([cfg, "-q", "--restart", path, "--set", "time.steps=30"], expect_status=2, timeout=30)
        expect(what in proc.stderr and "--restart latest" in proc.stderr, f"--restart {path}: {proc.stderr}")
    os.mkfifo(os.path.join(out, "letters_000099.hdf"))
    proc = run([cfg, "-q", "--restart", "latest", "--set", "time.steps=30"], timeout=30)
    expect("skipping" in proc.stderr and "letters_000099.hdf" in proc.stderr, proc.stderr)
    expect(os.path.exists(os.path.join(out, "letters_000030.hdf")), f"no step 30: {os.listdir(out)}")
    print("--restart of a folder or a pipe refused at once; a pipe at a checkpoint's name passed over")


def test_sighup_and_sigpipe():
    """SIGHUP (terminal closed) acts as SIGTERM; a closed stdout (`| head`) neither kills nor stops the run."""
    folder = fresh_dir("sighup")
    cfg = long_config(folder, steps=10 ** 9, every=10 ** 9)
    proc = start([cfg, "-q"])
    wait_for_file(os.path.join(folder, "out", "long_000000.hdf"))
    time.sleep(0.3)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    expect(proc.returncode == 128 + signal.SIGHUP, f"exit {proc.returncode} after SIGHUP: {err}")
    files = sorted(n for n in os.listdir(os.path.join(folder, "out")) if n.endswith(".hdf"))
    expect(len(files) == 2, f"SIGHUP wrote no final checkpoint: {files}")
    # stdout is a pipe whose reader leaves after the first line: like `heatsolve ... | head -1`.
    folder = fresh_dir("sigpipe")
    cfg = long_config(folder, steps=3000, every=1000)
    reader, writer = os.pipe()
    proc = subprocess.Popen([HEATSOLVE, cfg], stdout=writer, stderr=subprocess.PIPE, text=True)
    os.close(writer)
    with os.fdopen(reader) as stream:
        stream.readline()
    _, err = proc.communicate(timeout=300)
    expect(proc.returncode == 0, f"exit {proc.returncode} with a closed stdout: {err}")
    files = sorted(n for n in os.listdir(os.path.join(folder, "out")) if n.endswith(".hdf"))
    expect(files[-1] == "long_003000.hdf" and len(files) == 4, f"checkpoints with a closed stdout: {files}")
    print("SIGHUP: final checkpoint, exit 129; closed stdout: the run finished with all 4 checkpoints")


def test_file_size_limit_signal():
    """A shell's `ulimit -f` without the harness ignoring SIGXFSZ: heatsolve ignores it itself, reports
    EFBIG naming the step, and leaves no temporary file."""
    import resource

    def limit_only():
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    folder, out, before, proc = storage_fault("fault_xfsz", lambda f, o: None, preexec=limit_only)
    expect(proc.returncode == 1, f"exit {proc.returncode} (-25 is SIGXFSZ): {proc.stderr}")
    expect("step 600" in proc.stderr and "File too large" in proc.stderr, f"message: {proc.stderr}")
    expect(checkpoint_state(out) == before, "earlier checkpoints or the series changed")
    expect(not [n for n in os.listdir(out) if ".tmp" in n], "temporary file left")
    print(proc.stderr.strip().splitlines()[0])


def checkpoint_state(out):
    """The folder's files and their bytes, but the history, which a restart extends by design."""
    names = sorted(n for n in os.listdir(out) if not n.endswith(".history.csv"))
    contents = {n: open(os.path.join(out, n), "rb").read() for n in names}
    return contents


def storage_fault(name, prepare, preexec=None, user=None, extra=""):
    """A first run writes checkpoints 0..400; a restart to step 1200 meets the fault."""
    folder = fresh_dir(name)
    cfg = long_config(folder, steps=400, every=200, extra=extra)
    out = os.path.join(folder, "out")
    run([cfg, "-q"])
    before = checkpoint_state(out)
    prepare(folder, out)
    args = [HEATSOLVE, cfg, "-q", "--restart", "latest", "--set", "time.steps=1200"]
    if user:
        args = ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups"] + args
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300, preexec_fn=preexec)
    return folder, out, before, proc


def no_file_size_limit_breach():
    import resource
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_storage_file_size_limit():
    folder, out, before, proc = storage_fault("fault_fsize", lambda f, o: None, preexec=no_file_size_limit_breach)
    expect(proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr}")
    expect("step 600" in proc.stderr and "File too large" in proc.stderr, f"message: {proc.stderr}")
    expect(checkpoint_state(out) == before, "earlier checkpoints or the series changed")
    print(proc.stderr.strip())


def test_storage_continue_on_error():
    folder, out, before, proc = storage_fault("fault_continue", lambda f, o: None, preexec=no_file_size_limit_breach,
                                              extra='on_write_error = "continue";')
    # Every write failed, the last one too: the summary counts them and the run exits 1.
    expect(proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr}")
    expect("continu" in proc.stderr and "step 600" in proc.stderr, f"no warning: {proc.stderr}")
    expect("final state (step 1200) is not on disk" in proc.stderr and "the newest is step 400" not in proc.stderr,
           f"final state not reported: {proc.stderr}")
    expect(checkpoint_state(out) == before, "earlier checkpoints or the series changed")
    proc = subprocess.run([HEATSOLVE, os.path.join(folder, "long.cfg"), "--restart", "latest", "--set",
                           "time.steps=1200"], capture_output=True, text=True, timeout=300,
                          preexec_fn=no_file_size_limit_breach)
    found = re.search(r"checkpoints: (\d+) written, (\d+) failed \(the first at step (\d+)\)", proc.stdout)
    expect(found and found.groups() == ("0", "4", "600"), f"summary: {proc.stdout[-800:]}")


def test_storage_read_only_dir():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("needs root and setpriv to run as another user: skipped")
        sys.exit(77)

    def make_read_only(folder, out):
        os.chmod(out, 0o555)

    def as_nobody(folder, out):
        shutil.chown(folder, "nobody", "nogroup")
        for root, dirs, files in os.walk(folder):
            for n in dirs + files:
                shutil.chown(os.path.join(root, n), "nobody", "nogroup")
        make_read_only(folder, out)

    def killed_then_read_only(folder, out):
        write(os.path.join(out, ".long.lock"), "")  # what a run killed by SIGKILL leaves
        as_nobody(folder, out)

    for name, prepare in (("fault_readonly", as_nobody), ("fault_readonly_after_kill", killed_then_read_only)):
        folder, out, before, proc = storage_fault(name, prepare, user="nobody")
        os.chmod(out, 0o755)
        if os.path.exists(os.path.join(out, ".long.lock")):
            os.remove(os.path.join(out, ".long.lock"))  # not in before: killed_then_read_only made it after
        # Found before any computing, also where the lock file is already there to be opened.
        expect(proc.returncode == 2, f"{name}: exit {proc.returncode}: {proc.stderr}")
        expect("output.dir" in proc.stderr and "Permission denied" in proc.stderr, f"{name}: message: {proc.stderr}")
        expect("step" not in proc.stderr, f"{name}: it computed before it failed: {proc.stderr}")
        expect(checkpoint_state(out) == before, f"{name}: earlier checkpoints or the series changed")
        print(f"{name}: {proc.stderr.strip()}")


def test_storage_removed_dir():
    folder = fresh_dir("fault_removed")
    cfg = long_config(folder, steps=10 ** 9, every=300)
    out = os.path.join(folder, "out")
    proc = start([cfg, "-q"])
    wait_for_file(os.path.join(out, "long.hdf.series"))
    while os.path.exists(out):  # the writer may be creating a file meanwhile: remove until gone
        shutil.rmtree(out, ignore_errors=True)
    _, err = proc.communicate(timeout=120)
    expect(proc.returncode == 1, f"exit {proc.returncode}: {err}")
    expect("step 300" in err and "No such file or directory" in err, f"message: {err}")
    print(err.strip())


def test_storage_disk_full():
    """A 3 MB file system fills up: free-space warnings first, then exit 1 naming the step and
    ENOSPC; every checkpoint the series lists reads back whole."""
    import h5py
    folder = fresh_dir("fault_diskfull")
    out = os.path.join(folder, "out")
    os.makedirs(out)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", out]).returncode:
        print("needs root to mount a small tmpfs: skipped")
        sys.exit(77)
    try:
        proc = run([long_config(folder, steps=4000, every=200), "-q"], expect_status=None)
        expect(proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr}")
        expect("No space left on device" in proc.stderr and "was not written" in proc.stderr, proc.stderr)
        expect("may need up to" in proc.stderr, f"no free-space warning: {proc.stderr}")
        expect(not [n for n in os.listdir(out) if ".tmp" in n], "temporary file left")
        listed = [e["name"] for e in json.load(open(os.path.join(out, "long.hdf.series")))["files"]]
        for name in listed:
            with h5py.File(os.path.join(out, name), "r") as f:
                f["VTKHDF/PointData/temperature"][...]
        print(f"disk full after {len(listed)} checkpoints: {proc.stderr.strip().splitlines()[-2]}")
    finally:
        subprocess.run(["umount", out])


def read_history(path):
    with open(path) as f:
        lines = f.read().splitlines()
    expect(lines and lines[0] == "step,time,min,max,mean,heat", f"history header: {lines[:1]}")
    rows = {}
    for line in lines[1:]:
        fields = line.split(",")
        expect(len(fields) == 6, f"history row {line!r}")
        step = int(fields[0])
        expect(not rows or step > max(rows), f"history steps out of order at {line!r}")
        rows[step] = line
    return rows


def test_history():
    """<name>.history.csv: a row at every checkpoint whose min and max are the checkpoint's to the
    bit and whose mean and heat agree with it, the heat conserved with insulated walls; a restart
    from an earlier checkpoint drops the rows after it and writes the same rows again; off with
    output.history = false."""
    import numpy as np
    folder = fresh_dir("history")
    cfg = write(os.path.join(folder, "insulated.cfg"), f"""
grid = {{ n = [48, 24, 12]; length = [4.0, 2.0, 1.0]; }};
time = {{ steps = 60; }};
initial = {{ type = "letters"; text = "HI"; }};
output = {{ dir = "{folder}/out"; every = 20; name = "letters"; }};
""")
    proc = run([cfg])
    out = os.path.join(folder, "out")
    rows = read_history(os.path.join(out, "letters.history.csv"))
    expect(f"history: {len(rows)} rows in {out}/letters.history.csv" in proc.stdout, f"summary: {proc.stdout[-600:]}")
    expect([0, 20, 40, 60] == [s for s in rows if s % 20 == 0], f"history steps {list(rows)}")
    cell = (4.0 / 48) * (2.0 / 24) * (1.0 / 12)
    heat = []
    for step in (0, 20, 40, 60):
        _, time_, low, high, mean, total = (float(v) for v in rows[step].split(","))
        field = read_field(os.path.join(out, f"letters_{step:06d}.hdf")).astype(np.float64)
        expect(low == field.min() and high == field.max(), f"step {step}: min/max {low}, {high} against the file's")
        expect(abs(mean - field.mean()) <= 1e-12 * abs(field.mean()), f"step {step}: mean {mean}, file {field.mean()}")
        expect(abs(total - field.sum() * cell) <= 1e-12 * abs(total), f"step {step}: heat {total}")
        heat.append(total)
    expect(max(heat) - min(heat) <= 1e-12 * heat[0], f"heat not conserved by insulated walls: {heat}")
    # An abandoned continuation: rows past step 20 must go when the run restarts from step 20.
    for step in (40, 60):
        os.remove(os.path.join(out, f"letters_{step:06d}.hdf"))
    with open(os.path.join(out, "letters.history.csv"), "a") as f:
        f.write("50,1,2,3,4,5\n15,1,2,3")  # and a row torn by a crash
    run([cfg, "-q", "--restart", "latest"])
    again = read_history(os.path.join(out, "letters.history.csv"))
    for step in (0, 20, 40, 60):
        expect(again[step] == rows[step], f"step {step} after the restart: {again[step]!r}, first run {rows[step]!r}")
    expect(50 not in again and 15 not in again, f"the abandoned or torn rows stayed: {list(again)}")
    off = fresh_dir("history_off")
    run([letters_config(off, steps=20, every=10, extra="history = false;"), "-q"])
    expect(not [n for n in os.listdir(os.path.join(off, "out")) if "history" in n], "output.history = false wrote one")
    print(f"history rows at {list(rows)}: the checkpoints' min, max, mean and heat; heat {heat[0]:.17g} conserved; "
          "a restart from step 20 rewrote the same rows and dropped the abandoned ones")


def test_tuning_cache_key():
    """The CPU step's trial ends while the first checkpoint's slow write holds one of the two
    cores: its choice goes into the tuning cache under the run's thread count, so the next run
    finds it instead of timing again (it had gone under "1 threads", which no lookup asks for)."""
    folder = fresh_dir("tuning_key")
    cache = os.path.join(folder, "tuning.txt")
    env = dict(os.environ, HEATSOLVE_TUNING_CACHE=cache, OMP_NUM_THREADS="2")
    cfg = letters_config(folder, steps=40, every=1000, extra="compression = 9;", n=(128, 128, 64))
    run([cfg, "-q", "--backend", "cpu"], env=env)
    lines = open(cache).read().splitlines()
    expect(len(lines) == 1 and ", 2 threads," in lines[0], f"tuning cache: {lines}")
    proc = run([cfg, "--backend", "cpu", "--overwrite"], env=env)
    expect("from the tuning cache" in proc.stdout, f"the second run timed again: {proc.stdout[:1500]}")
    expect(open(cache).read().splitlines() == lines, "the second run stored its choice again")
    print(f"stored once, found by the next run: {lines[0]}")


def test_clock_checkpoints():
    """output.every_seconds: restart checkpoints by the wall clock beside the step interval, pruned by
    output.keep like any checkpoint, counted in the summary, and each one restarts bitwise."""
    folder = fresh_dir("clock")
    cfg = long_config(folder, steps=10 ** 9, every=10 ** 9, extra="every_seconds = 0.2; keep = 3;")
    out = os.path.join(folder, "out")
    def written():
        return sorted(n for n in os.listdir(out) if n.endswith(".hdf"))
    seen = set()
    proc = start([cfg])
    try:
        wait_for_file(os.path.join(out, "long.hdf.series"))
        end = time.time() + 120
        while len(seen) < 4:  # the initial checkpoint and three by the clock
            expect(time.time() < end and proc.poll() is None, f"no checkpoints by the wall clock: {written()}")
            seen.update(written())
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGINT)  # never left running (it would go on writing into this folder)
    stdout, err = proc.communicate(timeout=60)
    expect(proc.returncode == 130, f"exit {proc.returncode} after SIGINT: {err}")
    expect("and one every 0.2 s of wall time" in stdout, f"the output plan does not name the clock: {stdout[:1500]}")
    counts = re.search(r"checkpoints: (\d+) written \((\d+) by the wall clock\)", stdout)
    expect(counts and int(counts.group(2)) >= 3 and int(counts.group(1)) == int(counts.group(2)) + 2,
           f"seen {sorted(seen)}, summary: {stdout[-800:]}")  # + the initial and the final (SIGINT) checkpoint
    files = written()
    names = [e["name"] for e in json.load(open(os.path.join(out, "long.hdf.series")))["files"]]
    expect(len(files) == 3 and names == files, f"output.keep = 3 kept {files}, series lists {names}")
    steps = [int(re.search(r"_(\d+)\.hdf", n).group(1)) for n in files]
    reference = read_field(os.path.join(out, files[-1]))
    target = fresh_dir("clock_restart")
    shutil.copy(os.path.join(out, files[0]), target)
    run([cfg, "-q", "--restart", os.path.join(target, files[0]), "--set", f"time.steps={steps[-1]}",
         "--set", f"output.dir=\"{target}\"", "--set", "output.every_seconds=0.0"])
    final = read_field(os.path.join(target, f"long_{steps[-1]:06d}.hdf"))
    expect(final.tobytes() == reference.tobytes(), f"restart from the clock's step {steps[0]}: field differs")
    print(f"{counts.group(2)} checkpoints by the wall clock (kept steps {steps}); the restart from step {steps[0]} "
          f"to step {steps[-1]} is bitwise equal")


def test_keep_newest():
    folder = fresh_dir("keep")
    run([long_config(folder, steps=1000, every=100, extra="keep = 3;"), "-q"])
    out = os.path.join(folder, "out")
    files = sorted(n for n in os.listdir(out) if n.endswith(".hdf"))
    expect(files == ["long_000800.hdf", "long_000900.hdf", "long_001000.hdf"], f"kept {files}")
    names = [e["name"] for e in json.load(open(os.path.join(out, "long.hdf.series")))["files"]]
    expect(names == files, f"series lists {names}")


# ---- quick-look PNG -------------------------------------------------------------------------------

def decode_png(path):
    """Independent PNG decoder (8-bit RGB, filter types 0-4) with Python's zlib."""
    with open(path, "rb") as f:
        data = f.read()
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", "PNG signature")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        crc = int.from_bytes(data[pos + 8 + length:pos + 12 + length], "big")
        expect(zlib.crc32(kind + body) == crc, f"CRC of chunk {kind}")
        if kind == b"IHDR":
            width, height = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
            expect(body[8] == 8 and body[9] == 2, "8-bit RGB expected")
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), 3 * width, [], bytearray(3 * width)
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - 3] if x >= 3 else 0
            b, c = prev[x], prev[x - 3] if x >= 3 else 0
            if ftype == 1: line[x] = (line[x] + a) & 255
            elif ftype == 2: line[x] = (line[x] + b) & 255
            elif ftype == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, rows


def test_png_quicklook():
    folder = fresh_dir("png")
    run([letters_config(folder, steps=10, every=10, extra="png = true;")])
    path = os.path.join(folder, "out", "letters_000000.png")
    width, height, rows = decode_png(path)
    # 48 x 24 slice scaled to >= 480 px wide (x10), 8 px margins, bar and text below.
    expect(width == 48 * 10 + 16, f"width {width}")
    expect(height > 24 * 10 + 16, f"height {height}")

    def brightness(ix, iy):  # grid point (ix, iy) of the slice; y up
        x, y = 8 + ix * 10 + 5, 8 + (23 - iy) * 10 + 5
        return sum(rows[y][3 * x:3 * x + 3])

    # 'H' left stem: glyph unit fits 11 columns in 0.88 * 4 and 7 rows in 0.88 * 2; plate corner cold.
    unit = min(0.88 * 4 / 11, 0.88 * 2 / 7)
    hot = brightness(int((4 - 11 * unit) / 2 / (4 / 48) + 1), 12)
    cold = brightness(1, 1)
    expect(hot > cold + 200, f"hot letter pixel {hot} not brighter than plate {cold}")
    print(f"PNG {width}x{height}: letter brightness {hot}, plate {cold}")

    # Under the colour bar's range, a second line says the step and time: it differs between steps.
    def text_bands(rows):
        ink = [y for y, row in enumerate(rows) if any(row[x:x + 3] == b"\xe6\xe6\xe6" for x in range(0, len(row), 3))]
        bands = []
        for y in ink:
            if bands and y == bands[-1][-1] + 1: bands[-1].append(y)
            else: bands.append([y])
        return bands
    later = decode_png(os.path.join(folder, "out", "letters_000010.png"))[2]
    bands, later_bands = text_bands(rows), text_bands(later)
    expect(len(bands) == 2 and len(later_bands) == 2, f"text bands: {len(bands)}, {len(later_bands)}")
    expect([rows[y] for y in bands[1]] != [later[y] for y in later_bands[1]], "step/time line same at steps 0 and 10")


# ---- bench ---------------------------------------------------------------------------------------

def validate_bench_json(path):
    with open(path) as f:
        report = json.load(f)
    for key, kind in (("device", str), ("backend", str), ("size", list), ("precision", str),
                      ("copy_bandwidth_GBs", float), ("results", list)):
        expect(isinstance(report.get(key), kind), f"bench JSON: {key} missing or not {kind.__name__}")
    expect(len(report["size"]) == 3 and all(isinstance(n, int) for n in report["size"]), "size")
    expect(report["copy_bandwidth_GBs"] > 0, "copy bandwidth")
    expect(sum(r["production"] for r in report["results"]) == 1, "exactly one production row")
    for row in report["results"]:
        for key, kind in (("kernel", str), ("tile", int), ("ms", float), ("effective_GBs", float),
                          ("fraction_of_copy", float), ("glups", float), ("production", bool)):
            expect(isinstance(row.get(key), kind), f"bench JSON row {row}: {key}")
        expect(row["ms"] > 0 and row["effective_GBs"] > 0, f"row {row}")
        expect(abs(row["fraction_of_copy"] - row["effective_GBs"] / report["copy_bandwidth_GBs"]) < 1e-3, "fraction")
    return report


def test_bench_json():
    folder = fresh_dir("bench")
    path = os.path.join(folder, "bench.json")
    proc = run(["bench", "--backend", "cpu", "--size", "40,32,24", "--reps", "5", "--json", path])
    expect("% of copy" in proc.stdout and "production" in proc.stdout, "bench table")
    report = validate_bench_json(path)
    expect(report["size"] == [40, 32, 24] and report["backend"] == "cpu", "bench size/backend")
    # --cg writes its table as JSON too (--help: --json for every measurement).
    path = os.path.join(folder, "cg.json")
    proc = run(["bench", "--cg", "--backend", "cpu", "--size", "24", "--reps", "3", "--json", path])
    expect(os.path.exists(path), f"bench --cg --json wrote no file: {proc.stdout}")
    cg = json.load(open(path))
    operations = [row["operation"] for row in cg["results"]]
    expect(cg["benchmark"] == "cg" and cg["size"] == [24, 24, 24] and cg["backend"] == "cpu" and
           operations == [line.split("  ")[0] for line in proc.stdout.splitlines()[-4:]], f"bench --cg JSON: {cg}")
    report_stays_whole(folder)


def report_stays_whole(folder):
    """A report that cannot be written whole (here: the files a process may write held to 1000 bytes,
    less than the report, as a full disk would stop it) fails and leaves the earlier report as it was,
    never half of the new one."""
    import resource
    import signal
    path = os.path.join(folder, "bench.json")
    earlier = open(path, "rb").read()
    expect(len(earlier) > 1000, f"the report is {len(earlier)} bytes: the limit below would not cut it")

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
    env = dict(os.environ, HEATSOLVE_TUNING_CACHE=os.path.join(folder, "tuning.txt"))
    proc = run(["bench", "--backend", "cpu", "--size", "40,32,24", "--reps", "5", "--json", path], expect_status=None,
               preexec_fn=limited, env=env)
    expect(proc.returncode != 0 and "bench.json" in proc.stderr, f"a report cut short: exit {proc.returncode}\n{proc.stderr}")
    expect(open(path, "rb").read() == earlier, "the earlier report was changed by the one that could not be written")
    expect(not [f for f in os.listdir(folder) if f.startswith("bench.json") and f != "bench.json"],
           f"a temporary file was left: {os.listdir(folder)}")


def test_bench_io_json():
    """bench --io: the figures are consistent with each other (floor = the slower stage), the JSON
    carries them, nothing is left in the folder, a bad --level exits 2."""
    folder = fresh_dir("bench_io")
    path = os.path.join(folder, "io.json")
    proc = run(["bench", "--io", "--size", "48,40,32", "--io-dir", folder, "--json", path])
    for words in ("compression stage", "fsync bandwidth", "whole checkpoint", "its floor", "restart read"):
        expect(words in proc.stdout, f"bench --io lacks '{words}': {proc.stdout}")
    r = json.load(open(path))
    expect(r["size"] == [48, 40, 32] and r["level"] == 1 and r["engine"] in ("ISA-L igzip", "zlib"), f"{r}")
    expect(abs(r["ratio"] - r["raw_bytes"] / r["compressed_bytes"]) < 1e-4 * r["ratio"], "ratio")
    floor = max(r["fsync_s"], r["compression_s"])
    expect(abs(r["floor_s"] - floor) <= 1e-6 * floor
           and abs(r["checkpoint_over_floor"] - r["checkpoint_s"] / floor) <= 1e-6 * r["checkpoint_over_floor"],
           f"floor: {r}")
    expect(r["restart_read_s"] > 0 and r["hdf5_filter_s"] > 0 and r["hdf5_filter_file_bytes"] > 0, f"{r}")
    # The file holds the chunks the compression stage made, plus metadata (the config, the CRCs, HDF5's own).
    expect(0 < r["file_bytes"] - r["compressed_bytes"] < 64 * 1024, f"file against its chunks: {r}")
    expect("its file (zlib)" in proc.stdout, f"bench --io lacks zlib's file: {proc.stdout}")
    phases = r["file_s"] + r["seal_s"] + r["commit_s"]
    expect(min(r["file_s"], r["seal_s"], r["commit_s"]) > 0 and phases <= r["checkpoint_s"], f"phases: {r}")
    expect(os.listdir(folder) == ["io.json"], f"left behind: {os.listdir(folder)}")
    proc = run(["bench", "--io", "--level", "12"], expect_status=2)
    expect("--level 12" in proc.stderr and "0-9" in proc.stderr, proc.stderr)
    proc = run(["bench", "--transport", "fast"], expect_status=2)
    expect("--transport fast" in proc.stderr and "auto, mpi, nccl, host or ipc" in proc.stderr, proc.stderr)
    print(f"bench --io: {r['checkpoint_s']:.4f} s, {r['checkpoint_over_floor']:.2f}x its floor")


def periodic_amplitude(folder, n, scheme, dt, steps, backend="cpu"):
    """Amplitude of the periodic mode sin(2 pi x) sin(2 pi y) sin(2 pi z) after `steps` steps on n^3."""
    import numpy
    cfg = write(os.path.join(folder, f"p{n}_{scheme}.cfg"), f"""
grid = {{ n = [{n}, {n}, {n}]; length = [1.0, 1.0, 1.0]; }};
time = {{ steps = {steps}; dt = {dt!r}; scheme = "{scheme}"; }};
solver = {{ rtol = 1e-12; }};
initial = {{ type = "sine"; modes = [2, 2, 2]; amplitude = 1.0; }};
boundary = {{ x_low = {{ type = "periodic"; }}; x_high = {{ type = "periodic"; }};
             y_low = {{ type = "periodic"; }}; y_high = {{ type = "periodic"; }};
             z_low = {{ type = "periodic"; }}; z_high = {{ type = "periodic"; }}; }};
output = {{ dir = "{folder}/out_{n}_{scheme}"; every = 0; }};
""")
    run([cfg, "-q", "--backend", backend])
    u = read_field(os.path.join(folder, f"out_{n}_{scheme}", f"p{n}_{scheme}_{steps:06d}.hdf"))
    x = numpy.sin(2 * numpy.pi * (numpy.arange(n) + 0.5) / n)
    mode = x[:, None, None] * x[None, :, None] * x[None, None, :]
    amplitude = float((u * mode).sum() / (mode * mode).sum())
    expect(abs(u - amplitude * mode).max() < 1e-12, f"n={n} {scheme}: the field left the mode")
    return amplitude


def test_periodic_sine_decay(backend="cpu", schemes=("euler", "crank_nicolson")):
    """A periodic sine mode decays at the analytic rate exp(-3 (2 pi)^2 t), second order in h
    (dt shrinks with h^2), explicit and implicit."""
    import math
    folder = fresh_dir("periodic_" + backend)
    end = 0.01
    exact = math.exp(-3 * (2 * math.pi) ** 2 * end)
    for scheme in schemes:
        errors = []
        for n, steps in ((16, 25), (32, 100)):
            errors.append(abs(periodic_amplitude(folder, n, scheme, end / steps, steps, backend) - exact))
        order = math.log2(errors[0] / errors[1])
        expect(1.8 < order < 2.2, f"{scheme}: errors {errors}, observed order {order:.3f}, expected 2")
        print(f"periodic sine, {scheme}: errors {errors[0]:.3e}, {errors[1]:.3e}; order {order:.3f}")


def skip_without_gpu():
    # A probe folder of the test's own: GPU tests run side by side (ctest -j), and a shared one was
    # emptied by one test while another's probe ran in it.
    folder = fresh_dir("gpu_probe_" + sys.argv[3])
    proc = run([letters_config(folder, steps=1, every=0), "-q", "--backend", "hip"], expect_status=None)
    if proc.returncode == 2 and "no usable GPU" in proc.stderr:
        print("no GPU: skipped")
        sys.exit(77)
    expect(proc.returncode == 0, f"GPU probe run failed: {proc.stderr}")


def test_periodic_sine_decay_gpu():
    """The periodic mode on the GPU, explicit and implicit (the exchange of the wrapped-around faces)."""
    skip_without_gpu()
    test_periodic_sine_decay("hip", ("euler", "crank_nicolson"))


def test_one_gpu_visible_gpu():
    """A process alone on its node shows the GPU runtime only device 0 (each visible GPU costs start-up),
    unless CUDA_VISIBLE_DEVICES or its AMD twins already chose; the bits do not depend on which."""
    skip_without_gpu()
    folder = fresh_dir("one_gpu_visible")
    cfg = letters_config(folder, steps=20, every=0)
    unset = {k: v for k, v in os.environ.items()
             if k not in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")}
    fields = {}
    for name, chosen in (("default", None), ("chosen", "0"), ("other", "1")):
        if name == "other" and (shutil.which("nvidia-smi") is None or
                                subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU ") < 2):
            print("one GPU on this machine: the run on device 1 left out")
            continue
        env = dict(unset, **({"CUDA_VISIBLE_DEVICES": chosen} if chosen else {}))
        out = os.path.join(folder, name)
        proc = run([cfg, "-v", "--backend", "hip", "--set", f'output.dir="{out}"'], env=env)
        noted = "shown device 0 only" in proc.stdout
        expect(noted == (chosen is None), f"{name}: the narrowing note {'missing' if chosen is None else 'printed'}:\n"
               f"{proc.stdout}")
        fields[name] = read_field(os.path.join(out, "letters_000020.hdf")).tobytes()
        print(f"{name} (CUDA_VISIBLE_DEVICES={chosen}): {'narrowed to device 0' if noted else 'left as chosen'}")
    expect(all(f == fields["default"] for f in fields.values()), "the field depends on the GPUs shown")
    print("same bits whichever GPU ran")


def test_restart_bitwise_gpu():
    """A letters run on the GPU whose checkpoints restart bitwise on the GPU."""
    skip_without_gpu()
    folder = fresh_dir("restart_gpu")
    cfg = letters_config(folder, steps=60, every=20)
    gpu = ["--backend", "hip"]
    proc = run([cfg] + gpu)
    expect("backend hip" in proc.stdout, f"not on the GPU: {proc.stdout}")
    reference = read_field(os.path.join(folder, "out", "letters_000060.hdf"))
    for step in (0, 20, 40):
        _, final = restart_from_copy(folder, cfg, step, 60, "gpu", gpu)
        expect(final.tobytes() == reference.tobytes(), f"GPU restart from step {step}: field differs")
        print(f"GPU restart from step {step}: bitwise equal")
    cpu_folder = fresh_dir("restart_gpu_cpu")
    run([cfg, "-q", "--backend", "cpu", "--set", f"output.dir=\"{cpu_folder}\""])
    cpu = read_field(os.path.join(cpu_folder, "letters_000060.hdf"))
    import numpy as np
    difference = float(np.max(np.abs(cpu - reference)) / np.max(np.abs(cpu)))
    print(f"letters run, GPU against CPU after 60 steps: max relative difference {difference:.3e}")
    expect(difference <= 1e-13, "GPU letters run differs from the CPU run")


def test_fused_sweeps_bitwise_gpu():
    """The time loop with K steps a sweep (solver.kernel = heat_fusedK) writes the checkpoints of
    single steps, at the same steps, bitwise; checkpoints every 7 steps leave a remainder of
    single steps between the sweeps, and a restart from one of them continues bitwise."""
    skip_without_gpu()
    for precision in ("double", "float"):
        runs = {}
        for kernel in ("heat_tiled_ntf", "heat_fused2", "heat_fused3", "heat_fused4"):
            folder = fresh_dir(f"fused_{kernel}_{precision}")
            cfg = letters_config(folder, steps=45, every=7, n=(70, 38, 30), text="K")
            extra = ["--backend", "hip", "--set", f'solver.precision="{precision}"', "--set",
                     f'solver.kernel="{kernel}"']
            proc = run([cfg] + extra)
            if kernel != "heat_tiled_ntf":
                expect("steps a sweep" in proc.stdout, f"{kernel}: no fused sweeps taken: {proc.stdout}")
            steps = list(range(0, 45, 7)) + [45]
            runs[kernel] = [read_field(os.path.join(folder, "out", f"letters_{s:06d}.hdf")).tobytes() for s in steps]
            if kernel == "heat_fused3":
                _, final = restart_from_copy(folder, cfg, 14, 45, f"fused_{precision}", extra)
                expect(final.tobytes() == runs[kernel][-1], f"{precision}: restart of a fused run from 14 differs")
        for kernel, fields in runs.items():
            expect(fields == runs["heat_tiled_ntf"], f"{precision}: {kernel} checkpoints differ from single steps")
        print(f"{precision}: 2, 3, 4 steps a sweep: every checkpoint bitwise equal to single steps; restart bitwise")


def test_writes_in_flight_gpu():
    """On the GPU several snapshots leave the device while earlier writes are in flight."""
    skip_without_gpu()
    writes_in_flight("hip", "gpu")


def expect_kernels_bitwise(label, config, checkpoint, variants, summary, extra=()):
    """Runs `config` on the GPU once for each (kernel, tile) of `variants` (plus the arguments `extra`), in
    double and in float, and expects the checkpoint file `checkpoint` of every run to hold the first
    variant's bits; prints `summary` for each precision."""
    for precision in ("double", "float"):
        folder = fresh_dir(f"{label}_{precision}")
        cfg = write(os.path.join(folder, f"{label}.cfg"), config)
        fields = {}
        for kernel, tile in variants:
            target = os.path.join(folder, f"{kernel}_{tile}")
            run([cfg, "-q", "--backend", "hip", "--set", f'solver.precision="{precision}"', "--set",
                 f'solver.kernel="{kernel}"', "--set", f"solver.tile={tile}", "--set", f'output.dir="{target}"']
                + list(extra))
            fields[(kernel, tile)] = read_field(os.path.join(target, checkpoint)).tobytes()
        first = variants[0]
        differing = [v for v in variants if fields[v] != fields[first]]
        expect(not differing, f"{precision}: {differing} differ from {first}")
        print(f"{precision}: {summary}")


def test_kernels_bitwise_gpu():
    """Every GPU heat kernel variant and tile factor gives the same bits (no multiply-add
    contraction in the GPU build): the tuner's choice, which depends on the block size and on
    timing, can then change neither a restart nor a run on another number of ranks."""
    skip_without_gpu()
    variants = [("heat_tiled", 2), ("heat_tiled_nt", 4), ("heat_tiled_ntf", 1), ("heat_tiled_ntf", 4),
                ("heat_tiled_ntf", 8), ("heat_zwindow32", 4), ("heat_zwindow128", 1), ("heat_zwindowf32", 2),
                ("heat_pairs_nt", 2), ("heat_pairs_ntf", 1), ("heat_pairs_ntf", 4), ("heat_quads_nt", 1),
                ("heat_quads_ntf", 2), ("heat_zpairsf32", 2), ("heat_zquadsf32", 1), ("heat_pairs_ntx", 2),
                ("heat_zahead1", 2), ("heat_zahead1z16", 2), ("heat_zahead1r", 2), ("heat_zahead1z16r", 2),
                ("heat_zahead1z8r", 2), ("heat_zwindowf32r", 2), ("heat_zwindowf16r", 2), ("heat_zwindowf8r", 2),
                ("heat_zwindow16r", 2), ("heat_zwindowg64r", 2), ("heat_zwindowg32r", 2), ("heat_zwindowg16r", 2),
                ("heat_zwindowg8r", 2), ("heat_zwide4g8r", 1), ("heat_zwide4g8r", 2), ("heat_zwide4g32r", 2),
                ("heat_zwide2g8r", 1), ("heat_zwide2g8r", 2), ("heat_zwide2g16r", 2), ("heat_zwide2g32r", 1),
                ("heat_zwide2g32r", 2), ("heat_zwide2g8tr", 1), ("heat_zwide2g16tr", 1),
                ("heat_zwide2g32tr", 1), ("heat_zwide4g8tr", 1), ("heat_zwide4g16tr", 1), ("heat_zwide4g32tr", 2)]
    config = """
grid = { n = [80, 48, 40]; length = [2.0, 1.2, 1.0]; };
time = { steps = 30; };
initial = { type = "letters"; text = "GPU"; };
boundary = { z_low = { type = "dirichlet"; value = 0.0; }; x_high = { type = "dirichlet"; value = 20.0; }; };
output = { every = 0; name = "letters"; };
"""
    expect_kernels_bitwise("kernels", config, "letters_000030.hdf", variants,
                           f"{len(variants)} kernel variants, the same bits")


def test_march_order_bitwise_gpu():
    """The marching kernels that take their columns and z chunks in a march order give heat_tiled's
    bits on a grid with more columns of 256-thread tiles than the GPU holds blocks at once (the
    order's groups, the last one narrower) and 1 to 3 chunks a column (kernels_bitwise_gpu's grid
    has fewer columns than blocks: the order's runs of chunks side by side); periodic x faces, whose
    ghosts the kernels that make the others on the fly (heat_zwindowg) read."""
    skip_without_gpu()
    variants = [("heat_tiled", 2), ("heat_zahead1r", 2), ("heat_zahead1z16r", 2), ("heat_zahead1z8r", 2),
                ("heat_zwindowf32r", 2), ("heat_zwindowf16r", 2), ("heat_zwindowf8r", 2), ("heat_zwindow16r", 2),
                ("heat_zwindowg64r", 2), ("heat_zwindowg32r", 2), ("heat_zwindowg16r", 2),
                ("heat_zwindowg8r", 2), ("heat_zwide4g8r", 1), ("heat_zwide4g8r", 2), ("heat_zwide4g32r", 2),
                ("heat_zwide2g8r", 1), ("heat_zwide2g8r", 2), ("heat_zwide2g16r", 2), ("heat_zwide2g32r", 1),
                ("heat_zwide2g32r", 2), ("heat_zwide2g8tr", 1), ("heat_zwide2g16tr", 1),
                ("heat_zwide2g32tr", 1), ("heat_zwide4g8tr", 1), ("heat_zwide4g16tr", 1), ("heat_zwide4g32tr", 2)]
    config = """
grid = { n = [40, 4400, 24]; length = [0.4, 44.0, 0.24]; };
time = { steps = 6; };
initial = { type = "letters"; text = "GPU"; };
boundary = { z_low = { type = "dirichlet"; value = 0.0; }; y_high = { type = "dirichlet"; value = 20.0; };
             x_low = { type = "periodic"; }; x_high = { type = "periodic"; }; };
output = { every = 0; name = "columns"; png = false; };
"""
    expect_kernels_bitwise("march_order", config, "columns_000006.hdf", variants,
                           f"{len(variants) - 1} marching kernels, heat_tiled's bits on 40x4400x24 (x periodic)",
                           extra=["--set", "solver.block=[256,1,1]"])


def test_gpu_memory_refusal():
    """A grid larger than any GPU's memory (256 GB in float) is refused before allocating."""
    skip_without_gpu()
    folder = fresh_dir("gpu_memory")
    proc = run([letters_config(folder, steps=1, every=0), "--backend", "hip", "--set", "grid.n=[4000,4000,2000]",
                "--set", 'solver.precision="float"'], expect_status=2)
    expect("GPU memory" in proc.stderr and "bytes" in proc.stderr and "free" in proc.stderr, proc.stderr)
    print(proc.stderr.strip())


def sanitizer(tool):
    skip_without_gpu()
    exe = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not os.path.exists(exe):
        print("no compute-sanitizer: skipped")
        sys.exit(77)
    # a single-step kernel, and fused sweeps (3 steps a sweep over a periodic x axis, the rest single steps)
    for kernel, extra in (("heat_tiled_nt", ["--set", "solver.tile=4"]),
                          ("heat_fused3", ["--set", 'boundary.x_low.type="periodic"', "--set",
                                           'boundary.x_high.type="periodic"']),
                          # space order 8: the shared tile, its halo and the mirrored reads; x wraps through the exchange
                          ("order_zwindow64_32x8", ["--set", "solver.space_order=8", "--set", "solver.tile=2", "--set",
                                                    'boundary.x_low.type="periodic"', "--set",
                                                    'boundary.x_high.type="periodic"'])):
        folder = fresh_dir(f"sanitizer_{tool}_{kernel}")
        cfg = letters_config(folder, steps=7, every=7)
        proc = subprocess.run([exe, "--tool", tool, "--error-exitcode", "99", HEATSOLVE, cfg, "-q", "--backend", "hip",
                               "--set", f'solver.kernel="{kernel}"'] + extra,
                              capture_output=True, text=True, timeout=1200)
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        expect(proc.returncode == 0, f"compute-sanitizer {tool}, {kernel}: exit {proc.returncode}")
        text = proc.stdout + proc.stderr
        clean = ("ERROR SUMMARY: 0 errors" in text
                 or "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" in text)
        expect(clean, f"{tool} found errors with {kernel}")


def test_memcheck_gpu():
    sanitizer("memcheck")


def test_racecheck_gpu():
    sanitizer("racecheck")


def test_space_order_gpu():
    """Space order 8 through the program on the GPU: explicit and Crank-Nicolson runs restarted from
    each checkpoint end with the same bits, and agree with the CPU's runs to rounding (explicit) or
    within the CG tolerance (Crank-Nicolson)."""
    skip_without_gpu()
    import numpy as np
    for tag, extra, tolerance in (("explicit", [], 1e-12), ("crank_nicolson", IMPLICIT, 1e-7)):
        folder = fresh_dir(f"space_order_gpu_{tag}")
        cfg = letters_config(folder, steps=12, every=4)
        order = ["--set", "solver.space_order=8"] + extra
        proc = run([cfg, "--backend", "hip"] + order)
        expect("order_" in proc.stdout or tag != "explicit", f"no order kernel announced: {proc.stdout[-600:]}")
        reference = read_field(os.path.join(folder, "out", "letters_000012.hdf"))
        for step in (4, 8):
            _, final = restart_from_copy(folder, cfg, step, 12, f"order8_{tag}", order + ["--backend", "hip"])
            expect(final.tobytes() == reference.tobytes(), f"{tag}: restart from step {step}: field differs")
        cpu_dir = fresh_dir(f"space_order_cpu_{tag}")
        run([cfg, "-q", "--backend", "cpu", "--set", f'output.dir="{cpu_dir}"'] + order)
        cpu = read_field(os.path.join(cpu_dir, "letters_000012.hdf"))
        difference = float(np.max(np.abs(reference - cpu)) / np.max(np.abs(cpu)))
        expect(difference <= tolerance, f"{tag}: GPU and CPU differ by {difference:.3e} > {tolerance}")
        print(f"space order 8, {tag}: restarts from steps 4 and 8 bitwise equal; GPU vs CPU {difference:.3e}")


# ---- space orders (solver.space_order, issue 38) ----------------------------------------------

SPACE_ORDER_ERRORS = [
    # (name, file text, extra args, words the message must contain)
    ("odd order", "solver = { space_order = 3; };", [], ["bad.cfg:1", "solver.space_order = 3", "2, 4, 6 or 8"]),
    ("order 10", "grid = { n = [8, 8, 8]; };", ["--set", "solver.space_order=10"], ["--set", "solver.space_order = 10"]),
    ("order 0", "solver = { space_order = 0; };", [], ["bad.cfg:1", "solver.space_order = 0"]),
    ("thin axis", "grid = { n = [8, 8, 3]; }; solver = { space_order = 8; };", [],
     ["bad.cfg:1: grid.n = [8, 8, 3]", "z has only 3", "at least 4"]),
    ("materials", open(os.path.join(SOURCE, "inputs", "heatsink.cfg")).read(), ["--set", "solver.space_order=6"],
     ["--set: solver.space_order = 6", "materials", "solver.space_order = 2"]),
    # the explicit step's limits, which the orders lower, point at the line to change
    ("euler cfl above 1", "solver = { space_order = 8; };\ntime = { cfl = 1.5; };", [],
     ["bad.cfg:2: time.cfl = 1.5", "unstable above 1"]),
    ("euler dt above dt_max", "grid = { n = [8, 8, 8]; };\ntime = {\n  dt = 0.004;\n};\nsolver = { space_order = 8; };",
     [], ["bad.cfg:3: time.dt = 0.004", "dt_max = 0.00"]),
    # the start-up line's dt_max (0.000651042, 6 digits) lies above 1/1536: the refusal shows the difference
    ("euler dt just above dt_max", "grid = { n = [16, 16, 16]; length = [1.0, 1.0, 1.0]; };\ntime = { dt = 0.000651042; };",
     [], ["time.dt = 0.000651042 exceeds", "dt_max = 0.000651041666666"]),
]


def test_space_order_errors():
    folder = fresh_dir("space_order_errors")
    for name, text, extra, words in SPACE_ORDER_ERRORS:
        path = write(os.path.join(folder, "bad.cfg"), text)
        proc = run([path, "-q"] + extra + ["--set", f"output.dir=\"{folder}/out\""], expect_status=None)
        expect(proc.returncode == 2, f"{name}: exit {proc.returncode}, expected 2; stderr: {proc.stderr}")
        for word in words:
            expect(word in proc.stderr, f"{name}: message lacks '{word}': {proc.stderr}")
        expect(not os.path.exists(os.path.join(folder, "out")), f"{name}: output written despite the error")
        print(f"ok  {name}: {proc.stderr.strip().splitlines()[0]}")
    proc = run(["bench", "--order", "5"], expect_status=2)
    expect("--order 5" in proc.stderr, proc.stderr)


def order_table_names():
    """The kernel names of kernels/hip/backend_hip_order.h's order_table, as its macros spell them."""
    text = open(os.path.join(SOURCE, "kernels", "hip", "backend_hip_order.h")).read()
    table = text[text.index("inline const order_entry order_table[]"):]
    table = table[:table.index("};")]
    names = re.findall(r'\{\{\{"(order_\w+)"', table)
    names += [f"order_zwindow{z}_{b}" for z, b in re.findall(r"ORDER_ZW\((\d+), (\w+), \d+\)", table)]
    names += [f"order_zasync{n}_{z}_{b}" for z, b, n in re.findall(r'ORDER_ZA\((\d+), (\w+), \d+, \w+, "(\w+)"\)', table)]
    return names


def test_space_order_kernel_names():
    """Every kernel of the GPU's order table is a name solver.kernel takes: at space order 2 each
    is refused as a kernel of the higher orders (an unknown name reads "is not a heat kernel")."""
    names = order_table_names()
    expect(len(names) >= 15 and "order_point" in names and "order_zasync2vx2b4f_128_16x8" in names,
           f"the table's names not found: {names}")
    folder = fresh_dir("space_order_kernel_names")
    cfg = write(os.path.join(folder, "order2.cfg"), "grid = { n = [8, 8, 8]; };")
    for name in names:
        proc = run([cfg, "-q", "--backend", "cpu", "--set", f'solver.kernel="{name}"', "--set",
                    f'output.dir="{folder}/out"'], expect_status=2)
        expect("is a kernel of space order 4, 6 or 8" in proc.stderr, f"{name}: {proc.stderr}")
    print(f"{len(names)} order kernels known to solver.kernel")


def space_order_restart(order, extra, tag):
    """30 steps straight, and from a copy of the step-10 checkpoint: the same bits; the checkpoints
    say the order; restarting with another order is refused (exit 2, naming both) unless
    --allow-scheme-change."""
    import h5py
    folder = fresh_dir(f"space_order_{tag}")
    cfg = letters_config(folder, steps=30, every=10)
    settings = ["--set", f"solver.space_order={order}"] + extra
    run([cfg, "-q"] + settings)
    reference = read_field(os.path.join(folder, "out", "letters_000030.hdf"))
    with h5py.File(os.path.join(folder, "out", "letters_000010.hdf"), "r") as f:
        expect(int(f["restart"].attrs["space_order"]) == order, f"order {order}: the checkpoint's space_order")
    _, final = restart_from_copy(folder, cfg, 10, 30, tag, settings)
    expect(final.tobytes() == reference.tobytes(), f"order {order} {extra}: the restart differs")
    other = 2 if order != 2 else 4
    changed = ["--set", f"solver.space_order={other}"] + extra
    proc = run([cfg, "-q", "--restart", os.path.join(folder, "out", "letters_000020.hdf"), "--set",
                f'output.dir="{folder}/other"'] + changed, expect_status=2)
    for words in (f"solver.space_order = {order}", f"has {other}", "--allow-scheme-change"):
        expect(words in proc.stderr, f"the order's refusal lacks '{words}': {proc.stderr}")
    proc = run([cfg, "--restart", os.path.join(folder, "out", "letters_000020.hdf"), "--set",
                f'output.dir="{folder}/other"', "--allow-scheme-change"] + changed)
    # time.cfl times the new order's dt_max: the step changes, and the line says why
    why = "implicit scheme" if extra == IMPLICIT else "space order change"
    expect(f"the time step changes at step 20" in proc.stdout and f"({why})" in proc.stdout,
           f"order {order} to {other}: the time step's change is not announced as a {why}: {proc.stdout}")
    print(f"order {order} {' '.join(extra)}: restart bitwise; another order refused, then allowed")


def test_space_order_restarts():
    space_order_restart(4, [], "4")
    space_order_restart(6, ["--set", 'solver.precision="float"'], "6f")
    space_order_restart(8, [], "8")
    space_order_restart(8, IMPLICIT, "8cn")


def test_space_order_stability():
    """The highest periodic mode, (-1)^(i+j+k) (a sine of n half waves along each axis), under
    explicit steps: at cfl 1 (dt the order's dt_max) its amplification is -1, so it keeps its size;
    at 1.05 with time.allow_unstable it is -1.1, so it grows."""
    import numpy as np
    folder = fresh_dir("space_order_stability")
    periodic = "".join(f'{face} = {{ type = "periodic"; }}; ' for face in
                       ("x_low", "x_high", "y_low", "y_high", "z_low", "z_high"))
    cfg = write(os.path.join(folder, "p.cfg"), f"""
grid = {{ n = [16, 12, 8]; length = [1.0, 0.75, 0.5]; }};
time = {{ steps = 300; allow_unstable = true; }};
initial = {{ type = "sine"; modes = [16, 12, 8]; amplitude = 1.0; }};
boundary = {{ {periodic} }};
output = {{ every = 0; }};
""")
    for order in (4, 6, 8):
        peaks = {}
        for cfl in ("1.0", "1.05"):
            out = os.path.join(folder, f"o{order}_{cfl}")
            run([cfg, "-q", "--set", f"solver.space_order={order}", "--set", f"time.cfl={cfl}", "--set",
                 f'output.dir="{out}"'], expect_status=None)
            start, end = (read_field(os.path.join(out, f"p_{s:06d}.hdf")) for s in (0, 300))
            peaks[cfl] = float(np.abs(end).max()) / float(np.abs(start).max())
        expect(0.99 < peaks["1.0"] <= 1.0 + 1e-9, f"order {order}: cfl 1.0 changed the mode by {peaks['1.0']:g}")
        expect(peaks["1.05"] > 1e3, f"order {order}: cfl 1.05 grew only by {peaks['1.05']:g}")
        print(f"order {order}: max |u| over its start after 300 steps: {peaks['1.0']:.12g} at cfl 1.0, "
              f"{peaks['1.05']:.3g} at cfl 1.05")


def test_bench_order_json():
    folder = fresh_dir("bench_order")
    path = os.path.join(folder, "bench.json")
    proc = run(["bench", "--backend", "cpu", "--size", "40,32,24", "--reps", "3", "--order", "8", "--json", path])
    expect("space order 8" in proc.stdout and "of order 8" in proc.stdout, f"bench --order 8: {proc.stdout}")
    report = validate_bench_json(path)
    expect(report["space_order"] == 8, "bench JSON: space_order")
    row = next(r for r in report["results"] if r["production"])
    expect(abs(row["effective_GBs"] - 2 * 8 * 40 * 32 * 24 / (row["ms"] * 1e-3) / 1e9) < 1e-6 * row["effective_GBs"],
           "order 8's effective bandwidth is not 2 x sizeof(double) a point")


def test_bench_json_gpu():
    folder = fresh_dir("bench_gpu")
    path = os.path.join(folder, "bench.json")
    proc = run(["bench", "--backend", "hip", "--size", "96", "--reps", "5", "--json", path], expect_status=None)
    if proc.returncode == 2 and "GPU" in proc.stderr:
        print("no GPU: skipped")
        sys.exit(77)
    expect(proc.returncode == 0, proc.stderr)
    report = validate_bench_json(path)
    expect(report["backend"] == "hip", "backend")


if __name__ == "__main__":
    sys.exit(testkit.main(globals(), sys.argv[3]))
