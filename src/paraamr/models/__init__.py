"""Model stages, one module each, each a small class with a batch method (see DESIGN.md).

- :mod:`~paraamr.models.parser` (text -> AMR), :mod:`~paraamr.models.realizer` (AMR -> text),
  :mod:`~paraamr.models.lm` (perplexity), :mod:`~paraamr.models.embedder` (embeddings), over the
  batching and OOM handling of :mod:`~paraamr.models.base`;
- :mod:`~paraamr.models.catalog`: known models, kinds, the one table of defaults and batch sizes;
- :mod:`~paraamr.models.resolve`: where a model is on disk (never fetches);
- :mod:`~paraamr.models.download`: fetching on first use (:func:`~paraamr.models.download.ensure`),
  resumable release downloads, safe extraction;
- :mod:`~paraamr.models.tiny`: tiny random models for tests (imported by no production module).
"""
