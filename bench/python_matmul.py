"""float64 `a @ b` through NumPy (its CPU BLAS, or the GPU when libozdgemm.so is preloaded) and
through JAX (cuBLAS/cuBLASLt on the GPU), timed and checked: one CSV line per part,
`stack,n,method,median_ms,max_err`, max_err = max |C - R| / (|A||B|) over sampled entries, R in
NumPy's long double. Run it with and without the library; METHOD is only the label.

    python3 bench/python_matmul.py METHOD [numpy:N] [jax:N] ...

    python3 bench/python_matmul.py native numpy:8192 jax:16384
    LD_PRELOAD=build/libozdgemm.so python3 bench/python_matmul.py default numpy:8192
    LD_PRELOAD=build/libozdgemm.so LD_AUDIT=build/libozdgemm_audit.so JAX_ENABLE_X64=1 \\
        python3 bench/python_matmul.py default jax:16384

Data (U - 0.5) exp(0.5 N(0, 1)), one seed. Median of 3 timed calls after one untimed call
(wall clock; JAX's results are waited for with block_until_ready).
"""
import sys
import time

import numpy as np

ROWS, COLS = 8, 1024  # the entries of C checked against the long double reference


def inputs(n):
    rng = np.random.default_rng(1)
    a = (rng.random((n, n)) - 0.5) * np.exp(0.5 * rng.standard_normal((n, n)))
    b = (rng.random((n, n)) - 0.5) * np.exp(0.5 * rng.standard_normal((n, n)))
    return a, b


def max_err(a, b, c):
    # Sampled rows and columns: a long double product is not BLAS; all 16384 columns took 70 s.
    rows = np.linspace(0, a.shape[0] - 1, ROWS).astype(int)
    cols = np.linspace(0, b.shape[1] - 1, COLS).astype(int)
    al = a[rows].astype(np.longdouble)
    bl = b[:, cols].astype(np.longdouble)
    ref = al @ bl
    scale = np.abs(al) @ np.abs(bl)
    diff = np.abs(c[np.ix_(rows, cols)].astype(np.longdouble) - ref)
    return float((diff / np.where(scale > 0, scale, 1)).max())


def timed(f):
    f()
    ms = []
    for _ in range(3):
        t0 = time.perf_counter()
        f()
        ms.append((time.perf_counter() - t0) * 1e3)
    return sorted(ms)[1]


def numpy_part(n):
    a, b = inputs(n)
    out = {}

    def run():
        out["c"] = a @ b

    return timed(run), max_err(a, b, out["c"])


def jax_part(n):
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    a, b = inputs(n)
    da, db = jnp.asarray(a), jnp.asarray(b)
    out = {}

    def run():
        out["c"] = (da @ db).block_until_ready()

    return timed(run), max_err(a, b, np.asarray(out["c"]))


def main():
    method = sys.argv[1]
    parts = {"numpy": numpy_part, "jax": jax_part}
    for spec in sys.argv[2:] or ["numpy:8192"]:
        stack, n = spec.split(":")
        try:
            ms, err = parts[stack](int(n))
        except Exception as e:  # a stack that is not installed, or no GPU: say so and go on
            print(f"# {stack} {n}: not run ({type(e).__name__}: {e})", flush=True)
            continue
        print(f"{stack},{n},{method},{ms:.3f},{err:.3e}", flush=True)


if __name__ == "__main__":
    main()
