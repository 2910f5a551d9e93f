"""Run the NVSHMEM ring on several GPUs of one machine: one process per PE.

    python ring_pes.py --pes 4

The nvidia-nvshmem-cu13 wheel ships no launcher (no nvshmrun), so this script
is the launcher: it starts one process per GPU with Python's multiprocessing,
PE 0 makes a unique id, the others receive it through a queue, and all of them
call shmem_init_nvshmem with their rank. Each PE fills a symmetric tensor with
its rank, puts it into its right neighbour's, and checks what it received.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
from pathlib import Path

from ffi_cookbook.build import build_dir_for

LIBRARY = build_dir_for(Path(__file__).resolve().parent) / "libnvshmem_ring.so"


def run_pe(rank: int, npes: int, ids: mp.Queue, n: int) -> None:
    import torch
    import tvm_ffi

    torch.cuda.set_device(rank)  # so that torch's default stream and synchronize() use this PE's GPU
    mod = tvm_ffi.load_module(str(LIBRARY))
    if rank == 0:
        unique_id = mod.shmem_unique_id_nvshmem()
        for _ in range(npes - 1):
            ids.put(bytes(unique_id))
    else:
        unique_id = ids.get(timeout=60)
    assert mod.shmem_init_nvshmem(rank, npes, unique_id, rank) == rank
    src = torch.from_dlpack(mod.shmem_empty_nvshmem((n,), "float32"))
    dst = torch.from_dlpack(mod.shmem_empty_nvshmem((n,), "float32"))
    src.fill_(rank)
    dst.fill_(-1)
    mod.ring_put_nvshmem(src, dst)  # barrier, put to the right, barrier
    torch.cuda.synchronize()
    left = (rank - 1) % npes
    torch.testing.assert_close(dst, torch.full_like(dst, left))
    del src, dst  # nvshmem_free is collective: every PE frees, in the same order
    mod.shmem_finalize_nvshmem()


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pes", type=int, default=torch.cuda.device_count(), help="one per GPU")
    parser.add_argument("--n", type=int, default=1 << 20, help="floats per PE")
    args = parser.parse_args(argv)
    if not 1 <= args.pes <= torch.cuda.device_count():
        parser.error(f"--pes must be between 1 and the {torch.cuda.device_count()} visible GPUs")
    ctx = mp.get_context("spawn")  # CUDA cannot be used in forked children
    ids = ctx.Queue()
    procs = [ctx.Process(target=run_pe, args=(r, args.pes, ids, args.n)) for r in range(args.pes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    failed = [r for r, p in enumerate(procs) if p.exitcode != 0]
    print(f"{args.pes} PEs: " + (f"PEs {failed} failed" if failed else "every PE received its left neighbour's data"))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
