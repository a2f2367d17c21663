"""Word tables of the quality operators (contractions, numbers, names, calendar, units, ...).

>>> UNITS[0][:2]
[('millimeter', 'millimeters'), ('centimeter', 'centimeters')]
>>> "don't" in dict((c, e) for e, c, _ in CONTRACTIONS)
True
"""

from __future__ import annotations

#: Verbs too general to swap for a synonym or an antonym.
LIGHT_VERBS = {"be", "have", "do", "get", "make", "go", "take", "let", "say"}

# (expanded, contracted, direction): "both", or "contract" only where the expansion is ambiguous
# ('s is "is" or "has"), or "expand" only where contracting reads oddly ("I have a car").
CONTRACTIONS = [
    ("do not", "don't", "both"), ("does not", "doesn't", "both"), ("did not", "didn't", "both"),
    ("is not", "isn't", "both"), ("are not", "aren't", "both"), ("was not", "wasn't", "both"),
    ("were not", "weren't", "both"), ("have not", "haven't", "both"), ("has not", "hasn't", "both"),
    ("had not", "hadn't", "both"), ("will not", "won't", "both"), ("would not", "wouldn't", "both"),
    ("should not", "shouldn't", "both"), ("could not", "couldn't", "both"), ("cannot", "can't", "both"),
    ("must not", "mustn't", "both"), ("I am", "I'm", "both"), ("you are", "you're", "both"),
    ("we are", "we're", "both"), ("they are", "they're", "both"), ("I will", "I'll", "both"),
    ("you will", "you'll", "both"), ("we will", "we'll", "both"), ("they will", "they'll", "both"),
    ("he will", "he'll", "both"), ("she will", "she'll", "both"), ("let us", "let's", "both"),
    ("it is", "it's", "contract"), ("that is", "that's", "contract"), ("there is", "there's", "contract"),
    ("he is", "he's", "contract"), ("she is", "she's", "contract"), ("I have", "I've", "expand"),
    ("we have", "we've", "expand"), ("they have", "they've", "expand"), ("you have", "you've", "expand"),
]  # fmt: skip

#: Verbs with no natural passive ("$20 is cost by it").
STATIVE = {"cost", "have", "weigh", "resemble", "lack", "fit", "suit", "mean", "contain", "take", "last"}

#: Verbs whose indirect object alternates with a ``to`` phrase: ``gave her a book`` <->
#: ``gave a book to her``.
DATIVE_TO = {
    "give", "send", "lend", "show", "tell", "bring", "offer", "hand", "pass", "sell", "teach",
    "write", "throw", "pay", "owe", "promise", "read", "mail", "serve", "award", "feed", "rent",
}  # fmt: skip

#: Verbs whose indirect object alternates with a ``for`` phrase: ``bought her a book`` <->
#: ``bought a book for her``.
DATIVE_FOR = {"buy", "make", "cook", "bake", "build", "fetch", "order", "book", "pour", "knit", "paint"}

#: Prepositions whose phrase may move between the front and the end of a clause.
MOVABLE_PREPS = {
    "in", "on", "at", "during", "after", "before", "since", "until", "near", "throughout", "despite",
    "inside", "outside", "across", "behind", "beside", "under", "over",
}  # fmt: skip

#: Adverbs of time that may move like a prepositional phrase.
TIME_ADVERBS = {
    "yesterday",
    "today",
    "tomorrow",
    "now",
    "recently",
    "later",
    "sometimes",
    "often",
    "usually",
}

#: Cardinal number words changed by the number operator.
SMALL = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "fifteen", "twenty", "thirty", "forty", "fifty",
]  # fmt: skip

#: Number-scale words.
SCALES = ["hundred", "thousand", "million", "billion"]

#: Every cardinal number word.
CARDINALS = SMALL + SCALES

#: Ordinal number words.
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]

