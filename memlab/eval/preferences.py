"""A generated collection where lexical search is blind: facts stated once, recalled by requests in other words.

Each agent is one person; its memories are third-person notes about them ("Dana eats no meat and is allergic to
nuts."), one fact per category drawn from hand-written template families, among distractor notes that share
the requests' topic nouns but settle nothing ("Dana cooked dinner for the neighbours last Friday."). Each query
is a first-person request that cannot be answered well without the fact ("What should I cook for dinner
tonight?") and shares no content word with it: no stem of memlab's porter analyzer outside
``memlab.search.query.STOPWORDS`` (``tests/test_preferences.py`` checks every query against its memory's text
and key). So FTS5 can only find the distractors, and what the lab measures is whether a retriever knows what a
request needs. Categories: ``diet``, ``health``, ``family``, ``work``, ``likes``.

Generated, seeded, deterministic: ``build_preferences(seed)`` picks for each agent a name, one family per
category and a value for each family's slot; each chosen fact's two requests are queries judged to it
(relevance 1); the agent's memories are its facts and every family's distractors, in a seeded order under
neutral keys (``note-01``...). Judgments are incomplete by design: one fact is judged per request, though
another of the agent's facts may bear on it. The templates are memlab's own work, under memlab's licence (MIT);
no data is read and no model is used.

Examples:
    >>> preferences = build_preferences()
    >>> summary = preferences.summary()
    >>> summary["agents"], summary["queries"], summary["judged_queries"]
    (30, 300, 300)
    >>> summary["queries_per_category"]
    {'diet': 60, 'family': 60, 'health': 60, 'likes': 60, 'work': 60}
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection, Document, Query

__all__ = ["Family", "FAMILIES", "NAMES", "CATEGORIES", "build_preferences"]


@dataclass(frozen=True)
class Family:
    """A template family: a fact with one slot, the requests that need it, and distractors that share their topic.

    ``{name}`` in any template is the agent's name, ``{item}`` in ``fact`` one of ``items``."""

    name: str
    category: str
    fact: str
    items: tuple[str, ...]
    requests: tuple[str, str]
    distractors: tuple[str, str]


