#!/usr/bin/env python3
"""The vendor libraries on the GPU bundle's timed cases, measured the way tirtune-gpu-runner
measures (CUDA events around the call, an L2 flush before every repeat, the median): FP32 GEMM
through cuBLAS (torch.matmul, TF32 off) and conv2d through cuDNN (TF32 off, the fastest of NCHW
and NHWC with cudnn.benchmark). Needs PyTorch with CUDA; prints a table and writes JSON."""
import argparse
import json
import statistics

import torch


def time_ms(fn, min_ms=300.0, flush_bytes=256 << 20):
    flush = torch.empty(flush_bytes // 4, dtype=torch.float32, device="cuda")
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def once():
        flush.zero_()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop)

    first = once()
    repeats = int(min(500, max(10, min_ms / max(first, 1e-3))))
    times = [once() for _ in range(repeats)]
    return statistics.median(times), min(times), repeats


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "cases": []}

    def report(name, library, flops, fn, check=None):
        median, best, repeats = time_ms(fn)
        row = {"name": name, "library": library, "median_ms": median, "min_ms": best,
               "repeats": repeats, "tflops": flops / (median * 1e-3) / 1e12 if flops else None}
        if check is not None:
            row["max_abs_error_vs_fp64"] = check
        results["cases"].append(row)
        rate = f"{row['tflops']:8.2f} TFLOP/s" if flops else ""
        print(f"{name:<34} {library:<8} {median:10.4f} ms {rate}")

    for m, n, k in [(4096, 4096, 4096), (1024, 1024, 1024), (256, 256, 256)]:
        a = torch.rand(m, k, device="cuda") * 2 - 1
        b = torch.rand(k, n, device="cuda") * 2 - 1
        c = torch.empty(m, n, device="cuda")
        exact = (a.double() @ b.double())
        error = (torch.matmul(a, b).double() - exact).abs().max().item()
        report(f"gemm:{m},{n},{k}", "cuBLAS", 2.0 * m * n * k,
               lambda: torch.matmul(a, b, out=c), error)

    # conv2d:N,H,W,CI,CO,K,stride,pad (NHWC in tirtune): the session-17 case and the C2D shapes
    # of the benchmark suite (every convolution of ResNet-50's kind).
    for n, h, w, ci, co, kk, s, p in [(1, 56, 56, 64, 64, 3, 1, 1), (1, 224, 224, 3, 64, 7, 2, 3),
                                      (1, 56, 56, 64, 64, 1, 1, 0), (1, 14, 14, 256, 256, 3, 1, 1),
                                      (1, 7, 7, 512, 512, 3, 1, 1)]:
        ho, wo = (h + 2 * p - kk) // s + 1, (w + 2 * p - kk) // s + 1
        flops = 2.0 * n * ho * wo * co * ci * kk * kk
        x = torch.rand(n, ci, h, w, device="cuda") * 2 - 1
        wt = torch.rand(co, ci, kk, kk, device="cuda") * 2 - 1
        for layout, xx, ww in [("NCHW", x, wt),
                               ("NHWC", x.to(memory_format=torch.channels_last),
                                wt.to(memory_format=torch.channels_last))]:
            report(f"conv2d:{n},{h},{w},{ci},{co},{kk},{s},{p} {layout}", "cuDNN", flops,
                   lambda: torch.nn.functional.conv2d(xx, ww, stride=s, padding=p))
    # softmax:4096,1024 and global_avg_pool2d:32,7,7,2048 (NHWC: the mean over H and W).
    x = torch.rand(4096, 1024, device="cuda") * 2 - 1
    report("softmax:4096,1024", "PyTorch", 0, lambda: torch.softmax(x, dim=1))
    x = torch.rand(32, 7, 7, 2048, device="cuda") * 2 - 1
    report("global_avg_pool2d:32,7,7,2048", "PyTorch", 0, lambda: x.mean(dim=(1, 2)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
