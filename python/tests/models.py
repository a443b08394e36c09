"""Models the front end's tests compile: ordinary torch.nn.Modules, written
as people write them, nothing keyed to the front end."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GPT2Block(nn.Module):
    """LayerNorm, fused QKV with bias, causal attention written with
    matmul/softmax/masked_fill against a mask buffer, GELU (tanh),
    residuals."""

    def __init__(self, d=64, heads=4, ctx=16):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)
        self.register_buffer(
            "bias", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        h = self.heads
        q = q.view(b, t, h, c // h).transpose(1, 2)
        k = k.view(b, t, h, c // h).transpose(1, 2)
        v = v.view(b, t, h, c // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.c_proj(y)
        x = x + self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))
        return x


class TinyLM(nn.Module):
    """Token and position embeddings (nn.Embedding), a LayerNorm and a
    language-model head: what starts and ends GPT-2."""

    def __init__(self, vocab=32, d=16, ctx=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1])
        x = self.wte(ids) + self.wpe(positions)
        return self.head(self.ln_f(x))


class TiedEmbeddingLM(nn.Module):
    """An embedding tied to the output head around one hidden layer;
    returns the logits of every token, flattened to [tokens, vocab] as a
    criterion takes them."""

    def __init__(self, vocab=11, width=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.hidden = nn.Linear(width, width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.hidden(self.embed(ids)))).reshape(
            -1, self.embed.num_embeddings)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) \
            * self.weight


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaBlock(nn.Module):
    """RMSNorm by hand, RoPE rotate-half from cos/sin buffers, GQA through
    repeat_interleave, SwiGLU."""

    def __init__(self, d=64, heads=4, kv_heads=2, ffn=128, seq=16,
                 repeat="interleave"):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.repeat = repeat
        self.norm1 = RMSNorm(d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.norm2 = RMSNorm(d)
        self.w1 = nn.Linear(d, ffn, bias=False)
        self.w3 = nn.Linear(d, ffn, bias=False)
        self.w2 = nn.Linear(ffn, d, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, x):
        b, s, d = x.shape
        h = self.norm1(x)
        q = self.wq(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.wk(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        cos, sin = self.cos[:s], self.sin[:s]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        if self.repeat == "interleave":
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        else:  # transformers' repeat_kv
            k = k[:, :, None].expand(b, self.kv_heads, rep, s, self.hd) \
                .reshape(b, self.heads, s, self.hd)
            v = v[:, :, None].expand(b, self.kv_heads, rep, s, self.hd) \
                .reshape(b, self.heads, s, self.hd)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.hd)
        mask = torch.triu(torch.full((s, s), float("-inf"), dtype=x.dtype,
                                     device=x.device),
                          diagonal=1)
        p = F.softmax(scores + mask, dim=-1)
        o = (p @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.wo(o)
        h = self.norm2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class EncoderLayer(nn.Module):
    """Post-norm: fused QKV with bias, no mask, erf GELU, dropout (eval),
    nn.LayerNorm."""

    def __init__(self, d=48, heads=3, ffn=96):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.drop = nn.Dropout(0.1)
        self.norm1 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ffn)
        self.ff2 = nn.Linear(ffn, d)
        self.norm2 = nn.LayerNorm(d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        h = self.heads
        q, k, v = (z.reshape(b, t, h, d // h).permute(0, 2, 1, 3)
                   for z in (q, k, v))
        att = torch.softmax(torch.matmul(q, k.transpose(2, 3))
                            / math.sqrt(d // h), dim=-1)
        y = torch.matmul(att, v).permute(0, 2, 1, 3).reshape(b, t, d)
        x = self.norm1(x + self.drop(self.out(y)))
        return self.norm2(x + self.drop(self.ff2(F.gelu(self.ff1(x)))))


class MLPClassifier(nn.Module):
    def __init__(self, inputs=20, hidden=64, classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, classes))

    def forward(self, x):
        return F.log_softmax(self.net(x), dim=-1)


class SmallCNN(nn.Module):
    """Conv2d with padding 1, ReLU, MaxPool2d, flatten, Linear."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 4 * 4, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(torch.relu(self.conv(x))), 1))


