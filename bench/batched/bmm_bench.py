"""Batched matmul through PyTorch (cublasDgemmStridedBatched, cublasZgemmStridedBatched) and the
single matmul of one matrix of the batch, timed: one CSV line per shape and dtype,
`dtype,batch,n,method,batch_ms,single_ms`, batch_ms for the whole batch, single_ms for one
n^3 product. Run it with and without LD_PRELOAD=libozdgemm.so; METHOD is only the label.

    python3 bench/batched/bmm_bench.py METHOD [--phi P] [batch:n ...]

Data (U - 0.5) exp(P N(0, 1)), U uniform in [0, 1) and N normal, the accuracy sets' phi
(complex: both parts by one factor); P = 0 (the default): uniform in [-0.5, 0.5). Median
of 5 timed calls (CUDA events) after two untimed calls.
"""
import sys

import torch


def timed(f, reps=5):
    f()
    f()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        f()
        e1.record()
        e1.synchronize()
        ms.append(e0.elapsed_time(e1))
    ms.sort()
    return ms[len(ms) // 2]


def loaded_cuda_libraries():
    # Which libcublas and libcudart the process runs (a preloaded library may bring the system's
    # cudart in place of PyTorch's own): to stderr, beside the CSV.
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "libcublas" in line or "libcudart" in line}
    except OSError:
        return
    for path in sorted(paths):
        print(f"# {path}", file=sys.stderr, flush=True)


def main():
    method = sys.argv[1]
    args = sys.argv[2:]
    phi = 0.0
    if args[:1] == ["--phi"]:
        phi = float(args[1])
        args = args[2:]
    shapes = args or ["64:512", "32:1024", "16:2048", "8:4096", "4:8192"]
    g = torch.Generator(device="cuda").manual_seed(1)

    def data(batch, n, dtype):
        x = torch.rand(batch, n, n, dtype=dtype, device="cuda", generator=g) - 0.5
        if phi != 0.0:
            x *= torch.exp(phi * torch.randn(batch, n, n, dtype=torch.float64, device="cuda",
                                             generator=g))
        return x

    torch.ones(2, 2, device="cuda") @ torch.ones(2, 2, device="cuda")  # loads cuBLAS
    loaded_cuda_libraries()
    for dtype in (torch.float64, torch.complex128):
        for shape in shapes:
            batch, n = (int(x) for x in shape.split(":"))
            a = data(batch, n, dtype)
            b = data(batch, n, dtype)
            batch_ms = timed(lambda: torch.bmm(a, b))
            single_ms = timed(lambda: a[0] @ b[0])
            name = "float64" if dtype == torch.float64 else "complex128"
            print(f"{name},{batch},{n},{method},{batch_ms:.3f},{single_ms:.3f}", flush=True)
            del a, b
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
