#!/usr/bin/env python3
"""A kernel that faults must not take the tuner with it: on a GPU host, speaks the runner
protocol (measure/runner_protocol.cc, GpuProgram of measure/gpu_program.cc) to tirtune-runner
workers directly. First a GEMM cubin launched on buffers far too small for it (an illegal
address: 65535 block rows reach gigabytes past them): the reply must be a runtime error that
asks for a restart, and the worker must exit.
Then a fresh worker measures the same kernel on buffers of the right size.

Usage: fault_check.py RUNNER CUBIN_JSON   (CUBIN_JSON: `tirtune --json build ... -o X.cubin`)
"""
import json
import struct
import subprocess
import sys


def text(b):
    return struct.pack("<Q", len(b)) + b


def gpu_program(cubin, kernel, grid, block, args):
    out = b"TTGP" + struct.pack("<I", 2) + struct.pack("<I", 0) + struct.pack("<I", 1)
    out += text(kernel.encode())
    out += struct.pack("<3q", *grid) + struct.pack("<3q", *block)
    out += struct.pack("<I", len(args)) + b"".join(struct.pack("<i", a) for a in args)
    out += struct.pack("<q", 0)  # dynamic shared memory
    return out + text(cubin)


def request(program, shapes):
    out = struct.pack("<I", 0x54525132) + text(program) + text(b"gemm")
    out += text(b"cuda -arch=sm_90") + struct.pack("<I", len(shapes))
    for name, shape in shapes:
        out += text(name.encode()) + struct.pack("<I", len(shape))
        out += b"".join(struct.pack("<q", d) for d in shape) + text(b"float32")
    out += struct.pack("<Q", 1)                      # seed
    out += struct.pack("<iid", 1, 5, 1.0) + b"\0"    # warmup, repeat, min_repeat_ms, flush
    out += struct.pack("<dd", 0.0, 1.0)              # slow cutoff, reduction length
    out += struct.pack("<I", 0) + b"\0"              # no expected outputs, return_outputs
    return out


def reply(payload):
    magic, kind = struct.unpack_from("<IB", payload, 0)
    assert magic == 0x54525033, hex(magic)
    at = 5
    (n,) = struct.unpack_from("<Q", payload, at)
    message = payload[at + 8: at + 8 + n].decode()
    at += 8 + n + 16
    (samples,) = struct.unpack_from("<I", payload, at)
    seconds = struct.unpack_from("<%dd" % samples, payload, at + 4)
    at += 4 + 8 * samples
    (median,) = struct.unpack_from("<d", payload, at)
    at += 8 + 4 + 8
    (arrays,) = struct.unpack_from("<I", payload, at)
    assert arrays == 0
    restart = payload[at + 4] != 0
    return kind, message, median, len(seconds), restart


def ask(worker, req):
    worker.stdin.write(struct.pack("<Q", len(req)) + req)
    worker.stdin.flush()
    head = worker.stdout.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    return reply(worker.stdout.read(n))


def main():
    runner, built = sys.argv[1], json.load(open(sys.argv[2]))
    k = built["kernels"][0]
    cubin = open(built["output"], "rb").read()
    program = gpu_program(cubin, k["name"], k["grid"], k["block"], [0, 1, 2])
    # 65535 block rows: the kernel reaches rows gigabytes past its buffers.
    far = gpu_program(cubin, k["name"], [k["grid"][0], 65535, 1], k["block"], [0, 1, 2])
    n = 1024
    ok = True
    worker = subprocess.Popen([runner], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    tiny = request(far, [("A", [1]), ("B", [1]), ("C", [1])])
    r = ask(worker, tiny)
    print("faulting kernel:", r)
    ok &= r is not None and r[0] == 1 and r[4]
    worker.stdin.close()
    code = worker.wait(timeout=30)
    print("the worker exited with", code)
    fresh = subprocess.Popen([runner], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    r = ask(fresh, request(program, [("A", [n, n]), ("B", [n, n]), ("C", [n, n])]))
    print("same kernel, right buffers, fresh worker:", r)
    ok &= r is not None and r[0] == 0 and r[2] > 0 and not r[4]
    fresh.stdin.close()
    fresh.wait(timeout=30)
    print("fault check:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
