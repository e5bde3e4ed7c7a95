"""A small GIF for the README from a sim-to-sim MP4: a time window, fewer frames, half the size.

.venv/bin/python scripts/video_to_gif.py walk.mp4 docs/media/go2_walk.gif --start 3 --end 21 --fps 10
"""

from __future__ import annotations

import argparse

import imageio.v3 as iio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("video")
    parser.add_argument("gif")
    parser.add_argument("--start", type=float, default=0.0, help="seconds")
    parser.add_argument("--end", type=float, default=None, help="seconds (default: the end)")
    parser.add_argument("--fps", type=float, default=10.0)
    parser.add_argument("--video-fps", type=float, default=25.0, help="frame rate of the MP4 (sim2sim writes 25)")
    args = parser.parse_args()
    frames = iio.imread(args.video)
    step = max(1, round(args.video_fps / args.fps))
    first = round(args.start * args.video_fps)
    last = len(frames) if args.end is None else round(args.end * args.video_fps)
    clip = frames[first:last:step, ::2, ::2]
    iio.imwrite(args.gif, clip, duration=1000 * step / args.video_fps, loop=0)
    print(f"{args.gif}: {len(clip)} frames, {clip.shape[2]}x{clip.shape[1]}")


if __name__ == "__main__":
    main()
