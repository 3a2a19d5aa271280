"""ParaView 5.11 (Debian's, under `xvfb-run -a pvpython`) opens a materials run's checkpoint and
series and sees the `material` and `zone` fields beside the temperature, with the values the
file holds (read with h5py).

usage: pvpython paraview_materials.py HEATSOLVE WORKDIR SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys

HEATSOLVE, WORK, SOURCE = sys.argv[1:4]


def main():
    import h5py
    import numpy as np
    from paraview import servermanager
    from paraview.simple import OpenDataFile
    folder = os.path.join(WORK, "pv_materials")
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([HEATSOLVE, os.path.join(SOURCE, "inputs", "heatsink.cfg"), "-q", "--set", "time.steps=4",
                    "--set", "output.every=2", "--set", f'output.dir="{folder}"'], check=True)
    path = os.path.join(folder, "heatsink_000004.hdf")
    with h5py.File(path, "r") as f:
        material = f["VTKHDF/PointData/material"][...]
        zone = f["VTKHDF/PointData/zone"][...]
    assert material.max() == 3 and zone.max() == 3, "the demo paints four materials"
    for opened in (path, os.path.join(folder, "heatsink.hdf.series")):
        reader = OpenDataFile(opened)
        reader.UpdatePipeline()
        names = sorted(reader.PointData.keys())
        assert names == ["material", "temperature", "zone"], f"{opened}: ParaView sees {names}"
        assert reader.PointData["material"].GetRange() == (0.0, 3.0), reader.PointData["material"].GetRange()
    data = servermanager.Fetch(OpenDataFile(path))
    array = data.GetPointData().GetArray("material")
    seen = np.array([array.GetValue(i) for i in range(array.GetNumberOfTuples())], dtype=np.uint8)
    assert np.array_equal(seen, material.ravel()), "ParaView's material values differ from the file's"
    counts = np.bincount(seen).tolist()
    print(f"ParaView: fields {names}; material counts {counts} equal the file's")


if __name__ == "__main__":
    main()
