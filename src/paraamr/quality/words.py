"""Word tables of the quality operators (contractions, numbers, names, calendar, units, ...).

Data only: the operators in :mod:`paraamr.quality.positive` and :mod:`paraamr.quality.negative`
read these tables; extend a table here to widen an operator.

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
