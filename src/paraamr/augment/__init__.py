"""Data augmentation: ParaAMR paraphrases, REDA and REDA+NG over a Hugging Face dataset.

- :mod:`paraamr.augment.synonyms`: synonym sources (WordNet without EDA's stop words, Cilin, a file);
- :mod:`paraamr.augment.reda`: the REDA operators SR, RS, RI, RD and RM;
- :mod:`paraamr.augment.ngram`: the n-gram LM with stupid backoff behind REDA+NG;
- :mod:`paraamr.augment.source`: ParaAMR paraphrases looked up by normalized text;
- :mod:`paraamr.augment.inputs`: the dataset to augment (local file or folder, Hub id);
- :mod:`paraamr.augment.runner`: ``augment`` over a dataset, pairs crossed, labels kept;
- :mod:`paraamr.augment.folder`: writing the result as a Hub-ready folder with its card.
"""
