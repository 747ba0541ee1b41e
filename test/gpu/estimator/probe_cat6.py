# Parameters and step peaks of the model families held-out set 6 showed unresolved or mis-sized (torchvision
# DenseNet / Inception v3 / GoogLeNet / MaxViT / video classifiers; transformers Marian / MBart / Segformer /
# VisionEncoderDecoder built from configs), at sizes other than the set's, to check the estimator's catalog.
# python probe_cat6.py [OUT.json]   (results/cat6.json: one run on the H200.)
# Each row: a fresh model on the GPU, two steps; peak = torch.cuda.max_memory_allocated() from before the model was
# made (weights, optimizer state, activations), as the held-out harness measures a whole script.
import json, sys, time, traceback
import torch, torch.nn as nn, torch.nn.functional as F
import torchvision
from torchvision import models as M
from torchvision.models import video as V

MIB = 2 ** 20
dev = "cuda"
res = {"torch": torch.__version__, "torchvision": torchvision.__version__, "rows": []}
_ = torch.ones(1, device=dev) @ torch.ones(1, 1, device=dev)

def count(m):
    return sum(p.numel() for p in m.parameters())

def row(name, fn, **info):
    rec = {"name": name, **info}
    t0 = time.time()
    try:
        torch.cuda.empty_cache(); torch.cuda.synchronize()
        rec["base_mib"] = round(torch.cuda.memory_allocated() / MIB, 1)
        torch.cuda.reset_peak_memory_stats()
        rec.update(fn())
        torch.cuda.synchronize()
        rec["peak_mib"] = round(torch.cuda.max_memory_allocated() / MIB, 1)
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 1)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)

def params_only(make):
    def fn():
        m = make()
        return {"params": count(m)}
    return fn

def train_image(make, batch, size, amp=None, opt="sgd", frames=None, classes=1000, aux=None, steps=2):
    def fn():
        m = make().to(dev).train()
        o = {"sgd": lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9),
             "adamw": lambda p: torch.optim.AdamW(p, lr=1e-4),
             "rmsprop": lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.9)}[opt](m.parameters())
        scaler = torch.amp.GradScaler() if amp == torch.float16 else None
        for _ in range(steps):
            shape = (batch, 3, frames, size, size) if frames else (batch, 3, size, size)
            x = torch.randn(*shape, device=dev); y = torch.randint(0, classes, (batch,), device=dev)
            with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
                out = m(x)
                if aux is not None:
                    loss = F.cross_entropy(out.logits, y) + aux * F.cross_entropy(out.aux_logits, y)
                elif isinstance(out, tuple):
                    loss = F.cross_entropy(out[0], y) + sum(0.3 * F.cross_entropy(a, y) for a in out[1:] if a is not None)
                else:
                    loss = F.cross_entropy(out, y)
            o.zero_grad()
            (scaler.scale(loss) if scaler else loss).backward()
            if scaler: scaler.step(o); scaler.update()
            else: o.step()
        return {"params": count(m)}
    return fn

def infer_image(make, batch, size, amp=torch.bfloat16, mode="inference"):
    def fn():
        m = make().to(dev).eval()
        ctx = torch.inference_mode() if mode == "inference" else torch.no_grad()
        with ctx, torch.autocast("cuda", dtype=amp):
            for _ in range(2):
                x = torch.rand(batch, 3, size, size, device=dev)
                p = m(x).float().softmax(-1).topk(5, dim=-1).indices.cpu()
        return {"params": count(m)}
    return fn

# torchvision image models
for n in ["densenet121", "densenet169", "densenet201", "densenet161"]:
    row(n, params_only(lambda n=n: getattr(M, n)()), kind="params")
row("densenet161", infer_image(M.densenet161, 256, 224), kind="infer_bf16_inference_mode", batch=256, size=224)
row("densenet161", train_image(M.densenet161, 32, 192), kind="train_fp32_sgd", batch=32, size=192)
row("densenet169", train_image(M.densenet169, 48, 224, amp=torch.float16), kind="train_fp16_sgd", batch=48, size=224)
row("inception_v3", params_only(lambda: M.inception_v3(aux_logits=False, init_weights=False)), kind="params_noaux")
row("inception_v3", train_image(lambda: M.inception_v3(aux_logits=True, init_weights=False), 32, 299, amp=torch.bfloat16,
    opt="rmsprop", aux=0.4), kind="train_bf16_rmsprop_aux", batch=32, size=299)
