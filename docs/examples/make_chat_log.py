"""Generate ``chat_log.jsonl``: a chat assistant's record of a conversation, as a memex event log.

Two friends, Ada and Ben, chat over four sessions on different days in
August and September 2024 (Ada signs for a new flat, moves in, plans a
housewarming; Ben nurses a knee, starts a new job, adopts a dog). The log
holds one item per turn, in scope ``chat:ada-ben``: ``content={"text": ...}``,
``meta={"session_id": ..., "speaker": "Ada" | "Ben", "turn": n}`` and
``created_at`` the time the turn was said. Retrieval reads the turns of one
session as a conversation (:class:`memex.TextIndex`, conversation context):

* replies refer back ("Yes, we signed for it last week!" answers "Did you get
  the new flat in Leyton?");
* a fact is spread over two adjacent turns ("And the rent?" / "£1,650 a
  month, bills on top.");
* turns name dates ("The housewarming is on Saturday 14 September, from 7pm.");
* a fact changes in a later session: the turn that moves the housewarming to
  21 September ``SUPERSEDES`` the turn that set it on 14 September.

The output is deterministic: timestamps come from a scripted clock and every
id is a UUIDv7 built from that clock and a seeded PRNG, so running the script
again rewrites a byte-identical file. Each command is applied to a running
state while the log is written, so the script fails loudly if the log would
not replay cleanly.

Usage (from the repository root)::

    .venv/bin/python docs/examples/make_chat_log.py            # writes docs/examples/chat_log.jsonl
    .venv/bin/python docs/examples/make_chat_log.py OUT.jsonl  # writes elsewhere
    .venv/bin/memex recall docs/examples/chat_log.jsonl "what did Ada say about the new flat?" --explain
"""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import memex
from memex.codec import jsonfmt

SEED = 20240829
OUT = Path(__file__).with_name("chat_log.jsonl")
SCOPE = "chat:ada-ben"
ASSISTANT = "agent:chat-assistant"

#: The sessions: (session id, when the first turn is said (UTC), the turns as
#: ``(speaker, text)``, or ``(speaker, text, key)`` for a turn an edge names).
SESSIONS: list[tuple[str, str, list[tuple[str, ...]]]] = [
    (
        "ada-ben-2024-08-29",
        "2024-08-29 19:05",
        [
            ("Ben", "Hey Ada! Did you get the new flat in Leyton?"),
            ("Ada", "Yes, we signed for it last week!"),
            ("Ben", "Amazing, congratulations to you and Sam! What's it like?"),
            ("Ada", "Two bedrooms, a tiny balcony and a kitchen that actually fits a table."),
            ("Ben", "And the rent?"),
            (
                "Ada",
                "£1,650 a month, bills on top. Steep, but it's ten minutes from the Central line.",
            ),
            ("Ben", "When do you get the keys?"),
            ("Ada", "We move in on Saturday 7 September."),
            ("Ben", "Need a hand? I can borrow my brother's van."),
            ("Ada", "That would be a lifesaver. Nine o'clock at the old place on Cazenove Road?"),
            ("Ben", "Deal. I'll bring coffee."),
            ("Ada", "How's the half marathon training going?"),
            ("Ben", "Slowly. My knee is playing up again, so I'm only doing easy runs."),
            ("Ada", "Did you see the physio?"),
            ("Ben", "Yes, she says rest it for two weeks and do the exercises."),
            ("Ada", "Sensible. Don't be a hero on moving day then."),
            ("Ben", "Ha, I'll carry the light boxes."),
        ],
    ),
    (
        "ada-ben-2024-09-03",
        "2024-09-03 12:40",
        [
            ("Ada", "We've picked a date for the housewarming!"),
            ("Ben", "Go on then."),
            ("Ada", "The housewarming is on Saturday 14 September, from 7pm.", "party.14"),
            ("Ben", "In the diary. Who's coming?"),
            ("Ada", "Chioma, Tom and his sister, a few people from work. About fifteen."),
            ("Ben", "Shall I bring something?"),
            ("Ada", "Your lemon tart, if you can face making it again."),
            ("Ben", "Done. Is anyone vegetarian?"),
            ("Ada", "Chioma is, and Tom doesn't eat pork."),
            ("Ben", "Noted. Also, news: I got the job at the bike shop on Mare Street!"),
            ("Ada", "No way, congratulations! When do you start?"),
            ("Ben", "Monday. Four days a week, which leaves Fridays for my own repairs."),
            ("Ada", "Perfect for you. Is the pay any good?"),
            ("Ben", "Better than the café, and I get a staff discount on parts."),
        ],
    ),
    (
        "ada-ben-2024-09-09",
        "2024-09-09 20:15",
        [
            ("Ben", "How was the first weekend in the flat?"),
            ("Ada", "Chaos, but lovely. Boxes everywhere. Thanks again for the van."),
            ("Ben", "Any time. Did everything survive?"),
            ("Ada", "One lamp didn't. Worse news: the boiler is broken."),
            ("Ben", "Oh no. No hot water?"),
            ("Ada", "None. The landlord's engineer can only come on the 14th."),
            ("Ben", "That's the party day!"),
            (
                "Ada",
                "I know. We've moved the housewarming to Saturday 21 September, same time.",
                "party.21",
            ),
            ("Ben", "Fine by me. I'll bake the tart on the Friday."),
            ("Ada", "How's the knee?"),
            ("Ben", "Better. I ran 8 km on Sunday without pain."),
            ("Ada", "Great! Still aiming for the Hackney Half?"),
            ("Ben", "Not this year. I've switched to the Royal Parks Half in October."),
            ("Ada", "Good call, it's flatter."),
            ("Ben", "Also, guess who adopted a dog?"),
            ("Ada", "You didn't! What's her name?"),
            ("Ben", "Biscuit. A three-year-old rescue greyhound."),
            ("Ada", "Bring Biscuit to the party!"),
        ],
    ),
    (
        "ada-ben-2024-09-22",
        "2024-09-22 11:30",
        [
            ("Ben", "Thanks for last night, that was a great party."),
            ("Ada", "Thank you for coming! The lemon tart went in ten minutes."),
            ("Ben", "Biscuit loved the balcony."),
            ("Ada", "Chioma wants to know where you got the tart recipe."),
            ("Ben", "My gran's. I'll send it to her."),
            ("Ada", "Also: the boiler is fixed, finally. Hot showers again."),
            ("Ben", "Hurray. How's Sam finding the new commute?"),
            ("Ada", "He loves it: twenty minutes door to door instead of an hour."),
        ],
    ),
]


