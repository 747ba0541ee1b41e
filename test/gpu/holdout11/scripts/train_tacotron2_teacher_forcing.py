"""Tacotron 2 (text -> mel spectrogram) trained with teacher forcing.

The decoder is an autoregressive Python loop over mel frames (prenet -> attention LSTM -> location-
sensitive attention -> decoder LSTM -> frame + stop-token projections), then a convolutional postnet.
"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

HPARAMS = dict(
    n_symbols=148, symbols_embedding_dim=512,
    encoder_n_convolutions=3, encoder_kernel_size=5, encoder_embedding_dim=512,
    n_mel_channels=80, n_frames_per_step=1,
    prenet_dim=256, attention_rnn_dim=1024, decoder_rnn_dim=1024,
    attention_dim=128, attention_location_n_filters=32, attention_location_kernel_size=31,
    postnet_embedding_dim=512, postnet_kernel_size=5, postnet_n_convolutions=5,
    batch_size=32, max_text_len=160, max_mel_len=600,
    learning_rate=1e-3, weight_decay=1e-6, grad_clip_thresh=1.0, iters=3,
)
hp = SimpleNamespace(**HPARAMS)


def conv_norm(c_in, c_out, k, act=True):
    layers = [nn.Conv1d(c_in, c_out, k, padding=(k - 1) // 2), nn.BatchNorm1d(c_out)]
    if act:
        layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([
            nn.Sequential(conv_norm(hp.encoder_embedding_dim, hp.encoder_embedding_dim, hp.encoder_kernel_size,
                                    act=False), nn.ReLU(), nn.Dropout(0.5))
            for _ in range(hp.encoder_n_convolutions)])
        self.lstm = nn.LSTM(hp.encoder_embedding_dim, hp.encoder_embedding_dim // 2, 1, batch_first=True,
                            bidirectional=True)

    def forward(self, x, lengths):
        for conv in self.convs:
            x = conv(x)
        x = x.transpose(1, 2)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return out


class LocationSensitiveAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query_layer = nn.Linear(hp.attention_rnn_dim, hp.attention_dim, bias=False)
        self.memory_layer = nn.Linear(hp.encoder_embedding_dim, hp.attention_dim, bias=False)
        self.v = nn.Linear(hp.attention_dim, 1, bias=False)
        self.location_conv = nn.Conv1d(2, hp.attention_location_n_filters, hp.attention_location_kernel_size,
                                       padding=(hp.attention_location_kernel_size - 1) // 2, bias=False)
        self.location_dense = nn.Linear(hp.attention_location_n_filters, hp.attention_dim, bias=False)

    def forward(self, query, memory, processed_memory, attn_cat, mask):
        pq = self.query_layer(query.unsqueeze(1))
        loc = self.location_dense(self.location_conv(attn_cat).transpose(1, 2))
        energies = self.v(torch.tanh(pq + loc + processed_memory)).squeeze(-1)
        energies = energies.masked_fill(mask, -1e9)
        weights = F.softmax(energies, dim=1)
        context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)
        return context, weights


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        n_mel = hp.n_mel_channels * hp.n_frames_per_step
        self.prenet = nn.ModuleList([nn.Linear(n_mel, hp.prenet_dim, bias=False),
                                     nn.Linear(hp.prenet_dim, hp.prenet_dim, bias=False)])
        self.attention_rnn = nn.LSTMCell(hp.prenet_dim + hp.encoder_embedding_dim, hp.attention_rnn_dim)
        self.attention = LocationSensitiveAttention()
        self.decoder_rnn = nn.LSTMCell(hp.attention_rnn_dim + hp.encoder_embedding_dim, hp.decoder_rnn_dim)
        self.linear_projection = nn.Linear(hp.decoder_rnn_dim + hp.encoder_embedding_dim, n_mel)
        self.gate_layer = nn.Linear(hp.decoder_rnn_dim + hp.encoder_embedding_dim, 1)

    def run_prenet(self, x):
        for lin in self.prenet:
            x = F.dropout(F.relu(lin(x)), p=0.5, training=True)  # dropout also at inference, as in the paper
        return x

    def forward(self, memory, mels, memory_lengths):
        B, T_in, _ = memory.shape
        go = memory.new_zeros(B, 1, hp.n_mel_channels)
        dec_inputs = torch.cat([go, mels.transpose(1, 2)], dim=1)[:, :-1]
        dec_inputs = self.run_prenet(dec_inputs)
        mask = torch.arange(T_in, device=memory.device)[None] >= memory_lengths[:, None]
        processed_memory = self.attention.memory_layer(memory)

        att_h = memory.new_zeros(B, hp.attention_rnn_dim)
        att_c = memory.new_zeros(B, hp.attention_rnn_dim)
        dec_h = memory.new_zeros(B, hp.decoder_rnn_dim)
        dec_c = memory.new_zeros(B, hp.decoder_rnn_dim)
        attn_w = memory.new_zeros(B, T_in)
        attn_cum = memory.new_zeros(B, T_in)
        context = memory.new_zeros(B, hp.encoder_embedding_dim)

        mel_outputs, gate_outputs, alignments = [], [], []
        for t in range(dec_inputs.size(1)):
            x = torch.cat([dec_inputs[:, t], context], dim=-1)
            att_h, att_c = self.attention_rnn(x, (att_h, att_c))
            att_h = F.dropout(att_h, 0.1, self.training)
            attn_cat = torch.stack([attn_w, attn_cum], dim=1)
            context, attn_w = self.attention(att_h, memory, processed_memory, attn_cat, mask)
            attn_cum = attn_cum + attn_w
            dec_h, dec_c = self.decoder_rnn(torch.cat([att_h, context], dim=-1), (dec_h, dec_c))
            dec_h = F.dropout(dec_h, 0.1, self.training)
            hc = torch.cat([dec_h, context], dim=-1)
            mel_outputs.append(self.linear_projection(hc))
            gate_outputs.append(self.gate_layer(hc).squeeze(1))
            alignments.append(attn_w)
        mel = torch.stack(mel_outputs, dim=2)          # (B, n_mel, T_out)
        gate = torch.stack(gate_outputs, dim=1)        # (B, T_out)
        return mel, gate, torch.stack(alignments, dim=1)


class Postnet(nn.Module):
    def __init__(self):
        super().__init__()
        e, k = hp.postnet_embedding_dim, hp.postnet_kernel_size
        chans = [hp.n_mel_channels] + [e] * (hp.postnet_n_convolutions - 1) + [hp.n_mel_channels]
        self.convs = nn.ModuleList(
            conv_norm(chans[i], chans[i + 1], k, act=i < hp.postnet_n_convolutions - 1)
            for i in range(hp.postnet_n_convolutions))

    def forward(self, x):
        for conv in self.convs:
            x = F.dropout(conv(x), 0.5, self.training)
        return x


class Tacotron2(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(hp.n_symbols, hp.symbols_embedding_dim)
        self.encoder, self.decoder, self.postnet = Encoder(), Decoder(), Postnet()

    def forward(self, text, text_lengths, mels):
        memory = self.encoder(self.embedding(text).transpose(1, 2), text_lengths)
        mel, gate, align = self.decoder(memory, mels, text_lengths)
        return mel, mel + self.postnet(mel), gate, align


class FakeLJSpeech(Dataset):
    def __len__(self):
        return hp.batch_size * hp.iters

    def __getitem__(self, i):
        n_text = torch.randint(hp.max_text_len // 2, hp.max_text_len + 1, ()).item()
        text = torch.zeros(hp.max_text_len, dtype=torch.long)
        text[:n_text] = torch.randint(1, hp.n_symbols, (n_text,))
        n_mel = torch.randint(hp.max_mel_len // 2, hp.max_mel_len + 1, ()).item()
        mel = torch.zeros(hp.n_mel_channels, hp.max_mel_len)
        mel[:, :n_mel] = torch.randn(hp.n_mel_channels, n_mel)
        gate = torch.zeros(hp.max_mel_len)
        gate[n_mel - 1:] = 1
        return text, torch.tensor(n_text), mel, gate


def main():
    device = torch.device("cuda")
    model = Tacotron2().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=hp.learning_rate, weight_decay=hp.weight_decay, eps=1e-6)
    loader = DataLoader(FakeLJSpeech(), batch_size=hp.batch_size, shuffle=True, num_workers=2, drop_last=True)
    model.train()
    for it, (text, text_len, mel, gate) in enumerate(loader):
        text, text_len, mel, gate = text.to(device), text_len.to(device), mel.to(device), gate.to(device)
        mel_out, mel_post, gate_out, _ = model(text, text_len, mel)
        loss = F.mse_loss(mel_out, mel) + F.mse_loss(mel_post, mel) + F.binary_cross_entropy_with_logits(gate_out, gate)
        optimizer.zero_grad()
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), hp.grad_clip_thresh)
        optimizer.step()
        print(f"iter {it}: loss {loss.item():.4f} grad_norm {grad_norm.item():.2f}")


if __name__ == "__main__":
    main()