#: Replacement named entities by spaCy label.
ENTITIES = {
    "PERSON": ["Alice", "Carlos", "Priya", "Tom", "Fatima", "Kenji", "Olga", "Samuel", "Mei", "Omar"],
    "GPE": ["Paris", "Tokyo", "Brazil", "Canada", "Kenya", "Berlin", "Chicago", "India", "Madrid", "Sydney"],
    "ORG": ["Google", "the United Nations", "Toyota", "Oxford University", "the BBC", "NASA", "Microsoft"],
    "NORP": ["French", "German", "Japanese", "Mexican", "Canadian", "Italian", "Egyptian"],
    "LOC": ["Europe", "Africa", "the Alps", "the Pacific", "Asia", "the Sahara"],
}

#: Replacement full names (first and last) for multi-token PERSON entities.
FULL_NAMES = ["Alice Moreau", "Carlos Silva", "Priya Patel", "Tom Becker", "Fatima Haddad", "Kenji Sato"]

#: Weekdays and months (swapped within their list).
CALENDAR = [
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
    ["january", "february", "march", "april", "june", "july", "august", "september", "october", "november",
     "december"],
]  # fmt: skip

#: ``n't`` stems whose positive form differs (``won't`` -> ``will``).
NT_BASE = {"ca": "can", "wo": "will", "sha": "shall"}

#: Words that make adding a negation unsafe (the sentence is negative already).
NO_ADD = {"not", "n't", "never", "no", "nobody", "nothing", "nowhere", "neither", "nor", "none", "cannot"}

#: Adverbs never deleted (negation, focus and question words).
KEEP_ADVERBS = {
    "not",
    "n't",
    "never",
    "also",
    "too",
    "so",
    "then",
    "there",
    "here",
    "how",
    "when",
    "where",
    "why",
}

#: Auxiliary forms by (form, plural subject): the form agreeing with the new subject.
AGREE = {
    ("is", True): "are", ("are", False): "is", ("was", True): "were", ("were", False): "was",
    ("has", True): "have", ("have", False): "has", ("does", True): "do", ("do", False): "does",
}  # fmt: skip

#: Units by dimension, (singular, plural); a unit changes only within its dimension.
UNITS = [
    [("millimeter", "millimeters"), ("centimeter", "centimeters"), ("meter", "meters"),
     ("kilometer", "kilometers"), ("inch", "inches"), ("foot", "feet"), ("yard", "yards"), ("mile", "miles")],
    [("milligram", "milligrams"), ("gram", "grams"), ("kilogram", "kilograms"), ("pound", "pounds"),
     ("ounce", "ounces"), ("ton", "tons")],
    [("second", "seconds"), ("minute", "minutes"), ("hour", "hours"), ("day", "days"), ("week", "weeks"),
     ("month", "months"), ("year", "years")],
    [("milliliter", "milliliters"), ("liter", "liters"), ("gallon", "gallons"), ("cup", "cups")],
    [("dollar", "dollars"), ("euro", "euros"), ("cent", "cents"), ("rupee", "rupees")],
    [("mm", "mm"), ("cm", "cm"), ("km", "km"), ("ft", "ft")],
    [("mg", "mg"), ("kg", "kg"), ("lb", "lbs"), ("oz", "oz")],
]  # fmt: skip

#: Number words from zero to twenty and the tens, for ``5`` <-> ``five`` (number formatting).
NUMBER_WORDS = {
    0: "zero", 1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
    9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen",
    16: "sixteen", 17: "seventeen", 18: "eighteen", 19: "nineteen", 20: "twenty", 30: "thirty",
    40: "forty", 50: "fifty", 60: "sixty", 70: "seventy", 80: "eighty", 90: "ninety", 100: "a hundred",
}  # fmt: skip

#: Letters next to each other on a QWERTY keyboard (typo substitutions).
KEYBOARD = {
    "a": "qwsz", "b": "vghn", "c": "xdfv", "d": "serfcx", "e": "wsdr", "f": "drtgvc", "g": "ftyhbv",
    "h": "gyujnb", "i": "ujko", "j": "huikmn", "k": "jiolm", "l": "kop", "m": "njk", "n": "bhjm",
    "o": "iklp", "p": "ol", "q": "wa", "r": "edft", "s": "awedxz", "t": "rfgy", "u": "yhji",
    "v": "cfgb", "w": "qase", "x": "zsdc", "y": "tghu", "z": "asx",
}  # fmt: skip

