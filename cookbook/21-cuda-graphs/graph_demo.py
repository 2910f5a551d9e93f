"""CUDA-graph experiments with the axpy kernels, each in a child process.

A capture that fails can leave the process's CUDA state unusable for the next
capture, so every experiment runs alone: ``python graph_demo.py VARIANT`` prints
one JSON line, which :func:`capture` returns as a dict. Needs a CUDA GPU.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = ("env_stream", "env_alloc", "null_stream", "nd_alloc")


# [capture_and_replay.begin]
def capture_and_replay(variant: str) -> dict:
    """Capture one axpy call of ``variant``, then copy new inputs in and replay."""
    import torch
    from axpy_op import mod

    x, y, out = (torch.randn(1 << 16, device="cuda") for _ in range(3))
    calls = {
        "env_stream": lambda: mod.graph_axpy_cuda(x, y, 2.0, out),
        "null_stream": lambda: mod.graph_axpy_null_stream_cuda(x, y, 2.0, out),
        "env_alloc": lambda: mod.graph_axpy_env_alloc_cuda(x, y, 2.0),
        "nd_alloc": lambda: mod.graph_axpy_nd_alloc_cuda(x, y, 2.0),
    }
    side = torch.cuda.Stream()  # warm up off the default stream, as torch's docs advise
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        calls[variant]()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    seen = {"variant": variant}
    try:
        with torch.cuda.graph(graph):
            seen["capture_stream"] = torch.cuda.current_stream().cuda_stream
            result = calls[variant]()
    except Exception as err:  # noqa: BLE001 - reported, the experiment is about it
        seen["raised"] = f"{type(err).__name__}: {str(err).splitlines()[0]}"
        return seen
    if variant == "env_stream":
        seen["kernel_stream"] = result
    target = out if result is None or isinstance(result, int) else result
    x.copy_(torch.randn_like(x))  # new inputs, copied into the captured addresses
    y.copy_(torch.randn_like(y))
    target.zero_()
    graph.replay()
    torch.cuda.synchronize()
    seen["replay_computes"] = bool(torch.equal(target, 2.0 * x + y))
    return seen
# [capture_and_replay.end]


# [launch_time.begin]
def launch_time_us(n: int = 4096, launches: int = 200, repeats: int = 20) -> dict:
    """Microseconds per kernel: ``launches`` calls from Python, or one replay of their graph."""
    import torch
    from axpy_op import mod

    x, y, out = (torch.randn(n, device="cuda") for _ in range(3))

    def eager():
        for _ in range(launches):
            mod.graph_axpy_cuda(x, y, 2.0, out)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        eager()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        eager()

    def best(run):
        times = []
        for _ in range(repeats):
            torch.cuda.synchronize()
            start = time.perf_counter()
            run()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) / launches * 1e6)
        return min(times)

    return {"eager": best(eager), "graph": best(graph.replay), "n": n, "launches": launches,
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__}
# [launch_time.end]


def capture(variant: str) -> dict:
    """:func:`capture_and_replay` in a child process."""
    if variant not in VARIANTS:
        raise ValueError(f"variant: expected one of {list(VARIANTS)}, got {variant!r}")
    done = subprocess.run([sys.executable, str(HERE / "graph_demo.py"), variant], cwd=HERE,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return {"variant": variant, "raised": f"child exited {done.returncode}: {done.stderr.strip()[-300:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    print(json.dumps(capture_and_replay(sys.argv[1])))
