#!/usr/bin/env python3
"""Plots a CSV written by ozdgemm_bench (--csv) into PNGs next to it.

    python3 bench/plot_results.py out/bench.csv [more.csv ...]

For out/bench.csv it writes
    out/bench_accuracy.png  max sampled relative error (log) vs effective TFLOPS, one point
                            per method + moduli count + mode, one panel per shape
    out/bench_stages.png    stacked stage times (scaling+residues, INT8 GEMMs, CRT) per moduli
                            count, one panel per shape x mode (only rows with stage columns)
    out/bench_speedup.png   time_native / time_method vs problem size, one line per method

Empty or NaN cells (failed or unmeasured runs) are skipped, never fatal.
"""

import csv
import math
import os
import sys
from collections import OrderedDict, defaultdict

try:
    import matplotlib
except ImportError:
    sys.exit("plot_results: needs matplotlib (Debian: apt install python3-matplotlib; with a "
             "pyenv python on PATH, run /usr/bin/python3 bench/plot_results.py ...)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

STAGES = [("stage_prep_ms", "scaling + residues"),
          ("stage_gemm_ms", "INT8 GEMMs"),
          ("stage_crt_ms", "reduction + CRT + inverse scaling")]
ERR_FLOOR = 1e-18  # an exact result (error 0) is drawn here on the log axis


def num(row, key):
    """The cell as a float; NaN when absent, empty or not a number."""
    try:
        v = float(row.get(key) or "nan")
    except ValueError:
        return math.nan
    return v


def finite(x):
    return x is not None and not math.isnan(x) and not math.isinf(x)


def shape_of(row):
    return tuple(int(num(row, k)) if finite(num(row, k)) else 0
                 for k in ("shape_m", "shape_n", "shape_k"))


def shape_label(s):
    m, n, k = s
    return f"n={m}" if m == n == k else f"{m}x{n}x{k}"


def size_of(s):
    """Square size n, or (mnk)^(1/3) for other shapes."""
    m, n, k = s
    return float(m) if m == n == k else (float(m) * n * k) ** (1.0 / 3.0)


def method_label(row):
    method = row.get("method") or "?"
    if method == "ozdgemm":
        moduli = row.get("moduli") or "?"
        return f"ozdgemm s={moduli} {row.get('mode') or '?'}"
    return method


def style_of(row):
    """(marker, colour) by method family; ozdgemm colour by moduli count."""
    method = row.get("method") or ""
    if method == "cublas_dgemm":
        return "*", "black"
    if method.startswith("cublas_emu"):
        return ("s", "tab:red") if "dynamic" in method else ("D", "tab:purple")
    moduli = num(row, "moduli")
    cmap = plt.get_cmap("viridis")
    # s in [12, 20] spans most of the map; its last, pale-yellow part is left out.
    t = (moduli - 12) / 8 if finite(moduli) else 0.5
    marker = "o" if row.get("mode") == "fast" else "^"
    return marker, cmap(0.85 * min(max(t, 0.0), 1.0))


def title_suffix(rows):
    gpus = sorted({r.get("gpu") or "?" for r in rows})
    dates = sorted({(r.get("date") or "")[:10] for r in rows} - {""})
    return ", ".join(gpus) + (f" ({', '.join(dates)})" if dates else "")


def grid(count, max_cols=3):
    cols = max(1, min(count, max_cols))
    rows = max(1, math.ceil(count / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, 4.2 * rows), squeeze=False)
    flat = [ax for line in axes for ax in line]
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def plot_accuracy(rows, path):
    by_shape = OrderedDict()
    for r in rows:
        by_shape.setdefault(shape_of(r), []).append(r)
    fig, axes = grid(len(by_shape))
    drawn = 0
    for ax, (shape, group) in zip(axes, by_shape.items()):
        for r in group:
            x, y = num(r, "tflops"), num(r, "max_rel_err")
            if not finite(x) or math.isnan(y):
                continue
            y = max(y, ERR_FLOOR) if not math.isinf(y) else 1.0
            marker, colour = style_of(r)
            ax.scatter([x], [y], marker=marker, color=colour, s=70 if marker == "*" else 40,
                       label=method_label(r), zorder=3)
            short = r.get("moduli") or (r.get("method") or "").replace("cublas_", "")
            ax.annotate(short, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=7)
            drawn += 1
        ax.set_yscale("log")
        ax.set_xlabel("effective TFLOPS (2mnk / median time)")
        ax.set_ylabel(f"max relative error (sampled; 0 drawn at {ERR_FLOOR:g})")
        ax.set_title(shape_label(shape))
        ax.grid(True, which="both", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            uniq = OrderedDict(zip(labels, handles))
            ax.legend(uniq.values(), uniq.keys(), fontsize=6, loc="best")
    if drawn:
        fig.suptitle("Accuracy vs speed: " + title_suffix(rows))
        fig.tight_layout()
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return drawn


def plot_stages(rows, path):
    staged = [r for r in rows
              if r.get("method") == "ozdgemm" and any(finite(num(r, k)) for k, _ in STAGES)]
    if not staged:
        return 0
    panels = OrderedDict()
    for r in staged:
        panels.setdefault((shape_of(r), r.get("mode") or "?"), []).append(r)
    fig, axes = grid(len(panels), max_cols=2)
    colours = ["tab:blue", "tab:orange", "tab:green"]
    for ax, ((shape, mode), group) in zip(axes, panels.items()):
        group = sorted(group, key=lambda r: num(r, "moduli") if finite(num(r, "moduli")) else 0)
        xs = [r.get("moduli") or "?" for r in group]
        bottom = [0.0] * len(group)
        for (key, name), colour in zip(STAGES, colours):
            vals = [num(r, key) for r in group]
            vals = [v if finite(v) else 0.0 for v in vals]
            ax.bar(xs, vals, bottom=bottom, color=colour, label=name)
            bottom = [b + v for b, v in zip(bottom, vals)]
        # The un-instrumented median for comparison.
        for i, r in enumerate(group):
            t = num(r, "median_ms")
            if finite(t):
                ax.plot([i - 0.4, i + 0.4], [t, t], color="black", linewidth=1)
        ax.set_xlabel("moduli count s")
        ax.set_ylabel("ms")
        ax.set_title(f"{shape_label(shape)}, {mode} (black: median of the timed run)")
        ax.legend(fontsize=7)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle("ozdgemm stage split: " + title_suffix(staged))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return len(staged)


def plot_speedup(rows, path):
    series = defaultdict(list)
    styles = {}
    for r in rows:
        x, y = size_of(shape_of(r)), num(r, "ratio_vs_native")
        if not finite(y) or x <= 0:
            continue
        label = method_label(r)
        series[label].append((x, y))
        styles[label] = style_of(r)
    if not series:
        return 0
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for label in sorted(series, key=lambda s: (not s.startswith("cublas"), s)):
        pts = sorted(series[label])
        marker, colour = styles[label]
        linestyle = "--" if label.endswith("fast") else "-"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=colour,
                linestyle=linestyle, label=label)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (square) or (mnk)^(1/3)")
    ax.set_ylabel("speedup over native DGEMM (time_native / time)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Speedup vs size: " + title_suffix(rows))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return sum(len(v) for v in series.values())


def main(paths):
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        try:
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
        except OSError as e:
            print(f"plot_results: cannot read {path}: {e}", file=sys.stderr)
            status = 1
            continue
        if not rows:
            print(f"plot_results: {path} has no data rows; nothing to plot")
            continue
        stem = os.path.splitext(path)[0]
        outputs = [(plot_accuracy, stem + "_accuracy.png", "points"),
                   (plot_stages, stem + "_stages.png", "configurations with stage columns"),
                   (plot_speedup, stem + "_speedup.png", "points")]
        for fn, out, what in outputs:
            n = fn(rows, out)
            if n:
                print(f"plot_results: wrote {out} ({n} {what})")
            else:
                print(f"plot_results: {out} skipped (no {what})")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
