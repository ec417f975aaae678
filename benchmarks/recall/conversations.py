"""A generated long-conversation memory with questions and their answers.

:func:`build` writes, deterministically from a seed, what a chat agent records
of many long conversations between two people: one memory item per turn
(``content={"text": <the turn>}``, ``meta={"session_id", "speaker", "turn"}``,
``created_at`` = the time of the turn, scope ``conv:<i>``), sessions days or
weeks apart, turns a minute or so apart, and the questions someone could
later ask about those people, each with the ids of the turns that answer it.
No language model and no network are involved: the dialogue comes from
templates filled from word lists, so two builds with the same arguments give
identical turns, ids, edges and questions. Nothing here was tuned on any
external benchmark.

What a conversation holds (two named speakers, ``sessions`` sessions):

- **episodes**: short exchanges about one speaker's life (a pet adopted, a
  trip planned and reported on, an injury, a concert, a book recommended, a
  course, a purchase, a party...), written as chat: often the fact is in a
  reply that refers back to the other person's question ("Did you go back
  to the rescue centre in the end?" - "We did, and we brought home a beagle
  puppy last Sunday."; "Is that you in a green Mini in your photo?" - "Yep,
  that one's ours now!"), so the turn that answers a question does not
  always contain the question's words: its neighbour does.
- **a recurring cast**: each speaker's relatives and friends are introduced
  once ("my sister Rosa") and later named without the relation ("Rosa had
  her baby!"); pets, teachers and partners come back in later sessions too.
- **dated events**: absolute dates ("on 3 March") and expressions relative
  to the session's date ("yesterday", "two weeks ago", "next Friday"); the
  question's ``answer`` gives the resolved date.
- **facts that change**: a job, a home town, a class's day, a car, a diet,
  the book being read, a race being trained for, a relationship, a TV
  series, a favourite restaurant: stated in an early session and changed
  later, once or twice. The agent notices the change and records a
  ``SUPERSEDES`` edge from the new turn to the one it replaces (as
  :mod:`benchmarks.recall.memory` does); the old turn stays.
- **small talk** between the episodes (greetings, weather, weekend plans,
  loosely related remarks) that shares the vocabulary without answering.

Turns are first person, so a speaker's own turns never contain their name
(the other one greets them by it now and then): a question's name alone does
not tell the conversations apart, as in any chat log recorded verbatim.

Questions (:class:`Question`) name the speaker they are about (retrieval
runs over every conversation at once) and are written from their own
templates with synonyms ("What is Maya's pup called?" for "Pepper! The kids
chose it."), never by copying a turn. Categories:

- ``single-hop``: one turn answers it;
- ``multi-hop``: two or three turns are needed (details spread over adjacent
  turns, a relative named in one session and her news in another, the
  destinations of several trips);
- ``temporal``: "when" questions; the answering turn carries the date or
  time expression (:data:`TIME_EXPRESSION` matches it);
- ``knowledge-update``: what holds now; the answer is the newest turn about
  the fact, the older turns it superseded are the question's ``stale`` ids.

Determinism: one :class:`random.Random` seeded with ``seed`` plans the
content, a second (``seed`` + 1) drives the clock and the ids (UUIDv7s built
from the turn's time, as :mod:`benchmarks.recall.memory` does). Timestamps
are unix milliseconds (UTC).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import memex
from benchmarks._gen import uuid7_text
from memex.state.graph import GraphState

__all__ = [
    "CATEGORIES",
    "DEFAULT_CONVERSATIONS",
    "DEFAULT_SESSIONS",
    "MIN_SESSIONS",
    "START",
    "TIME_EXPRESSION",
    "Conversations",
    "Question",
    "Turn",
    "build",
]

#: Conversations and sessions per conversation of the default build.
DEFAULT_CONVERSATIONS = 12
DEFAULT_SESSIONS = 20
#: The fewest sessions a conversation may have (facts change in later sessions).
MIN_SESSIONS = 6
#: The question categories, in report order.
CATEGORIES = ("single-hop", "multi-hop", "temporal", "knowledge-update")
#: Midnight UTC of the first conversation's first day (a Monday).
START = date(2024, 1, 8)
#: Matches the date or time expression every temporal question's answer carries.
TIME_EXPRESSION = re.compile(
    r"\b(yesterday|tomorrow|ago|last|next|this (?:weekend|monday|tuesday|wednesday|thursday"
    r"|friday|saturday|sunday)|in (?:two|three|four) weeks|weekend"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|january|february|march|april|may|june|july|august|september|october|november|december)\b",
    re.IGNORECASE,
)

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_NUMBER = {2: "two", 3: "three", 4: "four", 5: "five", 10: "ten"}


@dataclass(frozen=True)
class Turn:
    """One recorded turn of a conversation.

    Attributes:
        id: the memory item's id (a UUIDv7 whose time is ``at``).
        conversation: the conversation's index (0-based); its scope is ``conv:<i>``.
        session: the session's index in the conversation (0-based).
        index: the turn's position in the session (0-based).
        speaker: the speaker's name.
        text: what was said (the item's ``content["text"]``).
        at: unix ms of the turn (the item's ``created_at``).
    """

    id: str
    conversation: int
    session: int
    index: int
    speaker: str
    text: str
    at: int


@dataclass(frozen=True)
class Question:
    """A question and the turns that answer it.

    Attributes:
        text: the question (names the speaker it is about).
        answers: ids of the turns that answer it, at least one (two or more
            for ``multi-hop``; the newest version of the fact for
            ``knowledge-update``).
        category: one of :data:`CATEGORIES`.
        conversation: the conversation it is about (0-based).
        scope: that conversation's scope (``conv:<i>``).
        answer: the expected answer in words (a resolved date for temporal ones).
        stale: ids of the superseded versions of a changed fact (oldest first);
            empty unless ``knowledge-update``.
        topic: what it asks about (``"job"``, ``"pet"``, ``"trip"``, ...).
    """

    text: str
    answers: list[str]
    category: str
    conversation: int
    scope: str
    answer: str
    stale: list[str] = field(default_factory=list)
    topic: str = ""


@dataclass
class Conversations:
    """A built benchmark: the memory, its turns and questions.

    Attributes:
        state: the :class:`memex.GraphState` (one item per turn, ``SUPERSEDES`` edges).
        turns: every turn, in the order written (by time).
        questions: the questions, conversation by conversation.
        speakers: each conversation's two speakers' names.
        seed, conversations, sessions: the arguments it was built with.
    """

    state: GraphState
    turns: list[Turn]
    questions: list[Question]
    speakers: list[tuple[str, str]]
    seed: int
    conversations: int
    sessions: int


# -- the world --------------------------------------------------------------------------------

_SPEAKERS = [
    ("Maya", "f"),
    ("Tomas", "m"),
    ("Priya", "f"),
    ("Jonas", "m"),
    ("Keiko", "f"),
    ("Samir", "m"),
    ("Lucia", "f"),
    ("Owen", "m"),
    ("Nadia", "f"),
    ("Victor", "m"),
    ("Amara", "f"),
    ("Kenji", "m"),
    ("Sofia", "f"),
    ("Pavel", "m"),
    ("Hana", "f"),
    ("Diego", "m"),
    ("Freya", "f"),
    ("Malik", "m"),
    ("Ingrid", "f"),
    ("Omar", "m"),
    ("Zoe", "f"),
    ("Felix", "m"),
    ("Leila", "f"),
    ("Ravi", "m"),
    ("Marta", "f"),
    ("Luca", "m"),
    ("Chloe", "f"),
    ("Ben", "m"),
    ("Yasmin", "f"),
    ("Arjun", "m"),
    ("Elsa", "f"),
    ("Kofi", "m"),
]
_CAST_NAMES = {
    "f": [
        "Rosa",
        "Ida",
        "Elena",
        "Grace",
        "Nora",
        "Yuki",
        "Ana",
        "Beatriz",
        "Clara",
        "Dana",
        "Esther",
        "Fatima",
        "Helen",
        "Iris",
        "Jade",
        "Laila",
        "Mei",
        "Olivia",
        "Paula",
        "Ruth",
        "Sienna",
        "Tess",
    ],
    "m": [
        "Adam",
        "Bruno",
        "Carlos",
        "Daniel",
        "Emil",
        "Finn",
        "George",
        "Hugo",
        "Ivan",
        "Jakob",
        "Karim",
        "Lars",
        "Marco",
        "Nico",
        "Oscar",
        "Peter",
        "Rami",
        "Stefan",
        "Theo",
        "Yusuf",
        "Wes",
        "Andre",
    ],
}
_PRONOUNS = {"f": ("she", "her", "her"), "m": ("he", "him", "his")}

#: (relation as said, gender or "" for either, paraphrases used in questions, young).
_RELATIONS: list[tuple[str, str, tuple[str, ...], bool]] = [
    ("sister", "f", ("sister", "sis"), True),
    ("brother", "m", ("brother", "bro"), True),
    ("mum", "f", ("mother", "mom"), False),
    ("dad", "m", ("father", "old man"), False),
    ("best friend", "", ("closest friend", "best mate"), True),
    ("cousin", "", ("cousin",), True),
    ("colleague", "", ("co-worker", "workmate"), True),
    ("neighbour", "", ("next-door neighbor", "neighbor"), True),
    ("flatmate", "", ("roommate", "housemate"), True),
    ("grandmother", "f", ("grandma", "nan"), False),
    ("aunt", "f", ("aunt", "auntie"), False),
    ("uncle", "m", ("uncle",), False),
    ("old school friend", "", ("friend from school", "childhood friend"), True),
]
_TRAITS = [
    "full of stories",
    "always late",
    "the funniest person I know",
    "working far too hard",
    "planning some new adventure",
    "trying to feed everyone",
]
_BABIES = {
    "girl": ["Mila", "Elsie", "Luna", "Ivy", "Noa", "Ada", "Wren", "Pia"],
    "boy": ["Leo", "Arlo", "Otto", "Ezra", "Jonah", "Felipe", "Rory", "Kai"],
}
_PET_NAMES = [
    "Biscuit",
    "Pepper",
    "Mochi",
    "Juniper",
    "Waffles",
    "Ziggy",
    "Olive",
    "Pickle",
    "Nutmeg",
    "Tofu",
    "Clementine",
    "Bandit",
    "Hazel",
    "Miso",
    "Pretzel",
    "Dumpling",
]
#: (what was adopted, animal word, paraphrases used in questions).
_PETS = [
    ("a rescue greyhound", "dog", ("dog", "pooch", "four-legged friend")),
    ("a beagle puppy", "dog", ("dog", "pup", "four-legged friend")),
    ("a scruffy terrier", "dog", ("dog", "pooch")),
    ("a border collie", "dog", ("dog", "sheepdog")),
    ("a little tabby kitten", "cat", ("cat", "kitty")),
    ("a grumpy old Persian cat", "cat", ("cat", "feline")),
    ("a fluffy guinea pig", "guinea pig", ("guinea pig", "rodent")),
    ("a lop-eared rabbit", "rabbit", ("rabbit", "bunny")),
    ("a green parakeet", "bird", ("bird", "budgie")),
]
_SWALLOWED = ["a sock", "a rubber duck", "half a birthday cake", "a hair tie", "a bottle cap"]
#: (city, country or region, activity said in the report, activity paraphrase).
_TRIPS = [
    ("Kyoto", "Japan", "hiked up to a different temple every morning", "temples"),
    ("Lisbon", "Portugal", "ate custard tarts for breakfast and took the old trams", "trams"),
    ("Reykjavik", "Iceland", "drove out to the hot springs and saw the northern lights", "aurora"),
    ("Marrakesh", "Morocco", "got lost in the souks and did a cooking class", "markets"),
    ("Hanoi", "Vietnam", "rode scooters around the lakes and ate pho twice a day", "noodles"),
    ("Oaxaca", "Mexico", "learned to make mole and climbed the ruins", "ruins"),
    ("Tbilisi", "Georgia", "soaked in the sulphur baths and drank far too much wine", "baths"),
    ("Cape Town", "South Africa", "climbed Table Mountain and went whale watching", "whales"),
    ("Vancouver", "Canada", "kayaked around the harbour and cycled the sea wall", "kayaking"),
    ("Edinburgh", "Scotland", "went to a comedy show every single night", "comedy"),
    (
        "Istanbul",
        "Turkey",
        "took ferries across the Bosphorus and haggled at the bazaar",
        "ferries",
    ),
    ("Seville", "Spain", "watched flamenco and toured the palace gardens", "dancing"),
    ("Bergen", "Norway", "sailed up the fjords and it rained every day", "fjords"),
    ("Crete", "Greece", "swam in a different cove every day", "beaches"),
    ("Krakow", "Poland", "ate pierogi everywhere and went down the salt mine", "salt mine"),
    ("Buenos Aires", "Argentina", "took tango lessons and ate steak every night", "tango"),
]
_HOME_CITIES = [
    ("Leeds", "by the canal"),
    ("Bristol", "up the hill by the park"),
    ("Utrecht", "near the old market"),
    ("Ghent", "right next to the station"),
    ("Porto", "by the river"),
    ("Lyon", "in the old town"),
    ("Graz", "near the university"),
    ("Aarhus", "a short walk from the beach"),
    ("Gdansk", "above a bakery"),
    ("Turin", "by the big park"),
    ("Bologna", "under the arcades"),
    ("Malmo", "by the harbour"),
    ("Cork", "near the English Market"),
    ("Bilbao", "across from the museum"),
    ("Brno", "close to the castle"),
    ("Galway", "on the quiet side of town"),
]
#: (role, workplace, role paraphrase).
_JOBS = [
    ("nurse", "St Mary's hospital", "nursing"),
    ("barista", "a little café called Grind", "coffee"),
    ("junior architect", "a small design studio", "architecture"),
    ("primary school teacher", "the school on Hill Street", "teaching"),
    ("software developer", "a logistics start-up", "programming"),
    ("sous chef", "an Italian restaurant in the centre", "cooking"),
    ("bookseller", "the independent bookshop", "books"),
    ("graphic designer", "an advertising agency", "design"),
    ("physiotherapist", "a sports clinic", "physio"),
    ("accountant", "one of the big firms", "accounting"),
    ("librarian", "the city library", "libraries"),
    ("data analyst", "the council", "data"),
    ("vet nurse", "an animal hospital", "animals"),
    ("electrician", "my uncle's company", "electrics"),
    ("translator", "a legal agency", "languages"),
    ("bike mechanic", "the repair shop on Mill Lane", "bikes"),
]
#: (class as said, paraphrase used in questions).
_CLASSES = [
    ("pottery", "ceramics"),
    ("salsa", "dance"),
    ("life drawing", "art"),
    ("choir", "singing"),
    ("Spanish", "language"),
    ("bouldering", "climbing"),
    ("jiu-jitsu", "martial arts"),
    ("yoga", "stretching"),
    ("swimming club", "swim training"),
    ("chess club", "chess"),
]
_CARS = [
    "an old red Fiat Panda",
    "a blue Toyota Yaris",
    "a silver Volvo estate",
    "a second-hand VW Golf",
    "an electric Nissan Leaf",
    "a white camper van",
    "a battered Ford Fiesta",
    "a green Mini",
    "a Vespa scooter",
]
_DIETS = ["vegetarian", "vegan", "pescatarian", "flexitarian", "dairy-free", "gluten-free"]
_BOOKS = [
    ("The Salt Road", "Ines Varga"),
    ("A Winter of Lanterns", "Tobias Reyne"),
    ("Paper Birds", "Halima Osei"),
    ("The Cartographer's Daughter", "Mirela Stan"),
    ("Nine Small Fires", "Jon Arkwright"),
    ("Under the Linden Trees", "Sabine Kohl"),
    ("The Quiet Engine", "Dev Malhotra"),
    ("Slow Tide", "Orla Finnegan"),
    ("The Glass Orchard", "Camille Dufresne"),
    ("Harbour of Crows", "Piet Janssen"),
    ("What the River Kept", "Ama Boateng"),
    ("The Last Ferry Home", "Lukas Brenner"),
    ("Moths in June", "Signe Holm"),
    ("The Clockmaker's Debt", "Rafael Ortiz"),
    ("A Field Guide to Leaving", "Naomi Achterberg"),
    ("Copper Sky", "Yannick Faure"),
    ("The Tenant on the Fourth Floor", "Greta Lind"),
    ("Orange Weather", "Kwame Mensah"),
    ("The Beekeeper's Almanac", "Hedda Rask"),
    ("Small Hours", "Emeka Obi"),
]
_GOALS = [
    "a 10k",
    "a half marathon",
    "the city marathon",
    "a sprint triathlon",
    "a 100 km charity bike ride",
    "an open-water swim",
    "a mountain ultra",
]
_SHOWS = [
    "Harbour Lights",
    "The Long Field",
    "Night Shift Bakery",
    "Copper Valley",
    "The Ninth Floor",
    "Ward Seven",
    "Northern Line",
    "Salt and Stone",
    "Orbit Station",
    "The Glasshouse",
    "Midnight Tenants",
    "Wild Acre",
]
#: (restaurant, dish it is known for).
_SPOTS = [
    ("Casa Lupe", "tacos"),
    ("the Blue Door", "brunch"),
    ("Pho Saigon", "pho"),
    ("Bao House", "steamed buns"),
    ("Mama Rosa's", "pizza"),
    ("the Corner Bakery", "cinnamon buns"),
    ("Golden Lotus", "dumplings"),
    ("Sahara Grill", "falafel"),
    ("Trattoria Nonna", "fresh pasta"),
    ("Curry Leaf", "dosa"),
    ("Smoke and Oak", "barbecue"),
    ("Ramen Kaze", "ramen"),
]
_STAGES = [
    ("seeing", "dating"),
    ("living with", "living together"),
    ("engaged to", "engaged"),
    ("married to", "married"),
]
#: (body part, what happened, how, recovery as said).
_INJURIES = [
    ("ankle", "sprained", "playing five-a-side football", "six weeks without running"),
    ("wrist", "fractured", "falling off my bike", "a cast for a whole month"),
    ("back", "pulled a muscle in", "carrying a sofa up three floors", "physio twice a week"),
    ("knee", "twisted", "skiing", "no sport until the spring"),
    ("shoulder", "dislocated", "at the climbing wall", "a sling for three weeks"),
    ("finger", "broke", "in a car door", "a splint for a fortnight"),
]
_PARTS_Q = {
    "ankle": "ankle",
    "wrist": "arm",
    "back": "back",
    "knee": "leg",
    "shoulder": "shoulder",
    "finger": "hand",
}
_BANDS = [
    "Velvet Harbour",
    "Neon Orchard",
    "The Quiet Foxes",
    "Lana Moreau",
    "Brass Atlas",
    "Midnight Ferns",
    "The Lemon Trees",
    "Static Choir",
    "Odile and the Waves",
    "Paper Lanterns",
]
_VENUES = [
    "the Old Cattle Market",
    "the Apollo",
    "the park bandstand",
    "Warehouse 9",
    "the cathedral",
    "a tiny jazz bar",
]
#: (dish as said, paraphrase used in questions, the secret).
_DISHES = [
    ("lasagne", "pasta bake", "a spoonful of nutmeg in the white sauce"),
    ("a lemon drizzle cake", "citrus sponge", "zesting the lemons straight into the sugar"),
    ("a massive pot of chilli", "bean stew", "a square of dark chocolate"),
    ("paella", "Spanish rice dish", "not stirring it once the stock is in"),
    ("a Thai green curry", "curry", "frying the paste until it smells toasty"),
    ("sourdough pizzas", "homemade pizza", "a 48-hour rise in the fridge"),
    ("a tarte tatin", "upside-down apple tart", "a pinch of sea salt in the caramel"),
    ("shakshuka", "baked eggs", "smoked paprika and a lot of patience"),
]
#: (thing bought, word used in the turn, paraphrase used in questions, why).
_PURCHASES = [
    ("a road bike", "bike", "bicycle", "my commute is only getting longer"),
    ("an upright piano", "piano", "musical instrument", "I miss playing like I did as a kid"),
    ("a huge green sofa", "sofa", "couch", "the old one was literally falling apart"),
    ("a film camera", "camera", "analogue camera", "phone photos all look the same to me"),
    ("a telescope", "telescope", "stargazing gear", "the skies here are so clear at night"),
    ("a sewing machine", "machine", "sewing kit", "I want to make my own clothes"),
    ("an inflatable kayak", "kayak", "boat", "the lake is only ten minutes away"),
    ("a coffee grinder", "grinder", "espresso gear", "pre-ground coffee is a crime"),
]
_RACES = [("10k", "ten-kilometre race"), ("half marathon", "half"), ("park run", "5k")]
_RACE_TIMES = ["52 minutes", "1 hour 58", "24:31", "47 minutes flat", "2 hours 9", "29:10"]
_CONF_TOPICS = [
    "accessible playgrounds",
    "fixing hospital rotas",
    "cheap solar for schools",
    "what bees tell us about cities",
    "making forms less awful",
    "old maps and new data",
]
_HOBBIES = [
    ("gardening", "a fancy pair of pruning shears"),
    ("birdwatching", "a pocket bird guide"),
    ("baking", "a proper stand mixer"),
    ("jigsaw puzzles", "a thousand-piece puzzle of Venice"),
    ("knitting", "some really soft merino yarn"),
    ("cycling", "a new bike light"),
    ("vinyl records", "a voucher for the record shop"),
    ("board games", "that new dragon board game"),
]
_VOLUNTEER = [
    "the animal shelter",
    "the food bank",
    "the hospice charity shop",
    "the community garden",
    "a homework club for kids",
    "the river clean-up group",
]
#: (instrument, paraphrase used in questions).
_INSTRUMENTS = [
    ("cello", "string instrument"),
    ("saxophone", "sax"),
    ("guitar", "six-string"),
    ("drums", "drum kit"),
    ("violin", "fiddle"),
    ("trumpet", "brass instrument"),
]
_TEACHERS = ["Mr Albrecht", "Madame Roux", "a guy called Senna", "Mrs Okonkwo", "old Mr Petrov"]
_COLOURS = ["a deep forest green", "terracotta", "mustard yellow", "navy blue", "dusty pink"]
_FILMS = [
    "The Lighthouse Keeper",
    "Ten Thousand Kites",
    "Winter Circus",
    "The Borrowed Summer",
    "Red Lanterns",
    "Afterglow",
    "The Swimmers",
    "Paper Moon Hotel",
]
_COURSES = [
    ("astronomy", "the stars"),
    ("Italian cooking", "cooking"),
    ("furniture restoration", "woodwork"),
    ("creative writing", "writing"),
    ("first aid", "emergency care"),
    ("beekeeping", "bees"),
]
_THEMES = ["seventies disco", "a murder mystery", "dress as your favourite fruit", "pirates"]
#: (crop, singular, amount).
_CROPS = [
    ("tomatoes", "tomato", "four kilos"),
    ("courgettes", "courgette", "about twenty"),
    ("chillies", "chilli", "a hundred"),
    ("potatoes", "potato", "two full sacks"),
]
_SUBJECTS = ["marine biology", "law", "music", "engineering", "history", "nursing"]
_RETIRE_PLANS = [
    "sail around the Greek islands",
    "open a tiny bookshop",
    "learn to paint",
    "walk the Camino",
]


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: ``"an electrician"``, ``"a nurse"``."""
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _day(d: date) -> str:
    """A date in words: ``"Sunday 3 March 2024"``."""
    return f"{_WEEKDAYS[d.weekday()]} {d.day} {_MONTHS[d.month - 1]} {d.year}"


# -- planning ---------------------------------------------------------------------------------

#: One line of a dialogue: role ("S" the subject speaker, "O" the other), the facts
#: the line carries ("a+b", or "" for none), the template or alternative templates.
_Line = tuple[str, str, str | tuple[str, ...]]
_Dialogue = list[_Line]


@dataclass(frozen=True)
class _Person:
    """A named person and their pronouns."""

    name: str
    gender: str

    @property
    def subj(self) -> str:
        return _PRONOUNS[self.gender][0]

    @property
    def obj(self) -> str:
        return _PRONOUNS[self.gender][1]

    @property
    def poss(self) -> str:
        return _PRONOUNS[self.gender][2]

    def kw(self, prefix: str) -> dict[str, str]:
        """Template arguments: ``{prefix}`` the name, ``{prefix}s/o/p`` the pronouns
        (subject, object, possessive) and, for a lower-case prefix, ``{Prefix}s/o/p``
        them capitalised."""
        cap = prefix[0].upper() + prefix[1:]
        out = {prefix: self.name}
        for suffix, word in (("s", self.subj), ("o", self.obj), ("p", self.poss)):
            out[prefix + suffix] = word
            if cap != prefix:
                out[cap + suffix] = word.capitalize()
        return out


@dataclass
class _PTurn:
    """A planned turn: speaker (0 or 1), text and key (ids are assigned when written)."""

    speaker: int
    text: str
    key: str


@dataclass
class _Ask:
    """A planned question about turn keys."""

    text: str
    answers: list[str]
    category: str
    answer: str
    stale: list[str]
    topic: str


@dataclass
class _Cast:
    """A relative or friend of a speaker, introduced in one session."""

    person: _Person
    rel: str
    rel_q: tuple[str, ...]
    young: bool
    intro: dict[str, str]
    session: int


class _Conv:
    """Plans one conversation: its sessions' episodes, its questions and its supersessions.

    Args:
        rng: the content PRNG (shared by all conversations, used in a fixed order).
        index: the conversation's index (0-based).
        pair: the two speakers.
        dates: each session's date.
    """

    def __init__(
        self, rng: random.Random, index: int, pair: tuple[_Person, _Person], dates: list[date]
    ) -> None:
        self.rng = rng
        self.index = index
        self.people = pair
        self.dates = dates
        self.n = len(dates)
        self.episodes: list[list[list[_PTurn]]] = [[] for _ in dates]
        self.asks: list[_Ask] = []
        self.supersedes: list[tuple[str, str]] = []
        self.cast: list[list[_Cast]] = [[], []]
        self.names: set[str] = {p.name for p in pair}
        self._n = 0

    # -- helpers ---------------------------------------------------------------------------
    def key(self) -> str:
        """A fresh turn key."""
        self._n += 1
        return f"c{self.index}.t{self._n}"

    def pick(self, pool: Sequence[Any], used: set[Any] | None = None) -> Any:
        """A random element of ``pool`` not in ``used`` (then added to it)."""
        free = [x for x in pool if used is None or x not in used] or list(pool)
        x = self.rng.choice(free)
        if used is not None:
            used.add(x)
        return x

    def new_person(self, gender: str = "") -> _Person:
        """A cast member with a name not yet used in this conversation."""
        g = gender or self.rng.choice("fm")
        name = self.pick(_CAST_NAMES[g], self.names)
        return _Person(name, g)

    def fill(self, template: str | tuple[str, ...], **kw: str) -> str:
        """``template`` (or a random one of several) filled, first letter capitalised."""
        t = template if isinstance(template, str) else self.rng.choice(template)
        text = t.format(**kw)
        return text[0].upper() + text[1:]

    def talk(
        self, session: int, who: int, variants: Sequence[_Dialogue], **kw: str
    ) -> dict[str, str]:
        """Write one of ``variants`` as an episode of ``session`` about speaker ``who``.

        ``{you}`` is the listener's name. Returns the
        carried facts: ``{fact: key of the turn that carries it}``.
        """
        episode, carried = self.render(who, self.rng.choice(variants), **kw)
        self.episodes[session].append(episode)
        return carried

    def render(
        self, who: int, dialogue: _Dialogue, **kw: str
    ) -> tuple[list[_PTurn], dict[str, str]]:
        """The turns of ``dialogue`` about speaker ``who`` and the facts they carry."""
        episode: list[_PTurn] = []
        carried: dict[str, str] = {}
        for role, facts, template in dialogue:
            speaker = who if role == "S" else 1 - who
            text = self.fill(template, you=self.people[1 - speaker].name, **kw)
            key = self.key()
            episode.append(_PTurn(speaker, text, key))
            for f in facts.split("+") if facts else ():
                carried[f] = key
        return episode, carried

    def ask(
        self,
        who: int,
        category: str,
        topic: str,
        templates: tuple[str, ...],
        carried: dict[str, str],
        facts: Sequence[str],
        answer: str,
        *,
        stale: Sequence[str] = (),
        **kw: str,
    ) -> bool:
        """Plan a question about speaker ``who`` answered by the turns carrying ``facts``.

        Nothing is asked (returns False) when a fact is not carried by the
        dialogue variant that was written, or when the turns do not fit the
        category (one turn for single-hop, temporal and knowledge-update,
        two or more for multi-hop).
        """
        if any(f not in carried for f in facts):
            return False
        keys = list(dict.fromkeys(carried[f] for f in facts))
        if (category == "multi-hop") != (len(keys) >= 2):
            return False
        person = self.people[who]
        qkw = {**person.kw("S"), "O": self.people[1 - who].name, **kw}
        text = self.fill(templates, **qkw)
        self.asks.append(_Ask(text, keys, category, answer, list(stale), topic))
        return True

    def past(self, session: int) -> tuple[str, str]:
        """A time expression for a day before the session, and that day in words."""
        d = self.dates[session]
        r = self.rng.randrange(10)
        if r == 0:
            return "yesterday", _day(d - timedelta(days=1))
        if r == 1:
            return "the day before yesterday", _day(d - timedelta(days=2))
        if r == 2:
            sat = d - timedelta(days=d.weekday() + 2)
            return "last weekend", f"the weekend of {_day(sat)}"
        if r == 3:
            k = self.rng.randrange(7)
            back = (d.weekday() - k) % 7 or 7
            return f"last {_WEEKDAYS[k]}", _day(d - timedelta(days=back))
        if r == 4:
            w = self.rng.choice([1, 2, 3])
            phrase = "a week ago" if w == 1 else f"{_NUMBER[w]} weeks ago"
            return phrase, _day(d - timedelta(days=7 * w))
        if r == 5:
            n = self.rng.choice([3, 4, 5, 10])
            return f"{_NUMBER[n]} days ago", _day(d - timedelta(days=n))
        if r in (6, 7, 8):
            x = d - timedelta(days=self.rng.randint(3, 40))
            return f"on {x.day} {_MONTHS[x.month - 1]}", _day(x)
        first = d.replace(day=1) - timedelta(days=1)
        return "last month", f"{_MONTHS[first.month - 1]} {first.year}"

    def future(self, session: int, *, soon: bool = True) -> tuple[str, str, date]:
        """A time expression for a day after the session, that day in words, and the day
        (not tomorrow or this weekend unless ``soon``)."""
        d = self.dates[session]
        wd = d.weekday()
        r = self.rng.randrange(0 if soon else 2, 8)
        if r == 0:
            x = d + timedelta(days=1)
            return "tomorrow", _day(x), x
        if r == 1 and wd <= 4:
            x = d + timedelta(days=5 - wd)
            return "this weekend", f"the weekend of {_day(x)}", x
        if r in (1, 2):
            k = self.rng.randrange(7)
            x = d + timedelta(days=7 - wd + k)
            return f"next {_WEEKDAYS[k]}", _day(x), x
        if r == 3:
            x = d + timedelta(days=12 - wd)
            return "next weekend", f"the weekend of {_day(x)}", x
        if r == 4:
            w = self.rng.choice([2, 3, 4])
            x = d + timedelta(days=7 * w)
            return f"in {_NUMBER[w]} weeks", _day(x), x
        if r == 5:
            x = (d.replace(day=1) + timedelta(days=32)).replace(day=15)
            return "next month", f"{_MONTHS[x.month - 1]} {x.year}", x
        x = d + timedelta(days=self.rng.randint(5, 60))
        return f"on {x.day} {_MONTHS[x.month - 1]}", _day(x), x

    def session_after(self, day: date) -> int | None:
        """The first session after ``day``, or None."""
        for s, d in enumerate(self.dates):
            if d > day:
                return s
        return None


_REACT_GOOD = (
    "No way! That's brilliant.",
    "Oh, I love that.",
    "Amazing, good for you!",
    "Ha, that's wonderful news.",
    "Wow. Tell me more next time!",
)
_REACT_BAD = (
    "Oh no, that's awful.",
    "Ugh, I'm so sorry.",
    "That's rotten luck.",
    "Poor thing. Sending hugs.",
)


# -- facts that change ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Slot:
    """A fact about a speaker that changes.

    ``intro`` and ``change`` dialogues carry ``v`` (the value) and possibly
    ``when``; change templates also get the previous value's arguments with
    an ``old_`` prefix. ``questions`` ask for the current value;
    ``when_questions`` ask when the change happened (asked when the change's
    turn carrying ``v`` also carries ``when``).
    """

    topic: str
    intro: list[_Dialogue]
    change: list[_Dialogue]
    questions: tuple[str, ...]
    answer: str
    when_questions: tuple[str, ...] = ()


_SLOTS: dict[str, _Slot] = {
    "job": _Slot(
        "job",
        [
            [
                ("O", "", ("How's work treating you?", "Still enjoying work?")),
                (
                    "S",
                    "v",
                    (
                        "Busy! Still {a_role} at {place}, same early shifts as always.",
                        "Same old. I'm at {place} as {a_role}, it pays the bills.",
                    ),
                ),
            ],
            [
                (
                    "S",
                    "v",
                    "I've been {a_role} at {place} for three years now, can you believe it?",
                ),
                ("O", "", ("Time flies!", "Wow, three years already.")),
            ],
        ],
        [
            [
                ("O", "", ("Are you still at {old_place}?", "How are things at {old_place}?")),
                (
                    "S",
                    "v+when",
                    (
                        "Not any more! New job: I started as {a_role} at {place} {when}.",
                        "I left! I've been working as {a_role} at {place} since I started {when}.",
                    ),
                ),
                ("O", "", _REACT_GOOD),
            ],
            [
                (
                    "S",
                    "v",
                    "Big news: I handed in my notice. New job! I'm {a_role} at {place} now.",
                ),
                ("O", "", ("Finally! How is it?", "About time. Do you like it?")),
                ("S", "", ("So far so good.", "Honestly, best decision ever.")),
            ],
        ],
        (
            "What does {S} do for a living these days?",
            "What is {S}'s job now?",
            "What kind of work is {S} doing now?",
            "Where is {S} working at the moment?",
        ),
        "{role} at {place}",
        (
            "When did {S} begin {Sp} current position?",
            "When did {S} switch employers?",
            "When did {S} start the new job?",
        ),
    ),
    "home": _Slot(
        "home",
        [
            [
                (
                    "S",
                    "v",
                    (
                        "I love our little flat in {city}, {area}.",
                        "Six years in {city} now and I still love our street {area}.",
                    ),
                ),
                ("O", "", ("Sounds lovely.", "I really need to visit.")),
            ],
            [
                ("O", "", "Are you still enjoying {city}?"),
                ("S", "v", "Yes! Living {area} is the best, I can walk everywhere."),
            ],
        ],
        [
            [
                (
                    "S",
                    "v+when",
                    "We did it: we moved to {city} {when}! We live in a proper flat now.",
                ),
                ("O", "", ("Amazing! How's the new place?", "Whoa, big step. Do you like it?")),
                ("S", "", ("Tiny, but it's {area}.", "Boxes everywhere, but it's {area}.")),
            ],
            [
                ("O", "", ("Wait, are you still in {old_city}?", "How's {old_city}?")),
                ("S", "v+when", "Nope, we packed up and moved to {city} {when}. New flat {area}."),
            ],
        ],
        (
            "Which city does {S} live in now?",
            "Where has {S} moved to?",
            "What town is home for {S} these days?",
            "Where does {S} live these days?",
        ),
        "{city}",
        ("When did {S} relocate to {city}?", "When did {S} change cities?"),
    ),
    "class": _Slot(
        "class",
        [
            [
                ("S", "v", "My {act} class is on {day} evenings, it's the highlight of my week."),
                ("O", "", ("Love that.", "Good for you!")),
            ],
            [
                ("O", "", ("Fancy a drink on {day}?", "Free on {day} night?")),
                ("S", "v", "Can't, that's {act} night! Every {day} without fail."),
            ],
        ],
        [
            [
                ("S", "v", "Annoyingly, they've moved {act} to {day}s."),
                ("O", "", "Does that still work for you?"),
                ("S", "", "Just about."),
            ],
            [
                ("O", "", "Still doing {act} on {old_day}s?"),
                ("S", "v", "It's {day}s now, the teacher changed the timetable."),
            ],
        ],
        (
            "On which day of the week is {S}'s {para} session now?",
            "What night does {S} go to {act} these days?",
            "Which day is {S}'s {act} class on now?",
        ),
        "{day}",
    ),
    "car": _Slot(
        "car",
        [
            [
                ("S", "v", "I'm still driving {car}, it refuses to die."),
                ("O", "", ("Respect.", "Long may it live.")),
            ],
            [
                ("O", "", "How did you get to the coast?"),
                ("S", "v", "In {car}, windows down the whole way."),
            ],
        ],
        [
            [
                ("S", "v+when", "We finally sold the old car. New car: {car}, bought {when}!"),
                ("O", "", ("About time!", "Ha, RIP to the old one.")),
            ],
            [
                ("O", "", "Is that you in {car} in your photo?"),
                ("S", "v+when", "Yep, that one's ours now! We picked it up {when}."),
            ],
        ],
        (
            "What vehicle does {S} have now?",
            "What car does {S} own these days?",
            "What car does {S} drive now?",
        ),
        "{car}",
        ("When did {S} get {Sp} current vehicle?", "When did {S} buy the new car?"),
    ),
    "diet": _Slot(
        "diet",
        [
            [
                ("O", "", "Shall I book the steak place for Friday?"),
                ("S", "v", "Ha, you know I'm {diet}! Somewhere with options, please."),
            ],
            [
                ("S", "v", "Being {diet} has made me a much better cook, honestly."),
                ("O", "", "I believe it."),
            ],
        ],
        [
            [
                ("S", "v", "Small update on the diet front: I'm {diet} now, not {old_diet}."),
                ("O", "", "Whoa, since when?"),
                ("S", "", "A while. I feel great."),
            ],
            [
                ("O", "", "Are you still {old_diet}?"),
                ("S", "v+when", "I went {diet} {when}, actually! New diet, new me."),
            ],
        ],
        (
            "How does {S} eat at the moment?",
            "What diet is {S} following these days?",
            "What diet is {S} on now?",
        ),
        "{diet}",
    ),
    "reading": _Slot(
        "reading",
        [
            [
                ("S", "v", "I'm halfway through {title} by {author}, can't put it down."),
                ("O", "", "Ooh, add it to my list."),
            ],
            [
                ("O", "", "What are you reading at the moment?"),
                ("S", "v", "{title}. {author} is a genius."),
            ],
        ],
        [
            [
                (
                    "S",
                    "v",
                    "Finished {old_title} last night. Started reading {title} straight away.",
                ),
                ("O", "", "Any good so far?"),
                ("S", "", "Too early to tell!"),
            ],
            [
                ("O", "", "Did you like {old_title} in the end?"),
                ("S", "v", "Loved it. Now I'm reading {title} by {author}."),
            ],
        ],
        (
            "Which book is {S} in the middle of now?",
            "What is {S} reading these days?",
            "What book is {S} reading at the moment?",
        ),
        "{title} by {author}",
    ),
    "goal": _Slot(
        "goal",
        [
            [
                (
                    "S",
                    "v",
                    "I've signed up for {goal} in the autumn, so it's training every morning.",
                ),
                ("O", "", "You're mad. Good luck!"),
            ],
            [
                ("O", "", "Why are you always up so early?"),
                ("S", "v", "Training! {goal_cap} in October, remember?"),
            ],
        ],
        [
            [
                ("S", "v", "Change of plan: I'm training for {goal} now."),
                ("O", "", "Bigger or smaller?"),
                ("S", "", "Bigger, obviously."),
            ],
            [
                ("O", "", "How's the training for {old_goal} going?"),
                ("S", "v", "I dropped that, I'm training for {goal} instead now."),
            ],
        ],
        (
            "What race is {S} preparing for now?",
            "What is {S} currently doing instead for training?",
            "What is {S} training for these days?",
        ),
        "{goal}",
    ),
    "relationship": _Slot(
        "relationship",
        [
            [
                ("S", "v", "I've been seeing someone, actually. {partner}. It's early days."),
                ("O", "", "Tell me EVERYTHING."),
            ],
            [
                ("O", "", "Who's {partner}? You keep mentioning them."),
                ("S", "v", "Okay fine, we're dating. Happy now?"),
            ],
        ],
        [
            [
                ("O", "", "How are things with {partner}?"),
                ("S", "v+when", "{stage_news} {when}!"),
                ("O", "", _REACT_GOOD),
            ],
            [
                ("S", "v+when", "Guess what. {stage_news} {when}."),
                ("O", "", ("WHAT. Congratulations!", "Stop it! I'm so happy for you.")),
            ],
        ],
        (
            "What stage is {S}'s relationship with {partner} at now?",
            "Where do things stand between {S} and {partner} these days?",
            "How serious are {S} and {partner} at this point?",
        ),
        "{stage}",
        ("When did {S} and {partner} take their latest step together?",),
    ),
    "show": _Slot(
        "show",
        [
            [
                ("O", "", "Watching anything good?"),
                ("S", "v", "We're hooked on {show}. Three episodes a night."),
            ],
            [
                ("S", "v", "Have you seen {show}? I'm obsessed."),
                ("O", "", "Not yet, is it on the BBC?"),
            ],
        ],
        [
            [
                ("S", "v", "We gave up on {old_show}, it got silly. Now we're watching {show}."),
                ("O", "", "Ha, fair."),
            ],
            [
                ("O", "", "Did you finish {old_show}?"),
                ("S", "v", "Abandoned it! {show} is the show we're all watching now."),
            ],
        ],
        (
            "Which series is {S} watching these days?",
            "What TV programme is {S} currently into?",
            "What show is {S} hooked on now?",
        ),
        "{show}",
    ),
    "spot": _Slot(
        "spot",
        [
            [
                ("S", "v", "{place} is still my favourite, their {food} is unbeatable."),
                ("O", "", "We should go together sometime."),
            ],
            [
                ("O", "", "Where should we eat when I visit?"),
                ("S", "v", "{place}, no question. Get the {food}."),
            ],
        ],
        [
            [
                ("S", "v", "New favourite: {place}. Best {food} in town, sorry {old_place}."),
                ("O", "", "Bold claim!"),
            ],
            [
                ("O", "", "Want to meet at {old_place} on Friday?"),
                ("S", "v", "Let's do {place} instead, it's my new favourite. The {food}!"),
            ],
        ],
        (
            "Where does {S} like to eat out most these days?",
            "Which restaurant is {S}'s new favourite?",
            "What is {S}'s favourite place to eat now?",
        ),
        "{place}",
    ),
}


def _slot_values(c: _Conv, who: int, slot: str, n: int) -> list[dict[str, str]]:
    """``n`` distinct successive values of ``slot`` for speaker ``who``, as template arguments."""
    rng = c.rng
    if slot == "job":
        return [
            {"role": r, "a_role": _a(r), "place": p, "para": q, "v": r}
            for r, p, q in rng.sample(_JOBS, n)
        ]
    if slot == "home":
        return [{"city": ci, "area": a, "v": ci} for ci, a in rng.sample(_HOME_CITIES, n)]
    if slot == "class":
        act, para = rng.choice(_CLASSES)
        return [{"act": act, "para": para, "day": d, "v": d} for d in rng.sample(_WEEKDAYS, n)]
    if slot == "car":
        return [{"car": x, "v": x} for x in rng.sample(_CARS, n)]
    if slot == "diet":
        return [{"diet": x, "v": x} for x in rng.sample(_DIETS, n)]
    if slot == "reading":
        return [{"title": t, "author": a, "v": t} for t, a in rng.sample(_BOOKS, n)]
    if slot == "goal":
        return [
            {"goal": x, "goal_cap": x[0].upper() + x[1:], "v": x} for x in rng.sample(_GOALS, n)
        ]
    if slot == "relationship":
        partner = c.new_person().name
        start = 0
        out = []
        for i in range(n):
            said, stage = _STAGES[min(start + i, len(_STAGES) - 1)]
            news = {
                "living with": "We moved in together",
                "engaged to": f"{partner} and I got engaged",
                "married to": f"{partner} and I got married",
            }.get(said, "")
            out.append({"partner": partner, "stage": stage, "stage_news": news, "v": stage})
        return out
    if slot == "show":
        return [{"show": x, "v": x} for x in rng.sample(_SHOWS, n)]
    assert slot == "spot"
    return [{"place": p, "food": f, "v": p} for p, f in rng.sample(_SPOTS, n)]


def _plan_slot(c: _Conv, who: int, slot: str) -> None:
    """Plan a changing fact: its first statement, one or two changes, the questions."""
    spec = _SLOTS[slot]
    rng = c.rng
    changes = 2 if rng.random() < 0.3 and c.n >= 9 else 1
    first = rng.randrange(max(1, c.n // 3))
    later = sorted(rng.sample(range(first + 1, c.n), changes))
    sessions = [first, *later]
    values = _slot_values(c, who, slot, changes + 1)
    keys: list[str] = []
    for i, (s, kw) in enumerate(zip(sessions, values, strict=True)):
        when, gold = c.past(s)
        args = {**kw, "when": when}
        if i == 0:
            carried = c.talk(s, who, spec.intro, **args)
        else:
            old = {f"old_{k}": x for k, x in values[i - 1].items()}
            carried = c.talk(s, who, spec.change, **args, **old)
            c.supersedes.append((carried["v"], keys[-1]))
            if i == changes and "when" in carried and spec.when_questions:
                c.ask(who, "temporal", slot, spec.when_questions, carried, ["when"], gold, **kw)
        keys.append(carried["v"])
    final = values[-1]
    c.ask(
        who,
        "knowledge-update",
        slot,
        spec.questions,
        {"v": keys[-1]},
        ["v"],
        spec.answer.format(**final),
        stale=keys[:-1],
        **final,
    )


# -- the cast -------------------------------------------------------------------------------


def _plan_cast(c: _Conv, who: int, session: int) -> _Cast:
    """Introduce a relative or friend of ``who`` in ``session``; sometimes ask who they are."""
    rng = c.rng
    used = {m.rel for m in c.cast[who]}
    rel, gender, rel_q, young = rng.choice([r for r in _RELATIONS if r[0] not in used])
    person = c.new_person(gender)
    kw = {**person.kw("c"), "rel": rel, "trait": rng.choice(_TRAITS)}
    carried = c.talk(
        session,
        who,
        [
            [
                (
                    "S",
                    "rel",
                    (
                        "My {rel} {c} is staying with us this week.",
                        "I had lunch with my {rel} {c} today.",
                        "My {rel} {c} came round for dinner last night.",
                    ),
                ),
                ("O", "", ("How is {co}?", "Oh nice! Is {cs} well?")),
                ("S", "", "Same as ever, {trait}."),
            ],
            [
                ("O", "", ("Who's that in your latest photo?", "Who were you with at the market?")),
                ("S", "rel", ("That's {c}, my {rel}!", "Oh, that was my {rel}, {c}.")),
                ("O", "", "Ah, I've heard so much about {co}!"),
            ],
        ],
        **kw,
    )
    member = _Cast(person, rel, rel_q, young, carried, session)
    c.cast[who].append(member)
    if rng.random() < 0.4:
        c.ask(
            who,
            "single-hop",
            "cast",
            ("Who is {S}'s {relq}?", "What is the name of {S}'s {relq}?"),
            carried,
            ["rel"],
            person.name,
            relq=rng.choice(rel_q),
        )
    return member


#: news about a cast member: (kind, for young people only, news as said (after the name or
#: pronoun), name-based single-hop questions, relation-based multi-hop questions, answer, good).
_NEWS: list[tuple[str, bool | None, str, tuple[str, ...], tuple[str, ...], str, bool]] = [
    (
        "baby",
        True,
        "had {cp} baby, a little {sex} called {baby}",
        (
            "What did {S}'s {rel} {c} name {cp} newborn?",
            "What is {c}'s baby called, according to {S}?",
        ),
        (
            "What is the name of the child {S}'s {relq} just had?",
            "What did {S}'s {relq} call the baby?",
        ),
        "{baby}",
        True,
    ),
    (
        "job",
        True,
        "got a job as {a_role} at {place}",
        ("What position did {c} land, according to {S}?", "What job did {S}'s {rel} {c} get?"),
        ("What new position did {S}'s {relq} land?", "What is {S}'s {relq} going to work as?"),
        "{role}",
        True,
    ),
    (
        "move",
        None,
        "is moving to {city} in {month}",
        (
            "Which city is {S}'s {rel} {c} relocating to?",
            "Where is {c} heading to live, according to {S}?",
        ),
        ("Where is {S}'s {relq} going to live?", "Which city is {S}'s {relq} relocating to?"),
        "{city}",
        True,
    ),
    (
        "graduated",
        True,
        "graduated with a degree in {subject}",
        (
            "What did {S}'s {rel} {c} study?",
            "Which subject did {c} get {cp} degree in, according to {S}?",
        ),
        ("What did {S}'s {relq} study at university?", "In what field did {S}'s {relq} graduate?"),
        "{subject}",
        True,
    ),
    (
        "pet",
        None,
        "adopted {pet} called {petname}",
        ("What animal did {S}'s {rel} {c} take in?", "What pet did {c} adopt, according to {S}?"),
        ("What kind of pet did {S}'s {relq} get?", "What is the name of {S}'s {relq}'s new pet?"),
        "{pet} called {petname}",
        True,
    ),
    (
        "injury",
        None,
        "broke {cp} {part} {how}",
        ("How did {S}'s {rel} {c} get hurt?", "What did {c} break, according to {S}?"),
        ("How did {S}'s {relq} end up injured?", "What bone did {S}'s {relq} break?"),
        "broke {cp} {part} {how}",
        False,
    ),
    (
        "hobby",
        None,
        "has got really into {hobby}",
        (
            "What pastime has {S}'s {rel} {c} picked up?",
            "What is {c} really into these days, according to {S}?",
        ),
        ("Which pastime has {S}'s {relq} got into?", "What is {S}'s {relq} spending free time on?"),
        "{hobby}",
        True,
    ),
    (
        "retiring",
        False,
        "is retiring in {month} and wants to {plan}",
        (
            "What does {S}'s {rel} {c} plan to do after stopping work?",
            "What will {c} do when retiring, according to {S}?",
        ),
        (
            "What are {S}'s {relq}'s plans for retirement?",
            "What will {S}'s {relq} do once retired?",
        ),
        "{plan}",
        True,
    ),
]


def _plan_news(c: _Conv, who: int, member: _Cast, session: int, used: set[str]) -> None:
    """Plan news about a cast member in a session after their introduction, and a question."""
    rng = c.rng
    options = [n for n in _NEWS if n[0] not in used and (n[1] is None or n[1] == member.young)]
    kind, _, news, single, multi, answer, good = rng.choice(options)
    used.add(kind)
    sex = rng.choice(["girl", "boy"])
    role, place, _ = rng.choice(_JOBS)
    pet, _, _ = rng.choice(_PETS)
    part, _, how, _ = rng.choice([x for x in _INJURIES if x[0] != "back"])
    kw = {
        **member.person.kw("c"),
        "sex": sex,
        "baby": rng.choice(_BABIES[sex]),
        "role": role,
        "a_role": _a(role),
        "place": place,
        "city": rng.choice(_TRIPS)[0],
        "month": rng.choice(_MONTHS),
        "subject": rng.choice(_SUBJECTS),
        "pet": pet,
        "petname": rng.choice(_PET_NAMES),
        "part": part,
        "how": how.replace("my ", member.person.poss + " "),
        "hobby": rng.choice(_HOBBIES)[0],
        "plan": rng.choice(_RETIRE_PLANS),
    }
    kw["news"] = news.format(**kw)
    react = _REACT_GOOD if good else _REACT_BAD
    carried = c.talk(
        session,
        who,
        [
            [
                ("O", "", ("How's {c} doing these days?", "Any news from {c}?")),
                ("S", "news", ("{Cs} {news}!", "Oh, {cs} {news}. Big news!")),
                ("O", "", react),
            ],
            [
                ("S", "news", ("Guess what, {c} {news}!", "Did I tell you {c} {news}?")),
                ("O", "", react),
            ],
        ],
        **kw,
    )
    gold = answer.format(**kw)
    relq = member.rel if rng.random() < 0.5 else rng.choice(member.rel_q)
    if rng.random() < 0.55:
        both = {**carried, **member.intro}
        c.ask(who, "multi-hop", "cast", multi, both, ["rel", "news"], gold, relq=relq, **kw)
    else:
        c.ask(who, "single-hop", "cast", single, carried, ["news"], gold, rel=member.rel, **kw)


def _plan_wedding(c: _Conv, who: int, member: _Cast, session: int) -> None:
    """A cast member's wedding announced for a future day, and asked about."""
    rng = c.rng
    when, gold, _ = c.future(session)
    kw = {
        **member.person.kw("c"),
        "when": when,
        "venue": rng.choice(["a vineyard", "a barn in the hills", "the town hall", "a lighthouse"]),
    }
    carried = c.talk(
        session,
        who,
        [
            [
                ("S", "when+venue", "{c} is getting married {when}, at {venue}!"),
                ("O", "", ("Eek! Are you giving a speech?", "That's so soon!")),
                ("S", "", "I am. Send help."),
            ],
            [
                ("O", "", "When's the big day for {c}?"),
                ("S", "when", "{When}! Everything's booked."),
                ("O", "", "Where are they doing it?"),
                ("S", "venue", "At {venue}. Very them."),
            ],
        ],
        When=when[0].upper() + when[1:],
        **kw,
    )
    c.ask(
        who,
        "temporal",
        "wedding",
        (
            "When is {S}'s {rel} {c}'s wedding?",
            "On what date is {c} tying the knot, according to {S}?",
        ),
        carried,
        ["when"],
        gold,
        rel=member.rel,
        **kw,
    )
    relq = member.rel if rng.random() < 0.5 else rng.choice(member.rel_q)
    both = {**carried, **member.intro}
    c.ask(
        who,
        "multi-hop",
        "wedding",
        ("Where is {S}'s {relq} getting married?", "What is the venue of {S}'s {relq}'s wedding?"),
        both,
        ["rel", "venue"],
        kw["venue"],
        relq=relq,
        **kw,
    )


# -- one-off episodes -------------------------------------------------------------------------


def _ep_pet(c: _Conv, who: int, s: int) -> None:
    """A speaker adopts a pet; later it goes to the vet."""
    rng = c.rng
    pet, animal, paras = rng.choice(_PETS)
    name = rng.choice(_PET_NAMES)
    when, gold = c.past(s)
    kw = {"pet": pet, "name": name, "when": when}
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "what+when", "We adopted {pet} {when}!"),
                ("O", "", ("No way! Name?", "Stop it! What did you call it?")),
                (
                    "S",
                    "name",
                    (
                        "We named it {name}. Already running the house.",
                        "{name}! The kids chose it.",
                    ),
                ),
            ],
            [
                ("O", "", "Did you go back to the rescue centre in the end?"),
                ("S", "what+when", "We did, and we brought home {pet} {when}."),
                ("O", "", "Please tell me you gave it a silly name."),
                ("S", "name", "We named it {name}. Silly enough?"),
            ],
            [
                ("S", "what+name+when", "Meet {name}, {pet} we picked up {when}!"),
                ("O", "", "Oh my goodness, that face!"),
            ],
        ],
        **kw,
    )
    para = rng.choice(paras)
    qkw = {"animal": para}
    c.ask(
        who,
        "single-hop",
        "pet",
        (
            "What is {S}'s {animal} called?",
            "What name did {S} give the {animal}?",
            "What did {S} name the {animal} {Ss} adopted?",
        ),
        carried,
        ["name"],
        name,
        **qkw,
    )
    c.ask(
        who,
        "temporal",
        "pet",
        ("When did {S} bring {Sp} {animal} home?", "When did {S}'s {animal} join the family?"),
        carried,
        ["when"],
        gold,
        **qkw,
    )
    c.ask(
        who,
        "multi-hop",
        "pet",
        (
            "Which animal did {S} get from the shelter, and what is it called?",
            "What did {S} adopt, and what name did it get?",
            "What sort of pet does {S} have now and what's its name?",
        ),
        carried,
        ["what", "name"],
        f"{pet} called {name}",
    )
    if s + 1 < c.n:
        v = rng.randrange(s + 1, c.n)
        vw, vgold = c.past(v)
        swallowed = rng.choice(_SWALLOWED)
        vet = c.talk(
            v,
            who,
            [
                [
                    ("S", "vet+when", "{name} had to go to the vet {when}. Swallowed {thing}."),
                    ("O", "", "Oh no! Is everything okay?"),
                    ("S", "", "Fine now, but my wallet isn't."),
                ],
                [
                    ("O", "", "How's {name}?"),
                    (
                        "S",
                        "vet+when",
                        "Recovering! {when_cap} it ate {thing} and we spent the night at the vet.",
                    ),
                ],
            ],
            name=name,
            when=vw,
            thing=swallowed,
            when_cap=vw[0].upper() + vw[1:],
        )
        c.ask(
            who,
            "multi-hop",
            "pet",
            (
                "What did {S}'s {animal} eat that sent it to the animal hospital?",
                "Why did {S}'s {animal} need emergency treatment?",
                "What did {S}'s {animal} swallow?",
            ),
            {**carried, **vet},
            ["name", "vet"],
            swallowed,
            **qkw,
        )
        c.ask(
            who,
            "temporal",
            "pet",
            (
                "When did {S} rush {name} to the animal doctor?",
                "When did {S}'s {name} end up at the vet?",
            ),
            vet,
            ["when"],
            vgold,
            name=name,
        )


