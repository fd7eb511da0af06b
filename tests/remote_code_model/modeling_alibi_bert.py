"""Test fixture: a tiny encoder with the interface quirks of DNABERT-2-style remote code.

- no learned positions: attention gets ALiBi distance biases, so windows may be longer than
  max_position_embeddings;
- the bias is a plain tensor attribute (not a buffer), grown when a longer input arrives;
- the base model returns a tuple (hidden states, pooled), not a ModelOutput;
- the classes name transformers' BertConfig as config_class;
- no gradient checkpointing support.
"""

import torch
import torch.nn.functional as F
from torch import nn
from transformers import BertConfig, PreTrainedModel
from transformers.modeling_outputs import SequenceClassifierOutput


def alibi_bias(heads: int, size: int, device=None) -> torch.Tensor:
    slopes = torch.tensor([2.0 ** (-8.0 * (head + 1) / heads) for head in range(heads)], device=device)
    positions = torch.arange(size, device=device)
    distance = (positions[None, :] - positions[:, None]).abs()
    return -slopes[:, None, None] * distance[None]


class AlibiLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden = config.hidden_size
        self.heads = config.num_attention_heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden)
        self.ffn = nn.Sequential(nn.Linear(hidden, config.intermediate_size), nn.GELU(),
                                 nn.Linear(config.intermediate_size, hidden))
        self.ffn_norm = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        batch, length, hidden = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.heads, hidden // self.heads).permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        x = self.attention_norm(x + self.out(attended.transpose(1, 2).reshape(batch, length, hidden)))
        return self.ffn_norm(x + self.ffn(x))


class AlibiEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList(AlibiLayer(config) for _ in range(config.num_hidden_layers))
        self.heads = config.num_attention_heads
        self.alibi = alibi_bias(self.heads, config.alibi_starting_size)

    def rebuild_alibi_tensor(self, size: int, device=None) -> None:
        self.alibi = alibi_bias(self.heads, size, device)

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        length = x.shape[1]
        if self.alibi.shape[-1] < length:
            self.rebuild_alibi_tensor(length, x.device)
        padding = torch.zeros(attention_mask.shape, dtype=x.dtype, device=x.device)
        padding = padding.masked_fill(attention_mask == 0, float("-inf"))[:, None, None, :]
        bias = self.alibi[:, :length, :length].to(device=x.device, dtype=x.dtype)[None] + padding
        for layer in self.layer:
            x = layer(x, bias)
        return x


class AlibiBertModel(PreTrainedModel):
    config_class = BertConfig
    base_model_prefix = "bert"

    def __init__(self, config, add_pooling_layer: bool = True):
        super().__init__(config)
        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.embedding_norm = nn.LayerNorm(config.hidden_size)
        self.encoder = AlibiEncoder(config)
        self.pooler = nn.Linear(config.hidden_size, config.hidden_size) if add_pooling_layer else None
        self.post_init()

    def forward(self, input_ids, attention_mask=None, **kwargs):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        hidden = self.encoder(self.embedding_norm(self.embeddings(input_ids)), attention_mask)
        pooled = torch.tanh(self.pooler(hidden[:, 0])) if self.pooler is not None else None
        return hidden, pooled


class AlibiBertForSequenceClassification(PreTrainedModel):
    config_class = BertConfig
    base_model_prefix = "bert"

    def __init__(self, config):
        super().__init__(config)
        self.bert = AlibiBertModel(config)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, labels=None, **kwargs):
        _, pooled = self.bert(input_ids, attention_mask)
        return SequenceClassifierOutput(logits=self.classifier(pooled))
