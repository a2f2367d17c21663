"""The paired loss of the cross-encoder: a triplet's two pairs in one batch, binary cross-entropy on
both and a margin between their logits.

>>> import torch
>>> hinge(torch.tensor([3.0, 0.5]), torch.tensor([-1.0, 0.0]), margin=2.0)
tensor(0.7500)
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["PairedLoss", "hinge"]


def hinge(valid: Tensor, invalid: Tensor, margin: float) -> Tensor:
    """The mean of ``max(0, margin - (valid - invalid))`` over the triplets."""
    return torch.relu(margin - (valid - invalid)).mean()


class PairedLoss(nn.Module):
    """Binary cross-entropy on a triplet's valid and invalid pair, plus ``weight`` times the
    :func:`hinge` of their logits at ``margin`` (0: none); a ``CrossEncoderTrainer`` loss reading
    four text columns, the valid pair's two texts then the invalid pair's, returning losses by name."""

    def __init__(self, model, margin: float = 2.0, weight: float = 1.0) -> None:
        super().__init__()
        self.model = model
        self.margin = margin
        self.weight = weight
        self.bce = nn.BCEWithLogitsLoss()

    def forward(self, inputs: list[list[str]], labels: Tensor | None = None, **_) -> dict[str, Tensor]:
        from sentence_transformers.util import batch_to_device

        first_valid, second_valid, first_invalid, second_invalid = inputs
        pairs = [*zip(first_valid, second_valid, strict=True)]
        pairs += zip(first_invalid, second_invalid, strict=True)
        features = batch_to_device(self.model.preprocess(pairs), self.model.device)
        logits = self.model(features)["scores"].view(-1)
        n = len(first_valid)
        target = torch.cat([torch.ones(n), torch.zeros(n)]).to(logits.device)
        losses = {"bce": self.bce(logits, target)}
        if self.margin > 0 and self.weight > 0:
            losses["margin"] = self.weight * hinge(logits[:n], logits[n:], self.margin)
        return losses

    def get_config_dict(self) -> dict[str, float]:
        """What the model card lists of this loss."""
        return {"margin": self.margin, "weight": self.weight}