def _ep_trips(c: _Conv, who: int, sessions: list[int], companions: list[str]) -> None:
    """One or more trips: planned in one session, reported on in the first session after."""
    rng = c.rng
    planned: dict[str, str] = {}
    places: list[str] = []
    for i, (s, trip) in enumerate(zip(sessions, rng.sample(_TRIPS, len(sessions)), strict=True)):
        city, country, did, para = trip
        comp = companions[i % len(companions)]
        when, gold, day = c.future(s, soon=False)
        kw = {"city": city, "comp": comp, "when": when, "did": did}
        plan = c.talk(
            s,
            who,
            [
                [
                    (
                        "S",
                        "city+comp+when",
                        "{comp} and I just booked a trip to {city} for {when}!",
                    ),
                    ("O", "", ("Jealous! How long for?", "Take me with you!")),
                    ("S", "", "Ten days. I can't wait."),
                ],
                [
                    ("O", "", "Any holidays coming up?"),
                    ("S", "city+comp+when", "{city} with {comp}, {when}. Flights are booked!"),
                ],
                [
                    ("S", "city+when", "Guess where I'm going {when}? {city}!"),
                    ("O", "", "With {comp}?"),
                    ("S", "comp", ("Yes, just the two of us.", "Of course, who else.")),
                ],
            ],
            **kw,
        )
        planned[f"city{i}"] = plan["city"]
        places.append(city)
        qkw = {"country": rng.choice([city, country]), "comp": comp}
        c.ask(
            who,
            "temporal",
            "trip",
            ("When was {S}'s trip to {country}?", "When did {S} travel to {country}?"),
            plan,
            ["when"],
            gold,
            **qkw,
        )
        c.ask(
            who,
            "single-hop",
            "trip",
            (
                "Who went to {country} with {S}?",
                "Who was {S}'s travel companion in {country}?",
                "Who did {S} take on the trip to {country}?",
            ),
            plan,
            ["comp"],
            comp,
            **qkw,
        )
        r = c.session_after(day)
        if r is None:
            continue
        report = c.talk(
            r,
            who,
            [
                [
                    ("O", "", ("How was {city}?!", "So? {city}? Tell me everything.")),
                    ("S", "did", "Unreal. We {did}."),
                    ("O", "", "Photos please!"),
                ],
                [
                    ("S", "did", "Back from {city}! We {did}."),
                    ("O", "", ("That sounds incredible.", "I'm so jealous.")),
                ],
            ],
            **kw,
        )
        c.ask(
            who,
            "single-hop",
            "trip",
            (
                "What did {S} do on the holiday in {country}?",
                "How did {S} spend the trip to {country}?",
            ),
            {**plan, **report},
            ["did"],
            did,
            **qkw,
        )
        c.ask(
            who,
            "multi-hop",
            "trip",
            (
                "Who did {S} go to {country} with, and what did they get up to there?",
                "Which companion joined {S} in {country} and what were the highlights?",
            ),
            {**plan, **report},
            ["comp", "did"],
            f"{comp}; {did}",
            **qkw,
        )
    if len(places) >= 2:
        c.ask(
            who,
            "multi-hop",
            "trip",
            (
                "Which places has {S} booked holidays to?",
                "Where has {S} planned trips to this year?",
            ),
            planned,
            list(planned),
            ", ".join(places),
        )


