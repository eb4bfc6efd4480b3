#!/usr/bin/env python3
"""A small, deterministic PyTorch DDP training job (CPU, gloo) that survives
worker crashes: run it under `cgrun` (or torchrun) with --max-restarts >= 1.

    cgrun --standalone --nproc-per-node=4 --max-restarts=3 \
        examples/ddp/train.py --ckpt-dir /tmp/ckpt --out /tmp/final.pt

What it does
  * builds a synthetic regression data set from a fixed seed (identical on
    every rank, nothing downloaded) and a small MLP, trained with Adam;
  * shards the data with DistributedSampler (fixed seed, set_epoch per epoch)
    and takes exactly --steps optimizer steps;
  * every --ckpt-every steps rank 0 writes a checkpoint atomically (temporary
    file, fsync, os.replace, fsync of the directory): model, optimizer state,
    step and RNG states; all ranks then meet at a barrier;
  * on start (every attempt, TORCHELASTIC_RESTART_COUNT) it resumes from the
    newest checkpoint, replaying the same data order and optimizer state, so
    a run interrupted by crashes ends with bit-identical weights;
  * at the end rank 0 writes the final state_dict (--out) and prints its
    sha256 on a line "final step=N loss=X sha256=HEX".

Crash injection (for demos and tests), only on attempt 0:
  CRASH_AT_STEP=S  CRASH_RANK=R   rank R exits with status CRASH_EXIT
                                   (default 13) just before step S.

Runs with torch 1.13 (Debian's /usr/bin/python3) and torch 2.x.
"""

import argparse
import hashlib
import io
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler, TensorDataset

CKPT_PREFIX = "ckpt-"
CKPT_SUFFIX = ".pt"
KEEP_CKPTS = 2


def parse_args():
    """Command-line options; every one has a default so the script runs bare."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=60, help="optimizer steps in total")
    p.add_argument("--ckpt-every", type=int, default=5, help="checkpoint period in steps")
    p.add_argument("--ckpt-dir", default=os.environ.get("CKPT_DIR", "ckpt"))
    p.add_argument("--out", default="", help="final weights file (default CKPT_DIR/final.pt)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--samples", type=int, default=4096, help="synthetic data set size")
    p.add_argument("--batch", type=int, default=32, help="per-rank batch size")
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--log-every", type=int, default=5)
    p.add_argument("--step-delay", type=float, default=0.0,
                   help="seconds to sleep per step (to watch a demo)")
    return p.parse_args()


def log(rank, msg):
    """Print one whole line from rank 0 only (the launcher prefixes ranks)."""
    if rank == 0:
        print(msg, flush=True)


def make_data(seed, n):
    """Synthetic regression set y = tanh(x A) b + noise, the same on every rank."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    a = torch.randn(16, 8, generator=g)
    b = torch.randn(8, 1, generator=g)
    y = torch.tanh(x @ a) @ b + 0.05 * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


def make_model(seed):
    """A small MLP whose initial weights depend only on the seed."""
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(),
                               torch.nn.Linear(64, 64), torch.nn.Tanh(),
                               torch.nn.Linear(64, 1))


def fsync_dir(path):
    """Make a rename in directory PATH durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_save(obj, path):
    """Write OBJ to PATH so that PATH is either the old file or the whole new one."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, ".%s.tmp.%d" % (os.path.basename(path), os.getpid()))
    buf = io.BytesIO()
    torch.save(obj, buf)
    with open(tmp, "wb") as f:
        f.write(buf.getbuffer())
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(d)


def ckpt_path(d, step):
    """File name of the checkpoint taken after STEP steps."""
    return os.path.join(d, "%s%06d%s" % (CKPT_PREFIX, step, CKPT_SUFFIX))


def list_ckpts(d):
    """Checkpoint steps present in D, newest first."""
    steps = []
    for name in os.listdir(d):
        if name.startswith(CKPT_PREFIX) and name.endswith(CKPT_SUFFIX):
            num = name[len(CKPT_PREFIX):-len(CKPT_SUFFIX)]
            if num.isdigit():
                steps.append(int(num))
    return sorted(steps, reverse=True)


def torch_load(path):
    """torch.load restricted to plain data where this torch version can (2.x)."""
    if int(torch.__version__.split(".")[0]) >= 2:
        return torch.load(path, map_location="cpu", weights_only=True)
    # torch 1.13's weights_only unpickler rejects floats (BINFLOAT) that every
    # optimizer state holds; these files are this script's own.
    return torch.load(path, map_location="cpu")


def load_latest(d, rank):
    """The newest readable checkpoint in D, or None."""
    for step in list_ckpts(d):
        path = ckpt_path(d, step)
        try:
            return torch_load(path), path
        except Exception as e:  # pylint: disable=broad-except
            print("rank %d: skipping unreadable checkpoint %s: %s" % (rank, path, e),
                  file=sys.stderr, flush=True)
    return None, None


