#!/usr/bin/env python3
"""Plots a CSV written by ozdgemm_bench (--csv) into PNGs.

    /usr/bin/python3 bench/plot_results.py [--out-dir DIR] out/bench.csv [more.csv ...]

For out/bench.csv it writes (into DIR, default the CSV's folder)
    bench_accuracy.png         max sampled |C-R|/|R| (log) vs effective TFLOPS, one point per
                               method + moduli count + mode, one panel per (phi, shape); the
                               dotted line is native's error (the accuracy-matching bar)
    bench_accuracy_scaled.png  the same for max |C-R|/(|A||B|)
    bench_stages.png           stacked stage times per moduli count (scaling + residues, INT8
                               GEMMs, reduction (fused: 0), CRT), one panel per (phi, shape,
                               mode); black tick: the median of the timed run
    bench_speedup.png          time_native / time vs square n, one panel per (phi, mode): one
                               line per moduli count, cuBLAS's emulation, and the
                               accuracy-matched ozdgemm (thick); red crosses: the targets

Empty or NaN cells (failed or unmeasured runs) are skipped, never fatal. Needs matplotlib
(Debian: python3-matplotlib).
"""

import argparse
import math
import os
import sys

import bench_csv as bc

try:
    import matplotlib
except ImportError:
    sys.exit("plot_results: needs matplotlib (Debian: apt install python3-matplotlib; with a "
             "pyenv python on PATH, run /usr/bin/python3 bench/plot_results.py ...)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

ERR_FLOOR = 1e-18  # an exact result (error 0) is drawn here on the log axis
STAGE_COLOURS = ["tab:blue", "tab:orange", "tab:grey", "tab:green"]


def style_of(row):
    """(marker, colour) by method family; ozdgemm colour by moduli count."""
    method = row.get("method") or ""
    if method == "cublas_dgemm":
        return "*", "black"
    if method.startswith("cublas_emu"):
        return ("s", "tab:red") if "dynamic" in method else ("D", "tab:purple")
    moduli = bc.num(row, "moduli")
    # s in [8, 20] spans most of the map; its last, pale-yellow part is left out.
    t = (moduli - 8) / 12 if bc.finite(moduli) else 0.5
    marker = "o" if row.get("mode") == "fast" else "^"
    return marker, plt.get_cmap("viridis")(0.85 * min(max(t, 0.0), 1.0))


def grid(count, max_cols=3, size=(5.5, 4.2)):
    cols = max(1, min(count, max_cols))
    nrows = max(1, math.ceil(count / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(size[0] * cols, size[1] * nrows),
                             squeeze=False)
    flat = [ax for line in axes for ax in line]
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def case_title(key):
    phi, shape = key
    return f"{bc.shape_label(shape)}, {bc.phi_label(phi if phi is not None else math.nan)}"


def plot_accuracy(rows, path, err_key, err_name):
    cases = bc.group_by(rows, bc.case_key)
    fig, axes = grid(len(cases))
    drawn = 0
    for ax, (key, group) in zip(axes, cases.items()):
        for r in group:
            x, y = bc.num(r, "tflops"), bc.num(r, err_key)
            if not bc.finite(x) or math.isnan(y):
                continue
            y = max(y, ERR_FLOOR) if not math.isinf(y) else 1.0
            marker, colour = style_of(r)
            ax.scatter([x], [y], marker=marker, color=colour, s=70 if marker == "*" else 36,
                       label=bc.method_label(r) if not bc.is_oz(r) else
                       f"{r.get('method')} {r.get('mode')}", zorder=3)
            short = r.get("moduli") or (r.get("method") or "").replace("cublas_", "")
            ax.annotate(short, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=6)
            drawn += 1
        native = bc.native_row(group)
        if native is not None and bc.finite(bc.num(native, err_key)):
            ax.axhline(max(bc.num(native, err_key), ERR_FLOOR), color="black", linestyle=":",
                       linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xlabel("effective TFLOPS (2mnk / median time)")
        ax.set_ylabel(f"{err_name} (sampled; 0 at {ERR_FLOOR:g})")
        ax.set_title(case_title(key))
        ax.grid(True, which="both", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            uniq = dict(zip(labels, handles))
            ax.legend(uniq.values(), uniq.keys(), fontsize=6, loc="best")
    if drawn:
        fig.suptitle(f"Accuracy ({err_name}) vs speed: {bc.title_suffix(rows)}")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn


def plot_stages(rows, path):
    staged = [r for r in rows
              if bc.is_oz(r) and any(bc.finite(bc.num(r, k)) for k, _ in bc.STAGES)]
    if not staged:
        return 0
    panels = bc.group_by(staged, lambda r: (bc.case_key(r), r.get("mode") or "?",
                                            r.get("method")))
    fig, axes = grid(len(panels), max_cols=4, size=(4.6, 3.4))
    for ax, ((key, mode, method), group) in zip(axes, panels.items()):
        group = sorted(group, key=lambda r: bc.moduli_of(r) or 0)
        xs = [str(bc.moduli_of(r)) for r in group]
        bottom = [0.0] * len(group)
        for (col, name), colour in zip(bc.STAGES, STAGE_COLOURS):
            vals = [bc.num(r, col) for r in group]
            vals = [v if bc.finite(v) else 0.0 for v in vals]
            ax.bar(xs, vals, bottom=bottom, color=colour, label=name)
            bottom = [b + v for b, v in zip(bottom, vals)]
        for i, r in enumerate(group):
            t = bc.num(r, "median_ms")
            if bc.finite(t):
                ax.plot([i - 0.4, i + 0.4], [t, t], color="black", linewidth=1)
        ax.set_xlabel("moduli count s")
        ax.set_ylabel("ms")
        ax.set_title(f"{case_title(key)}, {method} {mode}", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=6)
    fig.suptitle("ozdgemm stage split (instrumented run; black: timed median): "
                 + bc.title_suffix(staged))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return len(staged)


def plot_speedup(rows, path):
    square = [r for r in rows if bc.is_square(bc.shape_of(r)) and bc.shape_of(r)[0] > 0
              and bc.finite(bc.num(r, "ratio_vs_native"))]
    if not square:
        return 0
    phis = list(bc.group_by(square, lambda r: bc.case_key(r)[0]).keys())
    modes = [m for m in ("fast", "accurate") if any(r.get("mode") == m for r in square)] or ["-"]
    cases = bc.group_by(square, bc.case_key)
    fig, axes = grid(len(phis) * len(modes), max_cols=len(modes), size=(7, 5))
    drawn = 0
    for i, phi in enumerate(phis):
        for j, mode in enumerate(modes):
            ax = axes[i * len(modes) + j]
            series = {}
            for r in square:
                if bc.case_key(r)[0] != phi or (bc.is_oz(r) and r.get("mode") != mode):
                    continue
                if r.get("method") == "cublas_dgemm":
                    continue  # 1 by definition: the grey line
                series.setdefault(bc.method_label(r), []).append(r)
            for label in sorted(series, key=lambda s: (not s.startswith("cublas"),
                                                       len(s), s)):
                pts = sorted((bc.shape_of(r)[0], bc.num(r, "ratio_vs_native"))
                             for r in series[label])
                marker, colour = style_of(series[label][0])
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=colour,
                        linewidth=0.9, markersize=4, label=label.replace(f" {mode}", ""))
                drawn += len(pts)
            matched = []
            targets = []
            for (cphi, shape), group in cases.items():
                if cphi != phi:
                    continue
                best = bc.accuracy_matched(group, mode)
                if best is not None:
                    matched.append((shape[0], bc.num(best, "ratio_vs_native"),
                                    bc.moduli_of(best)))
                t = bc.target_for(phi, shape)
                if t is not None:
                    targets.append((shape[0], t))
            if matched:
                matched.sort()
                ax.plot([p[0] for p in matched], [p[1] for p in matched], color="black",
                        linewidth=2.5, alpha=0.6, label="ozdgemm, accuracy-matched s")
                for x, y, s in matched:
                    ax.annotate(f"s={s}", (x, y), textcoords="offset points", xytext=(5, -10),
                                fontsize=7)
            if targets:
                ax.scatter([t[0] for t in targets], [t[1] for t in targets], marker="x",
                           color="red", s=60, zorder=4, label="target")
            ax.axhline(1.0, color="grey", linewidth=0.8)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("n (square)")
            ax.set_ylabel("speedup over native DGEMM (time_native / time)")
            ax.set_title(f"{bc.phi_label(phi if phi is not None else math.nan)}, "
                         f"ozdgemm {mode} scaling", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6, ncol=2)
    fig.suptitle("Speedup vs n: " + bc.title_suffix(square))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn


def plot_file(path, out_dir):
    """Writes the plots of one CSV; returns the paths written."""
    rows = bc.load(path)
    if not rows:
        print(f"plot_results: {path} has no data rows; nothing to plot")
        return []
    stem = os.path.join(out_dir or os.path.dirname(path) or ".",
                        os.path.splitext(os.path.basename(path))[0])
    outputs = [
        (lambda p: plot_accuracy(rows, p, "max_rel_err", "max |C-R|/|R|"),
         stem + "_accuracy.png", "points"),
        (lambda p: plot_accuracy(rows, p, "max_scaled_err", "max |C-R|/(|A||B|)"),
         stem + "_accuracy_scaled.png", "points"),
        (lambda p: plot_stages(rows, p), stem + "_stages.png", "configurations with stages"),
        (lambda p: plot_speedup(rows, p), stem + "_speedup.png", "square-shape points"),
    ]
    written = []
    for fn, out, what in outputs:
        n = fn(out)
        if n:
            print(f"plot_results: wrote {out} ({n} {what})")
            written.append(out)
        else:
            print(f"plot_results: {out} skipped (no {what})")
    return written


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", help="folder for the PNGs (default: next to each CSV)")
    ap.add_argument("csv", nargs="+")
    args = ap.parse_args(argv)
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
    status = 0
    for path in args.csv:
        try:
            plot_file(path, args.out_dir)
        except OSError as e:
            print(f"plot_results: cannot read {path}: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
