"""Shared settings for the CTR models (imported as `from configs.dcn_cfg import CFG`)."""
from types import SimpleNamespace

# Criteo-like: 13 dense features, 26 categorical fields with hashed vocabularies
CARDINALITIES = [
    1460, 583, 2_000_000, 800_000, 305, 24, 12517, 633, 3, 93145, 5683, 1_500_000, 3194, 27, 14992,
    1_000_000, 10, 5652, 2173, 4, 1_200_000, 18, 15, 286181, 105, 142572,
]

CFG = SimpleNamespace(
    num_dense=13,
    cardinalities=CARDINALITIES,
    embed_dim=16,
    cross_layers=3,
    low_rank=64,
    deep_layers=[1024, 1024, 512],
    dropout=0.1,
    batch_size=16384,
    lr=1e-3,
    steps=8,
)
