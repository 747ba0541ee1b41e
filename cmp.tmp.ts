import { estimateText } from './test/estimator/helpers';
import * as fs from 'node:fs';
const rows = JSON.parse(fs.readFileSync('/work/.device/17/wav2vec2.json', 'utf8')).runs;
(async () => {
for (const r of rows) {
  const fp16 = r.amp === 'fp16', bf16 = r.amp === 'bf16';
  const cfg = Object.entries({ vocab_size: 32, mask_time_prob: 0.05, pad_token_id: 0, ...r.cfg }).map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : v === true ? 'True' : v === false ? 'False' : v}`).join(', ');
  const cls = r.family === 'hubert' ? 'Hubert' : 'Wav2Vec2';
  const lines = ['import torch', `from transformers import ${cls}Config, ${cls}ForCTC`, `model = ${cls}ForCTC(${cls}Config(${cfg}))`];
  if (r.freeze) lines.push('model.freeze_feature_encoder()');
  if (r.ckpt && r.mode === 'train') lines.push('model.gradient_checkpointing_enable()');
  lines.push('model.cuda()');
  const ac = fp16 ? '    with torch.autocast("cuda", dtype=torch.float16):' : bf16 ? '    with torch.autocast("cuda", dtype=torch.bfloat16):' : '    if True:';
  if (r.mode === 'train') {
    lines.push('opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)');
    lines.push('for step in range(3):', `    audio = torch.randn(${r.batch}, ${r.samples}, device="cuda")`, `    labels = torch.randint(1, 32, (${r.batch}, 160), device="cuda")`,
      ac, '        loss = model(input_values=audio, labels=labels).loss', '    opt.zero_grad()', '    loss.backward()', '    opt.step()');
  } else {
    lines.push('model.eval()', 'with torch.no_grad():', '  for step in range(3):', `    audio = torch.randn(${r.batch}, ${r.samples}, device="cuda")`, ac.replace('    ', '    '), '        logits = model(input_values=audio).logits');
  }
  const res = await estimateText(lines.join('\n'), '/tmp/x.py');
  const est = res.peakAllocated / 2 ** 20;
  console.log(r.label.padEnd(32), 'meas', r.peak, 'est', est.toFixed(0), ((est / r.peak - 1) * 100).toFixed(1) + '%', res.peakPhase, res.unresolved?.reason ?? '', 'params', res.detected.parameters === r.params ? 'ok' : res.detected.parameters + '!=' + r.params);
}
})();
