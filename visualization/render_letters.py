"""Render a heatsolve run with ParaView: a slice through the letters coloured
by temperature (with a colour bar) and a 3-D view of isosurfaces of the hot
letters fading, one PNG of each per time step, and an animation of both.

usage: xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" pvpython visualization/render_letters.py RUN [options]
  RUN                  output folder (out/letters) or its .hdf.series file
  --time T             render only the frame nearest to simulated time T
  --size W H           image size in pixels (default 960 540)
  --out DIR            where the frames go (default RUN/frames)
  --slice-z F          height of the slice, fraction of the box (default 0.35: mid-letters)
  --animation FILE     also assemble the frames into FILE (.gif or .mp4) with ffmpeg
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heatsolve_view import colour, common_arguments, find_series, make_view  # noqa: E402
from paraview.simple import Contour, OpenDataFile, Outline, Render, SaveScreenshot, Show, Slice  # noqa: E402


def parse_arguments():
    parser = common_arguments(__doc__, [960, 540])
    parser.add_argument("--slice-z", type=float, default=0.35)
    parser.add_argument("--animation")
    return parser.parse_args()


def temperature_range(reader, time):
    reader.UpdatePipeline(time)
    return reader.PointData["temperature"].GetRange()


def slice_pipeline(reader, view, bounds, fraction, low, high):
    cut = Slice(Input=reader)
    cut.SliceType = "Plane"
    cut.SliceType.Origin = [(bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2,
                            bounds[4] + fraction * (bounds[5] - bounds[4])]
    cut.SliceType.Normal = [0, 0, 1]
    display = Show(cut, view)
    colour(display, view, low, high, "temperature")
    Render(view)  # the first render resets the camera: place it afterwards, looking down -z
    camera = view.GetActiveCamera()
    camera.SetFocalPoint(*cut.SliceType.Origin)
    camera.SetPosition(cut.SliceType.Origin[0], cut.SliceType.Origin[1], bounds[5] + 4 * (bounds[1] - bounds[0]))
    camera.SetViewUp(0, 1, 0)
    view.ResetCamera(False)
    camera.Dolly(1.6)
    return cut


def contour_pipeline(reader, view, bounds, low, high):
    """Isosurfaces of the hot letters (they shrink and vanish as the letters
    cool) over the plate's top face coloured by temperature."""
    levels = [low + f * (high - low) for f in (0.08, 0.2, 0.4)]
    surface = Contour(Input=reader, ContourBy=["POINTS", "temperature"], Isosurfaces=levels, ComputeScalars=1)
    display = Show(surface, view)
    colour(display, view, low, 0.5 * (low + high), "temperature")
    display.Opacity = 0.6
    plate = Slice(Input=reader)
    plate.SliceType = "Plane"
    plate.SliceType.Origin = [0, 0, bounds[4] + 0.18 * (bounds[5] - bounds[4])]
    plate.SliceType.Normal = [0, 0, 1]
    colour(Show(plate, view), view, low, 0.5 * (low + high), "temperature")
    Show(Outline(Input=reader), view)
    Render(view)
    camera = view.GetActiveCamera()
    view.ResetCamera()
    camera.SetFocalPoint((bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2, (bounds[4] + bounds[5]) / 2)
    camera.SetPosition((bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2, bounds[5] + 4 * (bounds[1] - bounds[0]))
    camera.SetViewUp(0, 1, 0)
    camera.Elevation(-50)  # tilt: look at the letters from the front and above
    camera.Azimuth(-15)
    view.ResetCamera()
    camera.Dolly(1.3)
    return surface


def render_frames(reader, times, args, out):
    low, high = temperature_range(reader, reader.TimestepValues[0] if reader.TimestepValues else 0.0)
    bounds = reader.GetDataInformation().GetBounds()  # valid once the reader has run
    frames = []
    for kind in ("slice", "3d"):
        view = make_view(args.size)
        if kind == "slice":
            slice_pipeline(reader, view, bounds, args.slice_z, low, high)
        else:
            contour_pipeline(reader, view, bounds, low, high)
        for number, time in enumerate(times):
            view.ViewTime = time
            Render(view)
            path = os.path.join(out, f"{kind}_{number:04d}.png")
            SaveScreenshot(path, view, ImageResolution=args.size)
            frames.append(path)
    return frames


def assemble(out, animation):
    if not shutil.which("ffmpeg"):
        sys.exit("render_letters: ffmpeg not found (apt-get install ffmpeg)")
    # Slice on top of the 3-D view, 6 frames a second; GIF with its own palette.
    stacked = "[0:v][1:v]vstack=inputs=2"
    scale = "scale=640:-1:flags=lanczos"
    if animation.endswith(".gif"):
        graph = f"{stacked},{scale},split[a][b];[a]palettegen=max_colors=128[p];[b][p]paletteuse"
    else:
        graph = f"{stacked},{scale},format=yuv420p"
    command = ["ffmpeg", "-y", "-loglevel", "error", "-framerate", "6", "-i", os.path.join(out, "slice_%04d.png"),
               "-framerate", "6", "-i", os.path.join(out, "3d_%04d.png"), "-filter_complex", graph, animation]
    subprocess.run(command, check=True)
    print(f"animation: {animation}")


def main():
    args = parse_arguments()
    series = find_series(args.run, "render_letters")
    out = args.out or os.path.join(os.path.dirname(series) or ".", "frames")
    os.makedirs(out, exist_ok=True)
    reader = OpenDataFile(series)
    reader.UpdatePipelineInformation()
    times = list(reader.TimestepValues) or [0.0]
    if args.time is not None:
        times = [min(times, key=lambda t: abs(t - args.time))]
    frames = render_frames(reader, times, args, out)
    print(f"{len(frames)} frames in {out}")
    if args.animation and len(times) > 1:
        assemble(out, args.animation)


if __name__ == "__main__":
    main()
