# -*- coding: utf-8 -*-
"""
基于注意力机制的 seq2seq 中英翻译模型（课程作业版）

数据格式：每行 "英文\t中文"，例如 data/eng-cmn.txt
训练时使用 teacher forcing（按一定概率把真实的目标词作为下一步输入）。

用法:
    python seq2seq_nmt_attention.py --epochs 30 --batch-size 64
"""
from __future__ import unicode_literals, print_function, division

import argparse
import math
import os
import random
import re
import time
import unicodedata
from io import open

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

# 实验室服务器上固定用 0 号卡
os.environ["CUDA_VISIBLE_DEVICES"] = "0"  # expect: OOM105

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

SOS_token = 0
EOS_token = 1
MAX_LENGTH = 20


# ---------------------------------------------------------------------------
# 数据处理
# ---------------------------------------------------------------------------
class Lang:
    """词表：记录 word -> index 以及词频。"""

    def __init__(self, name):
        self.name = name
        self.word2index = {}
        self.word2count = {}
        self.index2word = {0: "SOS", 1: "EOS"}
        self.n_words = 2  # 包含 SOS 和 EOS

    def add_sentence(self, sentence):
        for word in sentence.split(" "):
            self.add_word(word)

    def add_word(self, word):
        if word not in self.word2index:
            self.word2index[word] = self.n_words
            self.word2count[word] = 1
            self.index2word[self.n_words] = word
            self.n_words += 1
        else:
            self.word2count[word] += 1


def unicode_to_ascii(s):
    return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")


def normalize_eng(s):
    s = unicode_to_ascii(s.lower().strip())
    s = re.sub(r"([.!?])", r" \1", s)
    s = re.sub(r"[^a-zA-Z!?]+", r" ", s)
    return s.strip()


def normalize_cmn(s):
    # 中文按字切分，简单粗暴但对作业足够了
    s = re.sub(r"\s+", "", s.strip())
    return " ".join(list(s))


def read_langs(path, reverse=False):
    print("读取数据 ...")
    lines = open(path, encoding="utf-8").read().strip().split("\n")
    pairs = []
    for l in lines:
        parts = l.split("\t")
        if len(parts) < 2:
            continue
        pairs.append([normalize_eng(parts[0]), normalize_cmn(parts[1])])
    if reverse:
        pairs = [list(reversed(p)) for p in pairs]
        input_lang, output_lang = Lang("cmn"), Lang("eng")
    else:
        input_lang, output_lang = Lang("eng"), Lang("cmn")
    return input_lang, output_lang, pairs


def filter_pairs(pairs):
    return [p for p in pairs
            if len(p[0].split(" ")) < MAX_LENGTH and len(p[1].split(" ")) < MAX_LENGTH]


def prepare_data(path, reverse=False):
    input_lang, output_lang, pairs = read_langs(path, reverse)
    print("共读取 %s 个句对" % len(pairs))
    pairs = filter_pairs(pairs)
    print("过滤后剩余 %s 个句对" % len(pairs))
    for pair in pairs:
        input_lang.add_sentence(pair[0])
        output_lang.add_sentence(pair[1])
    print("词表大小:", input_lang.name, input_lang.n_words, output_lang.name, output_lang.n_words)
    return input_lang, output_lang, pairs


def indexes_from_sentence(lang, sentence):
    return [lang.word2index[word] for word in sentence.split(" ")]


def tensor_from_sentence(lang, sentence):
    indexes = indexes_from_sentence(lang, sentence)
    indexes.append(EOS_token)
    return torch.tensor(indexes, dtype=torch.long, device=device).view(1, -1)


def get_dataloader(path, batch_size):
    input_lang, output_lang, pairs = prepare_data(path)
    n = len(pairs)
    input_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
    target_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
    for idx, (inp, tgt) in enumerate(pairs):
        inp_ids = indexes_from_sentence(input_lang, inp)
        tgt_ids = indexes_from_sentence(output_lang, tgt)
        inp_ids.append(EOS_token)
        tgt_ids.append(EOS_token)
        input_ids[idx, :len(inp_ids)] = inp_ids
        target_ids[idx, :len(tgt_ids)] = tgt_ids
    train_data = TensorDataset(torch.LongTensor(input_ids).to(device),
                               torch.LongTensor(target_ids).to(device))
    sampler = RandomSampler(train_data)
    loader = DataLoader(train_data, sampler=sampler, batch_size=batch_size)
    return input_lang, output_lang, pairs, loader


# ---------------------------------------------------------------------------
# 模型
# ---------------------------------------------------------------------------
class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward_step(self, input, hidden, encoder_outputs):
        """单步解码：返回 (log 概率, 新隐状态, 注意力权重)。"""
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return F.log_softmax(output, dim=-1), hidden, attn_weights


def train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer,
                criterion, teacher_forcing_ratio=0.5):
    """一个 epoch 的训练。逐时间步解码，loss 在时间步上累加后统一反向传播。"""
    total_loss = 0.0
    for input_tensor, target_tensor in dataloader:
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()

        encoder_outputs, encoder_hidden = encoder(input_tensor)
        batch_size, target_length = target_tensor.size()

        decoder_input = torch.full((batch_size, 1), SOS_token, dtype=torch.long, device=device)
        decoder_hidden = encoder_hidden
        use_teacher_forcing = random.random() < teacher_forcing_ratio

        loss = 0
        for di in range(target_length):
            decoder_output, decoder_hidden, _ = decoder.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            loss += criterion(decoder_output.squeeze(1), target_tensor[:, di])
            if use_teacher_forcing:
                # Teacher forcing: 下一步输入用真实目标词
                decoder_input = target_tensor[:, di].unsqueeze(1)
            else:
                # 否则用模型自己的预测（detach 掉，不让梯度穿过采样）
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()

        loss.backward()
        nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
        nn.utils.clip_grad_norm_(decoder.parameters(), 1.0)
        encoder_optimizer.step()
        decoder_optimizer.step()

        # 注意：这里只累加 python float，不会把计算图留下来
        total_loss += loss.item() / target_length

    return total_loss / len(dataloader)


