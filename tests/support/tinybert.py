"""A tiny random BERT encoder in the real transformers format (config, safetensors weights, a
WordPiece tokenizer), for the embedder's tests: SimCSE's pooling, and a Hub model fetched on first
use."""

from __future__ import annotations

from pathlib import Path

__all__ = ["WORDS", "make_tiny_bert"]

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "in", "park", "he", "left", "early"]


def make_tiny_bert(folder: Path) -> Path:
    """A BERT of 2 layers, 16 wide, over :data:`WORDS`, seeded, written to ``folder`` (made here)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *WORDS]))
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(WORDS) + 6,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(folder)
    return folder