def save_ckpt(d, step, model, opt):
    """Rank 0's atomic checkpoint after STEP steps; older ones beyond KEEP_CKPTS go."""
    state = {"step": step, "model": model.state_dict(), "optim": opt.state_dict(),
             "torch_rng": torch.get_rng_state()}
    atomic_save(state, ckpt_path(d, step))
    for old in list_ckpts(d)[KEEP_CKPTS:]:
        try:
            os.unlink(ckpt_path(d, old))
        except FileNotFoundError:
            pass


def weights_digest(state_dict):
    """sha256 over every tensor's name, shape, dtype and raw bytes, in order."""
    h = hashlib.sha256()
    for name, t in state_dict.items():
        t = t.detach().cpu().contiguous()
        h.update(("%s %s %s\n" % (name, tuple(t.shape), t.dtype)).encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


def batch_indices(sampler, batch, step, steps_per_epoch):
    """This rank's sample indices for global step STEP (same order on replay)."""
    epoch, i = divmod(step, steps_per_epoch)
    sampler.set_epoch(epoch)
    idx = list(sampler)
    return idx[i * batch:(i + 1) * batch]


def warm_up(ddp, lossf, data, idx):
    """One forward/backward without an optimizer step, so a resumed run sums
    gradients exactly as an uninterrupted one: DDP packs gradients into its
    buckets in parameter order in the first iteration and in the order they
    became ready afterwards, and where a value falls in a bucket decides the
    order in which gloo adds the ranks' values (the last bits of the sum)."""
    x, y = data.tensors[0][idx], data.tensors[1][idx]
    lossf(ddp(x), y).backward()
    for p in ddp.parameters():
        p.grad = None


def maybe_crash(rank, attempt, step):
    """Exit abruptly when this is the injected crash's rank, step and attempt 0."""
    at = os.environ.get("CRASH_AT_STEP")
    who = int(os.environ.get("CRASH_RANK", "0"))
    if at is None or attempt != 0 or rank != who or step != int(at):
        return
    code = int(os.environ.get("CRASH_EXIT", "13"))
    print("rank %d: injected crash before step %d (exit %d)" % (rank, step, code),
          file=sys.stderr, flush=True)
    os._exit(code)


def main():
    """Train, checkpoint, resume; print the final digest."""
    args = parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    os.makedirs(args.ckpt_dir, exist_ok=True)
    out = args.out or os.path.join(args.ckpt_dir, "final.pt")

    data = make_data(args.seed, args.samples)
    model = make_model(args.seed)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True,
                                 seed=args.seed, drop_last=True)
    steps_per_epoch = len(sampler) // args.batch
    if steps_per_epoch < 1:
        sys.exit("train.py: --batch %d is larger than a rank's share (%d samples)"
                 % (args.batch, len(sampler)))

    start = 0
    state, path = load_latest(args.ckpt_dir, rank)
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optim"])
        torch.set_rng_state(state["torch_rng"])
        start = state["step"]
        log(rank, "attempt %d: resuming from %s at step %d" % (attempt, path, start))
    else:
        log(rank, "attempt %d: no checkpoint in %s, starting at step 0" % (attempt, args.ckpt_dir))
    log(rank, "world_size=%d steps=%d ckpt_every=%d" % (world, args.steps, args.ckpt_every))

    ddp = DDP(model)
    lossf = torch.nn.MSELoss()
    loss = torch.zeros(())
    if start > 0:
        warm_up(ddp, lossf, data, batch_indices(sampler, args.batch, start, steps_per_epoch))
    for step in range(start, args.steps):
        maybe_crash(rank, attempt, step)
        idx = batch_indices(sampler, args.batch, step, steps_per_epoch)
        x, y = data.tensors[0][idx], data.tensors[1][idx]
        opt.zero_grad()
        loss = lossf(ddp(x), y)
        loss.backward()
        opt.step()
        done = step + 1
        if done % args.log_every == 0 or done == args.steps:
            log(rank, "step %d loss %.6f attempt %d" % (done, loss.item(), attempt))
        if done % args.ckpt_every == 0 and done < args.steps:
            if rank == 0:
                save_ckpt(args.ckpt_dir, done, model, opt)
            dist.barrier()
        if args.step_delay > 0:
            time.sleep(args.step_delay)

    if rank == 0:
        sd = model.state_dict()
        atomic_save(sd, out)
        print("final step=%d loss=%.6f sha256=%s" % (args.steps, loss.item(), weights_digest(sd)),
              flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as err:
        # A collective fails on every rank when one rank dies; one line per
        # rank says so without burying the first failure under tracebacks.
        first = (str(err).strip().splitlines() or [""])[0]
        print("rank %s: %s: %s (the launcher stops and restarts the group)"
              % (os.environ.get("RANK", "?"), type(err).__name__, first),
              file=sys.stderr, flush=True)
        sys.exit(1)
