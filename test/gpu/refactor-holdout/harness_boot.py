"""Run one training script under light, behaviour-preserving instrumentation.

Usage (run.py does this): python3 harness_boot.py SCRIPT.py [args...]

The script runs as __main__ (runpy) from its own folder. Before it starts, this wrapper
  * counts GradScaler constructions (torch.amp.GradScaler and its torch.cuda.amp subclass),
  * counts torch.utils.checkpoint.checkpoint calls (checkpoint_sequential, Hugging Face and
    timm checkpointing all go through it when imported after this patch),
  * records which autocast (device, dtype) contexts were entered with enabled=True,
  * counts optimizer.step() executions through the global optimizer step hook,
and at exit prints one line `HARNESS {json}`, also when the script crashed.
Nothing here changes what the script computes.
"""
import atexit
import functools
import json
import os
import runpy
import sys

COUNTS = {
    "gradscaler_instances": 0,
    "checkpoint_calls": 0,
    "autocast": {},
    "optimizer_steps": 0,
}


def _install():
    import torch
    import torch.amp
    import torch.utils.checkpoint as tuc
    from torch.optim.optimizer import register_optimizer_step_post_hook

    gs_cls = torch.amp.GradScaler
    orig_gs_init = gs_cls.__init__

    @functools.wraps(orig_gs_init)
    def gs_init(self, *args, **kwargs):
        COUNTS["gradscaler_instances"] += 1
        return orig_gs_init(self, *args, **kwargs)

    gs_cls.__init__ = gs_init

    orig_ckpt = tuc.checkpoint

    @functools.wraps(orig_ckpt)
    def checkpoint(*args, **kwargs):
        COUNTS["checkpoint_calls"] += 1
        return orig_ckpt(*args, **kwargs)

    tuc.checkpoint = checkpoint

    ac_cls = torch.amp.autocast_mode.autocast
    orig_enter = ac_cls.__enter__

    @functools.wraps(orig_enter)
    def enter(self):
        out = orig_enter(self)
        if getattr(self, "_enabled", False):
            dtype = str(getattr(self, "fast_dtype", "?")).replace("torch.", "")
            key = f"{getattr(self, 'device', '?')}:{dtype}"
            COUNTS["autocast"][key] = COUNTS["autocast"].get(key, 0) + 1
        return out

    ac_cls.__enter__ = enter

    def count_step(optimizer, args, kwargs):
        COUNTS["optimizer_steps"] += 1

    register_optimizer_step_post_hook(count_step)

    def report():
        peak = None
        try:
            if torch.cuda.is_initialized():
                peak = int(torch.cuda.max_memory_allocated())
        except Exception:  # noqa: BLE001 - reporting must never fail
            pass
        out = dict(COUNTS)
        out["autocast_dtypes"] = sorted({k.split(":", 1)[1] for k in COUNTS["autocast"]})
        out["max_memory_allocated"] = peak
        sys.stdout.flush()
        print("HARNESS " + json.dumps(out), flush=True)

    atexit.register(report)


def main():
    if len(sys.argv) < 2:
        print("usage: harness_boot.py SCRIPT.py [args...]", file=sys.stderr)
        sys.exit(2)
    script = os.path.abspath(sys.argv[1])
    sys.argv = [script] + sys.argv[2:]
    sys.path[0] = os.path.dirname(script)
    _install()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