def _ep_injury(c: _Conv, who: int, s: int) -> None:
    """A speaker hurts themselves."""
    rng = c.rng
    part, verb, how, recovery = rng.choice(_INJURIES)
    when, gold = c.past(s)
    kw = {"part": part, "verb": verb, "how": how, "recovery": recovery, "when": when}
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "what+when", "I {verb} my {part} {when}, {how}."),
                ("O", "", ("Ouch! Is it bad?", "Oh no! What did the doctor say?")),
                ("S", "recovery", "The physio says {recovery}."),
            ],
            [
                ("O", "", "What happened to your {part}? I saw the photo."),
                ("S", "what+when", "{how_cap}, {when}. I {verb} it properly."),
                ("O", "", _REACT_BAD),
                ("S", "recovery", "{recovery_cap}, apparently."),
            ],
        ],
        how_cap=how[0].upper() + how[1:],
        recovery_cap=recovery[0].upper() + recovery[1:],
        **kw,
    )
    qkw = {"partq": rng.choice([part, _PARTS_Q[part]])}
    c.ask(
        who,
        "temporal",
        "injury",
        ("When did {S} get injured?", "When did {S} hurt {Sp} {partq}?"),
        carried,
        ["when"],
        gold,
        **qkw,
    )
    if rng.random() < 0.5:
        c.ask(
            who,
            "single-hop",
            "injury",
            (
                "How long will {S} need to recover?",
                "What did the physio tell {S} about healing?",
                "What did the physio say about {S}'s {partq}?",
            ),
            carried,
            ["recovery"],
            recovery,
            **qkw,
        )
    else:
        c.ask(
            who,
            "multi-hop",
            "injury",
            (
                "How did {S} get hurt, and how long is the recovery expected to take?",
                "What did {S} do to {Sp} {partq}, and what did the physio say?",
                "What injury did {S} have and what's the prognosis?",
            ),
            carried,
            ["what", "recovery"],
            f"{verb} {part} {how}; {recovery}",
            **qkw,
        )


