"""Generate ``agent_session.jsonl``: an example memex event log.

The log is the memory of an assistant agent ("aria") helping one user (Ada)
over three chat sessions in March 2024, with a research sub-agent ("scout")
and two tool feeds (calendar, fitness tracker). It exercises every memory
command: creates (observations, traits, assertions, a hypothesis, derivations
with ``parents``, a policy), updates (importance bumps, conviction changes,
``meta`` merges), a retraction that removes the retracted item's edges, and
SUPPORTS / CONTRADICTS / ABOUT / ALIAS / SUPERSEDES / DERIVED_FROM edges,
including an edge deactivated by ``edge.update`` and one removed by
``edge.retract``. Two contradictions stay unresolved on purpose.

The output is deterministic: timestamps come from a scripted clock and every
id is a UUIDv7 built from that clock and a seeded PRNG, so running the script
again rewrites a byte-identical file. Each command is applied to a running
state while the log is written, so the script fails loudly if the log would
not replay cleanly.

Usage (from the repository root)::

    .venv/bin/python docs/examples/make_agent_session.py            # writes docs/examples/agent_session.jsonl
    .venv/bin/python docs/examples/make_agent_session.py OUT.jsonl  # writes elsewhere
"""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memex
from memex.codec import jsonfmt

SEED = 20240304
OUT = Path(__file__).with_name("agent_session.jsonl")

PROFILE = "user:ada/profile"
PREFS = "user:ada/preferences"
SCHEDULE = "user:ada/schedule"

ADA = "user:ada"
ARIA = "agent:aria"
SCOUT = "agent:scout"
CALENDAR = "tool:calendar"
FITNESS = "tool:fitness-sync"


def at(text: str) -> int:
    """Return unix ms for a UTC ``YYYY-MM-DD HH:MM`` text."""
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC).timestamp() * 1000)


