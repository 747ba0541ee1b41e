// Generates realistic training scripts of a given size for the benchmarks: a mix of model classes, training
// loops, evaluation functions and helpers, with a few leaks in each block so that the rules have work to do.
export function generateTrainingScript(targetLines: number, seed = 1): string {
  const blocks: string[] = [
    'import os\nimport math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom torch.utils.data import DataLoader\n',
  ];
  let index = 0;
  let lines = 6;
  while (lines < targetLines) {
    const n = seed * 1000 + index++;
    const block = `
class Block${n}(nn.Module):
    """Residual MLP block number ${n} (生成的测试代码 🧪)."""

    def __init__(self, dim=256, hidden=1024):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        h = self.fc2(F.gelu(self.fc1(self.norm(x))))
        return x + self.drop(h)


def train_epoch_${n}(model, loader, optimizer, criterion, device="cuda"):
    model.train()
    losses = []
    total = 0.0
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss)
        total += loss.item()
        if step % 100 == 0:
            print(f"step {step}: {total / (step + 1):.4f}")
    return losses


def evaluate_${n}(model, loader, device="cuda"):
    model.eval()
    correct = 0
    seen = 0
    for x, y in loader:
        out = model(x.to(device))
        correct += (out.argmax(-1) == y.to(device)).sum().item()
        seen += y.numel()
    return correct / max(seen, 1)


@torch.no_grad()
def predict_${n}(model, loader, device="cuda"):
    model.eval()
    outputs = []
    for x, _ in loader:
        outputs.append(model(x.to(device)).softmax(-1).cpu())
    return torch.cat(outputs)


BLOCK_${n}_WIDTH = 256  # module-level settings, as scripts keep them
block_${n}_history = []
`;
    blocks.push(block);
    lines += block.split('\n').length - 1;
  }
  // A script ends with its entry point: module-level code at the end of the file.
  blocks.push(`
if __name__ == "__main__":
    model = Block${seed * 1000}().cuda()
    train_epoch_${seed * 1000}(model, None, torch.optim.AdamW(model.parameters()), nn.CrossEntropyLoss())
`);
  return blocks.join('');
}

/** A one-character edit of one kind at one place, made and then undone. */
export interface EditSite { kind: string; line: number; character: number; original: string; replacement: string }

/** Where a user types, by kind: a module-level setting, a function body, the training loop, a docstring, the end of the file. */
export function editSites(lines: string[]): EditSite[] {
  const sites: EditSite[] = [];
  lines.forEach((line, i) => {
    if (/^BLOCK_\d+_WIDTH = 256/.test(line)) sites.push({ kind: 'module level', line: i, character: line.indexOf('256') + 1, original: '5', replacement: '6' });
    else if (line.includes('total += loss.item()')) sites.push({ kind: 'training loop', line: i, character: line.indexOf('total') + 3, original: 'a', replacement: 'x' });
    else if (line.includes('seen = 0')) sites.push({ kind: 'function body', line: i, character: line.indexOf('seen') + 1, original: 'e', replacement: 'a' });
    else if (line.includes('"""Residual MLP block')) sites.push({ kind: 'docstring', line: i, character: line.indexOf('MLP') + 1, original: 'L', replacement: 'K' });
  });
  // The end of the file: the entry point's last line (module-level code).
  const last = lines.length - 2;
  sites.push({ kind: 'end of file', line: last, character: lines[last]!.length - 1, original: ')', replacement: ')' });
  return sites;
}

/** The p-th percentile of ascending figures (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
