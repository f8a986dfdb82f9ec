"""The Python stack as pip installs it, meant to run under LD_PRELOAD=libozdgemm.so with
OZDGEMM_MODE=emulate (JAX also with LD_AUDIT=libozdgemm_audit.so). One part per run:

  numpy   float64 `a @ b` at n = 8192 and `a @ a.T` at n = 4096 (NumPy's BLAS: GEMM, SYRK),
          with NumPy raising on any floating-point flag the calls leave set
  scipy   scipy.linalg.blas.dgemm at n = 4096 (SciPy's own bundled BLAS)
  jax     float64 `a @ b` at n = 4096 and a batched matmul (8 x 1024^3) on the GPU

Prints the BLAS NumPy was built with and, per case, the max error relative to (|A||B|) on 64
sampled entries against exactly summed dot products (math.fsum of the rounded products, no
BLAS), which must stay within (sqrt(k) + 2) 2^-53: the default's certified bound plus the
rounding of C and of the reference. The caller reads the library's debug log to see which names
were reached. Exits 77 (skipped) when the part's package is not installed or sees no GPU.
"""
import math
import sys

try:
    import numpy as np
except ImportError:
    print("numpy not installed: not run", flush=True)
    sys.exit(77)


def sampled_error(a, b, c, count=64):
    """Max over sampled (i, j) of |c_ij - (a b)_ij| / (|a||b|)_ij, without the BLAS."""
    rng = np.random.default_rng(3)
    worst = 0.0
    for i, j in zip(rng.integers(0, a.shape[0], count), rng.integers(0, b.shape[1], count)):
        ref = math.fsum(a[i, :] * b[:, j])
        scale = float(np.sum(np.abs(a[i, :]) * np.abs(b[:, j])))
        worst = max(worst, abs(float(c[i, j]) - ref) / scale)
    return worst


def report(name, a, b, c):
    k = a.shape[1]
    err = sampled_error(a, b, c)
    bound = (math.sqrt(k) + 2) * 2.0**-53
    ok = err <= bound
    print(f"{name}: {a.shape[0]}x{b.shape[1]}x{k} max sampled |C-R|/(|A||B|) = {err:.3e} "
          f"(bound {bound:.3e}) {'ok' if ok else 'FAIL'}", flush=True)
    return ok


def draw(rng, rows, cols):
    return rng.standard_normal((rows, cols)) * np.exp(0.5 * rng.standard_normal((rows, cols)))


def numpy_part(rng):
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        print(f"numpy {np.__version__}: BLAS {blas.get('name')} {blas.get('version')}", flush=True)
    except Exception as e:  # older NumPy: no dicts
        print(f"numpy {np.__version__}: BLAS unknown ({type(e).__name__})", flush=True)
    # errstate(all="raise"): the data are finite, so a floating-point flag left raised by the
    # call (NumPy tests them after a matmul) fails the test instead of printing a warning.
    with np.errstate(all="raise"):
        a, b = draw(rng, 8192, 8192), draw(rng, 8192, 8192)
        ok = report("numpy a @ b", a, b, a @ b)
        a = draw(rng, 4096, 4096)
        return report("numpy a @ a.T", a, a.T, a @ a.T) and ok


def scipy_part(rng):
    try:
        from scipy.linalg import blas
    except ImportError:
        print("scipy not installed: not run", flush=True)
        sys.exit(77)
    a, b = draw(rng, 4096, 4096), draw(rng, 4096, 4096)
    return report("scipy.linalg.blas.dgemm", a, b, blas.dgemm(1.0, a, b))


def jax_part(rng):
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        if not any(d.platform == "gpu" for d in jax.devices()):
            raise RuntimeError("no GPU device")
    except Exception as e:
        print(f"jax: not run ({type(e).__name__}: {e})", flush=True)
        sys.exit(77)
    a, b = draw(rng, 4096, 4096), draw(rng, 4096, 4096)
    ok = report("jax a @ b", a, b, np.asarray(jnp.asarray(a) @ jnp.asarray(b)))
    x, y = rng.standard_normal((8, 1024, 1024)), rng.standard_normal((8, 1024, 1024))
    z = np.asarray(jnp.matmul(jnp.asarray(x), jnp.asarray(y)))
    return all([report(f"jax batched [{i}]", x[i], y[i], z[i]) for i in range(8)]) and ok


parts = {"numpy": numpy_part, "scipy": scipy_part, "jax": jax_part}
if len(sys.argv) != 2 or sys.argv[1] not in parts:
    print(f"usage: python_stack.py {'|'.join(parts)}", file=sys.stderr)
    sys.exit(2)
sys.exit(0 if parts[sys.argv[1]](np.random.default_rng(1)) else 1)