def _ep_concert(c: _Conv, who: int, s: int) -> None:
    """A speaker went to a gig."""
    rng = c.rng
    band = rng.choice(_BANDS)
    comp = rng.choice([m.person.name for m in c.cast[who]] or ["my flatmate"])
    when, gold = c.past(s)
    kw = {"band": band, "venue": rng.choice(_VENUES), "comp": comp, "when": when}
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "when+venue", "Saw {band} at {venue} {when}, still buzzing."),
                ("O", "", "Were they good live?"),
                ("S", "", "Better than the album."),
            ],
            [
                ("O", "", "Did you end up getting tickets for {band}?"),
                ("S", "when+comp", "Yes! Went {when} with {comp}. Front row!"),
            ],
        ],
        **kw,
    )
    c.ask(
        who,
        "temporal",
        "concert",
        ("When did {S} see {band} play?", "When was the gig by {band} that {S} went to?"),
        carried,
        ["when"],
        gold,
        **kw,
    )
    if "comp" in carried:
        c.ask(
            who,
            "single-hop",
            "concert",
            ("Who accompanied {S} to watch {band}?", "Who went with {S} to see {band}?"),
            carried,
            ["comp"],
            comp,
            **kw,
        )
    else:
        c.ask(
            who,
            "single-hop",
            "concert",
            ("Where did {S} watch {band} perform?", "In which venue did {S} catch {band}?"),
            carried,
            ["venue"],
            kw["venue"],
            **kw,
        )


