"""Reading the CSV that ozdgemm_bench writes (--csv), shared by plot_results.py and
make_results_page.py. Needs only the standard library.

Rows are dicts keyed by the CSV header (bench/common/bench_report.cpp, kCsvHeader). Older CSVs
without some columns (phi, samples, workspace_mb, stage_reduction_ms, ...) still load: a
missing or empty cell reads as NaN.
"""

import csv
import math
from collections import OrderedDict

STAGES = [("stage_prep_ms", "scaling + residues"),
          ("stage_gemm_ms", "INT8 GEMMs"),
          ("stage_reduction_ms", "reduction (fused into CRT: 0)"),
          ("stage_crt_ms", "CRT + inverse scaling")]

# The targets: accuracy-matched speedup over native at (phi, square n).
TARGETS = {(0.5, 16384): 1.9, (0.5, 8192): 1.7, (0.5, 4096): 1.4, (0.5, 2048): 1.0,
           (4.0, 16384): 1.4}


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(row, key):
    """The cell as a float; NaN when absent, empty or not a number."""
    try:
        return float(row.get(key) or "nan")
    except ValueError:
        return math.nan


def finite(x):
    return x is not None and not math.isnan(x) and not math.isinf(x)


def shape_of(row):
    return tuple(int(num(row, k)) if finite(num(row, k)) else 0
                 for k in ("shape_m", "shape_n", "shape_k"))


def is_square(s):
    return s[0] == s[1] == s[2]


def shape_label(s):
    m, n, k = s
    return f"n={m}" if m == n == k else f"{m}x{n}x{k}"


def phi_of(row):
    """phi, or NaN for CSVs from before the phi column."""
    return num(row, "phi")


def phi_label(phi):
    return f"phi={phi:g}" if finite(phi) else "phi=?"


OZ_METHODS = ("ozdgemm", "ozdgemm_lt")  # INT8 GEMMs by cublasGemmEx, by cuBLASLt


def is_oz(row):
    return row.get("method") in OZ_METHODS


def moduli_of(row):
    s = num(row, "moduli")
    return int(s) if finite(s) else None


def method_label(row):
    if is_oz(row):
        return f"{row.get('method')} s={row.get('moduli') or '?'} {row.get('mode') or '?'}"
    return row.get("method") or "?"


def group_by(rows, key):
    """OrderedDict key(row) -> rows, in first-seen order."""
    out = OrderedDict()
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def case_key(row):
    """(phi, shape): the rows measured on the same inputs. NaN phi groups as None."""
    phi = phi_of(row)
    return (phi if finite(phi) else None, shape_of(row))


def native_row(rows):
    for r in rows:
        if r.get("method") == "cublas_dgemm" and finite(num(r, "median_ms")):
            return r
    return None


def no_worse(row, native):
    """Both sampled errors of `row` at most native's (NaN never matches)."""
    for key in ("max_rel_err", "max_scaled_err"):
        a, b = num(row, key), num(native, key)
        if math.isnan(a) or math.isnan(b) or a > b:
            return False
    return True


def accuracy_matched(rows, mode):
    """Among the ozdgemm rows (either INT8 GEMM backend) of one (phi, shape) case in `mode`, the
    one with the smallest moduli count whose errors are no worse than native's in both metrics,
    the faster backend at that count; None if none is or there is no native row."""
    native = native_row(rows)
    if native is None:
        return None
    cands = [r for r in rows if is_oz(r) and r.get("mode") == mode and moduli_of(r) is not None
             and finite(num(r, "median_ms")) and no_worse(r, native)]
    return min(cands, key=lambda r: (moduli_of(r), num(r, "median_ms"))) if cands else None


def target_for(phi, s):
    if phi is None or not is_square(s):
        return None
    return TARGETS.get((float(phi), s[0]))


def title_suffix(rows):
    gpus = sorted({r.get("gpu") or "?" for r in rows})
    dates = sorted({(r.get("date") or "")[:10] for r in rows} - {""})
    return ", ".join(gpus) + (f" ({', '.join(dates)})" if dates else "")