class StridedCNN(nn.Module):
    """conv (stride 2, padding 2, dilation 2), ReLU, 3x3/2 max pool with
    padding 1, conv without bias, average pool with padding: the window
    forms the importer folds (paddings, strides, dilations, pools)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 3, stride=2, padding=2, dilation=2)
        self.pool1 = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(6, 4, 2, bias=False)
        self.pool2 = nn.AvgPool2d(2, stride=1, padding=1)

    def forward(self, x):
        y = self.pool1(torch.relu(self.conv1(x)))
        return self.pool2(self.conv2(y))


class GroupedCNN(nn.Module):
    """Depthwise 3x3 convolutions at stride 1 and 2 (MobileNet's), a
    grouped one (4 groups) with padding and dilation, a depthwise one with
    two features per channel, and a pointwise one mixing the groups back:
    each form of a grouped convolution, with and without bias."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.dw1 = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
        self.dw2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.grouped = nn.Conv2d(8, 12, 3, padding=2, dilation=2, groups=4)
        self.multiplier = nn.Conv2d(12, 24, 3, padding=1, groups=12)
        self.pointwise = nn.Conv2d(24, 6, 1)

    def forward(self, x):
        y = torch.relu(self.stem(x))
        y = torch.relu(self.dw2(torch.relu(self.dw1(y))))
        y = torch.relu(self.grouped(y))
        return self.pointwise(self.multiplier(y))


class PaddedPointwise(nn.Module):
    """A 1x1 convolution with padding 1: its border outputs read padding
    only, which ein.conv does not take."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1, padding=1)

    def forward(self, x):
        return self.conv(x)


class TopOneRouter(nn.Module):
    """Top-1 routing, as a mixture of experts picks one: router logits,
    their maximum and its index (max(dim)), the chosen expert's row of a
    table scaled by the score, plus argmax(keepdim) as a float."""

    def __init__(self, d=16, experts=6):
        super().__init__()
        self.router = nn.Linear(d, experts)
        self.table = nn.Embedding(experts, d)

    def forward(self, x):
        logits = self.router(x)
        score, expert = logits.max(-1)
        first = torch.argmax(logits, dim=-1, keepdim=True)
        return self.table(expert) * score.unsqueeze(-1) + first.to(x.dtype)


class UNetBlock(nn.Module):
    """One level of a U-Net on an image of odd size: convolutions with a
    batch norm, max pooling down, a transposed convolution up (padded back
    to the skip connection's size), the skip concatenated, and a second
    way up through nearest and bilinear interpolation."""

    def __init__(self, channels=4):
        super().__init__()
        c = channels
        self.down1 = nn.Sequential(nn.Conv2d(3, c, 3, padding=1),
                                   nn.BatchNorm2d(c), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.down2 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, padding=1),
                                   nn.ReLU())
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.fuse = nn.Conv2d(2 * c, c, 3, padding=1)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        skip = self.down1(x)
        low = self.down2(self.pool(skip))
        up = self.up(low)
        up = F.pad(up, (0, skip.shape[-1] - up.shape[-1],
                        0, skip.shape[-2] - up.shape[-2]))
        y = F.relu(self.fuse(torch.cat([skip, up], dim=1)))
        near = F.interpolate(low, scale_factor=2, mode="nearest")
        smooth = F.interpolate(near, size=skip.shape[-2:], mode="bilinear",
                               align_corners=False)
        return self.head(y) + smooth[:, :2]


class DenseMoE(nn.Module):
    """A mixture of experts written densely, as people write it to run
    without sparse kernels: a softmax router, its top-k weights
    renormalized and put into a dense [tokens, experts] gate (comparing
    the chosen indices with arange(experts), or scattering them), every
    expert run on every token and weighted by its gate."""

    def __init__(self, d=16, hidden=32, experts=4, k=2, scatter=False):
        super().__init__()
        self.k, self.scatter = k, scatter
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, hidden), nn.SiLU(),
                          nn.Linear(hidden, d)) for _ in range(experts))

    def forward(self, x):
        b, s, d = x.shape
        tokens = x.reshape(b * s, d)
        probs = F.softmax(self.router(tokens), dim=-1)
        weights, chosen = torch.topk(probs, self.k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        if self.scatter:
            gate = torch.zeros_like(probs).scatter(1, chosen, weights)
        else:
            experts = torch.arange(len(self.experts), device=x.device)
            onehot = (chosen.unsqueeze(-1) == experts).to(x.dtype)
            gate = (weights.unsqueeze(-1) * onehot).sum(dim=1)
        outs = torch.stack([e(tokens) for e in self.experts], dim=1)
        return (gate.unsqueeze(-1) * outs).sum(dim=1).reshape(b, s, d)


class EncoderDecoder(nn.Module):
    """torch.nn's own layers: an encoder of a batch-first and a
    sequence-first (pre-norm) nn.TransformerEncoderLayer over embedded
    source ids, an nn.TransformerDecoderLayer over the embedded target
    with a causal mask (float, from generate_square_subsequent_mask, or
    boolean) attending to the encoder's output, a vocabulary head."""

    def __init__(self, vocab=20, d=32, heads=4, ffn=64, bool_mask=False):
        super().__init__()
        self.bool_mask = bool_mask
        self.embed = nn.Embedding(vocab, d)
        self.first = nn.TransformerEncoderLayer(d, heads, ffn,
                                                batch_first=True)
        self.second = nn.TransformerEncoderLayer(d, heads, ffn,
                                                 norm_first=True)
        self.decoder = nn.TransformerDecoderLayer(d, heads, ffn,
                                                  batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, src, tgt):
        memory = self.first(self.embed(src))
        memory = self.second(memory.transpose(0, 1)).transpose(0, 1)
        t = tgt.shape[1]
        if self.bool_mask:
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool,
                                         device=tgt.device), diagonal=1)
        else:
            mask = nn.Transformer.generate_square_subsequent_mask(t)
        return self.out(self.decoder(self.embed(tgt), memory,
                                     tgt_mask=mask))


class PreNormBlock(nn.Module):
    """Causal self-attention and a GELU MLP, each behind a LayerNorm."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))

    def forward(self, x, keep):
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).chunk(3, dim=-1))
        att = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        att = att.masked_fill(~keep, float("-inf")).softmax(dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class CausalLM(nn.Module):
    """A whole small causal language model as people write one: token
    embeddings and learned positions (read at arange(t)), a boolean
    causal mask buffer, pre-norm blocks, a final norm and an LM head tied
    to the token embeddings. Takes int64 token ids; returns the logits,
    and with targets the cross-entropy loss too."""

    def __init__(self, vocab=64, d=32, heads=4, layers=2, ctx=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(PreNormBlock(d, heads)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight
        self.register_buffer("keep", torch.tril(
            torch.ones(ctx, ctx, dtype=torch.bool)))

    def forward(self, ids, targets=None):
        b, t = ids.shape
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))
        for block in self.blocks:
            x = block(x, self.keep[:t, :t])
        logits = self.head(self.norm(x))
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.reshape(b * t, -1),
                               targets.reshape(b * t))
        return logits, loss
