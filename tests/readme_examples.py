#!/usr/bin/python3
"""The README's commands, as a new user pastes them into one clone: the quick start, the test
command, then every example block in the README's order, in one fresh folder holding a copy of
the inputs and the visualization scripts.

Blocks are the ```sh blocks after a marker: `<!-- quick-start -->`, `<!-- test-command -->`, and
`<!-- example [needs...] -->` where needs are `mpi`, `gpu` or `paraview`. The build steps
(apt-get, cmake) are not repeated: the suite's own builds stand for them (build/heatsolve is the
binary under test, build-mpi/heatsolve the build_mpi fixture's), and the configure lines are
checked to compose: one build folder, one generator, the generator's tool installed first.

usage: readme_examples.py SOURCE HEATSOLVE HEATSOLVE_MPI WORKDIR
Exit 0 pass, 1 fail, 77 skipped (a block needs what this machine lacks; the reasons are printed).
"""
import json
import os
import re
import shutil
import subprocess
import sys

SOURCE, HEATSOLVE, HEATSOLVE_MPI, WORK = sys.argv[1:5]
BUILD_STEPS = ("apt-get", "cmake", "DEBIAN_FRONTEND=")
# Open MPI refuses root without both (CI runs as root), and more ranks than cores without the third.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


class Failure(Exception):
    pass


def marked_blocks(text):
    """[(marker words, [command lines])] for every ```sh block right after a marker, in order."""
    found = []
    for match in re.finditer(r"<!-- ((?:quick-start|test-command|example)[^>]*?) -->\n```sh\n(.*?)```", text, re.S):
        lines = match.group(2).replace("\\\n", " ").splitlines()
        found.append((match.group(1).split(), [line for line in lines if line.strip()]))
    return found


def configures(line):
    """(build folder, generator) of every `cmake -S . -B DIR [-G GEN]` in a command line."""
    result = []
    for segment in line.split("&&"):
        words = segment.split()
        if words[:1] == ["cmake"] and "-B" in words:
            generator = words[words.index("-G") + 1] if "-G" in words else "Unix Makefiles"
            result.append((words[words.index("-B") + 1], generator, segment))
    return result


def check_configures_compose(blocks):
    """The quick start, then the test command, in one clone: a build folder keeps its generator,
    and the line installs the generator's tool before it configures."""
    generators, installed = {}, ""
    for words, lines in blocks:
        for line in lines:
            for folder, generator, segment in configures(line):
                before = installed + line[:line.index(segment)]
                if generator == "Ninja" and "ninja-build" not in before:
                    raise Failure(f"`{segment.strip()}` needs ninja-build, which no command installs before it")
                if generators.setdefault(folder, generator) != generator:
                    raise Failure(f"build folder {folder}: configured with {generators[folder]} first, then "
                                  f"`{segment.strip()}` (cmake refuses another generator in the same folder)")
            installed += line
    print(f"configure lines compose: {generators}")


def has_gpu():
    smi = shutil.which("nvidia-smi")
    nvidia = smi and subprocess.run([smi, "-L"], capture_output=True).returncode == 0
    return nvidia or os.path.exists("/dev/kfd")


def missing(needs):
    """Why this machine cannot run a block with these needs, or None."""
    if "mpi" in needs:
        if not shutil.which("mpirun"):
            return "mpirun not found"
        if not os.access(HEATSOLVE_MPI, os.X_OK):
            return f"no MPI build at {HEATSOLVE_MPI} (the build_mpi test makes it)"
    if "paraview" in needs and not (shutil.which("pvpython") and shutil.which("xvfb-run")):
        return "pvpython or xvfb-run not found"
    if "gpu" in needs and not has_gpu():
        return "no GPU"
    return None


def fresh_clone_folder():
    """A folder with the inputs and scripts a clone has, and build/ and build-mpi/ holding the binaries."""
    folder = os.path.join(WORK, "readme_examples")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for part in ("inputs", "visualization"):
        shutil.copytree(os.path.join(SOURCE, part), os.path.join(folder, part))
    for build, binary in (("build", HEATSOLVE), ("build-mpi", HEATSOLVE_MPI)):
        os.makedirs(os.path.join(folder, build))
        os.symlink(os.path.abspath(binary), os.path.join(folder, build, "heatsolve"))
    return folder


def written(folder, *paths):
    """The README says these files are there after the command."""
    missing = [path for path in paths if not os.path.exists(os.path.join(folder, path))]
    if missing:
        raise Failure(f"missing after the command: {missing}")


def series_agrees(folder, out, name):
    """The series lists exactly the run's checkpoints in the folder (README: they agree)."""
    with open(os.path.join(folder, out, f"{name}.hdf.series")) as f:
        listed = [entry["name"] for entry in json.load(f)["files"]]
    files = os.listdir(os.path.join(folder, out))
    present = sorted(n for n in files if n.startswith(name + "_") and n.endswith(".hdf"))
    if listed != present:
        raise Failure(f"{out}/{name}.hdf.series lists {listed}; the folder holds {present}")


