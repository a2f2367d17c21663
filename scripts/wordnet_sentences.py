"""Write ``paraamr/quality/data/wordnet_sentences.txt``: WordNet 3.0's usage examples that are
whole, plain sentences, as extra training sentences for ``paraamr quality train``.

WordNet's examples ("The boy floated his toy boat on the pond") are everyday English over a wide
vocabulary: they give the operators thousands of anchors beyond the 292 written for paraamr. Kept:
examples that start with a capital letter, have 6 to 16 words, use only letters, digits and plain
punctuation, and are no held-out sentence; a final period is added. Deterministic: the same WordNet
gives the same file.

Run: ``python scripts/wordnet_sentences.py`` (needs nltk's WordNet, as ``paraamr.lexicon`` does).
"""

from __future__ import annotations

import random
import re

from nltk.corpus import wordnet

from paraamr.quality.data import DATA_DIR, HELDOUT_SETS, heldout

PLAIN = re.compile(r"[A-Z][A-Za-z0-9 ,'$%:;\-]*[a-z0-9]")
HEADER = """\
# Training sentences for `paraamr quality train`: usage examples of WordNet 3.0, written by
# scripts/wordnet_sentences.py; disjoint from heldout.jsonl. WordNet's license:
#
# This software and database is being provided to you, the LICENSEE, by
# Princeton University under the following license.  By obtaining, using
# and/or copying this software and database, you agree that you have
# read, understood, and will comply with these terms and conditions.:
#
# Permission to use, copy, modify and distribute this software and
# database and its documentation for any purpose and without fee or
# royalty is hereby granted, provided that you agree to comply with
# the following copyright notice and statements, including the disclaimer,
# and that the same appear on ALL copies of the software, database and
# documentation, including modifications that you make for internal
# use or for distribution.
#
# WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.
#
# THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON
# UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR
# IMPLIED.  BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON
# UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT-
# ABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE
# OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT
# INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR
# OTHER RIGHTS.
#
# The name of Princeton University or Princeton may not be used in
# advertising or publicity pertaining to distribution of the software
# and/or database.  Title to copyright in this software, database and
# any associated documentation shall at all times remain with
# Princeton University and LICENSEE agrees to preserve same.
"""


def wordnet_sentences() -> list[str]:
    """The kept examples, each ending with a period, in a fixed shuffled order."""
    held = {
        text.lower()
        for name in HELDOUT_SETS
        for row in heldout(name)
        for text in (row["text"], row["para_text"])
    }
    examples = {example.strip() for synset in wordnet.all_synsets() for example in synset.examples()}
    kept = []
    for example in sorted(examples):
        quotes_paired = example.count("'") % 2 == 0 or re.search(r"\w'\w", example)
        plain = 6 <= len(example.split()) <= 16 and PLAIN.fullmatch(example) and quotes_paired
        if plain and f"{example}.".lower() not in held:
            kept.append(f"{example}.")
    random.Random(0).shuffle(kept)
    return kept


def main() -> int:
    sentences = wordnet_sentences()
    path = DATA_DIR / "wordnet_sentences.txt"
    path.write_text(HEADER + "\n".join(sentences) + "\n", encoding="utf-8")
    print(f"{len(sentences)} sentences written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
