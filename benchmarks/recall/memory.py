"""A generated agent memory with questions and their answers, for measuring retrieval recall.

:func:`build` writes, deterministically from a seed, the memory an assistant
agent ("aria"), a research sub-agent ("scout") and three tool feeds
(calendar, fitness tracker, wallet) keep about several users over many chat
sessions, and the questions someone could later ask of it, each with the ids
of the items that answer it.

What is in it, per user:

- **facts** the user stated (kind ``trait`` for preferences, ``assertion``
  otherwise; ``user_explicit``) or a tool recorded (``observation``,
  ``observed``) about seven topics: preferences, schedule, work projects,
  health, travel, contacts and purchases. Each is one of several templated
  sentences; about one in seven names "the user" instead of the person.
- **facts that change**: a later session records the new value in a new item
  and a ``SUPERSEDES`` edge (new -> old); the old item stays. The question's
  answer is the newest item, the older ones are its ``stale`` ids.
- **conclusions** (kind ``derivation``) with their evidence as ``parents``
  and a ``SUPPORTS`` edge from each piece of evidence, sometimes plus later
  evidence linked only by ``SUPPORTS``. Their questions ask for the
  conclusion and its evidence, which mostly shares few words with the
  question: this is what graph expansion is for.
- **distractors** sharing the vocabulary: small talk the agent noted,
  scout's search results, tool logs (sleep, heart rate, calendar syncs), the
  agent's wrong guesses (``hypothesis``, linked to the fact they contradict
  by ``CONTRADICTS``), and every other user's facts about the same topics.

Belief scores follow the source, never whether an item answers a question
(they were fixed before any recall was measured): user statements authority
~0.9 and conviction ~0.9; tool records ~0.85 / ~0.95; derived conclusions
~0.8 / ~0.85; agent inferences ~0.55 / ~0.55; guesses ~0.4 / ~0.35; scout's
imports ~0.6 / ~0.6; small talk ~0.7 and no conviction (it records that
something was said, not a belief). Each value is jittered by up to 0.05.
Importance is per topic (health 0.8 ... purchases 0.45, tool logs 0.3, small
talk 0.2), jittered likewise.

Questions are written from separate templates: they name the person and
share some words with the answer ("Which seat does Ada want on a plane?" for
"Always book Ada aisle seats on planes."), never the sentence itself.

Determinism: one :class:`random.Random` seeded with ``seed`` plans the
content, a second (``seed`` + 1) drives the clock and the ids, which are
UUIDv7s built from that scripted clock (the approach of
``docs/examples/make_agent_session.py``). Two builds with the same
arguments give identical items, ids, edges and questions.

Timestamps are unix milliseconds (UTC) throughout.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import memex
from benchmarks._gen import uuid7_text
from memex.state.graph import GraphState

__all__ = [
    "Question",
    "Memory",
    "build",
    "DEFAULT_USERS",
    "DEFAULT_SESSIONS",
    "DEFAULT_QUESTION_RATE",
    "START",
]

DEFAULT_USERS = 8
DEFAULT_SESSIONS = 16
DEFAULT_QUESTION_RATE = 0.8

#: Unix ms of the first session (2025-01-06 08:00 UTC); sessions follow every 4 days.
START = int(datetime(2025, 1, 6, 8, 0, tzinfo=UTC).timestamp() * 1000)
_DAY = 86_400_000
_SESSION_GAP = 4 * _DAY
_USER_OFFSET = 37 * 60_000


@dataclass(frozen=True)
class Question:
    """One question and the items that answer it.

    Attributes:
        text: the natural-language question (names the person it is about).
        answers: ids of the items that answer it (the newest version of a
            changed fact; a conclusion and its evidence), at least one.
        stale: ids of superseded versions of the answer (empty unless the
            fact changed); they must not be served as the answer.
        category: ``"fact"`` (one stable item), ``"changed"`` (the fact was
            superseded at least once) or ``"conclusion"`` (a derivation plus
            its evidence).
        topic: preferences, schedule, work, health, travel, contacts or purchases.
    """

    text: str
    answers: list[str]
    stale: list[str] = field(default_factory=list)
    category: str = "fact"
    topic: str = ""


@dataclass
class Memory:
    """A generated memory: the graph, its questions and the time they are asked.

    Attributes:
        state: the :class:`memex.GraphState` (items and edges).
        questions: the questions, in generation order (user by user).
        now: unix ms at which to ask (one day after the last item was written).
        seed, users, sessions: the arguments it was built with.
    """

    state: GraphState
    questions: list[Question]
    now: int
    seed: int
    users: int
    sessions: int


# -- the world --------------------------------------------------------------------------------

_PEOPLE = [
    ("Ada", "she"),
    ("Bruno", "he"),
    ("Chiara", "she"),
    ("Dev", "he"),
    ("Elif", "she"),
    ("Farid", "he"),
    ("Greta", "she"),
    ("Hiro", "he"),
    ("Ines", "she"),
    ("Jamal", "he"),
    ("Kasia", "she"),
    ("Luca", "he"),
]
_CODENAMES = [
    "Orion",
    "Kestrel",
    "Atlas",
    "Juniper",
    "Halcyon",
    "Meridian",
    "Nimbus",
    "Quartz",
    "Tundra",
    "Beacon",
    "Falcon",
    "Sequoia",
    "Lighthouse",
    "Saffron",
    "Cobalt",
    "Pioneer",
    "Harbor",
    "Summit",
    "Willow",
    "Zephyr",
    "Ember",
    "Granite",
    "Polaris",
    "Aurora",
]
_PRODUCTS = [
    "billing dashboard",
    "mobile checkout redesign",
    "data warehouse migration",
    "support chatbot",
    "delivery routing optimiser",
    "onboarding flow",
    "search ranking service",
    "payroll integration",
    "inventory forecasting model",
    "customer analytics portal",
]
_STACKS = [
    "Python and Postgres",
    "TypeScript and React",
    "Go and Kafka",
    "Kotlin and Spring",
    "Rust and SQLite",
    "Elixir and Phoenix",
    "Java and Oracle",
    "Swift and Firebase",
]
_STATUSES = [
    "on track",
    "blocked waiting for the vendor's API keys",
    "in final testing",
    "paused until the budget review",
    "two weeks behind schedule",
    "waiting on legal sign-off",
]
_COLLEAGUES = ["Marta", "Yusuf", "Leonie", "Raj", "Camille", "Tobias", "Aiko", "Nikolai"]
#: Contact names by grammatical gender ("f", "m"), for relations that have one.
_CONTACTS = {
    "f": ["Maya", "Priya", "Keiko", "Lucia", "Nadia", "Rosa", "Amara", "Sofia", "Hana", "Freya"],
    "m": ["Tomás", "Jonas", "Samir", "Owen", "Victor", "Kenji", "Pavel", "Diego", "Malik", "Omar"],
}
#: Relations and the gender they imply ("" for either).
_RELATIONS = {
    "sister": "f",
    "brother": "m",
    "mother": "f",
    "father": "m",
    "best friend": "",
    "landlord": "",
    "manager": "",
    "neighbour": "",
    "mentor": "",
    "cousin": "",
    "flatmate": "",
    "physiotherapist": "",
}
_HOBBIES = [
    ("bird-watching", "a pair of compact binoculars"),
    ("sourdough baking", "a rattan proofing basket"),
    ("trail running", "a lightweight running vest"),
    ("collecting vinyl records", "a voucher for the record shop"),
    ("board games", "a new strategy board game"),
    ("watercolour painting", "a set of sable brushes"),
    ("rock climbing", "a chalk bag and a guidebook"),
    ("growing tomatoes", "a raised garden bed kit"),
]
_CITIES = [
    ("Lisbon", "Portugal"),
    ("Kyoto", "Japan"),
    ("Montreal", "Canada"),
    ("Nairobi", "Kenya"),
    ("Oslo", "Norway"),
    ("Buenos Aires", "Argentina"),
    ("Tbilisi", "Georgia"),
    ("Hanoi", "Vietnam"),
    ("Reykjavik", "Iceland"),
    ("Marrakesh", "Morocco"),
    ("Vienna", "Austria"),
    ("Seoul", "South Korea"),
]
_HOME_CITIES = [
    "Berlin",
    "Madrid",
    "Porto",
    "Lyon",
    "Bristol",
    "Utrecht",
    "Gdansk",
    "Turin",
    "Ghent",
    "Aarhus",
    "Leeds",
    "Graz",
]
_PURPOSES = [
    "a conference",
    "a friend's wedding",
    "a holiday",
    "a client visit",
    "a team offsite",
    "a family reunion",
]
_HOTELS = [
    "Hotel Avenida",
    "the Harbour Inn",
    "Casa Verde",
    "the Grand Central Hotel",
    "Maple Lodge",
    "the Riverside Suites",
    "Hotel Lumen",
    "the Old Mill Guesthouse",
]
_AIRLINES = [
    ("LH", "Lufthansa"),
    ("TP", "TAP"),
    ("KL", "KLM"),
    ("AF", "Air France"),
    ("BA", "British Airways"),
    ("SK", "SAS"),
    ("TK", "Turkish Airlines"),
]
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
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_TIMES = ["7:30 am", "8:00 am", "9:15 am", "12:30 pm", "5:45 pm", "6:30 pm", "7:00 pm", "8:15 pm"]
_DOCTORS = ["Okafor", "Lindqvist", "Moreau", "Brandt", "Castillo", "Novak", "Haddad", "Sato"]
_CLINICS = [
    "Riverside Clinic",
    "Parkview Medical Centre",
    "Elm Street Practice",
    "Northgate Health",
    "the Canal Surgery",
]

#: (slot, values, fact templates, change templates, question templates).
_PREFERENCES: list[tuple[str, list[str], list[str], list[str], list[str]]] = [
    (
        "cuisine",
        [
            "Thai",
            "Italian",
            "Ethiopian",
            "Japanese",
            "Mexican",
            "Lebanese",
            "Korean",
            "Georgian",
            "Peruvian",
            "Sichuan",
        ],
        [
            "{n} said {pp} favourite food is {v}.",
            "{n} loves {v} cooking and would pick it for any dinner out.",
            "When choosing a restaurant, {n} goes for {v} almost every time.",
        ],
        [
            "{n} has gone off {old} food; these days {p} prefers {v}.",
            "New favourite: {n} now says {v} is the best food around.",
        ],
        [
            "What kind of food does {n} like most?",
            "Which cuisine should we book for a dinner with {n}?",
            "What is {ns} favourite type of restaurant?",
        ],
    ),
    (
        "coffee",
        [
            "flat white",
            "oat milk latte",
            "black americano",
            "cortado",
            "decaf cappuccino",
            "chai latte",
            "double espresso",
        ],
        [
            "{n} drinks {pp} coffee as a {v}.",
            "{ns} usual order at the café is a {v}.",
            "If you bring {n} a drink, make it a {v}.",
        ],
        [
            "{n} switched from a {old} to a {v} for {pp} morning coffee.",
            "{n} asked for a {v} from now on instead of the usual.",
        ],
        [
            "How does {n} take {pp} coffee?",
            "What should I order for {n} at the coffee shop?",
            "What's {ns} go-to café drink?",
        ],
    ),
    (
        "seat",
        ["aisle", "window", "exit-row"],
        [
            "{n} prefers {v} seats on flights.",
            "Always book {n} {v} seats on planes.",
            "{n} gets restless without {v} seats when flying.",
        ],
        ["{n} now wants {v} seats instead of {old} seats on planes."],
        [
            "Which seat does {n} want on a plane?",
            "What should be reserved when booking {ns} flights?",
            "Where does {n} like to sit when flying?",
        ],
    ),
    (
        "music",
        [
            "jazz",
            "techno",
            "classical piano",
            "indie folk",
            "bossa nova",
            "lo-fi hip hop",
            "film soundtracks",
        ],
        [
            "{n} listens to {v} while working.",
            "{n} says {v} helps {o} concentrate.",
            "Put on some {v} when {n} is writing; {p} finds it calming.",
        ],
        ["{n} has moved on from {old}; {v} is what {p} works to now."],
        [
            "What music helps {n} focus?",
            "What should be playing in the background while {n} works?",
            "Which genre does {n} put on to concentrate?",
        ],
    ),
    (
        "meetings",
        ["before 10 am", "in the late morning", "just after lunch", "in the late afternoon"],
        [
            "{n} prefers meetings {v}.",
            "Book calls with {n} {v} if possible.",
            "{n} is sharpest {v}, so that is when {p} wants to meet.",
        ],
        ["{n} now asks for meetings {v} rather than {old}."],
        [
            "When does {n} like calls to be scheduled?",
            "What time of day is best to book a meeting with {n}?",
            "When should I put a call with {n} in the calendar?",
        ],
    ),
    (
        "updates",
        [
            "short bullet points",
            "a detailed written report",
            "a quick voice call",
            "a chat message rather than email",
        ],
        ["{n} likes status updates delivered as {v}.", "For progress news, {n} asked for {v}."],
        ["{n} changed {pp} mind and now wants updates as {v}, not {old}."],
        [
            "How should progress be reported to {n}?",
            "In what format does {n} want status updates?",
            "What's the best way to keep {n} informed?",
        ],
    ),
    (
        "diet",
        ["vegetarian", "vegan", "pescatarian", "gluten-free", "halal", "low-carb"],
        [
            "{n} follows a {v} diet.",
            "{n} told Aria {p} keeps to {v} meals.",
            "{n} eats {v} food only.",
        ],
        ["{n} is no longer {old}; {p} now eats {v}."],
        [
            "Does {n} have any dietary restrictions?",
            "What can {n} eat at the team lunch?",
            "Is there anything {n} won't eat?",
        ],
    ),
]

#: (activity, paraphrases used in questions).
_ACTIVITIES = [
    ("yoga class", ["yoga", "stretching"]),
    ("piano lesson", ["piano", "music lessons"]),
    ("Spanish class", ["Spanish", "language lessons"]),
    ("climbing session", ["bouldering", "climbing"]),
    ("book club", ["reading group", "book club"]),
    ("therapy appointment", ["therapy", "counselling"]),
    ("five-a-side football", ["football", "soccer"]),
    ("pottery workshop", ["ceramics", "pottery"]),
]
_APPOINTMENTS = [
    ("dentist", ["dentist", "dental check-up"]),
    ("dermatologist", ["skin doctor", "dermatologist"]),
    ("car service", ["garage", "car mechanic"]),
    ("haircut", ["barber", "hairdresser"]),
    ("tax advisor", ["accountant", "tax advisor"]),
    ("vet check-up for the dog", ["vet", "animal clinic"]),
    ("eye exam", ["optician", "eye doctor"]),
]
_ALLERGIES = [
    "penicillin",
    "peanuts",
    "shellfish",
    "cat dander",
    "birch pollen",
    "latex",
    "bee stings",
]
_MEDICATIONS = [
    ("ibuprofen", "painkillers", ["200 mg", "400 mg"]),
    ("cetirizine", "hay fever pills", ["5 mg", "10 mg"]),
    ("vitamin D", "vitamin supplement", ["1000 IU", "2000 IU", "4000 IU"]),
    ("iron tablets", "iron supplement", ["65 mg", "130 mg"]),
    ("melatonin", "sleep aid", ["1 mg", "3 mg"]),
    ("levothyroxine", "thyroid medication", ["50 mcg", "75 mcg", "100 mcg"]),
    ("metformin", "diabetes medication", ["500 mg", "850 mg", "1000 mg"]),
]
_EXERCISE = [
    "runs 5 km three times a week",
    "swims before work on weekdays",
    "cycles to the office every day",
    "lifts weights twice a week",
    "walks 10,000 steps a day",
    "does a HIIT class on Mondays and Thursdays",
]
_PURCHASES = [
    ("noise-cancelling headphones", "headphones"),
    ("a standing desk", "desk"),
    ("running shoes", "trainers"),
    ("an espresso machine", "coffee maker"),
    ("a rain jacket", "raincoat"),
    ("a mechanical keyboard", "keyboard"),
    ("an air purifier", "air filter"),
    ("a cast-iron pan", "frying pan"),
    ("an e-reader", "ebook reader"),
    ("a robot vacuum", "vacuum cleaner"),
]
_STORES = [
    "Amazon",
    "IKEA",
    "Decathlon",
    "the Apple Store",
    "a local shop",
    "MediaMarkt",
    "John Lewis",
    "Zalando",
]
_SUBSCRIPTIONS = [
    ("gym membership", "gym", [("basic", 25), ("premium", 45), ("off-peak", 19)]),
    (
        "music streaming subscription",
        "music service",
        [("individual", 11), ("family", 17), ("student", 6)],
    ),
    ("cloud storage plan", "online backup", [("100 GB", 2), ("2 TB", 10), ("5 TB", 25)]),
    (
        "meal kit subscription",
        "recipe box",
        [("two-person", 60), ("family", 95), ("three-meal", 75)],
    ),
]
_ROASTERS = ["Bean Brothers", "the Roastery", "Origin Coffee", "Café Kilo"]

#: Base (source kind, authority, conviction) per origin; see the module docstring.
_ORIGINS: dict[str, tuple[str, float, float | None]] = {
    "user": ("user_explicit", 0.9, 0.9),
    "tool": ("observed", 0.85, 0.95),
    "chat": ("observed", 0.7, None),
    "derived": ("derived_deterministic", 0.8, 0.85),
    "inferred": ("agent_inferred", 0.55, 0.55),
    "guess": ("agent_inferred", 0.4, 0.35),
    "search": ("imported", 0.6, 0.6),
}
_IMPORTANCE = {
    "preferences": 0.55,
    "schedule": 0.7,
    "work": 0.7,
    "health": 0.8,
    "travel": 0.7,
    "contacts": 0.55,
    "purchases": 0.45,
    "logs": 0.3,
    "chatter": 0.2,
}


def _date(rng: random.Random, months: tuple[int, int] = (0, 12)) -> str:
    """A calendar date as text ("May 14"), month index in ``[months[0], months[1])``."""
    return f"{_MONTHS[rng.randrange(*months)]} {rng.randint(1, 28)}"


# -- the plan: what is written when, and what is asked ---------------------------------------


@dataclass
class _Op:
    """One write: an item (``key``, ``spec``) or an edge (``key``, ``src``, ``dst``, ``kind``)."""

    user: int
    session: int
    phase: int  # 0 facts and chatter, 1 late evidence, 2 conclusions, 9 edges
    order: float
    key: str
    spec: dict[str, Any]


@dataclass
class _Ask:
    """A question before ids exist: answers and stale versions by item key."""

    text: str
    answers: list[str]
    stale: list[str]
    category: str
    topic: str


class _UserPlan:
    """Plans one user's items, edges and questions over ``sessions`` sessions.

    Args:
        rng: the content PRNG (shared by all users, used in a fixed order).
        index: the user's position (0-based); selects name and pronoun.
        sessions: number of sessions (>= 3).
        rate: probability that a stable fact gets a question (changed facts
            and conclusions always do).
        codenames: this user's two project codenames (unique across users).
    """

    def __init__(
        self, rng: random.Random, index: int, sessions: int, rate: float, codenames: list[str]
    ) -> None:
        self.rng = rng
        self.index = index
        self.name, self.pron = _PEOPLE[index]
        self.uid = self.name.lower()
        self.poss_pron = "her" if self.pron == "she" else "his"
        self.obj_pron = "her" if self.pron == "she" else "him"
        self.sessions = sessions
        self.rate = rate
        self.codenames = codenames
        self.ops: list[_Op] = []
        self.asks: list[_Ask] = []
        self.session_of: dict[str, int] = {}
        self._n = 0

    # -- rendering ------------------------------------------------------------------------
    def render(self, template: str, *, named: bool | None = None, **kw: str) -> str:
        """Fill ``template``: ``{n}`` the person (or "the user" about one time in seven
        unless ``named``), ``{ns}`` its possessive, ``{p}`` / ``{o}`` / ``{pp}`` the
        pronoun as subject, object and possessive; the first letter is capitalised."""
        if named is None:
            named = self.rng.random() >= 1 / 7
        subject = self.name if named else "the user"
        text = template.format(
            n=subject, ns=f"{subject}'s", p=self.pron, o=self.obj_pron, pp=self.poss_pron, **kw
        )
        return text[0].upper() + text[1:]

    def ask_text(self, template: str, **kw: str) -> str:
        """A question from ``template`` (always names the person)."""
        return self.render(template, named=True, **kw)

    # -- writes ---------------------------------------------------------------------------
    def _key(self, slot: str) -> str:
        self._n += 1
        return f"{self.uid}.{slot}.{self._n}"

    def item(
        self,
        slot: str,
        session: int,
        topic: str,
        kind: str,
        origin: str,
        text: str,
        *,
        author: str | None = None,
        parents: list[str] | None = None,
        phase: int = 0,
    ) -> str:
        """Plan an item; returns its key (ids are assigned when it is written)."""
        key = self._key(slot)
        self.session_of[key] = session
        spec = {
            "type": "item",
            "topic": topic,
            "kind": kind,
            "origin": origin,
            "text": text,
            "author": author,
            "parents": parents or [],
        }
        order = self.rng.random() if phase == 0 else float(self._n)
        self.ops.append(_Op(self.index, session, phase, order, key, spec))
        return key

    def edge(self, src: str, dst: str, kind: str, origin: str) -> None:
        """Plan an edge ``src -> dst`` (item keys), written at the end of the later session."""
        session = max(self.session_of[src], self.session_of[dst])
        spec = {"type": "edge", "src": src, "dst": dst, "kind": kind, "origin": origin}
        self._n += 1
        self.ops.append(_Op(self.index, session, 9, float(self._n), f"edge.{self._n}", spec))

    def ask(
        self, text: str, answers: list[str], stale: list[str], category: str, topic: str
    ) -> None:
        """Record a question about planned item keys."""
        self.asks.append(_Ask(text, answers, stale, category, topic))

    def slot(
        self,
        slot: str,
        topic: str,
        kind: str,
        origin: str,
        versions: list[dict[str, str]],
        facts: list[str],
        changes: list[str],
        questions: list[str],
        qkw: dict[str, str] | None = None,
        *,
        author: str | None = None,
        sessions: list[int] | None = None,
        ask: bool | None = None,
    ) -> list[str]:
        """Plan a fact and its later versions, each superseding the one before.

        ``versions`` are the template arguments of each version (``v`` is the
        value; a change template also gets ``old``, the previous ``v``);
        ``qkw`` the question's arguments. The versions go to increasing
        sessions. Returns the item keys, oldest first.
        """
        if sessions is None:
            sessions = sorted(self.rng.sample(range(self.sessions), len(versions)))
        keys: list[str] = []
        for i, kw in enumerate(versions):
            if i == 0:
                text = self.render(self.rng.choice(facts), **kw)
            else:
                text = self.render(self.rng.choice(changes), old=versions[i - 1]["v"], **kw)
            keys.append(self.item(slot, sessions[i], topic, kind, origin, text, author=author))
            if i > 0:
                self.edge(keys[i], keys[i - 1], "SUPERSEDES", origin)
        changed = len(keys) > 1
        if ask is None:
            ask = changed or self.rng.random() < self.rate
        if ask and questions:
            q = self.ask_text(self.rng.choice(questions), **(qkw or {}))
            self.ask(q, [keys[-1]], keys[:-1], "changed" if changed else "fact", topic)
        return keys

    def conclude(
        self,
        slot: str,
        topic: str,
        origin: str,
        text: str,
        evidence: list[str],
        question: str,
        *,
        later: list[tuple[str, str, str, str]] | None = None,
    ) -> str:
        """Plan a conclusion derived from ``evidence`` (keys; its parents, each also
        linked by ``SUPPORTS``), optional ``later`` evidence ``(slot, kind, origin,
        text)`` linked by ``SUPPORTS`` only, and the question whose answers are
        the conclusion and all its evidence. Returns the conclusion's key."""
        first = max(self.session_of[k] for k in evidence)
        session = self.rng.randint(first, self.sessions - 1)
        key = self.item(slot, session, topic, "derivation", origin, text, parents=evidence, phase=2)
        for ev in evidence:
            self.edge(ev, key, "SUPPORTS", origin)
        support = list(evidence)
        for lslot, kind, lorigin, ltext in later or []:
            at = self.rng.randint(session, self.sessions - 1)
            lkey = self.item(lslot, at, topic, kind, lorigin, ltext, phase=1 if at > session else 3)
            self.edge(lkey, key, "SUPPORTS", "inferred")
            support.append(lkey)
        self.ask(question, [key, *support], [], "conclusion", topic)
        return key

    def guess(self, slot: str, topic: str, text: str, contradicts: str) -> None:
        """Plan an agent guess that contradicts the fact ``contradicts`` (key)."""
        key = self.item(slot, self.rng.randrange(self.sessions), topic, "hypothesis", "guess", text)
        self.edge(key, contradicts, "CONTRADICTS", "inferred")

    def pick_sessions(self, n: int) -> list[int]:
        """``n`` distinct sessions, increasing."""
        return sorted(self.rng.sample(range(self.sessions), n))

    def versions(self, values: list[str], changes: int) -> list[dict[str, str]]:
        """``changes + 1`` distinct values as template arguments ``{"v": value}``."""
        return [{"v": v} for v in self.rng.sample(values, changes + 1)]

    def n_changes(self, p: float, two: float = 0.0) -> int:
        """0, 1 or 2 changes: 1 with probability ``p``, of which 2 with ``two``."""
        if self.rng.random() >= p:
            return 0
        return 2 if self.rng.random() < two else 1


