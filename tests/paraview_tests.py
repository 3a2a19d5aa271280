"""Tests with Debian's real ParaView (run under `xvfb-run -a -s "... -noreset" pvpython`).

usage: pvpython paraview_tests.py HEATSOLVE WORKDIR SOURCE_DIR series|render
  series: ParaView opens the .hdf.series of a short letters run with the right
          number of time steps, and the last step's temperature range equals
          the range in the last file (read with h5py); the run's history
          opens as a table whose last row holds that file's maximum.
  render: visualization/render_letters.py renders one frame headless; the PNG
          exists, is at least 400 x 300 and is not a single colour.
"""
import json
import os
import shutil
import subprocess
import sys

HEATSOLVE, WORK, SOURCE, TEST = sys.argv[1:5]


def letters_run(name, steps, every):
    folder = os.path.join(WORK, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    subprocess.run([HEATSOLVE, os.path.join(SOURCE, "inputs", "letters.cfg"), "-q", "--set", "grid.n=[64,32,16]",
                    "--set", f"time.steps={steps}", "--set", f"output.every={every}", "--set", "output.png=false",
                    "--set", f"output.dir=\"{folder}\""], check=True)
    return folder


def test_series():
    import h5py
    from paraview.simple import OpenDataFile
    folder = letters_run("pv_series", 30, 10)
    series = os.path.join(folder, "letters.hdf.series")
    files = json.load(open(series))["files"]
    reader = OpenDataFile(series)
    reader.UpdatePipelineInformation()
    times = list(reader.TimestepValues)
    assert len(times) == len(files) == 4, f"ParaView sees {len(times)} time steps, the series lists {len(files)}"
    assert times == [f["time"] for f in files], f"times {times}"
    reader.UpdatePipeline(times[-1])
    low, high = reader.PointData["temperature"].GetRange()
    with h5py.File(os.path.join(folder, files[-1]["name"]), "r") as f:
        data = f["VTKHDF/PointData/temperature"][...]
    assert abs(low - data.min()) <= 1e-12 * abs(data.max()) and abs(high - data.max()) <= 1e-12 * abs(data.max()), \
        f"ParaView range ({low}, {high}) differs from the file's ({data.min()}, {data.max()})"
    dims = reader.GetDataInformation().GetExtent()
    assert dims == (0, 63, 0, 31, 0, 15), f"extent {dims}"
    print(f"ParaView: {len(times)} time steps, last range ({low:.6g}, {high:.6g}) matches the file")
    # The run's history opens as a table whose last row is the last file's maximum.
    from paraview import servermanager
    table = servermanager.Fetch(OpenDataFile(os.path.join(folder, "letters.history.csv")))
    columns = [table.GetColumnName(c) for c in range(table.GetNumberOfColumns())]
    assert columns == ["step", "time", "min", "max", "mean", "heat"], f"history columns {columns}"
    last = table.GetNumberOfRows() - 1
    assert table.GetValue(last, 0).ToInt() == 30 and table.GetValue(last, 3).ToDouble() == data.max(), \
        f"history's last row: step {table.GetValue(last, 0)}, max {table.GetValue(last, 3)}"
    print(f"ParaView: the history opens as a table of {last + 1} rows, {columns}")


def png_size_and_colours(path):
    import zlib
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    pos, idat = 8, b""
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        if data[pos + 4:pos + 8] == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    distinct = len(set(raw[i:i + 3] for i in range(1, len(raw) - 3, 997)))
    return width, height, distinct


def test_render():
    folder = letters_run("pv_render", 20, 10)
    out = os.path.join(folder, "frames")
    # In this process, under this test's X server, which runs with -noreset (see
    # tests/CMakeLists.txt): a second pvpython would be a second ParaView start-up for nothing.
    import importlib.util
    script = os.path.join(SOURCE, "visualization", "render_letters.py")
    spec = importlib.util.spec_from_file_location("render_letters", script)
    render = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render)
    sys.argv = [script, folder, "--time", "0", "--size", "640", "400", "--out", out]
    render.main()
    for kind in ("slice", "3d"):
        path = os.path.join(out, f"{kind}_0000.png")
        assert os.path.exists(path), f"{path} missing"
        width, height, distinct = png_size_and_colours(path)
        assert width >= 400 and height >= 300, f"{path}: {width} x {height}"
        assert distinct > 8, f"{path}: only {distinct} distinct byte triples: a blank image?"
        print(f"{kind}: {width} x {height}, {distinct} distinct colour samples")


if __name__ == "__main__":
    {"series": test_series, "render": test_render}[TEST]()
    print(f"passed paraview {TEST}")
