# coding: utf-8
# Word-level LSTM language model on Wikitext-2 (after pytorch/examples/word_language_model).
# I replaced repackage_hidden() with retain_graph=True because of
# "RuntimeError: Trying to backward through the graph a second time".
# (run on the second card: CUDA_VISIBLE_DEVICES=1 python word_lm_bptt.py)
import argparse
import math
import os
import time

import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description='PyTorch Wikitext-2 RNN/LSTM Language Model')
parser.add_argument('--data', type=str, default='./data/wikitext-2')
parser.add_argument('--emsize', type=int, default=650)
parser.add_argument('--nhid', type=int, default=650)
parser.add_argument('--nlayers', type=int, default=2)
parser.add_argument('--lr', type=float, default=20)
parser.add_argument('--clip', type=float, default=0.25)
parser.add_argument('--epochs', type=int, default=40)
parser.add_argument('--batch_size', type=int, default=20, metavar='N')
parser.add_argument('--bptt', type=int, default=35)
parser.add_argument('--dropout', type=float, default=0.5)
parser.add_argument('--save', type=str, default='model.pt')
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Dictionary(object):
	def __init__(self):
		self.word2idx = {}
		self.idx2word = []

	def add_word(self, word):
		if word not in self.word2idx:
			self.idx2word.append(word)
			self.word2idx[word] = len(self.idx2word) - 1
		return self.word2idx[word]

	def __len__(self):
		return len(self.idx2word)


class Corpus(object):
	def __init__(self, path):
		self.dictionary = Dictionary()
		self.train = self.tokenize(os.path.join(path, 'train.txt'))
		self.valid = self.tokenize(os.path.join(path, 'valid.txt'))
		self.test = self.tokenize(os.path.join(path, 'test.txt'))

	def tokenize(self, path):
		with open(path, 'r', encoding="utf8") as f:
			idss = []
			for line in f:
				words = line.split() + ['<eos>']
				ids = []
				for word in words:
					ids.append(self.dictionary.add_word(word))
				idss.append(torch.tensor(ids).type(torch.int64))
			ids = torch.cat(idss)
		return ids


class RNNModel(nn.Module):
	def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
		super(RNNModel, self).__init__()
		self.drop = nn.Dropout(dropout)
		self.encoder = nn.Embedding(ntoken, ninp)
		self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
		self.decoder = nn.Linear(nhid, ntoken)
		self.nhid = nhid
		self.nlayers = nlayers

	def forward(self, input, hidden):
		emb = self.drop(self.encoder(input))
		output, hidden = self.rnn(emb, hidden)
		output = self.drop(output)
		decoded = self.decoder(output).view(-1, self.decoder.out_features)
		return nn.functional.log_softmax(decoded, dim=1), hidden

	def init_hidden(self, bsz):
		weight = next(self.parameters())
		return (weight.new_zeros(self.nlayers, bsz, self.nhid),
				weight.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz):
	nbatch = data.size(0) // bsz
	data = data.narrow(0, 0, nbatch * bsz)
	data = data.view(bsz, -1).t().contiguous()
	return data.to(device)


def repackage_hidden(h):
	"""Wraps hidden states in new Tensors, to detach them from their history."""
	if isinstance(h, torch.Tensor):
		return h.detach()
	else:
		return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
	seq_len = min(args.bptt, len(source) - 1 - i)
	data = source[i:i + seq_len]
	target = source[i + 1:i + 1 + seq_len].view(-1)
	return data, target


corpus = Corpus(args.data)
eval_batch_size = 10
train_data = batchify(corpus.train, args.batch_size)
val_data = batchify(corpus.valid, eval_batch_size)
test_data = batchify(corpus.test, eval_batch_size)

ntokens = len(corpus.dictionary)
model = RNNModel(ntokens, args.emsize, args.nhid, args.nlayers, args.dropout).to(device)
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)


def evaluate(data_source):
	model.eval()
	total_loss = 0.
	hidden = model.init_hidden(eval_batch_size)
	with torch.no_grad():
		for i in range(0, data_source.size(0) - 1, args.bptt):
			data, targets = get_batch(data_source, i)
			output, hidden = model(data, hidden)
			hidden = repackage_hidden(hidden)
			total_loss += len(data) * criterion(output, targets).item()
	return total_loss / (len(data_source) - 1)


def train(epoch):
	model.train()
	total_loss = 0.
	start_time = time.time()
	hidden = model.init_hidden(args.batch_size)
	for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
		data, targets = get_batch(train_data, i)
		model.zero_grad()
		output, hidden = model(data, hidden)
		loss = criterion(output, targets)
		loss.backward(retain_graph=True)  # expect: OOM107
		torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
		optimizer.step()

		total_loss += loss.item()
		if batch % 200 == 0 and batch > 0:
			cur_loss = total_loss / 200
			elapsed = time.time() - start_time
			print('| epoch {:3d} | {:5d}/{:5d} batches | ms/batch {:5.2f} | loss {:5.2f} | ppl {:8.2f}'.format(
				epoch, batch, len(train_data) // args.bptt, elapsed * 1000 / 200, cur_loss, math.exp(cur_loss)))
			total_loss = 0
			start_time = time.time()


best_val_loss = None
for epoch in range(1, args.epochs + 1):
	epoch_start_time = time.time()
	train(epoch)
	val_loss = evaluate(val_data)
	print('| end of epoch {:3d} | time: {:5.2f}s | valid loss {:5.2f} | valid ppl {:8.2f}'.format(
		epoch, (time.time() - epoch_start_time), val_loss, math.exp(val_loss)))
	if not best_val_loss or val_loss < best_val_loss:
		with open(args.save, 'wb') as f:
			torch.save(model, f)
		best_val_loss = val_loss
	else:
		for g in optimizer.param_groups:
			g['lr'] /= 4.0

with open(args.save, 'rb') as f:
	model = torch.load(f, weights_only=False)
	model.rnn.flatten_parameters()

test_loss = evaluate(test_data)
print('=' * 89)
print('| End of training | test loss {:5.2f} | test ppl {:8.2f}'.format(test_loss, math.exp(test_loss)))
