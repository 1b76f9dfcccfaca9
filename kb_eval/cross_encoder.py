"""A MiniLM cross-encoder fine-tuned to read whether a passage answers a question (issue 12).

all-MiniLM-L6-v2 (the packaged weights, `minilm_model_dir`, never downloaded) reads
"[CLS] question [SEP] passage [SEP]", truncated to `max_tokens`. The lower layers stay frozen:
their outputs are computed once per pair (`encode_lower`) and shared by every training run. Only
the top `trainable_layers` and a one-logit head over the mean of the token outputs are trained
(`train`, binary cross-entropy, label = the passage holds an answer). Deterministic: a fixed
seed, two threads and torch's deterministic algorithms; the same pairs and settings give the
same scores. Measured in bench/cross_encoder_signal.py; not on the serving path.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from torch import nn

from kb_eval.pair_features import _encode_pooled, _sentence_vectors
from kb_retrieval.model_files import minilm_model_dir

THREADS = 2
PASSAGE_WORDS = 60


@dataclass(frozen=True)
class Pair:
    """A question, a passage, and whether the passage answers the question."""

    question: str
    passage: str
    label: bool = False


@dataclass(frozen=True)
class TrainConfig:
    """What one fine-tuning run reads besides its pairs."""

    trainable_layers: int = 1
    epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 5e-5
    head_learning_rate: float = 1e-3
    max_pos_weight: float = 4.0
    seed: int = 0
    max_tokens: int = 256


@lru_cache(maxsize=16384)
def best_sentences(query: str, text: str, words: int = PASSAGE_WORDS) -> str:
    """The chunk's sentences closest to `query` (bi-encoder cosine, the served MiniLM), taken
    best first while they fit in `words` words (at least one), joined in the chunk's order."""
    units, vectors = _sentence_vectors(text)
    q = _encode_pooled([query])[0]
    order = sorted(range(len(units)), key=lambda i: (-float(vectors[i] @ q), i))
    chosen: list[int] = []
    used = 0
    for i in order:
        size = len(units[i].split())
        if chosen and used + size > words:
            continue
        chosen.append(i)
        used += size
    return " ".join(units[i] for i in sorted(chosen))


def _deterministic() -> None:
    torch.set_num_threads(THREADS)
    torch.use_deterministic_algorithms(True)


@lru_cache(maxsize=1)
def load_base() -> tuple[nn.Module, object]:
    """The packaged MiniLM encoder (eager attention, eval mode, frozen) and its tokenizer."""
    from transformers import AutoModel, AutoTokenizer

    _deterministic()
    path = str(minilm_model_dir())
    model = AutoModel.from_pretrained(path, attn_implementation="eager")
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model, AutoTokenizer.from_pretrained(path)


def _additive_mask(mask: torch.Tensor) -> torch.Tensor:
    """A (batch, tokens) 0/1 mask as the additive (batch, 1, 1, tokens) mask a BertLayer reads."""
    return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min


def _pad(states: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(s.shape[0] for s in states)
    hidden = torch.zeros(len(states), width, states[0].shape[1])
    mask = torch.zeros(len(states), width)
    for i, s in enumerate(states):
        hidden[i, : s.shape[0]] = s
        mask[i, : s.shape[0]] = 1.0
    return hidden, mask


def encode_lower(
    pairs: Sequence[tuple[str, str]], frozen_layers: int, max_tokens: int = 256, batch: int = 32
) -> list[torch.Tensor]:
    """Per (question, passage): the token outputs of the embeddings and the first
    `frozen_layers` layers, unpadded (tokens, 384)."""
    model, tokenizer = load_base()
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]) + len(pairs[i][1]), i))
    out: list[torch.Tensor | None] = [None] * len(pairs)
    with torch.no_grad():
        for start in range(0, len(order), batch):
            chosen = order[start : start + batch]
            enc = tokenizer(
                [pairs[i][0] for i in chosen],
                [pairs[i][1] for i in chosen],
                truncation="longest_first",
                max_length=max_tokens,
                padding=True,
                return_tensors="pt",
            )
            hidden = model.embeddings(
                input_ids=enc["input_ids"], token_type_ids=enc["token_type_ids"]
            )
            additive = _additive_mask(enc["attention_mask"])
            for layer in model.encoder.layer[:frozen_layers]:
                hidden = layer(hidden, attention_mask=additive)
            lengths = enc["attention_mask"].sum(dim=1).tolist()
            for row, i in enumerate(chosen):
                out[i] = hidden[row, : int(lengths[row])].clone()
            if start // batch % 20 == 19:
                print(
                    f"lower layers: {start + batch}/{len(order)} pairs", file=sys.stderr, flush=True
                )
    return [s for s in out if s is not None]