FAMILIES: tuple[Family, ...] = (
    # diet
    Family(
        "meat-and-allergy",
        "diet",
        "{name} eats no meat and is allergic to {item}.",
        ("nuts", "peanuts", "shellfish", "sesame"),
        ("What should I cook for dinner tonight?", "Suggest a recipe for this weekend's family lunch."),
        ("{name} cooked dinner for the neighbours last Friday.", "{name} bought a recipe book at the weekend market."),
    ),
    Family(
        "lactose",
        "diet",
        "Milk upsets {name}'s stomach, so {name} avoids {item}.",
        ("cheese", "cream", "butter", "yoghurt"),
        ("Order me a coffee at the café.", "What dessert should I bring to the party?"),
        ("{name} tried a new café near the station.", "{name} brought a dessert to the office party."),
    ),
    Family(
        "teetotal",
        "diet",
        "{name} has not touched alcohol for {item} years.",
        ("five", "eight", "ten", "twelve"),
        ("Pick a wine for the dinner party on Saturday.", "Which bar should we go to for my birthday?"),
        (
            "{name} carried wine crates for a colleague's dinner party.",
            "{name} booked a table at the bar by the river for a colleague's farewell.",
        ),
    ),
    Family(
        "coeliac",
        "diet",
        "{name} has coeliac disease and must avoid {item}.",
        ("wheat", "barley", "rye"),
        ("Which bakery should I order the birthday cake from?", "Recommend a pasta place for lunch."),
        ("{name} walked past the new bakery on the corner.", "{name} had lunch at a pasta place with an old friend."),
    ),
    # health
    Family(
        "weak-joint",
        "health",
        "{name}'s {item} has been weak since the ski accident.",
        ("knee", "ankle", "hip"),
        ("Plan a hiking weekend in the mountains for me.", "Should I sign up for the city marathon?"),
        (
            "{name} read a guidebook about hiking trails in the mountains.",
            "{name} watched the city marathon from a café.",
        ),
    ),
    Family(
        "slipped-disc",
        "health",
        "A slipped disc keeps {name} from lifting anything heavy since {item}.",
        ("January", "last winter", "the car crash"),
        ("Can I help my friend carry furniture into a new flat?", "Which gym exercises should I start with?"),
        ("{name}'s friend is moving into a new flat on Sunday.", "{name} renewed the gym membership."),
    ),
    Family(
        "migraine",
        "health",
        "{item} trigger {name}'s migraines.",
        ("Flashing lights", "Flickering lamps", "Blinking bulbs"),
        ("Get me tickets for the laser show on Friday.", "Would a strobe disco be fun for me?"),
        ("{name} saw a poster for the laser show at the station.", "{name} danced at a disco at a cousin's wedding."),
    ),
    Family(
        "blood-thinners",
        "health",
        "{name} takes blood thinners every {item}.",
        ("morning", "evening", "day"),
        ("Is aspirin fine for my headache?", "Can I get a tattoo next month?"),
        ("{name} had a headache after the long meeting.", "{name}'s cousin got a tattoo of a fox."),
    ),
    Family(
        "hay-fever",
        "health",
        "Pollen makes {name} sneeze for weeks each {item}.",
        ("spring", "May", "June"),
        ("Plan a picnic in a meadow for me.", "Should we hold my party in the garden?"),
        ("{name} bought a picnic blanket at the market.", "{name} planted tomatoes in the garden."),
    ),
    # family
    Family(
        "school-start",
        "family",
        "{name}'s daughter starts school in {item} in September.",
        ("Lyon", "Leeds", "Porto", "Graz"),
        (
            "When could we take a family trip abroad this autumn?",
            "Is the last week of summer free for a beach holiday?",
        ),
        ("{name} booked a family trip abroad two years ago.", "{name} spent a beach holiday in Crete as a child."),
    ),
    Family(
        "care-home",
        "family",
        "{name} visits an elderly father in the care home every {item}.",
        ("Saturday", "Sunday"),
        ("Book me a weekend away at the coast.", "Could the team offsite run over the weekend?"),
        ("{name} spent a weekend away at the coast years ago.", "{name}'s team held an offsite in the hills."),
    ),
    Family(
        "twins",
        "family",
        "{name} and {item} became parents of twins in March.",
        ("Sam", "Alex", "Robin"),
        ("Is this a good season for me to start an evening course?", "Should I throw a late party at home?"),
        ("{name} read about evening courses at the library.", "{name} threw a late party for a friend's promotion."),
    ),
    Family(
        "anxious-dog",
        "family",
        "{name}'s dog, {item}, panics when left alone.",
        ("Biscuit", "Pepper", "Bruno"),
        ("Book me a flight for a three-day conference.", "Can I stay late at the office all week?"),
        ("{name} went to a conference in Berlin in spring.", "{name} stayed late at the office to finish a report."),
    ),
    # work
    Family(
        "remote-timezone",
        "work",
        "{name} works remotely from {item}, five hours ahead of head office.",
        ("Dubai", "Baku", "Tashkent"),
        ("When should I set the weekly call with the London team?", "What time suits me for a video interview?"),
        ("{name} joined a weekly call with the London team.", "{name} prepared notes for a video interview."),
    ),
    Family(
        "teacher",
        "work",
        "{name} teaches {item} to ten-year-olds at a primary school.",
        ("maths", "science", "music"),
        ("Which week off suits me best for a holiday?", "Draft a letter to parents about the class trip."),
        ("{name} took a week off in the rain once.", "{name} drafted a letter to the landlord about the boiler."),
    ),
    Family(
        "career-change",
        "work",
        "{name} left banking in {item} to retrain as a carpenter.",
        ("2021", "2022", "2023"),
        ("Update the summary on my CV.", "What should my profile headline say?"),
        ("{name} helped a friend update a CV.", "{name} changed a profile photo after a haircut."),
    ),
    Family(
        "merger-secret",
        "work",
        "{name} must keep the merger confidential until {item}.",
        ("June", "the autumn", "the board meets"),
        ("Draft a post telling my followers about our company's big news.", "Write an update for our newsletter."),
        ("{name} drafted a post about a charity run.", "{name} subscribed to a newsletter about gardening."),
    ),
    # likes
    Family(
        "horror",
        "likes",
        "{name} finds {item} unbearable.",
        ("horror films", "gory thrillers", "slasher flicks"),
        ("Pick a movie for our date night.", "What should we watch at the cinema tonight?"),
        ("{name} went to the cinema with colleagues.", "{name} reviewed a movie for the book club."),
    ),
    Family(
        "jazz",
        "likes",
        "{name} adores jazz, especially {item}.",
        ("Coltrane", "Ella Fitzgerald", "Thelonious Monk"),
        ("Which gig should I buy tickets for?", "Make me a playlist for the drive home."),
        ("{name} bought tickets for a gig that was cancelled.", "{name} made a playlist for a friend's wedding."),
    ),
    Family(
        "heights",
        "likes",
        "{name} is terrified of heights since a fall from a {item}.",
        ("ladder", "roof", "tree"),
        ("Book us a balloon ride for the anniversary.", "Should we dine at the restaurant on the fortieth floor?"),
        (
            "{name}'s colleague took a balloon ride over Cappadocia.",
            "{name} read a review of a restaurant on the fortieth floor.",
        ),
    ),
    Family(
        "seasick",
        "likes",
        "{name} gets seasick on any {item}.",
        ("boat", "ferry", "yacht"),
        ("Plan a cruise around the Greek islands for me.", "Should I join the sailing club?"),
        ("{name} saw an advert for a cruise around the Greek islands.", "{name}'s neighbour joined the sailing club."),
    ),
    Family(
        "crowds",
        "likes",
        "{name} cannot bear crowds or {item} places.",
        ("loud", "noisy", "packed"),
        ("Get me a ticket for the summer festival.", "Where should I celebrate New Year's Eve?"),
        ("{name} read a poster about the summer festival.", "{name} spent New Year's Eve with cousins."),
    ),
    Family(
        "cold",
        "likes",
        "{name} hates {item} weather.",
        ("cold", "freezing", "icy"),
        ("Plan a trip to Norway in January.", "Should I try the winter swimming club?"),
        ("{name} watched a documentary about Norway.", "{name}'s sister joined the winter swimming club."),
    ),
)

