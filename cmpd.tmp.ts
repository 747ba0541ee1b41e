import { estimateText } from './test/estimator/helpers';
import * as fs from 'node:fs';
const rows = JSON.parse(fs.readFileSync('/work/.device/17/detection.log', 'utf8').split('\n').filter((l) => l.startsWith('{"model')).map((l) => l).join('\n').split('\n').map((l) => l).length ? '[' + fs.readFileSync('/work/.device/17/detection.log', 'utf8').split('\n').filter((l) => l.startsWith('{"model')).join(',') + ']' : '[]');
(async () => {
for (const r of rows) {
  if (r.error || !r.peak) continue;
  const lines = ['import torch', `from torchvision.models.detection import ${r.model}`,
    `model = ${r.model}(weights=None, weights_backbone=None, num_classes=${r.num_classes}).cuda()`, `BATCH = ${r.batch}`];
  if (r.mode === 'train') {
    lines.push('opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)', 'model.train()', 'for step in range(3):',
      `    images = [torch.rand(3, ${r.h}, ${r.w}, device="cuda") for _ in range(BATCH)]`, '    losses = model(images, targets)', '    loss = sum(losses.values())',
      '    opt.zero_grad()', '    loss.backward()', '    opt.step()');
  } else {
    lines.push('model.eval()', 'with torch.no_grad():', '    for step in range(3):', `        out = model([torch.rand(3, ${r.h}, ${r.w}, device="cuda") for _ in range(BATCH)])`);
  }
  const res = await estimateText(lines.join('\n'), '/tmp/x.py');
  const est = res.peakAllocated / 2 ** 20;
  console.log(`${r.model} ${r.mode} B${r.batch} ${r.h}x${r.w}`.padEnd(52), 'meas', r.peak, 'est', est.toFixed(0), ((est / r.peak - 1) * 100).toFixed(1) + '%', res.peakPhase, res.unresolved?.reason?.slice(0, 60) ?? '', res.detected.parameters === r.params ? '' : 'params ' + res.detected.parameters + '!=' + r.params);
}
})();
