"""ParaAMR loading script: the builder lives in the installed package, :mod:`paraamr.dataset`.

datasets 3.x: ``load_dataset("path/to/paraamr_dataset.py", "pairs", data_files=..., trust_remote_code=True)``.
datasets 4.x/5.x (no scripts): ``from paraamr.dataset import ParaAMR``. See docs/dataset.md.
"""

from paraamr.dataset import ParaAMR, ParaAMRConfig

__all__ = ["ParaAMR", "ParaAMRConfig"]