NAMES = (
    "Dana", "Omar", "Lena", "Ravi", "Ines", "Tomas", "Aiko", "Bruno", "Chloe", "Dmitri",
    "Esme", "Farid", "Greta", "Hugo", "Ilse", "Jonas", "Kemal", "Lucia", "Marek", "Nadia",
    "Oskar", "Priya", "Quentin", "Rosa", "Soren", "Talia", "Umar", "Vera", "Wendel", "Yara",
)  # fmt: skip
CATEGORIES = ("diet", "health", "family", "work", "likes")


def build_preferences(seed: int = 0, *, agents: int = 30) -> Collection:
    """The collection described above, made from ``FAMILIES`` with ``random.Random(seed)``, for ``agents`` people.

    An agent's id is its name lower-cased; a document's id ``"{agent}/{key}"``; a query's ``"{agent}/{family}/{n}"``
    (``n`` is 1 or 2, the family's request). Same seed, same collection.

    Raises:
        InvalidArgument: ``agents`` outside 1 to ``len(NAMES)``.

    Examples:
        >>> build_preferences(agents=2).queries[0].text
        'Recommend a pasta place for lunch.'
    """
    if not 1 <= agents <= len(NAMES):
        raise InvalidArgument(f"agents must be between 1 and {len(NAMES)}, not {agents}")
    rng = random.Random(seed)
    documents: list[Document] = []
    queries: list[Query] = []
    qrels: dict[str, dict[str, int]] = {}
    for name in rng.sample(NAMES, agents):
        agent = name.lower()
        chosen = [rng.choice([family for family in FAMILIES if family.category == category]) for category in CATEGORIES]
        notes = [(family, family.fact.format(name=name, item=rng.choice(family.items))) for family in chosen]
        notes += [(None, text.format(name=name)) for family in FAMILIES for text in family.distractors]
        rng.shuffle(notes)
        fact_ids = {}
        for number, (family, text) in enumerate(notes, start=1):
            key = f"note-{number:02d}"
            documents.append(Document(f"{agent}/{key}", agent, key, text))
            if family is not None:
                fact_ids[family.name] = f"{agent}/{key}"
        requests = [(family, n, text) for family in chosen for n, text in enumerate(family.requests, start=1)]
        rng.shuffle(requests)
        for family, n, text in requests:
            query = Query(f"{agent}/{family.name}/{n}", agent, text, family.category)
            queries.append(query)
            qrels[query.id] = {fact_ids[family.name]: 1}
    return Collection("preferences", documents, queries, qrels)
