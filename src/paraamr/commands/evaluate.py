"""``paraamr evaluate PATH``: Table 2's row (similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F) of a corpus.

Print semantic similarity (embedding cosine ×100), 1-BLEU, 1-∩/∪ (×100), TED-3 and TED-F over the
(source, paraphrase) pairs of PATH: a ParaAMR release file (JSON lines, zipped or not), our dataset
folder, or a two-column file (.tsv/.txt tab-separated, .csv: source, paraphrase). Writes nothing;
--plots DIR writes one PNG histogram per measure there. For several processes or nodes: accelerate
launch -m paraamr.evaluate ... (same options); for independent jobs (Slurm arrays): --shard I/N,
then --merge."""

from __future__ import annotations

from paraamr.evaluate import add_arguments, run  # the same options and run as ``python -m paraamr.evaluate``

__all__ = ["add_arguments", "run"]
