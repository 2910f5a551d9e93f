"""The NVSHMEM ring on every GPU of one or several machines, launched by torchrun.

    torchrun --standalone --nproc-per-node 2 ring_torchrun.py

torchrun starts one process per GPU and gives each its RANK, WORLD_SIZE and
LOCAL_RANK. The processes form a torch.distributed group; rank 0 creates the
NVSHMEM unique id, the group broadcasts it, and every rank initialises NVSHMEM
with its rank on its local GPU. Each PE then fills a symmetric tensor with its
rank, puts it into its right neighbour's, and checks what it received.

Without a GPU (or without the NVSHMEM build) only the bootstrap runs: the group
is formed with gloo and every rank checks it holds the same 128-byte id.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import socket
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) next to this script.
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libnvshmem_ring.so"
ID_BYTES = 128  # sizeof(nvshmemx_uniqueid_t)


# [torchrun_bootstrap.begin]
def broadcast_unique_id(mod) -> bytes:
    """Rank 0 makes the id; the process group carries it to every rank."""
    if dist.get_rank() == 0:
        if hasattr(mod, "shmem_unique_id_nvshmem"):
            unique_id = mod.shmem_unique_id_nvshmem()
        else:  # no NVSHMEM build: a stand-in of the same size exercises the bootstrap
            unique_id = os.urandom(ID_BYTES)
        assert len(unique_id) == ID_BYTES
        payload = torch.frombuffer(bytearray(unique_id), dtype=torch.uint8)
    else:
        payload = torch.empty(ID_BYTES, dtype=torch.uint8)
    dist.broadcast(payload, src=0)  # a CPU tensor: gloo carries it, with or without GPUs
    return payload.numpy().tobytes()
# [torchrun_bootstrap.end]


# [torchrun_ring.begin]
def ring(mod, unique_id: bytes, n: int) -> None:
    rank, npes, local_rank = dist.get_rank(), dist.get_world_size(), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)  # torch's stream and synchronize() use this PE's GPU
    assert mod.shmem_init_nvshmem(rank, npes, unique_id, local_rank) == rank
    src = torch.from_dlpack(mod.shmem_empty_nvshmem((n,), "float32"))
    dst = torch.from_dlpack(mod.shmem_empty_nvshmem((n,), "float32"))
    src.fill_(rank)
    dst.fill_(-1)
    mod.ring_put_nvshmem(src, dst)  # barrier, put to the right, barrier
    torch.cuda.synchronize()
    torch.testing.assert_close(dst, torch.full_like(dst, (rank - 1) % npes))
    del src, dst  # nvshmem_free is collective: every PE frees, in the same order
    mod.shmem_finalize_nvshmem()
# [torchrun_ring.end]


def why_not_run(mod) -> str | None:
    """Why this rank cannot run the NVSHMEM part, or None."""
    if not hasattr(mod, "shmem_init_nvshmem"):
        return "the NVSHMEM variant is not built (needs nvcc and nvidia-nvshmem-cu13)"
    if torch.cuda.device_count() <= int(os.environ["LOCAL_RANK"]):
        return "needs a CUDA GPU per rank"
    return None


def say(line: str) -> None:
    """One write per line: the ranks share the terminal, and print() may write a text and its
    newline separately (unbuffered output), letting another rank's line land in between."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # Not "--n": torchrun takes it for an abbreviation of one of its own options and stops.
    parser.add_argument("--floats", type=int, default=1 << 20, help="floats per PE")
    args = parser.parse_args(argv)
    dist.init_process_group("gloo")  # RANK, WORLD_SIZE, MASTER_ADDR/PORT come from torchrun
    rank, world = dist.get_rank(), dist.get_world_size()
    mod = tvm_ffi.load_module(str(LIBRARY))
    unique_id = broadcast_unique_id(mod)
    # Every rank reports what it holds and where it runs; NVSHMEM is collective, so all run it or none.
    seen = [None] * world
    placement = (socket.gethostname(), int(os.environ["LOCAL_RANK"]))
    dist.all_gather_object(seen, (hashlib.sha256(unique_id).hexdigest()[:16], placement, why_not_run(mod)))
    origin = "shmem_unique_id_nvshmem" if hasattr(mod, "shmem_unique_id_nvshmem") else "a random stand-in"
    say(f"rank {rank}/{world}: unique id of {len(unique_id)} bytes from {origin}, sha256 {seen[rank][0]}")
    assert len({digest for digest, _, _ in seen}) == 1, f"ranks hold different ids: {seen}"
    reasons = {reason for _, _, reason in seen if reason}
    if len({p for _, p, _ in seen}) < world:
        reasons.add("two ranks would share one GPU (several nodes started on one machine)")
    if not reasons:
        ring(mod, unique_id, args.floats)
        dist.barrier()
        if rank == 0:
            say(f"{world} PEs: every PE received its left neighbour's data")
    elif rank == 0:
        say(f"{world} ranks hold the identical {ID_BYTES}-byte id; NVSHMEM init and the ring put "
            f"skipped: {'; '.join(sorted(reasons))}")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
