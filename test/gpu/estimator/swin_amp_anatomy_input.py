import timm, torch, torch.nn.functional as F
model = timm.create_model("swin_tiny_patch4_window7_224", num_classes=10).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(2):
    x = torch.randn(64, 3, 224, 224, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
