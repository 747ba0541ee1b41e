"""cust7a probe: bytes a forward keeps for backward (allocated after forward minus before, output included) and the
backward's peak above the forward's start, per batch size, for pieces of three held-out set 7 models (wav2vec-style
conv front-end and encoder, DDPM U-Net and one ResBlock, Whisper-style model). Writes $OUT/probe_cust7a.json."""
import importlib.util, json, os, sys, time
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "holdout7", "scripts")


def load(name):
    sys.argv = [name]
    spec = importlib.util.spec_from_file_location(name.replace(".py", ""), os.path.join(SCRIPTS, name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure(label, build, inputs, dtype, batches=(2, 4)):
    out = {"label": label, "runs": []}
    model = build().cuda().train()
    for b in batches:
        args = inputs(b)
        for attempt in range(2):  # the first warms cuDNN / allocator
            model.zero_grad(set_to_none=True)
            torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            with torch.autocast("cuda", dtype=dtype):
                y = model(*args)
            y = y[0] if isinstance(y, tuple) else y
            torch.cuda.synchronize()
            after = torch.cuda.memory_allocated()
            fwd_peak = torch.cuda.max_memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            y.float().square().mean().backward()
            torch.cuda.synchronize()
            bw_peak = torch.cuda.max_memory_allocated()
            del y
        out["runs"].append({"batch": b, "kept": after - base, "forward_peak": fwd_peak - base, "backward_peak": bw_peak - base,
                            "grads": sum(p.numel() * 4 for p in model.parameters())})
        del args
    r = out["runs"]
    out["kept_per_sample"] = (r[-1]["kept"] - r[0]["kept"]) / (r[-1]["batch"] - r[0]["batch"])
    out["backward_peak_per_sample"] = (r[-1]["backward_peak"] - r[0]["backward_peak"]) / (r[-1]["batch"] - r[0]["batch"])
    print(json.dumps(out), flush=True)
    del model
    torch.cuda.empty_cache()
    return out


def main():
    results = []
    t0 = time.time()
    w2v = load("train_wav2vec_style_conv_frontend.py")
    results.append(measure("wav2vec.FeatureEncoder", lambda: w2v.FeatureEncoder(w2v.CONV_LAYERS), lambda b: (torch.randn(b, 256000, device="cuda"),), torch.float16))
    results.append(measure("wav2vec.CTCModel", lambda: w2v.CTCModel(768, 12, 12, 32), lambda b: (torch.randn(b, 256000, device="cuda"),), torch.float16))

    class After(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = w2v.CTCModel(768, 12, 12, 32)
        def forward(self, feats):
            x = self.m.proj(self.m.feat_norm(feats))
            return self.m.head(self.m.encoder(self.m.pos(x)))
    results.append(measure("wav2vec.encoder_part", After, lambda b: (torch.randn(b, 799, 512, device="cuda", requires_grad=False),), torch.float16))
    ddpm = load("train_ddpm_classcond_cfg.py")
    results.append(measure("ddpm.ResBlock128", lambda: ddpm.ResBlock(128, 128, 512), lambda b: (torch.randn(b, 128, 128, 128, device="cuda"), torch.randn(b, 512, device="cuda")), torch.bfloat16))
    results.append(measure("ddpm.UNet", lambda: ddpm.UNet(100), lambda b: (torch.randn(b, 3, 128, 128, device="cuda"), torch.randint(0, 1000, (b,), device="cuda"), torch.randint(0, 101, (b,), device="cuda")), torch.bfloat16))
    wh = load("train_whisper_style_logmel_seq2seq.py")
    results.append(measure("whisper.SpeechToText", lambda: wh.SpeechToText(wh.cfg), lambda b: (torch.randn(b, 480000, device="cuda") * 0.05, torch.randint(0, 51865, (b, 128), device="cuda")), torch.float16))
    results.append(measure("whisper.AudioEncoder", lambda: wh.AudioEncoder(wh.cfg), lambda b: (torch.randn(b, 80, 3000, device="cuda"),), torch.float16))
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "probe_cust7a.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "seconds": time.time() - t0, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