def as_minutes(s):
    m = math.floor(s / 60)
    s -= m * 60
    return "%dm %ds" % (m, s)


def time_since(since, percent):
    now = time.time()
    s = now - since
    es = s / percent
    rs = es - s
    return "%s (- %s)" % (as_minutes(s), as_minutes(rs))


def show_plot(points, fname="loss.png"):
    plt.figure()
    fig, ax = plt.subplots()
    loc = ticker.MultipleLocator(base=0.2)
    ax.yaxis.set_major_locator(loc)
    plt.plot(points)
    plt.savefig(fname)
    plt.close("all")


def train(train_dataloader, encoder, decoder, n_epochs, learning_rate=0.001,
          print_every=5, plot_every=5):
    start = time.time()
    plot_losses = []
    print_loss_total = 0.0
    plot_loss_total = 0.0

    encoder_optimizer = optim.Adam(encoder.parameters(), lr=learning_rate)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=learning_rate)
    criterion = nn.NLLLoss()

    for epoch in range(1, n_epochs + 1):
        avg = train_epoch(train_dataloader, encoder, decoder,
                          encoder_optimizer, decoder_optimizer, criterion)
        print_loss_total += avg
        plot_loss_total += avg

        if epoch % print_every == 0:
            print_loss_avg = print_loss_total / print_every
            print_loss_total = 0
            print("%s (%d %d%%) %.4f" % (time_since(start, epoch / n_epochs),
                                         epoch, epoch / n_epochs * 100, print_loss_avg))

        if epoch % plot_every == 0:
            plot_loss_avg = plot_loss_total / plot_every
            plot_losses.append(plot_loss_avg)
            plot_loss_total = 0

    show_plot(plot_losses)


# ---------------------------------------------------------------------------
# 推理（贪心解码）
# ---------------------------------------------------------------------------
@torch.no_grad()
def evaluate(encoder, decoder, sentence, input_lang, output_lang):
    input_tensor = tensor_from_sentence(input_lang, sentence)
    encoder_outputs, encoder_hidden = encoder(input_tensor)

    decoder_input = torch.tensor([[SOS_token]], device=device)
    decoder_hidden = encoder_hidden
    decoded_words = []
    attentions = []
    for di in range(MAX_LENGTH):
        decoder_output, decoder_hidden, attn = decoder.forward_step(
            decoder_input, decoder_hidden, encoder_outputs)
        attentions.append(attn)
        _, topi = decoder_output.topk(1)
        idx = topi.item()
        if idx == EOS_token:
            decoded_words.append("<EOS>")
            break
        decoded_words.append(output_lang.index2word[idx])
        decoder_input = topi.squeeze(-1).detach()
    return decoded_words, torch.cat(attentions, dim=1)


def evaluate_randomly(encoder, decoder, pairs, input_lang, output_lang, n=10):
    encoder.eval()
    decoder.eval()
    for i in range(n):
        pair = random.choice(pairs)
        print(">", pair[0])
        print("=", pair[1])
        output_words, _ = evaluate(encoder, decoder, pair[0], input_lang, output_lang)
        print("<", " ".join(output_words))
        print("")


def show_attention(input_sentence, output_words, attentions, fname):
    fig = plt.figure()
    ax = fig.add_subplot(111)
    cax = ax.matshow(attentions.cpu().numpy(), cmap="bone")
    fig.colorbar(cax)
    ax.set_xticklabels([""] + input_sentence.split(" ") + ["<EOS>"], rotation=90)
    ax.set_yticklabels([""] + output_words)
    ax.xaxis.set_major_locator(ticker.MultipleLocator(1))
    ax.yaxis.set_major_locator(ticker.MultipleLocator(1))
    plt.savefig(fname)
    plt.close(fig)


def bleu1(candidate, reference):
    """非常粗糙的 unigram 精确率，只用来看趋势。"""
    cand = candidate.split(" ")
    ref = set(reference.split(" "))
    if not cand:
        return 0.0
    return sum(1 for w in cand if w in ref) / len(cand)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/eng-cmn.txt")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    input_lang, output_lang, pairs, train_dataloader = get_dataloader(args.data, args.batch_size)

    encoder = EncoderRNN(input_lang.n_words, args.hidden).to(device)
    decoder = AttnDecoderRNN(args.hidden, output_lang.n_words).to(device)

    train(train_dataloader, encoder, decoder, args.epochs, learning_rate=args.lr)

    evaluate_randomly(encoder, decoder, pairs, input_lang, output_lang)

    # 在 200 个随机句子上算一个粗略的 BLEU-1
    scores = []
    for pair in random.sample(pairs, min(200, len(pairs))):
        words, _ = evaluate(encoder, decoder, pair[0], input_lang, output_lang)
        scores.append(bleu1(" ".join(w for w in words if w != "<EOS>"), pair[1]))
    print("BLEU-1 (粗略): %.3f" % (sum(scores) / len(scores)))

    sentence = random.choice(pairs)[0]
    words, attentions = evaluate(encoder, decoder, sentence, input_lang, output_lang)
    show_attention(sentence, words, attentions[0], "attention.png")

    torch.save({"encoder": encoder.state_dict(), "decoder": decoder.state_dict()}, "nmt.pt")


if __name__ == "__main__":
    main()