#: Verb antonyms WordNet lacks or buries (``hire`` -> ``fire``); looked up both ways.
VERB_ANTONYMS = [
    ("hire", "fire"), ("buy", "sell"), ("win", "lose"), ("open", "close"), ("arrive", "leave"),
    ("accept", "reject"), ("increase", "decrease"), ("remember", "forget"), ("pass", "fail"),
    ("start", "stop"), ("love", "hate"), ("allow", "forbid"), ("push", "pull"), ("raise", "lower"),
    ("enter", "exit"), ("agree", "disagree"), ("like", "dislike"), ("include", "exclude"),
    ("rise", "fall"), ("lend", "borrow"), ("send", "receive"), ("appear", "disappear"),
    ("confirm", "deny"), ("approve", "reject"), ("attack", "defend"), ("gain", "lose"),
    ("save", "spend"), ("catch", "miss"), ("ask", "answer"), ("add", "remove"), ("build", "destroy"),
    ("expand", "shrink"), ("praise", "criticize"), ("succeed", "fail"), ("lock", "unlock"),
    ("float", "sink"), ("arrive", "depart"), ("find", "lose"), ("give", "take"),
]  # fmt: skip

#: Adjective antonyms for predicates and modifiers (``early`` -> ``late``); looked up both ways.
ADJECTIVE_ANTONYMS = [
    ("early", "late"), ("cheap", "expensive"), ("easy", "difficult"), ("full", "empty"),
    ("safe", "dangerous"), ("rich", "poor"), ("happy", "sad"), ("open", "closed"), ("busy", "free"),
    ("hot", "cold"), ("wet", "dry"), ("clean", "dirty"), ("quiet", "noisy"), ("strong", "weak"),
    ("young", "old"), ("long", "short"), ("heavy", "light"), ("fast", "slow"), ("loud", "quiet"),
    ("big", "small"), ("large", "small"), ("good", "bad"), ("new", "old"), ("high", "low"),
    ("true", "false"), ("right", "wrong"), ("alive", "dead"), ("awake", "asleep"), ("tall", "short"),
    ("hard", "easy"), ("warm", "cool"), ("polite", "rude"), ("honest", "dishonest"), ("legal", "illegal"),
    ("possible", "impossible"), ("correct", "incorrect"), ("friendly", "unfriendly"), ("kind", "cruel"),
]  # fmt: skip

#: Opposites with nothing between them, so that "not" one is the other: ``is closed`` means ``is
#: not open``, ``forgot`` means ``did not remember`` (``hot`` / ``cold`` and ``hire`` / ``fire`` are
#: not such pairs); (plain, negative): negated_antonym turns the negative one, as the main
#: predicate, into "not" the plain one.
COMPLEMENTARY_ADJECTIVES = [
    ("open", "closed"), ("alive", "dead"), ("true", "false"), ("correct", "incorrect"),
    ("possible", "impossible"), ("legal", "illegal"), ("awake", "asleep"), ("present", "absent"),
    ("visible", "invisible"), ("available", "unavailable"),
    ("complete", "incomplete"), ("equal", "unequal"), ("able", "unable"), ("honest", "dishonest"),
    ("fair", "unfair"), ("safe", "unsafe"), ("lucky", "unlucky"), ("usual", "unusual"),
    ("common", "uncommon"), ("necessary", "unnecessary"), ("familiar", "unfamiliar"),
    ("clear", "unclear"), ("guilty", "innocent"), ("sober", "drunk"), ("permanent", "temporary"),
    ("certain", "uncertain"), ("aware", "unaware"), ("happy", "unhappy"), ("willing", "unwilling"),
]  # fmt: skip
COMPLEMENTARY_VERBS = [
    ("remember", "forget"), ("accept", "reject"), ("include", "exclude"), ("allow", "forbid"),
    ("obey", "disobey"), ("like", "dislike"), ("agree", "disagree"), ("trust", "distrust"),
    ("approve", "disapprove"),
]  # fmt: skip

#: Times of day and relative days, swapped within their list (date/time changes).
RELATIVE_TIMES = [
    ["yesterday", "today", "tomorrow"],
    ["morning", "afternoon", "evening", "night"],
    ["last", "next"],
    ["before", "after"],
    ["spring", "summer", "autumn", "winter"],
]