row("inception_v3", infer_image(lambda: M.inception_v3(aux_logits=False, init_weights=False), 128, 342, mode="no_grad"),
    kind="infer_bf16_no_grad", batch=128, size=342)
row("googlenet", params_only(lambda: M.googlenet(aux_logits=False, init_weights=False)), kind="params_noaux")
row("googlenet", train_image(lambda: M.googlenet(aux_logits=True, init_weights=False), 64, 224), kind="train_fp32_sgd_aux", batch=64, size=224)
row("maxvit_t", train_image(M.maxvit_t, 16, 224, amp=torch.bfloat16, opt="adamw"), kind="train_bf16_adamw", batch=16, size=224)
row("maxvit_t", train_image(lambda: M.maxvit_t(num_classes=10), 32, 224, amp=torch.bfloat16, opt="adamw", classes=10), kind="train_bf16_adamw", batch=32, size=224)
# torchvision video models (N, C, T, H, W)
for n in ["r3d_18", "mc3_18", "r2plus1d_18", "s3d", "mvit_v1_b", "mvit_v2_s", "swin3d_t"]:
    row(n, params_only(lambda n=n: getattr(V, n)()), kind="params")
for n in ["r3d_18", "mc3_18", "r2plus1d_18"]:
    row(n, train_image(getattr(V, n), 8, 112, amp=torch.float16, frames=8, classes=400), kind="train_fp16_sgd", batch=8, frames=8, size=112)
row("r2plus1d_18", train_image(V.r2plus1d_18, 4, 128, amp=None, frames=16, classes=400), kind="train_fp32_sgd", batch=4, frames=16, size=128)

# transformers models from configs
import transformers as T
res["transformers"] = T.__version__

def seq2seq(cfg_cls, model_cls, cfg, batch, src, tgt, amp=torch.float16):
    def fn():
        m = model_cls(cfg_cls(**cfg)).to(dev).train()
        o = torch.optim.AdamW(m.parameters(), lr=1e-4)
        scaler = torch.amp.GradScaler("cuda")
        V_ = cfg["vocab_size"]
        for _ in range(2):
            ids = torch.randint(1, V_ - 2, (batch, src), device=dev)
            labels = torch.randint(1, V_ - 2, (batch, tgt), device=dev)
            with torch.autocast("cuda", dtype=amp):
                out = m(input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels)
            o.zero_grad(); scaler.scale(out.loss).backward(); scaler.step(o); scaler.update()
        return {"params": count(m)}
    return fn

marian = dict(vocab_size=58101, d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
              encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=512, pad_token_id=58100, decoder_start_token_id=58100)
row("MarianMTModel", params_only(lambda: T.MarianMTModel(T.MarianConfig(**marian))), kind="params", config=marian)
row("MarianMTModel", params_only(lambda: T.MarianMTModel(T.MarianConfig(**{**marian, "share_encoder_decoder_embeddings": False}))), kind="params_unshared")
row("MarianMTModel", params_only(lambda: T.MarianMTModel(T.MarianConfig())), kind="params_default")
row("MarianMTModel", seq2seq(T.MarianConfig, T.MarianMTModel, marian, 32, 96, 80), kind="train_fp16_adamw", batch=32, src=96, tgt=80)
small = dict(marian, vocab_size=32000, d_model=256, encoder_layers=3, decoder_layers=3, encoder_attention_heads=4, decoder_attention_heads=4,
             encoder_ffn_dim=1024, decoder_ffn_dim=1024, pad_token_id=31999, decoder_start_token_id=31999)
row("MarianMTModel", seq2seq(T.MarianConfig, T.MarianMTModel, small, 64, 128, 128), kind="train_fp16_adamw", batch=64, src=128, tgt=128, config=small)
mbart = dict(vocab_size=50000, d_model=512, encoder_layers=4, decoder_layers=4, encoder_attention_heads=8, decoder_attention_heads=8,
             encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=256)
row("MBartForConditionalGeneration", params_only(lambda: T.MBartForConditionalGeneration(T.MBartConfig(**mbart))), kind="params", config=mbart)
row("MBartForConditionalGeneration", params_only(lambda: T.MBartForConditionalGeneration(T.MBartConfig())), kind="params_default")
row("PegasusForConditionalGeneration", params_only(lambda: T.PegasusForConditionalGeneration(T.PegasusConfig(**mbart))), kind="params", config=mbart)