def _ep_book(c: _Conv, who: int, s: int, used: set[Any]) -> None:
    """A speaker recommends a book."""
    title, author = c.pick(_BOOKS, used)
    carried = c.talk(
        s,
        who,
        [
            [
                (
                    "S",
                    "title",
                    ("You have to read {title}.", "Best book I've read all year: {title}."),
                ),
                ("O", "", "Who's it by?"),
                ("S", "author", "{author}. Trust me, you'll cry on the bus."),
            ],
            [
                ("O", "", "I need something to read on holiday."),
                ("S", "title+author", "{title} by {author}. Thank me later."),
            ],
        ],
        title=title,
        author=author,
    )
    c.ask(
        who,
        "single-hop",
        "book",
        (
            "Which novel did {S} recommend to {O}?",
            "What book did {S} recommend?",
            "What should {O} read, according to {S}?",
        ),
        carried,
        ["title"],
        title,
    )
    if not c.ask(
        who,
        "multi-hop",
        "book",
        ("What book did {S} suggest to {O}, and who wrote it?",),
        carried,
        ["title", "author"],
        f"{title} by {author}",
    ):
        c.ask(
            who,
            "single-hop",
            "book",
            ("Who is the author of the book {S} urged {O} to read?",),
            carried,
            ["author"],
            author,
        )


