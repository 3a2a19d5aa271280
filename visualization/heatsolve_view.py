"""What both render scripts need from a heatsolve run in ParaView: its series file, a render
view in the project's look, and the temperature colouring with a fixed range."""

import argparse
import glob
import os
import sys

from paraview.simple import ColorBy, CreateView, GetColorTransferFunction, GetScalarBar


def common_arguments(doc, size):
    """The arguments both scripts take: the run, the time to show, the image size and where it goes.
    The caller adds its own before parsing."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run")
    parser.add_argument("--time", type=float)
    parser.add_argument("--size", type=int, nargs=2, default=size)
    parser.add_argument("--out")
    return parser


def find_series(run, script):
    """RUN is an output folder or its .hdf.series file; script names the caller in the error."""
    if os.path.isfile(run):
        return run
    found = sorted(glob.glob(os.path.join(run, "*.hdf.series")))
    if not found:
        sys.exit(f"{script}: no .hdf.series file in {run}; run heatsolve first")
    return found[0]


def make_view(size):
    view = CreateView("RenderView")
    view.ViewSize = size
    view.OrientationAxesVisibility = 0
    view.Background = [0.08, 0.08, 0.12]
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:  # ParaView before 5.10 has no palette switch
        pass
    return view


def colour(display, view, low, high, title="temperature"):
    """Colour by temperature over [low, high], kept fixed so that cooling shows frame to frame."""
    ColorBy(display, ("POINTS", "temperature"))
    lut = GetColorTransferFunction("temperature")
    lut.ApplyPreset("Inferno (matplotlib)", True)
    lut.RescaleTransferFunction(low, high)
    lut.AutomaticRescaleRangeMode = "Never"
    display.SetScalarBarVisibility(view, True)
    bar = GetScalarBar(lut, view)
    bar.Title = title
    bar.ComponentTitle = ""
