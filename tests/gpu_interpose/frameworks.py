"""PyTorch and CuPy float64 and complex128 matmul on CUDA, meant to run under
LD_PRELOAD=libozdgemm.so (complex at n = 1536, so that the log tells the two apart).

Prints, for each framework, the size, the max error relative to (|A||B|) against NumPy's
long double product computed on the CPU (on sampled rows), and whether the run worked. The caller reads the library's
debug log to see whether the calls were intercepted. Exits 77 (skipped) when neither framework
is installed with a usable GPU; a framework that is not installed is reported and left out.
"""
import sys

try:
    import numpy as np
except ImportError:
    print("numpy not installed: not run", flush=True)
    sys.exit(77)


def check(name, matmul, n=2048, complex_data=False):
    rng = np.random.default_rng(1)

    def draw():
        x = rng.standard_normal((n, n)) * np.exp(0.5 * rng.standard_normal((n, n)))
        return x + 1j * rng.standard_normal((n, n)) if complex_data else x

    a = draw()
    b = draw()
    # In extended precision, on 48 sampled rows: NumPy's long double matmul is its own loop (not
    # the BLAS, which the preloaded library may emulate too: pip's NumPy calls
    # scipy_cblas_dgemm64_), too slow for the whole product.
    rows = rng.choice(n, size=48, replace=False)
    ref = a[rows].astype(np.clongdouble if complex_data else np.longdouble) @ b
    got = matmul(a, b)[rows]
    err = np.max(np.abs(got - ref) / (np.abs(a[rows]) @ np.abs(b)))
    ok = bool(err < 1e-13)
    if complex_data:
        name += " complex128"
    print(f"{name}: n={n} max |C-R|/(|A||B|) = {err:.3e} {'ok' if ok else 'FAIL'}", flush=True)
    return ok


def torch_matmul(a, b):
    import torch
    ta = torch.from_numpy(a).cuda()
    tb = torch.from_numpy(b).cuda()
    return (ta @ tb).cpu().numpy()


def cupy_matmul(a, b):
    import cupy
    return cupy.asnumpy(cupy.asarray(a) @ cupy.asarray(b))


def usable(name):
    """Whether the framework is installed and sees a GPU."""
    try:
        if name == "torch":
            import torch
            return torch.cuda.is_available()
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception as e:  # not installed, or no driver
        print(f"{name}: not run ({type(e).__name__}: {e})", flush=True)
        return False


results = []
for name, fn in (("torch", torch_matmul), ("cupy", cupy_matmul)):
    if not usable(name):
        continue
    try:
        results.append(check(name, fn))
        results.append(check(name, fn, n=1536, complex_data=True))
    except Exception as e:  # report, do not hide
        print(f"{name}: error {type(e).__name__}: {e}", flush=True)
        results.append(False)
if not results:
    sys.exit(77)
sys.exit(0 if all(results) else 1)