def segformer(cfg, batch, size, classes):
    def fn():
        m = T.SegformerForSemanticSegmentation(T.SegformerConfig(num_labels=classes, **cfg)).to(dev).train()
        o = torch.optim.AdamW(m.parameters(), lr=6e-5)
        for _ in range(2):
            x = torch.randn(batch, 3, size, size, device=dev); y = torch.randint(0, classes, (batch, size, size), device=dev)
            out = m(pixel_values=x, labels=y)
            o.zero_grad(); out.loss.backward(); o.step()
        return {"params": count(m)}
    return fn

B = {"b0": dict(depths=[2, 2, 2, 2], hidden_sizes=[32, 64, 160, 256], num_attention_heads=[1, 2, 5, 8], decoder_hidden_size=256),
     "b1": dict(depths=[2, 2, 2, 2], hidden_sizes=[64, 128, 320, 512], num_attention_heads=[1, 2, 5, 8], decoder_hidden_size=256),
     "b2": dict(depths=[3, 4, 6, 3], hidden_sizes=[64, 128, 320, 512], num_attention_heads=[1, 2, 5, 8], decoder_hidden_size=768),
     "b3": dict(depths=[3, 4, 18, 3], hidden_sizes=[64, 128, 320, 512], num_attention_heads=[1, 2, 5, 8], decoder_hidden_size=768),
     "b5": dict(depths=[3, 6, 40, 3], hidden_sizes=[64, 128, 320, 512], num_attention_heads=[1, 2, 5, 8], decoder_hidden_size=768)}
for k, cfg in B.items():
    row("Segformer-" + k, params_only(lambda cfg=cfg: T.SegformerForSemanticSegmentation(T.SegformerConfig(num_labels=150, **cfg))), kind="params", config=cfg)
row("Segformer-default", params_only(lambda: T.SegformerForSemanticSegmentation(T.SegformerConfig())), kind="params_default")
row("Segformer-b0", segformer(B["b0"], 8, 512, 150), kind="train_fp32_adamw", batch=8, size=512, classes=150)
row("Segformer-b2", segformer(B["b2"], 4, 640, 19), kind="train_fp32_adamw", batch=4, size=640, classes=19)

def ved(enc, dec, batch, img, cap, amp=torch.float16):
    def fn():
        cfg = T.VisionEncoderDecoderConfig.from_encoder_decoder_configs(T.ViTConfig(**enc), T.GPT2Config(**dec))
        cfg.decoder_start_token_id = dec["vocab_size"] - 1; cfg.pad_token_id = dec["vocab_size"] - 1
        m = T.VisionEncoderDecoderModel(config=cfg).to(dev).train()
        n = count(m)
        if batch == 0:
            return {"params": n, "encoder": count(m.encoder), "decoder": count(m.decoder)}
        o = torch.optim.AdamW(m.parameters(), lr=5e-5)
        scaler = torch.amp.GradScaler("cuda")
        for _ in range(2):
            x = torch.randn(batch, 3, img, img, device=dev); y = torch.randint(0, dec["vocab_size"] - 1, (batch, cap), device=dev)
            with torch.autocast("cuda", dtype=amp):
                out = m(pixel_values=x, labels=y)
            o.zero_grad(); scaler.scale(out.loss).backward(); scaler.step(o); scaler.update()
        return {"params": n, "encoder": count(m.encoder), "decoder": count(m.decoder)}
    return fn

vit_b = dict(image_size=224, patch_size=16, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)
gpt_6 = dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=6, n_head=12)
row("VisionEncoderDecoder vit-b/gpt2-6", ved(vit_b, gpt_6, 0, 224, 64), kind="params")
vit_s = dict(image_size=384, patch_size=16, hidden_size=384, num_hidden_layers=8, num_attention_heads=6, intermediate_size=1536)
gpt_4 = dict(vocab_size=32000, n_positions=512, n_embd=512, n_layer=4, n_head=8)
row("VisionEncoderDecoder vit-s384/gpt2-4x512", ved(vit_s, gpt_4, 24, 384, 48), kind="train_fp16_adamw", batch=24, image=384, caption=48,
    encoder=vit_s, decoder=gpt_4)
row("VisionEncoderDecoder vit-b/gpt2-6", ved(vit_b, gpt_6, 16, 224, 40), kind="train_fp16_adamw", batch=16, image=224, caption=40)

out = sys.argv[1] if len(sys.argv) > 1 else None
if out:
    json.dump(res, open(out, "w"), indent=1)