class SessionLog:
    """Builds the log: a scripted clock, deterministic ids and a running state.

    Items and edges are referred to by short keys (``"pref.concise"``); the
    generated UUIDv7 ids are looked up from them.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ms = 0
        self.state = memex.create_graph_state()
        self.lines: list[str] = []
        self.ids: dict[str, str] = {}
        self.session = ""
        self.agent = "aria"
        self.turn = 0

    # -- clock and ids -------------------------------------------------
    def start_session(self, session_id: str, when: str, agent: str = "aria") -> None:
        """Start a session: move the clock to ``when`` and set the meta defaults."""
        self.ms = max(self.ms + 1000, at(when))
        self.session = session_id
        self.agent = agent
        self.turn = 0

    def next_turn(self) -> None:
        """Start a new conversational turn (changes the envelopes' trace id)."""
        self.turn += 1
        self.ms += self.rng.randint(40, 180) * 1000

    def uuid7(self) -> str:
        """Return a UUIDv7 whose time field is the current clock (random bits from the seeded PRNG)."""
        rand_a = self.rng.getrandbits(12)
        rand_b = self.rng.getrandbits(62)
        value = (self.ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
        h = f"{value:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def meta(self, **extra: Any) -> dict[str, Any]:
        """Return the standard item meta (agent and session ids) plus ``extra``."""
        return {"agent_id": self.agent, "session_id": self.session, **extra}

    # -- commands --------------------------------------------------------
    def emit(self, cmd: Any) -> None:
        """Apply ``cmd`` to the running state (must succeed) and append its envelope."""
        self.ms += self.rng.randint(2, 25) * 1000
        self.state, _ = memex.apply_command(self.state, cmd)
        env = memex.create_event_envelope(
            cmd.type, cmd, trace_id=f"{self.session}/turn-{self.turn:02d}", now=self.ms
        )
        wire = env.to_dict()
        wire["id"] = self.uuid7()
        self.lines.append(jsonfmt.dumps(wire))

    def item(
        self,
        key: str,
        scope: str,
        kind: str,
        content: dict[str, Any],
        author: str,
        source_kind: str,
        authority: float,
        *,
        parents: list[str] | None = None,
        conviction: float | None = None,
        importance: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """Create an item under ``key``; ``parents`` are keys. Returns the item id."""
        self.ms += self.rng.randint(2, 25) * 1000
        item = memex.create_memory_item(
            id=self.uuid7(),
            scope=scope,
            kind=kind,
            content=content,
            author=author,
            source_kind=source_kind,
            authority=authority,
            parents=[self.ids[p] for p in parents] if parents else None,
            conviction=conviction,
            importance=importance,
            meta=self.meta(**(meta or {})),
            now=self.ms,
        )
        self.ids[key] = item.id
        self.emit(memex.MemoryCreate(item=item))
        return item.id

    def edge(
        self,
        key: str,
        src: str,
        dst: str,
        kind: str,
        author: str,
        source_kind: str,
        authority: float,
        *,
        weight: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """Create an edge ``src -> dst`` (item keys) under ``key``. Returns the edge id."""
        self.ms += self.rng.randint(1, 5) * 1000
        edge = memex.create_edge(
            edge_id=self.uuid7(),
            from_=self.ids[src],
            to=self.ids[dst],
            kind=kind,
            author=author,
            source_kind=source_kind,
            authority=authority,
            weight=weight,
            meta=meta,
        )
        self.ids[key] = edge.edge_id
        self.emit(memex.EdgeCreate(edge=edge))
        return edge.edge_id

    def update(
        self,
        key: str,
        partial: dict[str, Any],
        author: str,
        reason: str | None = None,
        basis: dict[str, Any] | None = None,
    ) -> None:
        """Update the item ``key`` with ``partial``."""
        self.emit(
            memex.MemoryUpdate(
                item_id=self.ids[key], partial=partial, author=author, reason=reason, basis=basis
            )
        )

    def retract(self, key: str, author: str, reason: str) -> None:
        """Retract the item ``key`` (its edges go with it)."""
        self.emit(memex.MemoryRetract(item_id=self.ids[key], author=author, reason=reason))

    def update_edge(self, key: str, partial: dict[str, Any], author: str, reason: str) -> None:
        """Update the edge ``key`` with ``partial``."""
        self.emit(
            memex.EdgeUpdate(edge_id=self.ids[key], partial=partial, author=author, reason=reason)
        )

    def retract_edge(self, key: str, author: str, reason: str) -> None:
        """Retract the edge ``key``."""
        self.emit(memex.EdgeRetract(edge_id=self.ids[key], author=author, reason=reason))

    def about(self, key: str, target: str = "profile.name") -> None:
        """Link item ``key`` to ``target`` (default: Ada herself) with an ABOUT edge."""
        self.edge(f"about:{key}", key, target, "ABOUT", ARIA, "agent_inferred", 0.9)


def session_1(log: SessionLog) -> None:
    """Monday morning: onboarding chat, calendar sync, first inferences."""
    log.start_session("s1-2024-03-04", "2024-03-04 08:30")
    log.next_turn()
    log.item(
        "profile.name",
        PROFILE,
        "trait",
        {"text": "Goes by Ada; full name Ada Okafor", "field": "name", "value": "Ada Okafor"},
        ADA,
        "user_explicit",
        1,
        importance=0.7,
    )
    log.item(
        "profile.role",
        PROFILE,
        "trait",
        {"text": "Data engineer at a freight logistics company", "field": "role"},
        ADA,
        "user_explicit",
        0.95,
        importance=0.5,
    )
    log.about("profile.role")
    log.item(
        "profile.tz",
        PROFILE,
        "trait",
        {"text": "Lives in London", "field": "timezone", "value": "Europe/London"},
        ADA,
        "user_explicit",
        1,
        importance=0.6,
    )
    log.about("profile.tz")
    log.item(
        "profile.langs",
        PROFILE,
        "observation",
        {"text": "Writes Python every day and is learning Rust", "languages": ["python", "rust"]},
        ADA,
        "user_explicit",
        0.9,
        importance=0.4,
    )
    log.about("profile.langs")

    log.next_turn()
    log.item(
        "pref.concise",
        PREFS,
        "observation",
        {
            "text": "Asked for short answers: 'just the gist, please'",
            "quote": "just the gist, please",
        },
        ADA,
        "user_explicit",
        0.9,
        importance=0.5,
    )
    log.about("pref.concise")
    log.item(
        "pref.metric",
        PREFS,
        "observation",
        {"text": "Prefers metric units (kg, km, °C)", "units": "metric"},
        ADA,
        "user_explicit",
        0.95,
        importance=0.4,
    )
    log.about("pref.metric")
    log.item(
        "pref.veg",
        PREFS,
        "observation",
        {"text": "Vegetarian; no meat or fish", "diet": "vegetarian"},
        ADA,
        "user_explicit",
        1,
        importance=0.8,
    )
    log.about("pref.veg")
    log.item(
        "pref.tea",
        PREFS,
        "observation",
        {"text": "Drinks tea, not coffee", "drink": "tea"},
        ADA,
        "user_explicit",
        0.8,
        importance=0.2,
    )
    log.about("pref.tea")
    log.item(
        "pref.dark",
        PREFS,
        "observation",
        {"text": "Screenshots she shares are all in dark mode", "theme": "dark"},
        ARIA,
        "observed",
        0.6,
        importance=0.1,
    )
    log.item(
        "pref.morning",
        PREFS,
        "observation",
        {"text": "Keeps 07:00-10:00 free for focus work", "focus_block": ["07:00", "10:00"]},
        ADA,
        "user_explicit",
        0.9,
        importance=0.7,
    )
    log.about("pref.morning")

    log.next_turn()
    calendar = [
        (
            "cal.standup",
            "Team stand-up, weekdays 09:30-09:45",
            {"weekday": "Mon-Fri", "start": "09:30"},
        ),
        ("cal.one2one", "1:1 with manager, Tuesdays 14:00", {"weekday": "Tue", "start": "14:00"}),
        ("cal.climbing", "Climbing gym, Thursdays 18:30", {"weekday": "Thu", "start": "18:30"}),
        (
            "cal.planning",
            "Sprint planning, every other Monday 11:00",
            {"weekday": "Mon", "start": "11:00"},
        ),
        ("cal.dentist", "Dentist, 2024-03-14 16:00", {"date": "2024-03-14", "start": "16:00"}),
        (
            "cal.bookclub",
            "Book club, first Wednesday of the month 19:30",
            {"weekday": "Wed", "start": "19:30"},
        ),
    ]
    for key, text, extra in calendar:
        log.item(
            key,
            SCHEDULE,
            "observation",
            {"text": text, **extra},
            CALENDAR,
            "imported",
            0.85,
            importance=0.3,
            meta={"feed": "google-calendar"},
        )
    log.about("cal.climbing")

    log.next_turn()
    log.item(
        "contact.card",
        PROFILE,
        "trait",
        {"text": "Contact card 'A. Okafor <ada@example.org>'", "email": "ada@example.org"},
        "tool:contacts",
        "imported",
        0.8,
    )
    log.edge(
        "alias:name-card", "profile.name", "contact.card", "ALIAS", ARIA, "agent_inferred", 0.9
    )
    log.edge(
        "alias:card-name", "contact.card", "profile.name", "ALIAS", ARIA, "agent_inferred", 0.9
    )

    log.next_turn()
    log.item(
        "assert.bullets",
        PREFS,
        "assertion",
        {"text": "Ada prefers bullet-point summaries over prose"},
        ARIA,
        "agent_inferred",
        0.6,
        parents=["pref.concise"],
        conviction=0.7,
        importance=0.5,
    )
    log.edge(
        "sup:concise-bullets",
        "pref.concise",
        "assert.bullets",
        "SUPPORTS",
        ARIA,
        "agent_inferred",
        0.7,
        weight=0.8,
    )
    log.item(
        "derive.no-early-meetings",
        SCHEDULE,
        "derivation",
        {"text": "Do not propose meetings before 10:00, except the 09:30 stand-up"},
        ARIA,
        "derived_deterministic",
        0.9,
        parents=["pref.morning", "cal.standup"],
        importance=0.6,
    )
    log.item(
        "derive.recipes",
        PREFS,
        "derivation",
        {"text": "Recipe suggestions: vegetarian, quantities in grams and millilitres"},
        ARIA,
        "derived_deterministic",
        0.9,
        parents=["pref.veg", "pref.metric"],
        importance=0.4,
    )
    log.edge(
        "der:recipes-veg",
        "derive.recipes",
        "pref.veg",
        "DERIVED_FROM",
        ARIA,
        "derived_deterministic",
        1,
    )
    log.item(
        "policy.confirm",
        PREFS,
        "policy",
        {"text": "Always ask before creating or moving calendar events"},
        ADA,
        "user_explicit",
        1,
        importance=0.9,
    )
    log.about("policy.confirm")
    log.item(
        "assume.weekdays",
        SCHEDULE,
        "assumption",
        {"text": "Works Monday to Friday, office hours in London time"},
        ARIA,
        "agent_inferred",
        0.5,
        parents=["profile.role", "profile.tz"],
        conviction=0.6,
        importance=0.3,
    )
    log.update("pref.concise", {"importance": 0.6}, ARIA, "mentioned twice in one session")
    log.update("profile.name", {"meta": {"pronunciation": "AY-da"}}, ADA, "user clarified")


def session_2(log: SessionLog) -> None:
    """Wednesday evening: a deep-dive question, fitness sync, a research sub-agent."""
    log.start_session("s2-2024-03-06", "2024-03-06 19:10")
    log.next_turn()
    log.item(
        "pref.longform",
        PREFS,
        "observation",
        {
            "text": "Asked for an in-depth explanation of Kafka partitioning: 'don't skip the details'",
            "topic": "kafka",
        },
        ADA,
        "user_explicit",
        0.9,
        importance=0.5,
    )
    log.edge(
        "con:longform-concise",
        "pref.longform",
        "pref.concise",
        "CONTRADICTS",
        ARIA,
        "agent_inferred",
        0.7,
        meta={"note": "short vs. detailed answers"},
    )
    log.item(
        "assert.depth",
        PREFS,
        "derivation",
        {"text": "Concise by default; long-form for technical deep dives she asks for"},
        ARIA,
        "agent_inferred",
        0.8,
        parents=["pref.concise", "pref.longform"],
        conviction=0.8,
        importance=0.6,
    )
    log.edge(
        "sup:concise-depth", "pref.concise", "assert.depth", "SUPPORTS", ARIA, "agent_inferred", 0.8
    )
    log.edge(
        "sup:longform-depth",
        "pref.longform",
        "assert.depth",
        "SUPPORTS",
        ARIA,
        "agent_inferred",
        0.8,
    )
    log.edge(
        "ss:depth-bullets",
        "assert.depth",
        "assert.bullets",
        "SUPERSEDES",
        ARIA,
        "agent_inferred",
        0.8,
    )
    log.update_edge(
        "con:longform-concise",
        {"active": False},
        ARIA,
        "reconciled by 'concise by default, long-form on request'",
    )
    log.update(
        "assert.bullets", {"authority": 0.3, "conviction": 0.4}, ARIA, "superseded by a finer rule"
    )

    log.next_turn()
    runs = [
        ("run.1", "Ran 8.2 km, 5:41 /km", 8.2, "2024-03-02"),
        ("run.2", "Ran 12.4 km, 5:55 /km", 12.4, "2024-03-03"),
        ("run.3", "Ran 6.0 km intervals", 6.0, "2024-03-05"),
        ("run.4", "Ran 14.1 km, 5:50 /km", 14.1, "2024-03-06"),
    ]
    for key, text, km, day in runs:
        log.item(
            key,
            PROFILE,
            "observation",
            {"text": text, "distance_km": km, "date": day},
            FITNESS,
            "observed",
            0.95,
            importance=0.2,
            meta={"device": "watch"},
        )
    log.item(
        "hyp.half",
        PROFILE,
        "hypothesis",
        {"text": "Ada may be training for a half marathon", "event_guess": "half marathon"},
        ARIA,
        "agent_inferred",
        0.4,
        parents=["run.2", "run.4"],
        conviction=0.35,
        importance=0.4,
    )
    for key, _, _, _ in runs:
        log.edge(
            f"sup:{key}-half", key, "hyp.half", "SUPPORTS", ARIA, "agent_inferred", 0.6, weight=0.5
        )
    log.about("hyp.half")

    log.next_turn()
    log.item(
        "obs.espresso",
        PREFS,
        "observation",
        {"text": "Ordered a double espresso through the office coffee app", "drink": "espresso"},
        "tool:payments",
        "observed",
        0.7,
        importance=0.1,
    )
    log.edge(
        "con:espresso-tea", "obs.espresso", "pref.tea", "CONTRADICTS", ARIA, "agent_inferred", 0.6
    )
    log.update("pref.veg", {"importance": 0.9}, ARIA, "asked for dinner ideas twice")
    log.update(
        "pref.metric",
        {"importance": 0.5, "meta": {"confirmed_in": "s2-2024-03-06"}},
        ARIA,
        "used in a recipe",
    )

    # A research sub-agent works in the same graph with its own session id.
    log.start_session("s2-2024-03-06-scout", "2024-03-06 19:40", agent="scout")
    log.next_turn()
    plans = [
        ("scout.plan-a", "12-week half-marathon plan: 4 runs a week, long run on Sunday", 0.7),
        ("scout.plan-b", "10-week plan: 3 runs a week plus one cross-training day", 0.6),
        ("scout.taper", "Taper: cut weekly volume by 40% in the final week", 0.8),
    ]
    for key, text, authority in plans:
        log.item(
            key,
            SCHEDULE,
            "observation",
            {"text": text, "source": "running-coach articles"},
            SCOUT,
            "imported",
            authority,
            importance=0.3,
        )
        log.edge(f"about:{key}", key, "hyp.half", "ABOUT", SCOUT, "agent_inferred", 0.8)
    log.item(
        "scout.climb-fit",
        SCHEDULE,
        "derivation",
        {"text": "plan-b fits around Thursday climbing: cross-training day = climbing"},
        SCOUT,
        "agent_inferred",
        0.6,
        parents=["scout.plan-b", "cal.climbing"],
        conviction=0.6,
        importance=0.4,
    )
    recipes = [
        ("scout.r1", "Chickpea and spinach curry, 400 g chickpeas, 35 min"),
        ("scout.r2", "Mushroom risotto, 300 g arborio rice, 40 min"),
        ("scout.r3", "Halloumi traybake, 250 g halloumi, 30 min"),
        ("scout.r4", "Lentil bolognese, 200 g red lentils, 45 min"),
        ("scout.r5", "Miso-glazed aubergine with rice, 25 min"),
    ]
    for key, text in recipes:
        log.item(
            key,
            PREFS,
            "observation",
            {"text": text, "kind": "recipe"},
            SCOUT,
            "imported",
            0.7,
            parents=["derive.recipes"],
            importance=0.2,
        )
    log.edge(
        "alias:plan-b-a",
        "scout.plan-b",
        "scout.plan-a",
        "ALIAS",
        SCOUT,
        "agent_inferred",
        0.3,
        meta={"note": "same source article, two editions"},
    )
    log.retract_edge("alias:plan-b-a", ARIA, "different plans, not aliases")


def session_3(log: SessionLog) -> None:
    """The next Monday: a diet change, a confirmed hypothesis, a moved event."""
    log.start_session("s3-2024-03-11", "2024-03-11 07:45")
    log.next_turn()
    log.item(
        "pref.pesc",
        PREFS,
        "observation",
        {"text": "Eats fish again since the weekend: pescatarian now", "diet": "pescatarian"},
        ADA,
        "user_explicit",
        1,
        importance=0.9,
    )
    log.about("pref.pesc")
    # Retracting the old diet removes its ABOUT and DERIVED_FROM edges; the
    # recipe derivation and the scouted recipes keep it as a (now missing) parent.
    log.retract("pref.veg", ADA, "diet changed: pescatarian since 2024-03-09")
    log.item(
        "derive.recipes2",
        PREFS,
        "derivation",
        {"text": "Recipe suggestions: vegetarian or fish, quantities in grams and millilitres"},
        ARIA,
        "derived_deterministic",
        0.9,
        parents=["pref.pesc", "pref.metric"],
        importance=0.5,
    )
    log.edge(
        "ss:recipes2-recipes",
        "derive.recipes2",
        "derive.recipes",
        "SUPERSEDES",
        ARIA,
        "derived_deterministic",
        1,
    )
    log.update(
        "derive.recipes", {"importance": 0.05, "meta": {"stale": True}}, ARIA, "parent retracted"
    )

    log.next_turn()
    log.item(
        "obs.signup",
        SCHEDULE,
        "observation",
        {
            "text": "Signed up for the Hackney Half on 19 May",
            "event": "Hackney Half",
            "date": "2024-05-19",
        },
        ADA,
        "user_explicit",
        1,
        importance=0.8,
    )
    log.edge(
        "sup:signup-half", "obs.signup", "hyp.half", "SUPPORTS", ARIA, "agent_inferred", 1, weight=1
    )
    log.update(
        "hyp.half",
        {"authority": 0.85, "conviction": 0.95, "importance": 0.7},
        ARIA,
        "user confirmed the race",
        basis={"evidence": [log.ids["obs.signup"]]},
    )
    log.item(
        "derive.taper",
        SCHEDULE,
        "derivation",
        {
            "text": "Keep 13-19 May light: taper week before the Hackney Half",
            "from": "2024-05-13",
            "to": "2024-05-19",
        },
        ARIA,
        "derived_deterministic",
        0.9,
        parents=["hyp.half", "obs.signup", "scout.taper"],
        importance=0.6,
    )
    log.update_edge(
        "sup:run.3-half", {"weight": 0.2}, ARIA, "interval session says little about distance"
    )

    log.next_turn()
    log.item(
        "cal.climbing2",
        SCHEDULE,
        "observation",
        {"text": "Climbing gym moved to Wednesdays 19:00", "weekday": "Wed", "start": "19:00"},
        CALENDAR,
        "imported",
        0.85,
        importance=0.3,
        meta={"feed": "google-calendar"},
    )
    log.edge(
        "ss:climb2-climb",
        "cal.climbing2",
        "cal.climbing",
        "SUPERSEDES",
        ARIA,
        "agent_inferred",
        0.9,
    )
    log.edge(
        "con:climb2-bookclub",
        "cal.climbing2",
        "cal.bookclub",
        "CONTRADICTS",
        ARIA,
        "agent_inferred",
        0.5,
        meta={"note": "first Wednesday clashes with book club"},
    )
    log.update("cal.climbing", {"importance": 0.05}, ARIA, "superseded by the new slot")
    log.update(
        "scout.climb-fit",
        {"conviction": 0.3, "meta": {"needs_review": True}},
        ARIA,
        "climbing day moved",
    )
    for key in ("profile.tz", "pref.morning", "policy.confirm"):
        log.update(key, {"meta": {"confirmed_in": "s3-2024-03-11"}}, ARIA, "re-confirmed")
    log.update("pref.tea", {"conviction": 0.5}, ARIA, "espresso order casts doubt")


def session_4(log: SessionLog) -> None:
    """Wednesday evening: more runs, family, reading, and a weekly review."""
    log.start_session("s4-2024-03-13", "2024-03-13 20:05")
    log.next_turn()
    runs = [
        ("run.5", "Ran 7.5 km easy", 7.5, "2024-03-08"),
        ("run.6", "Ran 16.0 km long run, 6:02 /km", 16.0, "2024-03-10"),
        ("run.7", "Ran 8.0 km tempo", 8.0, "2024-03-12"),
        ("run.8", "Ran 5.0 km recovery", 5.0, "2024-03-13"),
    ]
    for key, text, km, day in runs:
        log.item(
            key,
            PROFILE,
            "observation",
            {"text": text, "distance_km": km, "date": day},
            FITNESS,
            "observed",
            0.95,
            importance=0.2,
            meta={"device": "watch"},
        )
        weight = 0.7 if km >= 10 else 0.4
        log.edge(
            f"sup:{key}-half",
            key,
            "hyp.half",
            "SUPPORTS",
            ARIA,
            "agent_inferred",
            0.6,
            weight=weight,
        )
    log.edge(
        "der:taper-half",
        "derive.taper",
        "hyp.half",
        "DERIVED_FROM",
        ARIA,
        "derived_deterministic",
        1,
    )

    log.next_turn()
    log.item(
        "profile.family",
        PROFILE,
        "trait",
        {"text": "Sister Chioma; birthday on 2 April", "relation": "sister", "birthday": "04-02"},
        ADA,
        "user_explicit",
        1,
        importance=0.6,
    )
    log.about("profile.family")
    log.item(
        "pref.push",
        PREFS,
        "observation",
        {"text": "Wants reminders as phone notifications, never e-mail", "channel": "push"},
        ADA,
        "user_explicit",
        0.95,
        importance=0.6,
    )
    log.about("pref.push")
    log.item(
        "derive.card",
        SCHEDULE,
        "derivation",
        {
            "text": "Remind Ada on 26 March (push) to post a card to Chioma",
            "remind_on": "2024-03-26",
        },
        ARIA,
        "derived_deterministic",
        0.9,
        parents=["profile.family", "pref.push"],
        importance=0.7,
    )
    log.edge(
        "der:card-family",
        "derive.card",
        "profile.family",
        "DERIVED_FROM",
        ARIA,
        "derived_deterministic",
        1,
    )
    log.update(
        "pref.dark",
        {
            "authority": 0.9,
            "source_kind": "user_explicit",
            "meta": {"confirmed_in": "s4-2024-03-13"},
        },
        ADA,
        "Ada confirmed: dark mode everywhere",
    )

    log.next_turn()
    books = [
        ("read.ddia", "Reading 'Designing Data-Intensive Applications', chapter 6 (partitioning)"),
        ("read.rustbook", "Working through 'The Rust Programming Language', chapter 10"),
        ("read.lefthand", "Book club pick for April: 'The Left Hand of Darkness'"),
    ]
    for key, text in books:
        log.item(
            key, PROFILE, "observation", {"text": text}, ADA, "user_explicit", 0.9, importance=0.3
        )
    log.edge(
        "about:ddia-longform", "read.ddia", "pref.longform", "ABOUT", ARIA, "agent_inferred", 0.6
    )
    log.edge(
        "about:rust-langs", "read.rustbook", "profile.langs", "ABOUT", ARIA, "agent_inferred", 0.8
    )
    log.edge(
        "about:lefthand-club", "read.lefthand", "cal.bookclub", "ABOUT", ARIA, "agent_inferred", 0.9
    )
    log.update(
        "profile.langs",
        {"importance": 0.5, "meta": {"reading": "The Rust Programming Language"}},
        ARIA,
        "active learning",
    )

    log.next_turn()
    # Weekly review: fade routine calendar entries, keep what matters.
    for key, importance in (
        ("cal.standup", 0.2),
        ("cal.one2one", 0.2),
        ("cal.planning", 0.15),
        ("cal.dentist", 0.5),
        ("cal.bookclub", 0.35),
    ):
        log.update(key, {"importance": importance}, ARIA, "weekly review")
    log.update("hyp.half", {"meta": {"reviewed_in": "s4-2024-03-13"}}, ARIA, "weekly review")
    log.update(
        "assume.weekdays", {"conviction": 0.75}, ARIA, "a full week of weekday-only meetings"
    )


def build(seed: int = SEED) -> list[str]:
    """Return the log lines (compact JSON envelopes, no newlines)."""
    log = SessionLog(seed)
    session_1(log)
    session_2(log)
    session_3(log)
    session_4(log)
    return log.lines


def main(argv: list[str]) -> int:
    """Write the log to ``argv[0]`` (default ``agent_session.jsonl`` next to this script)."""
    out = Path(argv[0]) if argv else OUT
    lines = build()
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"wrote {len(lines)} envelopes to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
