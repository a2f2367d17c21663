"""The ``datasets`` builder of ParaAMR: the released JSON lines and our Parquet folders, filtered.

Configs: ``default`` (one row per source, ``paraphrases`` a list of structs) and ``pairs`` (one row
per source–paraphrase pair). Parameters: :class:`ParaAMRConfig`. Data: ``data_files`` (the release
zip or JSON lines, or Parquet shards), else ``data_dir`` (a folder written by ``paraamr
generate``/``convert``, or a folder of release files), else the release zip downloaded from
:data:`paraamr.sources.RELEASE_URL`.

On datasets 4.x/5.x use the class itself; on 3.x also ``load_dataset("paraamr_dataset.py",
trust_remote_code=True, ...)``:

>>> ParaAMR.BUILDER_CONFIGS[1].name
'pairs'
>>> ParaAMRConfig(name="default", max_perplexity=120, min_paraphrases=1).max_perplexity
120
>>> ParaAMRConfig(name="pairs", use="embeddings").filters().max_perplexity  # the paper's SimCSE data
110.0
>>> ParaAMRConfig(name="default", min_paraphrases=3, max_paraphrases=2)
Traceback (most recent call last):
...
ValueError: ParaAMR: min_paraphrases (3) is more than max_paraphrases (2): no source could be kept
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from typing import Any

import datasets
from datasets.utils.file_utils import xopen

from paraamr import sources
from paraamr.filters import Filters, perplexity_limit
from paraamr.records import CITATION, DEFAULT_SCHEMA, PAIRS_SCHEMA, to_pairs
from paraamr.report import counted

logger = logging.getLogger(__name__)


_DESCRIPTION = """\
ParaAMR: syntactically diverse paraphrases made by AMR back-translation (Huang et al., ACL 2023).
Each source sentence is parsed to an AMR graph, the graph is re-rooted at other concepts, and each
re-rooted graph is realized back to text; the GPT-2 perplexity of each paraphrase is kept.
"""


@dataclass
class ParaAMRConfig(datasets.BuilderConfig):
    """A ParaAMR config: ``name`` is ``default`` or ``pairs``; the filters are the arguments of
    :func:`paraamr.filters.filter_records` (``use``: the paper's threshold of a use instead of
    ``max_perplexity``). ``skip_invalid``: count and log malformed lines instead of raising.
    """

    max_perplexity: float | None = None
    use: str | None = None
    min_paraphrases: int = 0
    max_paraphrases: int | None = None
    order: str = "given"
    skip_invalid: bool = False
    min_similarity: float | None = None

    def __post_init__(self):
        super().__post_init__()
        self.filters()  # a ValueError on a parameter out of range

    def filters(self) -> Filters:
        """The filters of this config (:class:`paraamr.filters.Filters`); ``ValueError`` on a
        parameter out of range (datasets sets config kwargs after ``__init__``, so the builder
        calls this again)."""
        try:
            return Filters(
                perplexity_limit(self.max_perplexity, self.use),
                self.min_similarity,
                self.min_paraphrases,
                self.max_paraphrases,
                self.order,
            )
        except ValueError as err:
            raise ValueError(f"ParaAMR: {err}") from None


def _files_hash(data_dir: str | os.PathLike, code_hash: str | None) -> str | None:
    """A hash of the builder's code hash (a loading script's) and of the files :func:`~paraamr.sources.
    split_files` reads in ``data_dir`` (paths, sizes, modification times); ``code_hash`` when the
    folder cannot be listed (the builder says why when it reads it)."""
    try:
        files = [f for split in sources.split_files(data_dir).values() for f in split]
    except (OSError, ValueError):
        return code_hash
    stats = [(os.path.abspath(f), (st := os.stat(f)).st_size, st.st_mtime_ns) for f in files]
    return datasets.fingerprint.Hasher.hash([code_hash, stats])


class ParaAMR(datasets.GeneratorBasedBuilder):
    """ParaAMR (see the module docstring): configs ``default`` and ``pairs``."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = ParaAMRConfig
    BUILDER_CONFIGS = [  # noqa: RUF012 (the datasets API wants a plain class attribute)
        ParaAMRConfig(name="default", description="One row per source sentence, its paraphrases nested."),
        ParaAMRConfig(name="pairs", description="One row per (source, paraphrase) pair."),
    ]
    DEFAULT_CONFIG_NAME = "default"

    def __init__(self, *args: Any, data_files: Any = None, **kwargs: Any) -> None:
        if isinstance(data_files, (str, os.PathLike)) and os.path.isdir(data_files):  # datasets: "not found"
            raise ValueError(f"ParaAMR: data_files {str(data_files)!r} is a folder; pass it as data_dir=")
        if data_files is None and kwargs.get("data_dir"):  # datasets keys its cache on the folder's path,
            kwargs["hash"] = _files_hash(kwargs["data_dir"], kwargs.get("hash"))  # this on its files too
        super().__init__(*args, data_files=data_files, **kwargs)

    def _info(self) -> datasets.DatasetInfo:
        self.config.filters()
        schema = PAIRS_SCHEMA if self.config.name == "pairs" else DEFAULT_SCHEMA
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=datasets.Features.from_arrow_schema(schema),
            homepage=sources.RELEASE_HOME,
            citation=CITATION,
        )

    def _as_dataset(self, split=datasets.Split.TRAIN, in_memory: bool = False) -> datasets.Dataset:
        """A split the filters left empty is an empty Dataset (datasets cannot read a split of no rows)."""
        info = self.info.splits.get(str(split)) if self.info.splits else None
        if info is not None and info.num_examples == 0:
            features = self.info.features
            return datasets.Dataset.from_dict(
                {name: [] for name in features}, features=features, info=self.info.copy(), split=str(split)
            )
        return super()._as_dataset(split, in_memory)

    def _split_generators(self, dl_manager):
        self._download_config = dl_manager.download_config
        if self.config.data_files:
            splits = {
                split: dl_manager.download(list(files)) for split, files in self.config.data_files.items()
            }
        elif self.config.data_dir:
            splits = sources.split_files(self.config.data_dir)
        else:
            try:
                splits = {"train": [dl_manager.download(sources.RELEASE_URL)]}
            except Exception as err:  # offline, HTTP error, ...: say what to do instead
                raise ConnectionError(
                    f"ParaAMR: no data_files or data_dir given, so the release was to be downloaded from "
                    f"{sources.RELEASE_URL}, which failed ({type(err).__name__}: {err}). Download "
                    f"ParaAMR_small.zip from {sources.RELEASE_HOME} and pass data_files='path/to/"
                    f"ParaAMR_small.zip' (zipped or not), or data_dir= a folder written by paraamr."
                ) from err
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"files": files})
            for split, files in splits.items()
        ]

    def _generate_examples(self, files):
        config = self.config
        rules = config.filters()
        opener = functools.partial(xopen, download_config=getattr(self, "_download_config", None))
        for index, file in enumerate(files):
            skipped = sources.Skipped()
            records = sources.iter_records(
                file, opener=opener, skip_invalid=config.skip_invalid, skipped=skipped
            )
            for key, kept in rules.iter_records(records):
                if config.name == "pairs":
                    for n, pair in enumerate(to_pairs(kept)):
                        yield f"{index}:{key}:{n}", pair
                else:
                    yield f"{index}:{key}", kept
            if skipped.count:
                logger.warning(
                    "ParaAMR: skipped %s in %s; first: %s",
                    counted(skipped.count, "invalid line"),
                    file,
                    "; ".join(skipped.messages[:3]),
                )