class TopScorer(nn.Module):
    """The top layers of MiniLM (copies, trainable) and a one-logit head over mean pooling."""

    def __init__(self, trainable_layers: int) -> None:
        super().__init__()
        base, _ = load_base()
        self.layers = nn.ModuleList(copy.deepcopy(base.encoder.layer[-trainable_layers:]))
        for parameter in self.layers.parameters():
            parameter.requires_grad_(True)
        self.head = nn.Linear(base.config.hidden_size, 1)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        additive = _additive_mask(mask)
        for layer in self.layers:
            hidden = layer(hidden, attention_mask=additive)
        pooled = (hidden * mask[:, :, None]).sum(dim=1) / mask.sum(dim=1, keepdim=True)
        return self.head(pooled).squeeze(-1)


def frozen_layers(config: TrainConfig) -> int:
    """How many of MiniLM's layers stay frozen under `config`."""
    base, _ = load_base()
    return len(base.encoder.layer) - config.trainable_layers


def train(states: Sequence[torch.Tensor], labels: Sequence[bool], config: TrainConfig) -> TopScorer:
    """The top layers and head fine-tuned on `states` (from `encode_lower`) and their labels."""
    _deterministic()
    torch.manual_seed(config.seed)
    scorer = TopScorer(config.trainable_layers)
    positives = sum(labels)
    if not positives or positives == len(labels):
        raise ValueError("training pairs need both a positive and a negative label")
    weight = min((len(labels) - positives) / positives, config.max_pos_weight)
    loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(weight))
    optimiser = torch.optim.AdamW(
        [
            {"params": scorer.layers.parameters(), "lr": config.learning_rate},
            {"params": scorer.head.parameters(), "lr": config.head_learning_rate},
        ]
    )
    target = torch.tensor([float(v) for v in labels])
    rng = np.random.default_rng(config.seed)
    scorer.train()
    for _ in range(config.epochs):
        order = rng.permutation(len(states))
        for start in range(0, len(order), config.batch_size):
            chosen = order[start : start + config.batch_size].tolist()
            hidden, mask = _pad([states[i] for i in chosen])
            loss = loss_fn(scorer(hidden, mask), target[chosen])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    scorer.eval()
    return scorer


def score(scorer: TopScorer, states: Sequence[torch.Tensor], batch: int = 64) -> np.ndarray:
    """The logit of each pair (higher: more likely to answer)."""
    _deterministic()
    out = []
    with torch.no_grad():
        for start in range(0, len(states), batch):
            hidden, mask = _pad(states[start : start + batch])
            out.append(scorer(hidden, mask).numpy())
    return np.concatenate(out) if out else np.zeros(0)


def fit_and_score(
    train_pairs: Sequence[Pair], test_pairs: Sequence[tuple[str, str]], config: TrainConfig
) -> np.ndarray:
    """Fine-tune on `train_pairs`, then score `test_pairs` (one call, no cache kept)."""
    frozen = frozen_layers(config)
    states = encode_lower([(p.question, p.passage) for p in train_pairs], frozen, config.max_tokens)
    scorer = train(states, [p.label for p in train_pairs], config)
    return score(scorer, encode_lower(test_pairs, frozen, config.max_tokens))
