// F.multi_head_attention_forward called directly (CLIP's attention pooling over a CNN's feature map): the forward is
// followed, and keeps what nn.MultiheadAttention keeps for the same query over the same keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';
import type { LayerNetSpec } from '../../server/src/estimator/types';

const script = (pool: string, attend: string): string => `import torch
import torch.nn as nn
import torch.nn.functional as F

class Pool(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
${pool}
        self.heads = heads

    def forward(self, x):
        x = x.flatten(start_dim=2).permute(2, 0, 1)
        x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0)
${attend}
        return x.squeeze(0)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 256, 3, stride=4, padding=1)
        self.pool = Pool(256, 8)
        self.head = nn.Linear(256, 10)

    def forward(self, x):
        return self.head(self.pool(self.conv(x)))

model = Net().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    x = torch.randn(32, 3, 64, 64, device="cuda")
    y = torch.randint(0, 10, (32,), device="cuda")
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
`;

const functional = script(`        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.c_proj = nn.Linear(dim, dim)`, `        x, _ = F.multi_head_attention_forward(
            query=x[:1], key=x, value=x, embed_dim_to_check=x.shape[-1], num_heads=self.heads,
            q_proj_weight=self.q_proj.weight, k_proj_weight=self.k_proj.weight, v_proj_weight=self.v_proj.weight,
            in_proj_weight=None, in_proj_bias=torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]),
            bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0.0,
            out_proj_weight=self.c_proj.weight, out_proj_bias=self.c_proj.bias,
            use_separate_proj_weight=True, training=self.training, need_weights=False)`);
const module = script(`        self.attn = nn.MultiheadAttention(dim, heads)`, `        x, _ = self.attn(x[:1], x, x, need_weights=False)`);

test('F.multi_head_attention_forward is followed and keeps what nn.MultiheadAttention keeps', async () => {
  const viaFunction = await estimateText(functional, '/tmp/functional_pool.py');
  const viaModule = await estimateText(module, '/tmp/module_pool.py');
  const spec = viaFunction.config.model as LayerNetSpec;
  assert.equal(spec.kind, 'layers');
  assert.equal(spec.forwardUntraced, undefined);
  assert.ok(!viaFunction.assumptions.some((a) => a.includes('could not be followed')), viaFunction.assumptions.join('\n'));
  // The same parameters (four 256 x 256 projections with biases), and the same activations.
  assert.equal(viaFunction.detected.parameters, viaModule.detected.parameters);
  assert.equal(viaFunction.breakdown.activations, viaModule.breakdown.activations);
});
