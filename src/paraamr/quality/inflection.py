"""Just enough English morphology for the operators: plurals, third person, participles, articles.

>>> pluralize("box"), pluralize("city"), pluralize("pear"), pluralize("man"), pluralize("auto")
('boxes', 'cities', 'pears', 'men', 'autos')
>>> pluralize("potato")
'potatoes'
>>> third_person("carry"), third_person("watch"), third_person("have"), third_person("go")
('carries', 'watches', 'has', 'goes')
>>> past_participle("eat", "ate"), past_participle("chase", "chased"), past_participle("paint")
('eaten', 'chased', 'painted')
>>> past_tense("lose"), past_tense("close"), past_tense("carry"), past_tense("stop"), past_tense("shut")
('lost', 'closed', 'carried', 'stopped', 'shut')
>>> indefinite_article("apple"), indefinite_article("pear")
('an', 'a')
"""

from __future__ import annotations

import re

_SIBILANT = re.compile(r"(s|x|z|ch|sh)$")
#: Nouns in -o that take -es (most take -s: autos, pianos, avocados).
_O_ES = frozenset({"echo", "hero", "potato", "tomato", "veto", "torpedo", "embargo", "domino"})
_CONSONANT_Y = re.compile(r"[^aeiou]y$")
#: A consonant, a vowel and a consonant that doubles before ``-ed`` (``stop`` -> ``stopped``).
CVC = re.compile(r"[^aeiou][aeiou][^aeiouwxy]$")

#: Irregular English verbs: lemma -> (past, past participle).
IRREGULAR = {
    "be": ("was", "been"), "beat": ("beat", "beaten"), "become": ("became", "become"),
    "begin": ("began", "begun"), "bite": ("bit", "bitten"), "blow": ("blew", "blown"),
    "break": ("broke", "broken"), "bring": ("brought", "brought"), "build": ("built", "built"),
    "buy": ("bought", "bought"), "catch": ("caught", "caught"), "choose": ("chose", "chosen"),
    "cut": ("cut", "cut"), "do": ("did", "done"), "draw": ("drew", "drawn"),
    "drink": ("drank", "drunk"), "drive": ("drove", "driven"), "eat": ("ate", "eaten"),
    "feed": ("fed", "fed"), "find": ("found", "found"), "fight": ("fought", "fought"),
    "forget": ("forgot", "forgotten"), "forgive": ("forgave", "forgiven"), "freeze": ("froze", "frozen"),
    "get": ("got", "gotten"), "give": ("gave", "given"), "grow": ("grew", "grown"),
    "have": ("had", "had"), "hear": ("heard", "heard"), "hide": ("hid", "hidden"),
    "hit": ("hit", "hit"), "hold": ("held", "held"), "hurt": ("hurt", "hurt"),
    "keep": ("kept", "kept"), "know": ("knew", "known"), "lead": ("led", "led"),
    "leave": ("left", "left"), "lend": ("lent", "lent"), "lose": ("lost", "lost"),
    "make": ("made", "made"), "meet": ("met", "met"), "pay": ("paid", "paid"),
    "put": ("put", "put"), "read": ("read", "read"), "ride": ("rode", "ridden"),
    "ring": ("rang", "rung"), "say": ("said", "said"), "see": ("saw", "seen"),
    "sell": ("sold", "sold"), "send": ("sent", "sent"), "set": ("set", "set"),
    "shake": ("shook", "shaken"), "shoot": ("shot", "shot"), "show": ("showed", "shown"),
    "sing": ("sang", "sung"), "speak": ("spoke", "spoken"), "spend": ("spent", "spent"),
    "steal": ("stole", "stolen"), "strike": ("struck", "struck"), "swim": ("swam", "swum"),
    "take": ("took", "taken"), "teach": ("taught", "taught"), "tear": ("tore", "torn"),
    "tell": ("told", "told"), "think": ("thought", "thought"), "throw": ("threw", "thrown"),
    "understand": ("understood", "understood"), "wake": ("woke", "woken"), "wear": ("wore", "worn"),
    "win": ("won", "won"), "write": ("wrote", "written"), "forbid": ("forbade", "forbidden"),
    "sink": ("sank", "sunk"), "fall": ("fell", "fallen"), "rise": ("rose", "risen"),
    "shrink": ("shrank", "shrunk"), "sleep": ("slept", "slept"), "fly": ("flew", "flown"),
    # pasts the same as the lemma, which WordNet's exception list leaves out (not "shutted")
    "bet": ("bet", "bet"), "bid": ("bid", "bid"), "broadcast": ("broadcast", "broadcast"),
    "burst": ("burst", "burst"), "cast": ("cast", "cast"), "cost": ("cost", "cost"),
    "forecast": ("forecast", "forecast"), "let": ("let", "let"), "quit": ("quit", "quit"),
    "rid": ("rid", "rid"), "shed": ("shed", "shed"), "shut": ("shut", "shut"), "slit": ("slit", "slit"),
    "split": ("split", "split"), "spread": ("spread", "spread"), "thrust": ("thrust", "thrust"),
    "upset": ("upset", "upset"),
}  # fmt: skip


