"""Model stages, one module each, each a small class with a batch method (see DESIGN.md).

:mod:`.parser` (text -> AMR), :mod:`.realizer` (AMR -> text), :mod:`.lm` (perplexity) and
:mod:`.embedder` run over :mod:`.base`'s batching; :mod:`.catalog` lists known models and defaults,
:mod:`.resolve` finds them on disk, :mod:`.download` fetches them, :mod:`.tiny` makes test models.
"""
