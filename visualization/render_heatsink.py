"""Render a materials run (inputs/heatsink.cfg) with ParaView: the solid parts (every material but
the background) in 3-D coloured by temperature, beside a slice through the middle of the box
(normal y) coloured by temperature. One PNG of the chosen time step.

usage: xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" pvpython visualization/render_heatsink.py RUN [options]
  RUN             output folder (out/heatsink) or its .hdf.series file
  --time T        the frame nearest to simulated time T (default: the last)
  --size W H      image size in pixels (default 1200 600)
  --out FILE      the PNG (default RUN/heatsink.png)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heatsolve_view import colour, common_arguments, find_series, make_view  # noqa: E402
from paraview.simple import (OpenDataFile, Outline, Render, SaveScreenshot, Show, Slice, Threshold,  # noqa: E402
                             Transform)


def parse_arguments():
    return common_arguments(__doc__, [1200, 600]).parse_args()


def main():
    args = parse_arguments()
    series = find_series(args.run, "render_heatsink")
    reader = OpenDataFile(series)
    reader.UpdatePipelineInformation()
    times = list(reader.TimestepValues) or [0.0]
    time = times[-1] if args.time is None else min(times, key=lambda t: abs(t - args.time))
    reader.UpdatePipeline(time)
    if "material" not in reader.PointData.keys():
        sys.exit(f"render_heatsink: {series} has no `material` field: not a materials run")
    low, high = reader.PointData["temperature"].GetRange()
    if not high > low:
        high = low + 1.0
    bounds = reader.GetDataInformation().GetBounds()
    width = bounds[1] - bounds[0]
    view = make_view(args.size)
    view.ViewTime = time
    solid = Threshold(Input=reader, Scalars=["POINTS", "material"])
    try:
        solid.LowerThreshold, solid.UpperThreshold = 0.5, 255.0
    except AttributeError:
        solid.ThresholdRange = [0.5, 255.0]
    colour(Show(solid, view), view, low, high)
    Show(Outline(Input=reader), view)
    cut = Slice(Input=reader)
    cut.SliceType = "Plane"
    cut.SliceType.Origin = [(bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2, (bounds[4] + bounds[5]) / 2]
    cut.SliceType.Normal = [0, 1, 0]
    beside = Transform(Input=cut)
    beside.Transform.Translate = [1.3 * width, 0.0, 0.0]  # the slice stands beside the 3-D view
    colour(Show(beside, view), view, low, high)
    Render(view)
    camera = view.GetActiveCamera()
    camera.SetFocalPoint(bounds[0] + 1.15 * width, (bounds[2] + bounds[3]) / 2, (bounds[4] + bounds[5]) / 2)
    camera.SetPosition(bounds[0] + 1.15 * width, bounds[2] - 4 * width, bounds[5] + 2 * width)
    camera.SetViewUp(0, 0, 1)
    view.ResetCamera()
    out = args.out or os.path.join(os.path.dirname(series), "heatsink.png")
    SaveScreenshot(out, view, ImageResolution=args.size)
    print(f"render_heatsink: t = {time:.6g}, temperature {low:.6g} to {high:.6g}: {out}")


if __name__ == "__main__":
    main()
