#!/usr/bin/env python3
"""Draws the scale curves that `scripts/bench.py --curves` wrote (bench-curves.json) into PNGs:

  docs/bench-pyramid-scale.png        pyramid wall time and peak memory against image size
  docs/bench-pyramid-cores.png        TileKit's pyramid on one core and on two
  docs/bench-serving-connections.png  req/s and p99 latency from 32 to 1024 connections

Usage: plot-bench.py [RESULTS.json] [--out DIR]   (defaults: bench-curves.json, docs)
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

COLOURS = {"tilekit pyramid": "#c0392b", "gdal2tiles": "#2471a3", "vips dzsave": "#7d8c2e",
           "tilekit serve": "#c0392b", "nginx (static files)": "#2471a3"}
LABELS = {"tilekit pyramid": "TileKit", "tilekit serve": "TileKit serve (MBTiles)", "nginx (static files)": "nginx (static files, 1 worker)",
          "gdal2tiles": "gdal2tiles --processes=2", "vips dzsave": "vips dzsave (its raw pyramid: no warping, more tiles as the image grows)"}


def footer(figure, meta, section):
    run = section.get("run", {})
    load = run.get("load_average_start", meta.get("load_average_start", ["?"]))[0]
    load_end = run.get("load_average_end", meta.get("load_average_end", ["?"]))[0]
    date, commit = run.get("date_utc", meta.get("date_utc", "?")), run.get("commit", meta.get("commit"))  # a section rerun alone has its own
    figure.text(0.01, 0.005, f"{date[:16].replace('T', ' ')} UTC, commit {str(commit)[:10]},"
                f" {meta.get('cores')} cores shared with other work (1-min load average {load} -> {load_end}): noisy, compare shapes and ratios",
                fontsize=7, color="#555555", ha="left", va="bottom")


def pyramid_scale(results, out):
    section = results["sections"]["pyramid_scale"]
    points = sorted((v for k, v in section.items() if k.endswith("px")), key=lambda v: v["size_px"])
    figure, (time_axis, memory_axis) = plt.subplots(1, 2, figsize=(11, 5.0))
    for name in ("tilekit pyramid", "gdal2tiles", "vips dzsave"):
        done = [(p["size_px"], r) for p in points for r in p["runs"] if r["name"] == name and "wall_s" in r]
        stopped = [(p["size_px"], r) for p in points for r in p["runs"] if r["name"] == name and "stopped_after_s" in r]
        style = dict(color=COLOURS[name], marker="o", linewidth=2)
        time_axis.plot([s for s, _ in done], [r["wall_s"] for _, r in done], label=LABELS[name], **style)
        memory_axis.plot([s for s, _ in done], [r["peak_mb"] for _, r in done], label=LABELS[name], **style)
        for size, r in done:
            time_axis.annotate(f"{r['wall_s']:.1f}", (size, r["wall_s"]), textcoords="offset points", xytext=(6, -4), fontsize=7, color=COLOURS[name])
            memory_axis.annotate(f"{r['peak_mb']:.0f}", (size, r["peak_mb"]), textcoords="offset points", xytext=(6, -4), fontsize=7, color=COLOURS[name])
        for size, r in stopped:
            time_axis.plot([size], [r["stopped_after_s"]], marker="^", markersize=10, color=COLOURS[name], linestyle="none")
            time_axis.annotate(f"stopped at {r['stopped_after_s']:.0f} s", (size, r["stopped_after_s"]), textcoords="offset points",
                               xytext=(-10, 8), fontsize=8, color=COLOURS[name], ha="right")
    sizes = [p["size_px"] for p in points]
    for axis, label in ((time_axis, "wall time (s, log scale)"), (memory_axis, "peak memory, RSS (MB, log scale)")):
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xticks(sizes, [f"{s} px\n({s * s * 3 / 1e9:.2g} GB raw)" for s in sizes])
        axis.minorticks_off()
        axis.set_xlabel("image side (px, log scale)")
        axis.set_ylabel(label)
        axis.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.grid(True, which="major", alpha=0.3)
    zooms = points[0]["zooms"] if points else "?"
    time_axis.set_title(f"Pyramid time: a PNG into z{zooms} (2 cores)")
    memory_axis.set_title("Pyramid peak memory")
    handles, labels = time_axis.get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, bbox_to_anchor=(0.5, 0.035), frameon=False)
    figure.suptitle("Pyramid scale: the same tiles from a larger and larger image", fontsize=12)
    footer(figure, results["meta"], section)
    figure.tight_layout(rect=(0, 0.09, 1, 1))
    figure.savefig(f"{out}/bench-pyramid-scale.png", dpi=110)
    plt.close(figure)


def pyramid_cores(results, out):
    section = results["sections"]["pyramid_cores"]
    rows = section["runs"]
    figure, axis = plt.subplots(figsize=(9, 4.8))
    names = [r["name"] for r in rows]
    walls = [r["wall_s"] for r in rows]
    cpus = [r["cpu_s"] for r in rows]
    positions = range(len(rows))
    one_core, two_cores, cpu_colour = "#e59866", "#c0392b", "#aab7b8"
    axis.barh([p + 0.2 for p in positions], walls, height=0.4, color=[one_core if r["cores"] == 1 else two_cores for r in rows])
    axis.barh([p - 0.2 for p in positions], cpus, height=0.4, color=cpu_colour)
    for p, wall, cpu in zip(positions, walls, cpus):
        axis.text(wall, p + 0.2, f" {wall:.1f} s", va="center", fontsize=8)
        axis.text(cpu, p - 0.2, f" {cpu:.1f} s CPU ({cpu / max(wall, 0.01):.2f} cores busy)", va="center", fontsize=7, color="#555555")
    axis.set_yticks(list(positions), names)
    axis.invert_yaxis()
    axis.set_xlabel("seconds")
    axis.set_xlim(0, max(walls + cpus) * 1.35)
    setup = section.get("setup", {})
    axis.set_title(f"TileKit pyramid, {setup.get('size_px', '?')} px PNG into z{setup.get('zooms', '?')}: one core (taskset -c 0) or two"
                   + (f", fastest of {setup['repeats']}" if "repeats" in setup else ""), fontsize=10)
    handles = [Patch(color=one_core, label="wall time, 1 core"), Patch(color=two_cores, label="wall time, 2 cores"),
               Patch(color=cpu_colour, label="CPU time (user + system)")]
    axis.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, frameon=False)
    axis.grid(True, axis="x", alpha=0.3)
    footer(figure, results["meta"], section)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(f"{out}/bench-pyramid-cores.png", dpi=110)
    plt.close(figure)


def serving_connections(results, out):
    section = results["sections"]["serving_connections"]
    mixes = [k for k in ("small", "large") if k in section]
    figure, axes = plt.subplots(2, len(mixes), figsize=(5.5 * len(mixes), 8), squeeze=False)
    for column, kind in enumerate(mixes):
        mix = section[kind]["mix"]
        notes = []
        for name, runs in section[kind]["runs"].items():
            counts = sorted(int(c) for c in runs)
            style = dict(color=COLOURS.get(name, "#555555"), marker="o", linewidth=2, label=LABELS.get(name, name))
            axes[0][column].plot(counts, [runs[str(c)]["requests_per_s"] for c in counts], **style)
            axes[1][column].plot(counts, [runs[str(c)]["p99_ms"] for c in counts], **style)
            failed = [f"{runs[str(c)]['errors']} at {c}" for c in counts if runs[str(c)]["errors"]]
            if failed:
                notes.append((f"{LABELS.get(name, name)}: errors (wrk: non-2xx, timeouts, resets) " + ", ".join(failed), style["color"]))
        axes[0][column].set_title(f"{kind} tiles: {mix['tiles']} PNGs, mean {mix['mean_kb']} KB ({mix['total_mb']} MB in all)", fontsize=10)
        axes[0][column].set_ylabel("requests per second")
        axes[0][column].set_ylim(bottom=0)
        axes[1][column].set_ylabel("p99 latency (ms, log scale)")
        axes[1][column].set_yscale("log")
        axes[1][column].yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axes[1][column].yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        for axis in (axes[0][column], axes[1][column]):
            axis.set_xscale("log", base=2)
            counts = sorted({int(c) for runs in section[kind]["runs"].values() for c in runs})
            axis.set_xticks(counts, [str(c) for c in counts])
            axis.minorticks_off()
            axis.set_xlabel("open connections (wrk -t2, log scale)")
            axis.grid(True, alpha=0.3)
        axes[1][column].legend(fontsize=8, loc="upper left")
        for line, (note, colour) in enumerate(notes):
            axes[0][column].text(0.5, -0.30 - 0.07 * line, note, transform=axes[0][column].transAxes, ha="center", fontsize=7, color=colour)
    setup = section.get("setup", {})
    figure.suptitle(f"Serving cached tiles from 32 to 1024 connections, {setup.get('seconds_per_run', '?')} s per point, 127.0.0.1"
                    f" (TileKit's tile cache: {setup.get('tilekit_cache_mb', 128)} MB, its default)", fontsize=11)
    footer(figure, results["meta"], section)
    figure.tight_layout(rect=(0, 0.02, 1, 1))
    figure.savefig(f"{out}/bench-serving-connections.png", dpi=110)
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description="Plots bench.py --curves results into PNGs.")
    parser.add_argument("results", nargs="?", default="bench-curves.json")
    parser.add_argument("--out", default="docs")
    args = parser.parse_args()
    with open(args.results) as f:
        results = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    drawn = []
    for name, draw in (("pyramid_scale", pyramid_scale), ("pyramid_cores", pyramid_cores), ("serving_connections", serving_connections)):
        if name in results["sections"]:
            draw(results, args.out)
            drawn.append(name)
    print(f"plotted {', '.join(drawn) or 'nothing'} from {args.results} into {args.out}/")


if __name__ == "__main__":
    main()