def _plan_user(u: _UserPlan) -> None:
    """Plan everything one user's sessions write and the questions about them."""
    rng = u.rng
    user_author = f"user:{u.uid}"
    prefs: dict[str, tuple[list[str], list[dict[str, str]]]] = {}

    # preferences ---------------------------------------------------------------------------
    for slot, values, facts, changes, questions in _PREFERENCES:
        vs = u.versions(values, u.n_changes(0.35))
        keys = u.slot(
            slot, "preferences", "trait", "user", vs, facts, changes, questions, author=user_author
        )
        prefs[slot] = (keys, vs)
    for slot, values, template in (
        (
            "cuisine",
            _PREFERENCES[0][1],
            "Aria guesses {n} might prefer {g} food, going by one lunch order.",
        ),
        ("seat", _PREFERENCES[2][1], "{n} probably likes {g} seats; {p} booked one last time."),
        (
            "music",
            _PREFERENCES[3][1],
            "Maybe {n} listens to {g} while working, judging by a playlist {p} shared.",
        ),
    ):
        if rng.random() < 0.6:
            keys, vs = prefs[slot]
            wrong = rng.choice([v for v in values if v != vs[-1]["v"]])
            u.guess(f"guess.{slot}", "preferences", u.render(template, g=wrong), keys[-1])

    # schedule ------------------------------------------------------------------------------
    for act, paras in rng.sample(_ACTIVITIES, 3):
        days = rng.sample(_DAYS, u.n_changes(0.35) + 1)
        vs = [{"v": d, "act": act, "time": rng.choice(_TIMES)} for d in days]
        u.slot(
            "recurring",
            "schedule",
            "assertion",
            "user",
            vs,
            [
                "{n} has a {act} every {v} at {time}.",
                "Every {v} at {time}, {n} has {pp} {act}.",
                "{ns} weekly {act} is on {v}s at {time}.",
            ],
            [
                "{ns} {act} moved to {v} at {time}.",
                "From next week {n} has {pp} {act} on {v} at {time} instead of {old}.",
            ],
            [
                "When does {n} have {para} each week?",
                "What day does {n} go to {para}?",
                "At what time should I remind {n} about {para}?",
            ],
            {"para": rng.choice(paras)},
            author=user_author,
        )
    for appt, paras in rng.sample(_APPOINTMENTS, 2):
        n = u.n_changes(0.4)
        vs = [{"v": _date(rng), "appt": appt, "time": rng.choice(_TIMES)} for _ in range(n + 1)]
        u.slot(
            "appointment",
            "schedule",
            "assertion",
            "tool",
            vs,
            [
                "{n} booked a {appt} appointment on {v} at {time}.",
                "Calendar: {appt} appointment for {n}, {v}, {time}.",
            ],
            [
                "{ns} {appt} appointment was rescheduled to {v} at {time}.",
                "Calendar: {appt} moved from {old} to {v}, {time}.",
            ],
            [
                "When is {ns} next visit to the {para}?",
                "What date is {n} going to the {para}?",
                "When does {n} see the {para}?",
            ],
            {"para": rng.choice(paras)},
            author="tool:calendar",
        )

    # work ----------------------------------------------------------------------------------
    products = rng.sample(_PRODUCTS, 2)
    leads: list[str] = []
    for i, (code, product) in enumerate(zip(u.codenames, products, strict=True)):
        role = "leads" if i == 0 else "contributes to"
        leads += u.slot(
            f"project{i}",
            "work",
            "assertion",
            "user",
            [{"v": code, "what": product}],
            [
                f"{{n}} {role} project {{v}}, the new {{what}}.",
                f"{{n}} {role} {{v}}, which is building the {{what}}.",
            ],
            [],
            [],
            author=user_author,
        )
    u.ask(
        u.ask_text(
            rng.choice(["Which projects is {n} working on?", "What is {n} busy with at work?"])
        ),
        leads,
        [],
        "fact",
        "work",
    )
    deadlines: list[list[str]] = []
    due = ""  # the second project's deadline: the second trip departs that day
    for i, code in enumerate(u.codenames):
        n = u.n_changes(0.5) if i == 0 else 0
        vs = [{"v": _date(rng, (3, 11)), "code": code} for _ in range(n + 1)]
        due = vs[-1]["v"]
        deadlines.append(
            u.slot(
                "deadline",
                "work",
                "assertion",
                "user",
                vs,
                [
                    "The {code} launch is due on {v}.",
                    "{code} has to ship by {v}.",
                    "Deadline for {code}: {v}, {n} said.",
                ],
                [
                    "The {code} deadline slipped from {old} to {v}.",
                    "{code} launch moved to {v} after the vendor delay.",
                ],
                [
                    "When is {code} due?",
                    "When does {code} need to be finished?",
                    "What is the current deadline for {code}?",
                ],
                {"code": code},
                author=user_author,
            )
        )
        u.slot(
            "stack",
            "work",
            "assertion",
            "user",
            [{"v": rng.choice(_STACKS), "code": code}],
            ["{code} is built with {v}.", "The {code} team writes everything in {v}."],
            [],
            ["What tech stack does {code} use?", "Which language is {code} written in?"],
            {"code": code},
            author=user_author,
        )
        u.slot(
            "reviewer",
            "work",
            "assertion",
            "user",
            [{"v": rng.choice(_COLLEAGUES), "code": code}],
            ["{v} reviews the code for {code}.", "On {code}, {v} approves every pull request."],
            [],
            ["Who does code review on {code}?", "Whose approval does a {code} change need?"],
            {"code": code},
            author=user_author,
        )
    status = u.versions(_STATUSES, u.n_changes(0.8, 0.4))
    for kw in status:
        kw["code"] = u.codenames[0]
    u.slot(
        "status",
        "work",
        "assertion",
        "user",
        status,
        ["Status of {code}: {v}.", "{n} reports that {code} is {v}."],
        ["Update on {code}: no longer {old}, now {v}.", "{code} is now {v}, {n} said."],
        ["How is {code} going?", "What's the latest on {code}?", "Is {code} on schedule?"],
        {"code": u.codenames[0]},
        author=user_author,
    )

    # health --------------------------------------------------------------------------------
    allergy = rng.choice(_ALLERGIES)
    u.slot(
        "allergy",
        "health",
        "assertion",
        "user",
        [{"v": allergy}],
        [
            "{n} is allergic to {v}.",
            "{n} told Aria about a {v} allergy.",
            "{n} reacts badly to {v} and carries antihistamines.",
        ],
        [],
        [
            "Does {n} have any allergies?",
            "What must {n} avoid for medical reasons?",
            "Is {n} allergic to anything?",
        ],
        author=user_author,
    )
    for med, para, doses in rng.sample(_MEDICATIONS, 2):
        n = u.n_changes(0.4)
        vs = [{"v": d, "med": med} for d in rng.sample(doses, min(n + 1, len(doses)))]
        u.slot(
            "medication",
            "health",
            "assertion",
            "user",
            vs,
            ["{n} takes {v} of {med} every morning.", "{ns} prescription: {med}, {v} daily."],
            [
                "{ns} doctor changed the {med} dose to {v}.",
                "{n} now takes {v} of {med} instead of {old}.",
            ],
            [
                "What dose of {med} is {n} on?",
                "How much {para} does {n} take each day?",
                "What is {ns} daily {para} dosage?",
            ],
            {"med": med, "para": para},
            author=user_author,
        )
    u.slot(
        "exercise",
        "health",
        "assertion",
        "user",
        [{"v": rng.choice(_EXERCISE)}],
        ["{n} {v}.", "Exercise routine: {n} {v}."],
        [],
        ["How often does {n} exercise?", "What is {ns} workout routine?"],
        author=user_author,
    )
    u.slot(
        "doctor",
        "health",
        "assertion",
        "user",
        [{"v": rng.choice(_DOCTORS), "clinic": rng.choice(_CLINICS)}],
        ["{ns} GP is Dr. {v} at {clinic}.", "{n} sees Dr. {v} ({clinic}) for check-ups."],
        [],
        ["Who is {ns} family doctor?", "Which physician does {n} go to?"],
        author=user_author,
    )
    sleep: list[str] = []
    for s in range(u.sessions):
        for _ in range(2):
            r = rng.random()
            if r < 0.4:
                hours = f"{rng.uniform(5.0, 8.5):.1f}"
                text = u.render(
                    "Fitness sync: {n} slept {h} hours on the night of {d}.",
                    h=hours,
                    d=_date(rng, (0, 3)),
                )
                k = u.item("sleep", s, "logs", "observation", "tool", text, author="tool:fitness")
                if float(hours) < 6.0:
                    sleep.append(k)
            elif r < 0.7:
                text = u.render(
                    "Fitness sync: resting heart rate {b} bpm for {n} on {d}.",
                    b=str(rng.randint(52, 78)),
                    d=_date(rng, (0, 3)),
                )
                u.item("heart", s, "logs", "observation", "tool", text, author="tool:fitness")
            else:
                text = u.render(
                    "Fitness sync: {n} walked {k} steps on {d}.",
                    k=f"{rng.randint(3, 16) * 1000:,}",
                    d=_date(rng, (0, 3)),
                )
                u.item("steps", s, "logs", "observation", "tool", text, author="tool:fitness")
    stress = u.item(
        "stress",
        rng.randrange(u.sessions),
        "health",
        "observation",
        "user",
        u.render(
            rng.choice(
                [
                    "{n} said the {code} deadline is keeping {pp} up at night.",
                    "{n} admitted feeling exhausted by the {code} crunch.",
                ]
            ),
            code=u.codenames[0],
        ),
        author=user_author,
    )
    while len(sleep) < 2:  # short nights the conclusion rests on
        s = rng.randrange(u.sessions)
        text = u.render(
            "Fitness sync: {n} slept {h} hours on the night of {d}.",
            h=f"{rng.uniform(4.5, 5.9):.1f}",
            d=_date(rng, (0, 3)),
        )
        sleep.append(u.item("sleep", s, "logs", "observation", "tool", text, author="tool:fitness"))
    u.conclude(
        "burnout",
        "health",
        "inferred",
        u.render(
            "Possible burnout risk: {n} is sleeping under six hours and is stressed about {code}.",
            code=u.codenames[0],
        ),
        [*rng.sample(sleep, 2), stress],
        u.ask_text(
            rng.choice(
                [
                    "What signs of burnout has {n} shown lately?",
                    "Is {n} at risk of burnout, and what points to it?",
                ]
            )
        ),
    )

    # travel --------------------------------------------------------------------------------
    trips = rng.sample(_CITIES, 2)
    flights: list[list[str]] = []
    hotels: list[str] = []
    nights = ""
    for i, (city, country) in enumerate(trips):
        code, airline = rng.choice(_AIRLINES)
        n = u.n_changes(0.5) if i == 0 else 0
        vs = [
            {"v": f"{code} {rng.randint(100, 2999)}", "city": city, "d": _date(rng, (3, 11))}
            for _ in range(n + 1)
        ]
        if i == 1:  # the second trip starts on the second project's deadline
            vs[0]["d"] = due
        flights.append(
            u.slot(
                "flight",
                "travel",
                "assertion",
                "tool",
                vs,
                [
                    "{n} is booked on flight {v} to {city} on {d}.",
                    "Flight {v} to {city}, departing {d}, is booked for {n}.",
                ],
                [
                    "{ns} flight to {city} changed to {v} on {d}.",
                    "Rebooked: {n} now flies {v} to {city} on {d} (was {old}).",
                ],
                [
                    "Which flight is {n} taking to {city}?",
                    "When does {n} fly out to {city}?",
                    "What's {ns} flight number for the {city} trip?",
                ],
                {"city": city},
                author="tool:calendar",
            )
        )
        nights = str(rng.randint(2, 9))
        hotels += u.slot(
            "hotel",
            "travel",
            "assertion",
            "tool",
            [{"v": rng.choice(_HOTELS), "city": city, "k": nights}],
            [
                "{n} reserved {v} in {city} for {k} nights.",
                "Accommodation in {city}: {v}, {k} nights, booked for {n}.",
            ],
            [],
            ["Where is {n} staying in {city}?", "Which hotel did {n} book for the {city} trip?"],
            {"city": city},
            author="tool:calendar",
        )
        u.slot(
            "purpose",
            "travel",
            "assertion",
            "user",
            [{"v": rng.choice(_PURPOSES), "city": city, "country": country}],
            [
                "{n} is going to {city} for {v}.",
                "The {country} trip ({city}) is for {v}, {n} said.",
            ],
            [],
            ["Why is {n} travelling to {city}?", "What takes {n} to {country}?"],
            {"city": city, "country": country},
            author=user_author,
        )
    years = [["2025", "2026"], ["2035", "2036"]][: u.n_changes(0.4) + 1]
    vs = [{"v": f"{rng.choice(_MONTHS)} {rng.choice(ys)}"} for ys in years]
    u.slot(
        "passport",
        "travel",
        "assertion",
        "user",
        vs,
        ["{ns} passport expires in {v}.", "{n} said {pp} passport is valid until {v}."],
        ["{n} renewed {pp} passport; the new one is valid until {v}."],
        ["When does {ns} passport run out?", "Until when can {n} travel on {pp} passport?"],
        author=user_author,
    )
    code, airline = rng.choice(_AIRLINES)
    u.slot(
        "loyalty",
        "travel",
        "assertion",
        "user",
        [{"v": f"{code}{rng.randint(10_000_000, 99_999_999)}", "airline": airline}],
        [
            "{ns} frequent flyer number with {airline} is {v}.",
            "{airline} miles: {n} collects them under member number {v}.",
        ],
        [],
        ["What's {ns} airline loyalty number?", "Which frequent flyer account does {n} use?"],
        author=user_author,
    )

    # contacts ------------------------------------------------------------------------------
    relations = rng.sample(sorted(_RELATIONS), 4)
    people: list[str] = []
    for rel in relations:
        gender = _RELATIONS[rel] or rng.choice("fm")
        people.append(rng.choice([c for c in _CONTACTS[gender] if c not in people]))
    gift_for: tuple[str, str, str, str] | None = None
    for c, rel in zip(people, relations, strict=True):
        kw = {"c": c, "rel": rel}
        u.slot(
            "relation",
            "contacts",
            "assertion",
            "user",
            [{"v": c, **kw}],
            ["{c} is {ns} {rel}.", "{n} mentioned {pp} {rel}, {c}."],
            [],
            ["Who is {ns} {rel}?", "What is the name of {ns} {rel}?"],
            kw,
            author=user_author,
        )
        u.slot(
            "phone",
            "contacts",
            "assertion",
            "user",
            [
                {
                    "v": f"+{rng.randint(30, 49)} {rng.randint(100, 999)} "
                    f"{rng.randint(100000, 999999)}",
                    **kw,
                }
            ],
            ["{ns} {rel} {c} can be reached on {v}.", "Phone number for {c} ({ns} {rel}): {v}."],
            [],
            ["How can I call {ns} {rel}?", "What number should I dial to reach {ns} {rel} {c}?"],
            kw,
            author=user_author,
        )
        bday = u.slot(
            "birthday",
            "contacts",
            "assertion",
            "user",
            [{"v": _date(rng), **kw}],
            ["{c}'s birthday is on {v}.", "{ns} {rel} {c} was born on {v}."],
            [],
            [
                "When is the birthday of {ns} {rel} {c}?",
                "On which day does {ns} {rel} celebrate turning a year older?",
            ],
            kw,
            author=user_author,
        )
        homes = rng.sample(_HOME_CITIES, u.n_changes(0.3) + 1)
        u.slot(
            "city",
            "contacts",
            "assertion",
            "user",
            [{"v": h, **kw} for h in homes],
            ["{c} lives in {v}.", "{ns} {rel} {c} is based in {v}."],
            ["{c} moved from {old} to {v}.", "{ns} {rel} has relocated to {v}."],
            ["Where does {ns} {rel} live now?", "Which city is {ns} {rel} {c} in?"],
            kw,
            author=user_author,
        )
        if gift_for is None:
            gift_for = (c, rel, bday[0], rng.choice(_HOBBIES)[0])
    assert gift_for is not None
    c, rel, bday_key, hobby = gift_for
    gift = dict(_HOBBIES)[hobby]
    hobby_key = u.item(
        "hobby",
        rng.randrange(u.sessions),
        "contacts",
        "observation",
        "user",
        u.render("{n} mentioned that {c} has got really into {h}.", c=c, h=hobby),
        author=user_author,
    )
    u.conclude(
        "gift",
        "contacts",
        "inferred",
        u.render(
            "Gift idea for the birthday of {ns} {rel} {c}: {g}, since {c} is into {h}.",
            rel=rel,
            c=c,
            g=gift,
            h=hobby,
        ),
        [bday_key, hobby_key],
        u.ask_text("What would make a good birthday present for {ns} {rel}?", rel=rel),
    )

    # purchases -----------------------------------------------------------------------------
    for thing, para in rng.sample(_PURCHASES, 5):
        kw = {
            "v": thing,
            "store": rng.choice(_STORES),
            "price": str(rng.randint(19, 650)),
            "d": _date(rng, (0, 3)),
        }
        u.slot(
            "purchase",
            "purchases",
            "observation",
            "tool",
            [kw],
            [
                "Purchase: {n} bought {v} from {store} for ${price} on {d}.",
                "{n} paid ${price} for {v} at {store} ({d}).",
            ],
            [],
            [
                "How much did {n} pay for the {para}?",
                "Where did {n} buy {pp} {para}?",
                "When did {n} get the {para}?",
            ],
            {"para": para},
            author="tool:wallet",
        )
    for sub, para, plans in rng.sample(_SUBSCRIPTIONS, 2):
        n = u.n_changes(0.5)
        vs = [{"v": p, "price": str(price), "sub": sub} for p, price in rng.sample(plans, n + 1)]
        u.slot(
            "subscription",
            "purchases",
            "assertion",
            "tool",
            vs,
            [
                "{n} pays ${price} a month for the {v} {sub}.",
                "Wallet: {sub}, {v} tier, ${price} monthly, charged to {n}.",
            ],
            [
                "{n} switched the {sub} from {old} to the {v} tier (${price}/month).",
                "Wallet: {ns} {sub} is now {v} at ${price} a month.",
            ],
            ["What plan is {n} on for {pp} {para}?", "How much does {ns} {para} cost per month?"],
            {"para": para},
            author="tool:wallet",
        )
    beans: list[str] = []
    total = 0
    for s in u.pick_sessions(3):
        price = rng.randint(14, 32)
        total += price
        beans.append(
            u.item(
                "beans",
                s,
                "purchases",
                "observation",
                "tool",
                u.render(
                    "Purchase: {n} bought 1 kg of coffee beans from {r} for ${price}.",
                    r=rng.choice(_ROASTERS),
                    price=str(price),
                ),
                author="tool:wallet",
            )
        )
    u.conclude(
        "spending",
        "purchases",
        "derived",
        u.render(
            "{n} spends about ${x} a month on coffee beans, going by recent receipts.",
            x=str(round(total / 2)),
        ),
        beans,
        u.ask_text(
            rng.choice(
                [
                    "How much does {n} spend on coffee per month?",
                    "What is {ns} monthly coffee budget?",
                ]
            )
        ),
    )

    # conclusions across topics ---------------------------------------------------------------
    city = trips[1][0]
    deadline = deadlines[1][-1]
    flight = flights[1][-1]
    hotel = hotels[1]
    trip_dates = f"{due} for {nights} nights"
    u.conclude(
        "away",
        "travel",
        "derived",
        u.render(
            "{n} will be away in {city} from {d}; keep those days free of meetings.",
            city=city,
            d=trip_dates,
        ),
        [flight, hotel],
        u.ask_text(
            rng.choice(
                [
                    "Which days will {n} be away, and why?",
                    "When will {n} be out of the office for travel?",
                ]
            )
        ),
        later=[
            (
                "ooo",
                "observation",
                "tool",
                u.render("Calendar: {n} marked out of office from {d}.", d=trip_dates),
            )
        ],
    )
    code = u.codenames[1]
    u.conclude(
        "clash",
        "work",
        "inferred",
        u.render(
            "Conflict: the {code} deadline falls during {ns} trip to {city}.", code=code, city=city
        ),
        [deadline, flight],
        u.ask_text(
            rng.choice(
                [
                    "Is there a scheduling conflict with the {code} deadline?",
                    "Does anything clash with {ns} {code} deadline?",
                ]
            ),
            code=code,
        ),
    )

    # small talk and searches: distractors sharing the vocabulary -------------------------------
    cuisine_values = _PREFERENCES[0][1]
    chatter = [
        ("chat", "{n} mentioned the weather in {city} looked grim for next week."),
        ("chat", "{n} asked Aria to find a {cuisine} place for a friend's birthday dinner."),
        ("chat", "{n} complained that the office coffee machine is broken again."),
        ("chat", "{n} asked how long the flight to {city} takes."),
        ("chat", "{n} shared an article about {allergy} allergies in children."),
        ("chat", "{n} said the {act} was cancelled this week because the teacher was ill."),
        ("search", "Scout compared prices for {thing} across three shops."),
        ("chat", "{n} wondered whether {thing} would be worth buying."),
        ("chat", "{n} asked for a reminder to call {pp} {rel}."),
        ("chat", "Aria drafted an email to the {code} team for {n}."),
        ("chat", "{n} said the meeting about {code} ran long."),
        ("search", "Scout summarised the visa rules for {country}."),
        ("tool", "Calendar sync: {k} events imported for {n}."),
        ("chat", "{n} joked that {p} needs a holiday after the {code} demo."),
        ("chat", "{n} is reading a novel set in {city}."),
        ("search", "Scout found {k} reviews of {hotel}, mostly positive."),
        ("chat", "{n} asked what the seat map looks like on a {airline} flight."),
        ("chat", "{n} wants to try a new {cuisine} recipe at the weekend."),
        ("chat", "{n} forwarded a coffee shop recommendation from {c}."),
        ("inferred", "{n} seemed tired during today's chat."),
        ("chat", "{n} asked Aria to summarise yesterday's standup."),
        ("search", "Scout listed three {cuisine} restaurants near the office."),
    ]
    for s in range(u.sessions):
        for origin, template in rng.sample(chatter, 10):
            city, country = rng.choice(_CITIES)
            text = u.render(
                template,
                city=city,
                country=country,
                cuisine=rng.choice(cuisine_values),
                allergy=rng.choice(_ALLERGIES),
                act=rng.choice(_ACTIVITIES)[0],
                thing=rng.choice(_PURCHASES)[0],
                rel=rng.choice(sorted(_RELATIONS)),
                code=rng.choice(u.codenames),
                k=str(rng.randint(3, 40)),
                hotel=rng.choice(_HOTELS),
                airline=rng.choice(_AIRLINES)[1],
                c=rng.choice(_CONTACTS[rng.choice("fm")]),
            )
            author = {"search": "agent:scout", "tool": "tool:calendar"}.get(origin)
            u.item(
                "chatter",
                s,
                "chatter" if origin != "tool" else "logs",
                "observation",
                origin,
                text,
                author=author,
            )