def _ep_cooking(c: _Conv, who: int, s: int) -> None:
    """A speaker cooks something for a cast member's birthday."""
    rng = c.rng
    dish, para, secret = rng.choice(_DISHES)
    comp = rng.choice([m.person.name for m in c.cast[who]] or ["Dad"])
    kw = {"dish": dish, "comp": comp, "secret": secret}
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "dish", "I made {dish} for {comp}'s birthday."),
                ("O", "", ("Ooh, share the recipe?", "How did it turn out?")),
                ("S", "secret", "It's my grandma's recipe. The secret is {secret}."),
            ],
            [
                ("O", "", "What did you end up cooking for {comp}'s birthday?"),
                ("S", "dish", "{dish}! Went down a storm."),
                ("O", "", "You have to teach me."),
                ("S", "secret", "Easy: {secret}."),
            ],
        ],
        **kw,
    )
    qkw = {"para": para, "comp": comp}
    c.ask(
        who,
        "single-hop",
        "cooking",
        (
            "What's the secret to {S}'s {para}?",
            "What does {S} say makes the {para} work?",
            "What is the trick in {S}'s grandma's recipe?",
        ),
        carried,
        ["secret"],
        secret,
        **qkw,
    )
    c.ask(
        who,
        "single-hop",
        "cooking",
        ("What dish did {S} prepare to celebrate {comp}?", "What did {S} cook for {comp}?"),
        carried,
        ["dish"],
        dish,
        **qkw,
    )


def _ep_purchase(c: _Conv, who: int, s: int) -> None:
    """A speaker buys something."""
    rng = c.rng
    thing, word, para, why = rng.choice(_PURCHASES)
    when, gold = c.past(s)
    price = f"{rng.randint(3, 90) * 10} euros"
    kw = {"thing": thing, "word": word, "why": why, "when": when, "price": price}
    carried = c.talk(
        s,
        who,
        [
            [
                ("O", "", "Is that a new {word} in the background?"),
                ("S", "when+price", "It is! Got it {when}, second-hand, {price}."),
            ],
            [
                ("S", "when", "I finally bought {thing} {when}!"),
                ("O", "", "What made you cave?"),
                ("S", "why", "{why_cap}."),
            ],
        ],
        why_cap=why[0].upper() + why[1:],
        **kw,
    )
    qkw = {"para": rng.choice([para, word]), "word": word}
    c.ask(
        who,
        "temporal",
        "purchase",
        (
            "When did {S} buy the {para}?",
            "When did {S} get {Sp} {para}?",
            "When was {S}'s {word} bought?",
        ),
        carried,
        ["when"],
        gold,
        **qkw,
    )
    if "price" in carried:
        c.ask(
            who,
            "single-hop",
            "purchase",
            ("How much did {S} pay for the {para}?", "What did {S}'s second-hand {word} cost?"),
            carried,
            ["price"],
            price,
            **qkw,
        )
    else:
        c.ask(
            who,
            "single-hop",
            "purchase",
            ("Why did {S} decide to buy the {para}?",),
            carried,
            ["why"],
            why,
            **qkw,
        )


def _ep_achievement(c: _Conv, who: int, s: int) -> None:
    """A speaker passes a test, runs a race or sells a painting."""
    rng = c.rng
    when, gold = c.past(s)
    kind = rng.randrange(3)
    if kind == 0:
        tries = rng.choice(["Third", "Fourth", "Second"])
        carried = c.talk(
            s,
            who,
            [
                [
                    ("S", "when", "I passed my driving test {when}!"),
                    ("O", "", "First try?"),
                    ("S", "tries", "{tries} time lucky, but who's counting."),
                ],
                [
                    ("O", "", "Did you pass your driving test in the end?"),
                    ("S", "when+tries", "Yes, {when}! At the {nth} attempt."),
                ],
            ],
            when=when,
            tries=tries,
            nth=tries.lower(),
        )
        c.ask(
            who,
            "temporal",
            "achievement",
            (
                "When did {S} get {Sp} licence?",
                "When did {S} qualify to drive?",
                "When did {S} pass the driving test?",
            ),
            carried,
            ["when"],
            gold,
        )
        c.ask(
            who,
            "single-hop",
            "achievement",
            (
                "How many attempts did it take {S} to get through the exam?",
                "How many tries did {S} need to pass the driving test?",
            ),
            carried,
            ["tries"],
            tries.lower(),
        )
    elif kind == 1:
        race, para = rng.choice(_RACES)
        time = rng.choice(_RACE_TIMES)
        carried = c.talk(
            s,
            who,
            [
                [
                    ("S", "when", "Ran my first {race} {when}!"),
                    ("O", "", "Amazing! Time?"),
                    ("S", "time", "{time}. Not bad for a beginner."),
                ],
                [
                    ("O", "", "How did the {race} go?"),
                    ("S", "when+time", "Finished in {time} {when}, legs still dead."),
                ],
            ],
            race=race,
            when=when,
            time=time,
        )
        c.ask(
            who,
            "single-hop",
            "achievement",
            (
                "What was {S}'s finishing time in the {para}?",
                "How fast did {S} complete the {para}?",
            ),
            carried,
            ["time"],
            time,
            para=para,
        )
        c.ask(
            who,
            "temporal",
            "achievement",
            ("When did {S} do the {para}?",),
            carried,
            ["when"],
            gold,
            para=para,
        )
    else:
        painting = rng.choice(
            ["harbour one", "big sunflower", "portrait of my nan", "foggy forest"]
        )
        price = f"{rng.randint(8, 60) * 10} euros"
        carried = c.talk(
            s,
            who,
            [
                [
                    ("S", "when", "Someone bought one of my paintings {when}!"),
                    ("O", "", "Which one?!"),
                    ("S", "what", "The {painting}, for {price}."),
                ],
                [
                    ("S", "when+what", "I sold my first painting {when}! The {painting}, {price}."),
                    ("O", "", _REACT_GOOD),
                ],
            ],
            when=when,
            painting=painting,
            price=price,
        )
        c.ask(
            who,
            "single-hop",
            "achievement",
            ("Which artwork of {S}'s found a buyer?", "How much did {S} get for {Sp} artwork?"),
            carried,
            ["what"],
            f"the {painting} for {price}",
        )
        c.ask(
            who,
            "temporal",
            "achievement",
            ("When did {S} make {Sp} first art sale?",),
            carried,
            ["when"],
            gold,
        )