def at(text: str) -> int:
    """Return unix ms for a UTC ``YYYY-MM-DD HH:MM`` text."""
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC).timestamp() * 1000)


class ChatLog:
    """Builds the log: a scripted clock, deterministic ids and a running state."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ms = 0
        self.state = memex.create_graph_state()
        self.lines: list[str] = []
        self.ids: dict[str, str] = {}
        self.session = ""
        self.turn = 0

    def uuid7(self) -> str:
        """Return a UUIDv7 whose time field is the current clock (random bits from the seeded PRNG)."""
        rand_a = self.rng.getrandbits(12)
        rand_b = self.rng.getrandbits(62)
        value = (self.ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
        h = f"{value:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def emit(self, cmd: Any) -> None:
        """Apply ``cmd`` to the running state (must succeed) and append its envelope."""
        self.ms += self.rng.randint(1, 3) * 1000
        self.state, _ = memex.apply_command(self.state, cmd)
        env = memex.create_event_envelope(
            cmd.type, cmd, trace_id=f"{self.session}/turn-{self.turn:02d}", now=self.ms
        )
        wire = env.to_dict()
        wire["id"] = self.uuid7()
        self.lines.append(jsonfmt.dumps(wire))

    def session_start(self, session_id: str, when: str) -> None:
        """Start a session: move the clock to ``when``."""
        self.ms = max(self.ms + 1000, at(when))
        self.session = session_id
        self.turn = 0

    def say(self, speaker: str, text: str, key: str | None = None) -> str:
        """Record one turn (said by ``speaker``) as an item, under ``key`` when given.
        Returns its id."""
        self.turn += 1
        self.ms += self.rng.randint(15, 90) * 1000
        item = memex.create_memory_item(
            id=self.uuid7(),
            scope=SCOPE,
            kind="observation",
            content={"text": text},
            author=f"user:{speaker.lower()}",
            source_kind="user_explicit",
            authority=0.8,
            meta={"session_id": self.session, "speaker": speaker, "turn": self.turn},
            now=self.ms,
        )
        if key is not None:
            self.ids[key] = item.id
        self.emit(memex.MemoryCreate(item=item))
        return item.id

    def supersedes(self, new: str, old: str, reason: str) -> None:
        """Record that the turn ``new`` replaces the turn ``old`` (a ``SUPERSEDES`` edge)."""
        edge = memex.create_edge(
            edge_id=self.uuid7(),
            from_=self.ids[new],
            to=self.ids[old],
            kind="SUPERSEDES",
            author=ASSISTANT,
            source_kind="agent_inferred",
            authority=0.9,
            meta={"reason": reason},
            now=self.ms,
        )
        self.emit(memex.EdgeCreate(edge=edge))


def build(seed: int = SEED) -> list[str]:
    """Return the log lines (compact JSON envelopes, no newlines)."""
    log = ChatLog(seed)
    for session_id, when, turns in SESSIONS:
        log.session_start(session_id, when)
        for turn in turns:
            log.say(*turn)
            if turn[2:] == ("party.21",):
                log.supersedes("party.21", "party.14", "the housewarming moved to 21 September")
    return log.lines


def main(argv: list[str]) -> int:
    """Write the log to ``argv[0]`` (default ``chat_log.jsonl`` next to this script)."""
    out = Path(argv[0]) if argv else OUT
    lines = build()
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"wrote {len(lines)} envelopes to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