_IRREGULAR_PLURALS = {
    "man": "men", "woman": "women", "child": "children", "person": "people", "foot": "feet",
    "tooth": "teeth", "mouse": "mice", "goose": "geese", "sheep": "sheep", "fish": "fish",
}  # fmt: skip


def pluralize(noun: str) -> str:
    """The plural of ``noun`` (a few irregular ones, else the regular rules)."""
    if noun in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[noun]
    if _CONSONANT_Y.search(noun):
        return noun[:-1] + "ies"
    return noun + ("es" if _SIBILANT.search(noun) or noun in _O_ES else "s")


def third_person(verb: str) -> str:
    """The third person singular present of the lemma ``verb``."""
    if verb in ("have", "be"):
        return {"have": "has", "be": "is"}[verb]
    return verb + "es" if verb.endswith("o") else pluralize(verb)  # goes, does, echoes


def past_participle(lemma: str, past: str | None = None) -> str:
    """The past participle of ``lemma``; for regular verbs it equals the simple ``past`` when given."""
    if lemma in IRREGULAR:
        return IRREGULAR[lemma][1]
    if past:
        return past
    if lemma.endswith("e"):
        return lemma + "d"
    if len(lemma) <= 4 and lemma[0] not in "aeiou" and CVC.search(lemma):
        return lemma + lemma[-1] + "ed"  # stop -> stopped
    return lemma[:-1] + "ied" if _CONSONANT_Y.search(lemma) else lemma + "ed"


def indefinite_article(word: str) -> str:
    """``a`` or ``an`` before ``word`` (by its first letter)."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def past_tense(lemma: str) -> str:
    """The simple past of ``lemma`` (irregular table, else the regular ``-ed`` form)."""
    return IRREGULAR[lemma][0] if lemma in IRREGULAR else past_participle(lemma)


def inflect_like(tag: str, lemma: str) -> str | None:
    """``lemma`` in the form of a word tagged ``tag`` (Penn), or None for a form it does not make.

    The past and past participle of a verb outside :data:`IRREGULAR` are refused where WordNet
    lists a form of it the regular rules do not spell (``ran``), unless that one form is the
    regular one with the last consonant doubled (``admitted``).

    >>> inflect_like("VBD", "buy"), inflect_like("VBZ", "carry"), inflect_like("NNS", "box")
    ('bought', 'carries', 'boxes')
    >>> inflect_like("VBN", "phone"), inflect_like("JJ", "cheap"), inflect_like("VBG", "run")
    ('phoned', 'cheap', None)
    >>> inflect_like("VBD", "run"), inflect_like("VBN", "admit"), inflect_like("VBD", "stop")
    (None, 'admitted', 'stopped')

    A noun lemma that is a plural of another noun (``works``) is refused as ``NNS``:

    >>> inflect_like("NNS", "works"), inflect_like("NNS", "plant")
    (None, 'plants')
    """
    if tag in ("JJ", "RB", "VB", "VBP", "NN"):
        return lemma
    if tag in ("VBD", "VBN") and lemma not in IRREGULAR and _misspelled(lemma):
        return _doubled(lemma)
    if tag == "NNS" and _plural_only(lemma):
        return None
    forms = {"VBD": past_tense, "VBN": past_participle, "VBZ": third_person, "NNS": pluralize}
    return forms[tag](lemma) if tag in forms else None


def _misspelled(lemma: str) -> bool:
    """Whether WordNet lists a past, participle or third-person form of ``lemma`` that the
    regular rules do not make (its ``-ing`` forms aside: no operator makes them)."""
    from paraamr.lexicon import verb_exceptions

    ours = {past_tense(lemma), past_participle(lemma), third_person(lemma)}
    return any(not form.endswith("ing") and form not in ours for form in verb_exceptions().get(lemma, ()))


def _doubled(lemma: str) -> str | None:
    """The past of ``lemma`` when WordNet lists one form of it, the regular one with the last
    consonant doubled (``admit`` -> ``admitted``: past and participle alike), else None."""
    from paraamr.lexicon import verb_exceptions

    forms = [form for form in verb_exceptions().get(lemma, ()) if not form.endswith(("ing", "s"))]
    return forms[0] if forms == [lemma + lemma[-1:] + "ed"] else None


def _plural_only(noun: str) -> bool:
    """Whether the noun lemma ``noun`` ends in ``s`` after a noun that WordNet knows (``works``)."""
    from paraamr.lexicon import is_noun

    return noun.endswith("s") and not noun.endswith("ss") and is_noun(noun[:-1])