def _ep_conference(c: _Conv, who: int, s: int) -> None:
    """A speaker will give a talk at a conference."""
    rng = c.rng
    city = rng.choice(_TRIPS)[0]
    topic = rng.choice(_CONF_TOPICS)
    when, gold, _ = c.future(s)
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "where+when", "I'm giving a talk at a conference in {city} {when}."),
                ("O", "", "What about?"),
                ("S", "topic", "{topic_cap}. I'm terrified."),
            ],
            [
                ("O", "", "Is your talk still happening?"),
                (
                    "S",
                    "where+when+topic",
                    "Yes, {city}, {when}. A forty-minute talk on {topic}, gulp.",
                ),
            ],
        ],
        city=city,
        topic=topic,
        when=when,
        topic_cap=topic[0].upper() + topic[1:],
    )
    c.ask(
        who,
        "temporal",
        "conference",
        ("When is {S} presenting at the event?", "When is {S}'s conference talk?"),
        carried,
        ["when"],
        gold,
    )
    if not c.ask(
        who,
        "multi-hop",
        "conference",
        (
            "Where is {S} giving a talk and on what subject?",
            "What city is {S}'s conference in, and what is the talk about?",
        ),
        carried,
        ["where", "topic"],
        f"{city}; {topic}",
    ):
        c.ask(
            who,
            "single-hop",
            "conference",
            ("What subject will {S} present on?", "What is {S}'s talk about?"),
            carried,
            ["topic"],
            topic,
        )


def _ep_gift(c: _Conv, who: int, s: int) -> None:
    """A speaker picks a birthday present for a cast member."""
    rng = c.rng
    if not c.cast[who]:
        return
    member = rng.choice(c.cast[who])
    hobby, gift = rng.choice(_HOBBIES)
    kw = {**member.person.kw("c"), "hobby": hobby, "gift": gift}
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "", "What do I get {c} for {cp} birthday?"),
                ("O", "", "Isn't {cs} really into {hobby}?"),
                ("S", "gift", "Yes! So {gift} it is."),
            ],
            [
                ("O", "", "Did you sort a present for {c}?"),
                ("S", "gift", "Got {co} {gift} as a present, since {cs} loves {hobby}."),
            ],
        ],
        **kw,
    )
    c.ask(
        who,
        "single-hop",
        "gift",
        (
            "What present did {S} choose for {c}?",
            "What is {S} giving {c} on {cp} special day?",
            "What birthday gift did {S} pick for {c}?",
        ),
        carried,
        ["gift"],
        gift,
        **kw,
    )


def _ep_volunteer(c: _Conv, who: int, s: int) -> None:
    """A speaker volunteers somewhere."""
    rng = c.rng
    place = rng.choice(_VOLUNTEER)
    day = rng.choice(_WEEKDAYS)
    carried = c.talk(
        s,
        who,
        [
            [
                ("O", "", "What are you up to on {day}s now? You're never free."),
                ("S", "place", "Volunteering at {place}! Mornings only."),
            ],
            [
                ("S", "place", "I've started helping out at {place} on {day}s."),
                ("O", "", "That's lovely. How did that happen?"),
                ("S", "", "A friend roped me in."),
            ],
        ],
        place=place,
        day=day,
    )
    c.ask(
        who,
        "single-hop",
        "volunteering",
        (
            "Where does {S} give time for free?",
            "What charity work does {S} do?",
            "Where does {S} volunteer?",
        ),
        carried,
        ["place"],
        place,
    )


def _ep_instrument(c: _Conv, who: int, s: int) -> None:
    """A speaker starts lessons; later announces a recital."""
    rng = c.rng
    instrument, para = rng.choice(_INSTRUMENTS)
    teacher = rng.choice(_TEACHERS)
    kw = {"instrument": instrument, "teacher": teacher}
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "what", "I've started {instrument} lessons!"),
                ("O", "", "Who's teaching you?"),
                ("S", "teacher", "{teacher_cap}. Ancient and very strict."),
            ],
            [
                ("O", "", "What's that noise in the background?"),
                ("S", "what", "Me practising {instrument}, sorry."),
                ("O", "", "Since when?! Do you have a teacher?"),
                ("S", "teacher", "Yes, {teacher}. Ancient and very strict."),
            ],
        ],
        teacher_cap=teacher[0].upper() + teacher[1:],
        **kw,
    )
    qkw = {"para": para}
    c.ask(
        who,
        "multi-hop",
        "music",
        (
            "What instrument is {S} learning, and who teaches it?",
            "What lessons has {S} started, and who is the teacher?",
            "What is {S} learning to play, and with which teacher?",
        ),
        carried,
        ["what", "teacher"],
        f"{instrument}; {teacher}",
    )
    if s + 1 >= c.n:
        return
    r = rng.randrange(s + 1, c.n)
    when, gold, _ = c.future(r)
    recital = c.talk(
        r,
        who,
        [
            [
                ("S", "when", "{teacher_cap} says I'm ready for my first recital {when}."),
                ("O", "", "I'm coming! Front row."),
            ],
            [
                ("O", "", "How's the practice going?"),
                ("S", "when", "Scary. First recital is {when}."),
            ],
        ],
        teacher_cap=teacher[0].upper() + teacher[1:],
        when=when,
    )
    c.ask(
        who,
        "temporal",
        "music",
        (
            "When is {S}'s first {para} performance?",
            "When does {S} play {Sp} first concert?",
            "When is {S}'s first recital?",
        ),
        recital,
        ["when"],
        gold,
        **qkw,
    )


def _ep_home_project(c: _Conv, who: int, s: int) -> None:
    """A speaker repaints a room."""
    rng = c.rng
    colour = rng.choice(_COLOURS)
    room = rng.choice(["kitchen", "bedroom", "hallway", "living room"])
    when, gold = c.past(s)
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "what+when", "We painted the {room} {colour} {when}."),
                ("O", "", "Bold! Do you like it?"),
                ("S", "", "Ask me in a week."),
            ],
            [
                ("O", "", "Did you ever decide on a colour for the {room}?"),
                ("S", "what", "{colour_cap}! Finished it {when}."),
            ],
        ],
        room=room,
        colour=colour,
        when=when,
        colour_cap=colour[0].upper() + colour[1:],
    )
    c.ask(
        who,
        "single-hop",
        "home",
        (
            "What colour are the walls of {S}'s {room} now?",
            "Which shade did {S} pick for the {room}?",
        ),
        carried,
        ["what"],
        colour,
        room=room,
    )


def _ep_film(c: _Conv, who: int, s: int) -> None:
    """A speaker saw a film with someone."""
    rng = c.rng
    film = rng.choice(_FILMS)
    comp = rng.choice([m.person.name for m in c.cast[who]] or ["my cousin"])
    when, gold = c.past(s)
    carried = c.talk(
        s,
        who,
        [
            [
                ("O", "", "Seen anything good lately?"),
                ("S", "film+when", "Saw {film} with {comp} {when}. Cried twice."),
            ],
            [
                ("S", "film", "{comp} dragged me to see {film}."),
                ("O", "", "And?"),
                ("S", "", "Annoyingly, it was great."),
            ],
        ],
        film=film,
        comp=comp,
        when=when,
    )
    c.ask(
        who,
        "single-hop",
        "film",
        ("Which movie did {S} watch with {comp}?", "What did {S} and {comp} see at the cinema?"),
        carried,
        ["film"],
        film,
        comp=comp,
    )
    c.ask(
        who,
        "temporal",
        "film",
        ("When did {S} go to the cinema to see {film}?",),
        carried,
        ["when"],
        gold,
        film=film,
    )


def _ep_bike_stolen(c: _Conv, who: int, s: int) -> None:
    """A speaker's bike is stolen."""
    rng = c.rng
    where = rng.choice(["the station", "the gym", "the supermarket", "the library"])
    when, gold = c.past(s)
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "where+when", "Someone stole my bike from outside {where} {when}."),
                ("O", "", "No! Did you report it?"),
                ("S", "", "Yes, but the police basically laughed."),
            ],
            [
                ("O", "", "Why are you taking the bus?"),
                ("S", "where+when", "Bike got nicked outside {where} {when}."),
            ],
        ],
        where=where,
        when=when,
    )
    c.ask(
        who,
        "single-hop",
        "theft",
        (
            "Where was {S}'s bicycle taken from?",
            "Where did the thief get {S}'s bicycle?",
            "Where was {S}'s bike stolen?",
        ),
        carried,
        ["where"],
        where,
    )
    c.ask(
        who,
        "temporal",
        "theft",
        ("When did {S} lose {Sp} bicycle to thieves?", "When was {S}'s bike stolen?"),
        carried,
        ["when"],
        gold,
    )


def _ep_course(c: _Conv, who: int, s: int) -> None:
    """A speaker enrols in an evening course."""
    rng = c.rng
    course, para = rng.choice(_COURSES)
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "what", "I enrolled in an evening course in {course}."),
                ("O", "", "Since when are you into that?"),
                ("S", "", "Since forever, secretly."),
            ],
            [
                ("O", "", "Where are you off to every Wednesday night?"),
                ("S", "what", "My {course} course at the college!"),
            ],
        ],
        course=course,
    )
    c.ask(
        who,
        "single-hop",
        "course",
        (
            "What is {S} studying after work?",
            "Which night class did {S} sign up for?",
            "What evening course is {S} taking?",
        ),
        carried,
        ["what"],
        course,
        para=para,
    )


def _ep_party(c: _Conv, who: int, s: int) -> None:
    """A speaker throws a themed party."""
    rng = c.rng
    theme = rng.choice(_THEMES)
    occasion = rng.choice(["housewarming", "birthday party", "garden party"])
    when, gold, _ = c.future(s)
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "when", "We're throwing a {occasion} {when}, you're coming."),
                ("O", "", "Wouldn't miss it. Is there a theme?"),
                ("S", "theme", "{theme_cap}, obviously."),
            ],
            [
                ("O", "", "Is the {occasion} still on?"),
                ("S", "when+theme", "Yes, {when}! Theme is {theme}."),
            ],
        ],
        occasion=occasion,
        when=when,
        theme=theme,
        theme_cap=theme[0].upper() + theme[1:],
    )
    c.ask(
        who,
        "temporal",
        "party",
        ("When is {S}'s {occasion}?", "On what day is {S} hosting the {occasion}?"),
        carried,
        ["when"],
        gold,
        occasion=occasion,
    )
    c.ask(
        who,
        "single-hop",
        "party",
        (
            "What should guests dress as for {S}'s {occasion}?",
            "What's the theme of {S}'s do?",
            "What theme did {S} choose for the {occasion}?",
        ),
        carried,
        ["theme"],
        theme,
        occasion=occasion,
    )


def _ep_garden(c: _Conv, who: int, s: int) -> None:
    """A speaker's vegetable harvest."""
    rng = c.rng
    crop, single, amount = rng.choice(_CROPS)
    carried = c.talk(
        s,
        who,
        [
            [
                ("S", "", "The {crop} in the garden are finally ripe."),
                ("O", "", "How many did you get?"),
                ("S", "amount", "{amount_cap} so far! I'm giving them to everyone."),
            ],
            [
                ("O", "", "How's the vegetable patch?"),
                ("S", "amount", "Drowning in {crop}. {amount_cap} already."),
            ],
        ],
        crop=crop,
        amount_cap=amount[0].upper() + amount[1:],
    )
    c.ask(
        who,
        "single-hop",
        "garden",
        ("How big was {S}'s {single} harvest?", "How many {crop} has {S} grown this year?"),
        carried,
        ["amount"],
        amount,
        crop=crop,
        single=single,
    )