# -- writing ----------------------------------------------------------------------------------


class _Writer:
    """Applies the planned ops to a state with a scripted clock and UUIDv7 ids."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ms = START
        self.state = memex.create_graph_state()
        self.ids: dict[str, str] = {}

    def uuid7(self) -> str:
        """A UUIDv7 whose time field is the clock (random bits from the seeded PRNG)."""
        rand_a = self.rng.getrandbits(12)
        return uuid7_text(self.ms, rand_a, self.rng.getrandbits(62))

    def _jitter(self, x: float) -> float:
        return round(min(1.0, max(0.0, x + self.rng.uniform(-0.05, 0.05))), 2)

    def write(self, op: _Op, user: str) -> None:
        """Apply one op (an item or an edge) to the running state."""
        spec = op.spec
        session = f"{user}-s{op.session + 1:02d}"
        if spec["type"] == "edge":
            self.ms += self.rng.randint(1, 5) * 1000
            source_kind, authority, _ = _ORIGINS[spec["origin"]]
            edge = memex.create_edge(
                edge_id=self.uuid7(),
                from_=self.ids[spec["src"]],
                to=self.ids[spec["dst"]],
                kind=spec["kind"],
                author="agent:aria",
                source_kind=source_kind,
                authority=self._jitter(authority),
                meta={"session_id": session},
                now=self.ms,
            )
            self.state = memex.apply_command(self.state, memex.EdgeCreate(edge=edge)).state
            return
        self.ms += self.rng.randint(5, 40) * 1000
        origin = spec["origin"]
        source_kind, authority, conviction = _ORIGINS[origin]
        author = spec["author"] or ("agent:scout" if origin == "search" else "agent:aria")
        item = memex.create_memory_item(
            id=self.uuid7(),
            scope=f"user:{user}/{spec['topic']}",
            kind=spec["kind"],
            content={"text": spec["text"]},
            author=author,
            source_kind=source_kind,
            authority=self._jitter(authority),
            conviction=None if conviction is None else self._jitter(conviction),
            importance=self._jitter(_IMPORTANCE[spec["topic"]]),
            parents=[self.ids[p] for p in spec["parents"]] or None,
            meta={"agent_id": author.split(":", 1)[1], "session_id": session},
            now=self.ms,
        )
        self.ids[op.key] = item.id
        self.state = memex.apply_command(self.state, memex.MemoryCreate(item=item)).state


def build(
    seed: int = 1,
    users: int = DEFAULT_USERS,
    sessions: int = DEFAULT_SESSIONS,
    question_rate: float = DEFAULT_QUESTION_RATE,
) -> Memory:
    """Generate the memory and its questions (see the module docstring).

    Args:
        seed: the PRNG seed; equal arguments give identical memories.
        users: number of users (1 to 12); each brings about 270 items at 16
            sessions and about 50 questions.
        sessions: sessions per user (>= 3), one every 4 days from
            :data:`START`, the users' sessions interleaved in time.
        question_rate: probability that a stable fact gets a question (changed
            facts and conclusions always get one), in [0, 1].
    Returns:
        The :class:`Memory`; ``now`` is one day after the last write.
    Raises:
        ValueError: an argument is out of range.

    The default size (8 users, 16 sessions) has about 2,170 items, 190 edges and
    410 questions (seed 1: 2,170 / 192 / 418) and builds in well under a second.
    """
    if not 1 <= users <= len(_PEOPLE):
        raise ValueError(f"users must be in [1, {len(_PEOPLE)}], got {users}")
    if sessions < 3:
        raise ValueError(f"sessions must be >= 3, got {sessions}")
    if not 0.0 <= question_rate <= 1.0:
        raise ValueError(f"question_rate must be in [0, 1], got {question_rate}")
    rng = random.Random(seed)
    codenames = rng.sample(_CODENAMES, 2 * users)
    plans = []
    for i in range(users):
        plan = _UserPlan(rng, i, sessions, question_rate, codenames[2 * i : 2 * i + 2])
        _plan_user(plan)
        plans.append(plan)
    ops = [op for plan in plans for op in plan.ops]
    ops.sort(key=lambda op: (op.session, op.user, op.phase, op.order))
    writer = _Writer(seed + 1)
    names = [plan.uid for plan in plans]
    current: tuple[int, int] | None = None
    for op in ops:
        if (op.session, op.user) != current:
            current = (op.session, op.user)
            start = START + op.session * _SESSION_GAP + op.user * _USER_OFFSET
            writer.ms = max(writer.ms + 1000, start)
        writer.write(op, names[op.user])
    questions = [
        Question(
            text=a.text,
            answers=[writer.ids[k] for k in a.answers],
            stale=[writer.ids[k] for k in a.stale],
            category=a.category,
            topic=a.topic,
        )
        for plan in plans
        for a in plan.asks
    ]
    return Memory(writer.state, questions, writer.ms + _DAY, seed, users, sessions)