def printed(proc, *words):
    missing = [word for word in words if word not in proc.stdout]
    if missing:
        raise Failure(f"the output lacks {missing}:\n{proc.stdout[-2500:]}")


def history_columns(proc):
    rows = [line.split() for line in proc.stdout.splitlines()]
    if not rows or rows[0] != ["0", "100"] or any(len(row) != 2 for row in rows):
        raise Failure(f"awk printed no time / hottest point pairs from 0, 100: {proc.stdout[:300]}")


# What the README says each example writes or prints: (words of the command, check(folder, proc)).
CLAIMS = [
    (r"^build/heatsolve inputs/letters.cfg$", lambda folder, proc: (
        written(folder, "out/letters/letters_000800.hdf", "out/letters/letters_000800.png",
                "out/letters/letters.history.csv"), printed(proc, "summary:", "checkpoints: 17 written"))),
    (r"output.name=.*letters_cn.* -v$", lambda folder, proc: (
        written(folder, "out/letters_cn/letters_cn_000008.hdf"), printed(proc, "step 8: CG", "relative residual"))),
    (r"output.name=.*letters_order8", lambda folder, proc: (
        written(folder, "out/letters_order8/letters_order8_000050.hdf"))),
    (r"time.steps=2000 --restart latest", lambda folder, proc: (
        printed(proc, "restarted from out/letters/letters_000800.hdf at step 800"),
        written(folder, "out/letters/letters_002000.hdf"))),
    (r"--restart out/letters/letters_000400.hdf$", lambda folder, proc: (
        printed(proc, "restarted from out/letters/letters_000400.hdf at step 400", "set aside",
                "in out/letters/letters.after_step_000400"),
        written(folder, "out/letters/letters_000800.hdf", "out/letters/letters.after_step_000400/letters_002000.hdf"),
        series_agrees(folder, "out/letters", "letters"))),
    (r"^awk .*letters.history.csv", lambda folder, proc: history_columns(proc)),
    (r"--animation out/letters/letters.gif$", lambda folder, proc: written(folder, "out/letters/letters.gif")),
    (r"--out pics$", lambda folder, proc: written(folder, "pics")),
    (r"output.name=.*letters_mpi", lambda folder, proc: written(folder, "out/letters_mpi/letters_mpi_000800.hdf")),
]


def check_claims(folder, segment, proc, checked):
    command = segment.split("#")[0].strip()
    for pattern, check in CLAIMS:
        if re.search(pattern, command):
            check(folder, proc)
            checked.add(pattern)
            print("    (what the README says it writes and prints: there)")


def run_commands(folder, lines, env, checked):
    """Each line's segments but the build steps, one after the other, as sh runs them."""
    for line in lines:
        if line.lstrip().startswith("#"):
            continue
        for segment in (s.strip() for s in line.split(" && ")):
            if segment.startswith(BUILD_STEPS):
                print(f"  (build step, done by the suite's build: {segment[:70]}...)")
                continue
            print(f"  $ {segment}")
            proc = subprocess.run(["sh", "-c", segment], cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=600)
            if proc.returncode != 0:
                raise Failure(f"`{segment}` exited {proc.returncode}\nstdout: {proc.stdout[-2500:]}\n"
                              f"stderr: {proc.stderr[-2500:]}")
            check_claims(folder, segment, proc, checked)


def exports(lines, env):
    """`export A=1 B=2` lines set the environment of the block's later commands."""
    for line in lines:
        words = line.split("#")[0].split()
        if words[:1] == ["export"]:
            env.update(word.split("=", 1) for word in words[1:] if "=" in word)


def main():
    with open(os.path.join(SOURCE, "README.md")) as f:
        blocks = marked_blocks(f.read())
    kinds = [words[0] for words, _ in blocks]
    if kinds[:2] != ["quick-start", "test-command"] or "example" not in kinds:
        raise Failure(f"README.md: expected the quick start, the test command, then examples; found {kinds}")
    check_configures_compose(blocks)
    folder = fresh_clone_folder()
    skipped, checked = [], set()
    for words, lines in blocks:
        if words[0] == "test-command":
            continue  # the suite that runs this test is the test command
        why = missing(words[1:])
        if why:
            skipped.append(f"{lines[-1][:60]}...: {why}")
            print(f"skipped block ({why}): {lines[-1][:80]}")
            continue
        print(f"block <!-- {' '.join(words)} -->")
        env = dict(os.environ, **(MPI_ENV if "mpi" in words else {}))
        exports(lines, env)
        run_commands(folder, lines, env, checked)
    unchecked = [pattern for pattern, _ in CLAIMS if pattern not in checked]
    if unchecked and not skipped:
        raise Failure(f"no README command matched these claims (a command changed?): {unchecked}")
    if skipped:
        print("every block that ran passed; skipped: " + "; ".join(skipped))
        sys.exit(77)
    print(f"all {len(blocks)} marked blocks of README.md ran in order in one folder")


if __name__ == "__main__":
    try:
        main()
    except Failure as failure:
        print(f"FAILED readme_examples: {failure}")
        sys.exit(1)