_ONE_OFFS = {
    "injury": _ep_injury,
    "concert": _ep_concert,
    "cooking": _ep_cooking,
    "purchase": _ep_purchase,
    "achievement": _ep_achievement,
    "conference": _ep_conference,
    "gift": _ep_gift,
    "volunteer": _ep_volunteer,
    "instrument": _ep_instrument,
    "home_project": _ep_home_project,
    "film": _ep_film,
    "bike_stolen": _ep_bike_stolen,
    "course": _ep_course,
    "party": _ep_party,
    "garden": _ep_garden,
}

# -- small talk -------------------------------------------------------------------------------

_GREET = (
    "Hey! How's it going?",
    "Hi! Long time no chat, how are things?",
    "Hello hello! Got a minute?",
    "Hey you. Sorry I went quiet, the week got away from me.",
    "Evening! How was your week?",
    "Hi hi. Quick question before I forget, then a proper chat.",
    "{you}! Are you free for a quick catch-up? I've got news.",
)
_GREET_BACK = (
    "Hey! All good here, you?",
    "Hi! Busy, but good.",
    "Always. What's up?",
    "Not bad at all. Just got in, so perfect timing.",
    "Tired, but happy to hear from you!",
    "Perfect timing, I'm just sitting down with a tea.",
)
_BYE = (
    "Right, I should go and make dinner.",
    "Okay, I have to run. Talk soon!",
    "Anyway, I'll let you go.",
    "Got to dash, speak next week?",
    "I'm falling asleep, night night!",
)
_BYE_BACK = (
    "Bye! Say hi to everyone.",
    "Talk soon! Give everyone a hug from me.",
    "Take care!",
    "Yes, next week. Bye!",
    "Night!",
)
_CHATTER: list[_Dialogue] = [
    [
        ("S", "", "How's the weather over there?"),
        ("O", "", "Grey and drizzly, as usual. You?"),
        ("S", "", "Sunny for once!"),
    ],
    [
        ("S", "", "Any plans for the weekend?"),
        ("O", "", "Nothing much, just catching up on sleep."),
    ],
    [("S", "", "Work's been hectic this week."), ("O", "", "Ugh, same here. Hang in there!")],
    [
        ("S", "", "Did you watch the match?"),
        ("O", "", "Missed it, who won?"),
        ("S", "", "Nobody, a draw."),
    ],
    [("S", "", "I need a holiday."), ("O", "", "Don't we all!")],
    [("S", "", "My neighbour's new puppy howls all night."), ("O", "", "Oh no, earplugs time!")],
    [
        ("S", "", "I keep meaning to read more books."),
        ("O", "", "Me too, my phone eats all my time."),
    ],
    [("S", "", "Have you ever been to {city}?"), ("O", "", "Never, but it's on my list!")],
    [("S", "", "I tried making {dish} once. Total disaster."), ("O", "", "Haha, I believe it.")],
    [
        ("S", "", "My cousin keeps talking about moving abroad."),
        ("O", "", "Exciting! Where to?"),
        ("S", "", "No idea, she changes her mind every week."),
    ],
    [("S", "", "The gym was packed today."), ("O", "", "January resolutions, probably.")],
    [
        ("S", "", "Traffic on the ring road was a nightmare this morning."),
        ("O", "", "That's why I cycle!"),
    ],
    [
        ("S", "", "I've been sleeping so badly."),
        ("O", "", "Try no screens after ten, it helped me."),
    ],
    [
        ("S", "", "Have you watched anything good on TV?"),
        ("O", "", "Not really, nothing grabs me."),
    ],
    [
        ("S", "", "Did you see the photos from the wedding on Saturday?"),
        ("O", "", "Whose wedding?"),
        ("S", "", "Some friend of a friend, never mind."),
    ],
    [("S", "", "I'm thinking of getting a cat one day."), ("O", "", "Do it! Eventually.")],
    [("S", "", "Coffee or tea this morning?"), ("O", "", "Coffee. Three of them.")],
    [
        ("S", "", "My doctor says I should walk more."),
        ("O", "", "Mine says the same, nobody listens."),
    ],
]
_CHATTER_DISHES = ["risotto", "croissants", "sushi", "a souffle", "bread", "ramen"]


def _assemble(c: _Conv) -> list[list[_PTurn]]:
    """Each session's turns: greetings, the episodes (shuffled) with small talk between
    them, goodbyes."""
    rng = c.rng
    sessions: list[list[_PTurn]] = []
    for episodes in c.episodes:
        first = rng.randrange(2)
        turns = [
            _PTurn(first, c.fill(_GREET, you=c.people[1 - first].name), c.key()),
            _PTurn(1 - first, c.fill(_GREET_BACK, you=c.people[first].name), c.key()),
        ]
        order = list(episodes)
        rng.shuffle(order)
        for ep in order:
            turns.extend(ep)
            if rng.random() < 0.45:
                chat, _ = c.render(
                    rng.randrange(2),
                    rng.choice(_CHATTER),
                    city=rng.choice(_TRIPS)[0],
                    dish=rng.choice(_CHATTER_DISHES),
                )
                turns.extend(chat)
        last = rng.randrange(2)
        turns.append(_PTurn(last, c.fill(_BYE, you=c.people[1 - last].name), c.key()))
        turns.append(_PTurn(1 - last, c.fill(_BYE_BACK, you=c.people[last].name), c.key()))
        sessions.append(turns)
    return sessions


def _plan(c: _Conv) -> None:
    """Plan a whole conversation."""
    rng = c.rng
    n = c.n
    for who in (0, 1):
        for slot in rng.sample(sorted(_SLOTS), rng.randint(5, 7)):
            _plan_slot(c, who, slot)
        members = [_plan_cast(c, who, rng.randrange(max(1, n // 2))) for _ in range(3)]
        for m in members:
            used: set[str] = set()
            for _ in range(rng.choice([1, 2])):
                if m.session + 1 < n:
                    _plan_news(c, who, m, rng.randrange(m.session + 1, n), used)
        weddings = [m for m in members if m.young and m.session + 1 < n]
        if weddings and rng.random() < 0.6:
            m = rng.choice(weddings)
            _plan_wedding(c, who, m, rng.randrange(m.session + 1, n))
        if rng.random() < 0.8:
            _ep_pet(c, who, rng.randrange(n - 1))
        trips = sorted(rng.sample(range(n - 1), rng.choice([1, 2, 2, 3])))
        companions = [m.person.name for m in members if m.rel != "grandmother"]
        _ep_trips(c, who, trips, companions or [members[0].person.name])
    books: set[Any] = set()
    pending = [(who, kind) for who in (0, 1) for kind in sorted(_ONE_OFFS)]
    rng.shuffle(pending)
    pending += [(who, "book") for who in (0, 1)]
    for who, kind in pending:  # each to one of the sessions with the fewest episodes so far
        fewest = min(len(e) for e in c.episodes)
        s = rng.choice([s for s in range(n) if len(c.episodes[s]) == fewest])
        if kind == "book":
            _ep_book(c, who, s, books)
        else:
            _ONE_OFFS[kind](c, who, s)


# -- writing ----------------------------------------------------------------------------------


def build(
    seed: int = 1, conversations: int = DEFAULT_CONVERSATIONS, sessions: int = DEFAULT_SESSIONS
) -> Conversations:
    """Generate the conversations, the memory that records them and the questions.

    Args:
        seed: the PRNG seed; equal arguments give identical benchmarks.
        conversations: number of conversations (1 to 16), each between two
            speakers of their own.
        sessions: sessions per conversation (>= :data:`MIN_SESSIONS`), 3 to 21
            days apart.
    Returns:
        The :class:`Conversations`: the state (one item per turn in scope
        ``conv:<i>``, one ``SUPERSEDES`` edge per changed fact), the turns by
        time and the questions. The default size (12 x 20) has about 4,700
        turns, 200 ``SUPERSEDES`` edges and 1,280 questions (seed 1: 4,711 /
        198 / 1,279) and builds in well under a second.
    Raises:
        ValueError: an argument is out of range.
    """
    if not 1 <= conversations <= len(_SPEAKERS) // 2:
        raise ValueError(
            f"conversations must be in [1, {len(_SPEAKERS) // 2}], got {conversations}"
        )
    if sessions < MIN_SESSIONS:
        raise ValueError(f"sessions must be >= {MIN_SESSIONS}, got {sessions}")
    rng = random.Random(seed)
    clock = random.Random(seed + 1)
    names = rng.sample(_SPEAKERS, 2 * conversations)
    convs: list[_Conv] = []
    for i in range(conversations):
        pair = (_Person(*names[2 * i]), _Person(*names[2 * i + 1]))
        d = START + timedelta(days=2 * i + rng.randrange(5))
        dates = [d]
        for _ in range(sessions - 1):
            gap = rng.randint(3, 6) if rng.random() < 0.5 else rng.randint(7, 21)
            dates.append(dates[-1] + timedelta(days=gap))
        c = _Conv(rng, i, pair, dates)
        _plan(c)
        convs.append(c)

    # times and ids: each session starts in the evening, turns 20 s to 2.5 min apart
    planned: list[tuple[int, int, _Conv, int, int, _PTurn]] = []
    for c in convs:
        for s, turns in enumerate(_assemble(c)):
            day = datetime(c.dates[s].year, c.dates[s].month, c.dates[s].day, tzinfo=UTC)
            ms = int(day.timestamp() * 1000) + clock.randint(17 * 60, 21 * 60) * 60_000
            for k, t in enumerate(turns):
                ms += clock.randint(20, 150) * 1000
                planned.append((ms, c.index, c, s, k, t))
    planned.sort(key=lambda p: (p[0], p[1]))
    ids: dict[str, str] = {}
    at: dict[str, int] = {}
    session_of: dict[str, str] = {}
    out_turns: list[Turn] = []
    for ms, i, c, s, k, t in planned:
        tid = uuid7_text(ms, clock.getrandbits(12), clock.getrandbits(62))
        ids[t.key] = tid
        at[t.key] = ms
        session_of[t.key] = f"conv:{i}/s{s + 1:02d}"
        out_turns.append(Turn(tid, i, s, k, c.people[t.speaker].name, t.text, ms))

    commands: list[tuple[int, int, Any]] = []
    for ms, i, c, _, k, t in planned:
        speaker = c.people[t.speaker].name
        item = memex.create_memory_item(
            id=ids[t.key],
            scope=f"conv:{i}",
            kind="observation",
            content={"text": t.text},
            author=f"user:{speaker.lower()}",
            source_kind="user_explicit",
            authority=0.9,
            meta={"session_id": session_of[t.key], "speaker": speaker, "turn": k},
            now=ms,
        )
        commands.append((ms, 0, memex.MemoryCreate(item=item)))
    for c in convs:
        for new, old in c.supersedes:
            ms = at[new] + 1
            edge = memex.create_edge(
                edge_id=uuid7_text(ms, clock.getrandbits(12), clock.getrandbits(62)),
                from_=ids[new],
                to=ids[old],
                kind="SUPERSEDES",
                author="agent:recorder",
                source_kind="agent_inferred",
                authority=0.9,
                meta={"session_id": session_of[new]},
                now=ms,
            )
            commands.append((ms, 1, memex.EdgeCreate(edge=edge)))
    commands.sort(key=lambda x: (x[0], x[1]))
    result = memex.replay_commands([cmd for _, _, cmd in commands])
    if result.skipped:
        raise RuntimeError(f"replay skipped {len(result.skipped)} commands: {result.skipped[0]}")

    questions = [
        Question(
            text=a.text,
            answers=[ids[k] for k in a.answers],
            category=a.category,
            conversation=c.index,
            scope=f"conv:{c.index}",
            answer=a.answer,
            stale=[ids[k] for k in a.stale],
            topic=a.topic,
        )
        for c in convs
        for a in c.asks
    ]
    return Conversations(
        state=result.state,
        turns=out_turns,
        questions=questions,
        speakers=[(c.people[0].name, c.people[1].name) for c in convs],
        seed=seed,
        conversations=conversations,
        sessions=sessions,
    )
