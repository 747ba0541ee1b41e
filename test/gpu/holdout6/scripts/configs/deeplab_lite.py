# mmseg-style config: plain Python dicts with a `type` key, read by train_py_config_registry.py
num_classes = 19
crop_size = (512, 1024)

model = dict(
    type="EncoderDecoder",
    backbone=dict(type="ResNetBackbone", depth=50, out_stride=8),
    decode_head=dict(type="ASPPHead", in_channels=2048, channels=256, dilations=(1, 12, 24, 36),
                     num_classes=num_classes, dropout=0.1),
    auxiliary_head=dict(type="FCNHead", in_channels=1024, channels=256, num_classes=num_classes, loss_weight=0.4),
)
data = dict(samples_per_gpu=4, workers_per_gpu=2, crop_size=crop_size)
optimizer = dict(type="SGD", lr=0.01, momentum=0.9, weight_decay=5e-4)
runner = dict(max_iters=6)
fp16 = dict(loss_scale=512.0)
